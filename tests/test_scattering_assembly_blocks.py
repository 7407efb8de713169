"""The FEM system's blocks built from the element entries (engine/scattering/gpu_assembly.py: renumbered and
filtered, never the whole matrix), on the host with NumPy and on the GPU with CuPy, against the whole
matrix assembled and sliced (system.fem_matrix, the reference), to round-off."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paraflux.engine.scattering.cases import sphere_case
from paraflux.engine.scattering.fem import discretise, surface_trace, volume_matrices
from paraflux.engine.scattering.gpu_assembly import fem_blocks_on_device, rows_on_device
from paraflux.engine.scattering.mesh import volume_mesh
from paraflux.engine.scattering.system import fem_matrix, surface_dofs

K = 2 * math.pi  # lambda = 1 m


@pytest.fixture(scope="module", params=[1, 2])
def disc(request):
    return discretise(volume_mesh(*sphere_case(0.3, 1.0, 0.1, 0.2, 8.0), 1.0 / 8.0), request.param)


def _relative(a, b) -> float:
    return abs(a - b).max() / abs(b).max()


def _blocks_against_reference(disc, xp) -> None:
    a, on_gamma, free = fem_matrix(disc, K, surface_trace(disc, "outer"))
    boundary = 1j * K * surface_trace(disc, "outer").mass
    a_free, a_coupling = fem_blocks_on_device(disc, K, boundary, free, on_gamma, xp)
    assert a_free.shape == (len(free), len(free)) and a_coupling.shape == (len(free), len(on_gamma))
    assert _relative(a_free, a[free][:, free]) < 1e-13
    assert _relative(a_coupling, a[free][:, on_gamma]) < 1e-13


def _rows_against_reference(disc, xp) -> None:
    cells, on = np.flatnonzero(disc.mesh.region == 0), surface_dofs(disc, "inner")
    stiffness, mass = volume_matrices(disc, cells)
    expected = (K * K * mass - stiffness).tocsr()[on]
    assert _relative(rows_on_device(disc, cells, -1.0, K * K, on, xp), expected) < 1e-13


def test_blocks_on_the_host_equal_the_sliced_matrix(disc):
    _blocks_against_reference(disc, np)


def test_weak_flux_rows_on_the_host_equal_the_sliced_matrix(disc):
    _rows_against_reference(disc, np)


@pytest.mark.gpu
def test_blocks_on_the_gpu_equal_the_sliced_matrix(disc):
    import cupy  # noqa: PLC0415

    _blocks_against_reference(disc, cupy)
    _rows_against_reference(disc, cupy)
