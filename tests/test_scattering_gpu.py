"""The scattering study's sparse system on the GPU: the CuPy assembly against the host's (float64)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from paraflux.engine.scattering.nedelec import ORDERS
from paraflux.engine.truncation.fields import C0

WAVELENGTH = C0 / 300e6


def small_disc(order: int):
    """The discretisation of a small PEC sphere (ka = 1, 6 elements per wavelength) at a Nedelec order."""
    from paraflux.engine.scattering.fem import discretise  # noqa: PLC0415
    from paraflux.engine.scattering.mesh import volume_mesh  # noqa: PLC0415
    from paraflux.engine.scattering.run import surfaces_of  # noqa: PLC0415
    from tests.test_scattering import SMALL_SPHERE, sphere  # noqa: PLC0415

    problem = sphere(**SMALL_SPHERE, solver__order=order)
    body, inner, outer = surfaces_of(problem, WAVELENGTH)
    return discretise(volume_mesh(body, inner, outer, WAVELENGTH / problem.density), order)


@pytest.mark.gpu
@pytest.mark.parametrize("order", ORDERS)
def test_cupy_assembly_equals_the_host_assembly(order):
    from paraflux.engine.scattering.fem import volume_matrices  # noqa: PLC0415
    from paraflux.engine.scattering.gpu_assembly import volume_matrices_on_device  # noqa: PLC0415

    disc = small_disc(order)
    inside = np.flatnonzero(disc.mesh.region == 0)
    for cells in (None, inside):
        for host, device in zip(volume_matrices(disc, cells), volume_matrices_on_device(disc, cells)):
            assert isinstance(device, sp.csr_matrix) and device.shape == host.shape
            assert sp.linalg.norm(device - host) <= 1e-13 * sp.linalg.norm(host)
            host.eliminate_zeros()
            device.eliminate_zeros()
            assert device.nnz == host.nnz
