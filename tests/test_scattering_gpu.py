"""The scattering study's sparse system on the GPU: the CuPy assembly against the host's (float64), cuDSS's
factorisation and block back-substitution against the host's sparse direct solvers, and the refusal of a
factor that would not fit (on the CPU through check_fits, on the GPU through a run whose free memory is
forced small)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import norm as sparse_norm

from paraflux.engine.errors import ProblemError
from paraflux.engine.scattering.cudss_solver import check_fits
from paraflux.engine.scattering.nedelec import ORDERS
from paraflux.engine.truncation.fields import C0
from paraflux.engine.variants import LINEAR_SOLVER

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


def test_a_factor_that_does_not_fit_is_refused_in_one_line():
    with pytest.raises(ProblemError) as caught:
        check_fits(3 * 2**30, 2**30, 123_456_789, "the FEM system")
    message = str(caught.value)
    assert "\n" not in message and "3.00 GiB" in message and "1.00 GiB free" in message
    assert "123,456,789 factor nonzeros" in message and "pardiso" in message
    check_fits(2**30, 2**30, 1, "the FEM system")  # exactly what is free fits


def test_cudss_without_a_gpu_is_one_input_error(monkeypatch):
    """Where no GPU is usable, linear_solver "cudss" is refused by the axis's own reason (exit 2), and auto
    stays on the host."""
    from paraflux.engine.errors import BackendError  # noqa: PLC0415
    from paraflux.engine.scattering import linear  # noqa: PLC0415

    monkeypatch.setattr(linear, "gpu_unavailable_reason", lambda: "no CUDA GPU is present")
    with pytest.raises(BackendError, match=r'^linear_solver "cudss" cannot run here: no CUDA GPU is present$'):
        linear.factorise(sp.identity(4, format="csr"), "cudss", "the FEM system")
    assert linear.resolve("auto") in ("pardiso", "umfpack", "superlu")


@pytest.fixture(scope="module")
def free_block():
    """The free block (n, n) of a small sphere's FEM matrix at order 2 (complex symmetric, indefinite)."""
    from paraflux.engine.scattering.fem import surface_trace  # noqa: PLC0415
    from paraflux.engine.scattering.system import fem_matrix  # noqa: PLC0415

    disc = small_disc(2)
    a, _, free = fem_matrix(disc, 2 * np.pi / WAVELENGTH, surface_trace(disc, "outer"))
    return a[free][:, free].tocsr()


@pytest.mark.gpu
def test_cudss_solves_the_scattering_system_as_the_host_does(free_block):
    """cuDSS's solution of a block of 40 right-hand sides to 1e-10 of the host's sparse direct solve, one
    call for all columns, each column as it solves alone; the factor's figures from cuDSS."""
    pytest.importorskip("nvmath")
    from paraflux.engine.scattering.linear import factorise  # noqa: PLC0415

    rng = np.random.default_rng(7)
    n = free_block.shape[0]
    b = rng.standard_normal((n, 40)) + 1j * rng.standard_normal((n, 40))
    host = factorise(free_block, "superlu", "the FEM system").solve(b)
    gpu = factorise(free_block, "cudss", "the FEM system")
    x = gpu.solve(b)
    assert gpu.device == "GPU" and gpu.nonzeros > free_block.nnz // 2
    assert gpu.details["permanent_device_bytes"] > 0 and gpu.memory_bytes >= gpu.details["permanent_device_bytes"]
    assert np.linalg.norm(x - host) <= 1e-10 * np.linalg.norm(host)
    assert np.abs(gpu.solve(b[:, 3]) - x[:, 3]).max() <= 1e-12 * np.abs(x[:, 3]).max()
    assert np.linalg.norm(free_block @ x - b) <= 1e-10 * np.linalg.norm(b)


@pytest.mark.gpu
def test_cudss_solves_real_matrices_with_complex_right_hand_sides(free_block):
    pytest.importorskip("nvmath")
    from paraflux.engine.scattering.linear import factorise  # noqa: PLC0415

    real = (free_block.real + sp.identity(free_block.shape[0]) * 1e-3).tocsr()
    b = np.random.default_rng(8).standard_normal((real.shape[0], 3)) * (1 + 2j)
    x = factorise(real, "cudss", "the mass matrix").solve(b)
    assert np.linalg.norm(real @ x - b) <= 1e-10 * np.linalg.norm(b)


@pytest.mark.gpu
def test_auto_factorises_on_the_gpu_where_one_is_usable():
    pytest.importorskip("nvmath")
    from paraflux.engine.scattering.linear import resolve  # noqa: PLC0415

    assert resolve("auto") == "cudss" and LINEAR_SOLVER.choice("cudss").unavailable(None) is None


@pytest.mark.gpu
def test_a_factor_larger_than_the_free_gpu_memory_ends_the_run_with_exit_2(monkeypatch, tmp_path, capsys):
    """The analysis's estimate against free memory forced to 1 MiB: one line on stderr, exit 2, before the
    numeric factorisation runs."""
    pytest.importorskip("nvmath")
    from paraflux.engine.cli import main  # noqa: PLC0415
    from paraflux.engine.scattering import cudss_solver  # noqa: PLC0415

    monkeypatch.setattr(cudss_solver, "device_free_bytes", lambda cp: 2**20)
    problem = tmp_path / "sphere.toml"
    problem.write_text('[problem]\nkind = "scattering"\ncase = "pec-sphere"\nfrequency = 3e8\n'
                       '[geometry]\nradius = 0.16\nelements_per_wavelength = 6\n'
                       '[solver]\nlinear_solver = "cudss"\n')
    assert main(["solve", str(problem), "--out", str(tmp_path / "out")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("paraflux: error")]
    assert len(errors) == 1 and "cuDSS's estimate" in errors[0] and "1.0 MiB free" in errors[0]


@pytest.mark.gpu
def test_far_field_on_the_gpu_equals_the_host_one():
    """The far-field pattern by CuPy (where the run's iteration ran on a GPU) against NumPy's, float64, for a
    grid shared by two right-hand sides and for each right-hand side its own directions (monostatic)."""
    cp = pytest.importorskip("cupy")
    from paraflux.engine.scattering.waves import far_field, unit_vectors  # noqa: PLC0415
    from paraflux.engine.truncation.operator import currents  # noqa: PLC0415

    rng = np.random.default_rng(7)
    sources = rng.normal(size=(500, 3))
    normals = sources / np.linalg.norm(sources, axis=1, keepdims=True)
    e, f = (rng.normal(size=(2, 500, 3)) + 1j * rng.normal(size=(2, 500, 3)) for _ in range(2))
    cur = currents(normals, rng.uniform(0.1, 1.0, 500), e, f)
    for directions in (unit_vectors(np.arange(0.0, 181.0, 15.0), np.full(13, 30.0))[0],
                       np.stack([unit_vectors([10.0, 40.0], [0.0, 90.0])[0]] * 2)):
        host = far_field(directions, sources, cur, 6.3)
        gpu = far_field(directions, sources, cur, 6.3, cp)
        assert isinstance(gpu, np.ndarray)
        np.testing.assert_allclose(gpu, host, rtol=0, atol=1e-12 * np.abs(host).max())


@pytest.mark.gpu
def test_the_per_column_work_on_the_gpu_equals_the_hosts():
    """With the factor on the GPU (cuDSS) the loads on Gamma, their rank, the block back-substitution and the
    currents on S' are computed there on CuPy columns: each to 1e-10 of the same on the host (SuperLU), for
    6 incidences."""
    cp = pytest.importorskip("cupy")
    pytest.importorskip("nvmath")
    from paraflux.engine.scattering.incidences import compress  # noqa: PLC0415
    from paraflux.engine.scattering.iteration import sprime_currents  # noqa: PLC0415
    from paraflux.engine.scattering.system import build_system, gamma_load, solve  # noqa: PLC0415
    from paraflux.engine.scattering.waves import plane_waves  # noqa: PLC0415

    def close(gpu, host):
        assert isinstance(gpu, cp.ndarray)
        assert np.abs(gpu.get() - host).max() <= 1e-10 * np.abs(host).max()

    disc, k = small_disc(1), 2 * np.pi / WAVELENGTH
    gpu, host = build_system(disc, k, "cudss"), build_system(disc, k, "superlu")
    assert gpu.xp is cp and host.xp is np
    angles = ([90.0] * 6, list(np.arange(0.0, 360.0, 60.0)), np.array(["theta"] * 6))
    loads = gamma_load(host, *plane_waves(host.gamma.points, k, *angles))
    loads_gpu = gamma_load(gpu, *plane_waves(cp.asarray(gpu.gamma.points), k, *angles))
    close(loads_gpu, loads)
    data, data_gpu = compress(loads), compress(loads_gpu)
    assert data_gpu.rank == data.rank and isinstance(data_gpu.basis, np.ndarray)
    assert np.abs(data_gpu.basis @ data_gpu.coefficients - loads).max() <= 1e-10 * np.abs(loads).max()
    rng = np.random.default_rng(3)
    robin = rng.standard_normal((data.rank,) + host.outer.points.shape) * (1 + 1j)
    u_gamma = host.project(data.basis)
    u, u_gpu = solve(host, u_gamma, robin), solve(gpu, cp.asarray(u_gamma), cp.asarray(robin))
    close(u_gpu, u)
    cur, cur_gpu = sprime_currents(host, u), sprime_currents(gpu, u_gpu)
    for name in ("cross_e", "cross_f", "dot_e", "dot_f"):
        close(getattr(cur_gpu, name), getattr(cur, name))
