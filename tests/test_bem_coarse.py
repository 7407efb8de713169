"""The coarse level of the FMBEM preconditioner (engine/bem/coarse.py): its clusters, its Galerkin matrix
against P^T A P taken column by column through the operator, and its effect on GMRES."""

import numpy as np
import pytest

from paraflux.engine.bem import coarse
from paraflux.engine.bem.fmm_operator import FmmBemOperator
from paraflux.engine.bem.fmm_solve import FmmSettings, solve_fmm
from paraflux.engine.bem.unknowns import unknown_layout
from paraflux.engine.bench.fmbem import bracket_model


def test_bisection_gives_equal_clusters_and_lloyd_sweeps_leave_none_empty():
    points = np.random.default_rng(1).standard_normal((1003, 3)) * [10.0, 1.0, 0.1]
    labels = coarse.bisection_clusters(points, 37)
    assert set(np.bincount(labels, minlength=37)) <= {1003 // 37, 1003 // 37 + 1}
    compact = coarse.compact_clusters(points, 37)
    sizes = np.bincount(compact)
    assert sizes.min() > 0 and len(sizes) <= 37


@pytest.fixture(scope="module")
def bracket_galerkin():
    """(operator, basis, P^T A P with A applied by the operator (its FMM at p = 12, separation 2: 4e-9 here) to
    each column of P)."""
    surface, data = bracket_model(600)
    layout = unknown_layout(surface.points, surface.triangles, data.displacement_type)
    op = FmmBemOperator(surface.points, surface.triangles, layout, data.displacement_type, data.traction,
                        1e11, 0.3, order=12, far_points=3, separation=2, known_displacement=data.displacement)
    basis = coarse.coarse_basis(op.targets, coarse.slot_kinds(op.layout), 20)
    p = basis.p.toarray()
    return op, basis, p.T @ np.stack([op.apply(p[:, j]) for j in range(p.shape[1])], axis=1)


@pytest.mark.parametrize("near_radii", [1e9, coarse.NEAR_RADII])
def test_the_galerkin_matrix_matches_the_operator_s(bracket_galerkin, monkeypatch, near_radii):
    """Every quadrature point summed point by point (near_radii 1e9): P^T A P as the operator applies it, to
    the FMM's error; at the default radii, the centres' sums beyond them: within 2 %."""
    monkeypatch.setattr(coarse, "NEAR_RADII", near_radii)
    op, basis, exact = bracket_galerkin
    assert basis.p.shape[1] >= 60  # three components, two kinds of unknown on the clusters across the base
    error = np.linalg.norm(coarse.galerkin_matrix(op, basis) - exact) / np.linalg.norm(exact)
    assert error < (1e-7 if near_radii > 1e6 else 2e-2), error


def test_the_coarse_level_cuts_gmres_iterations_to_the_same_solution():
    """The bracket of about 6,000 DOFs to GMRES's 1e-3 (the benchmark's): 300 clusters take at least a fifth
    of the iterations off (measured 39 -> 27; the gain grows with the mesh: 76 -> 30 at 19k DOFs) and the
    solution stays within the tolerance."""
    surface, data = bracket_model(6000)
    runs = [solve_fmm(surface.points, surface.triangles, data, 260e9, 0.3,
                      FmmSettings(order=6, rtol=1e-3, coarse_clusters=clusters)) for clusters in (0, 300)]
    (alone, alone_report), (two, two_report) = runs
    assert alone_report.coarse_size == 0 and two_report.coarse_size > 3 * 300
    assert two_report.iterations <= 0.8 * alone_report.iterations, (two_report.iterations, alone_report.iterations)
    difference = np.linalg.norm(two.displacement - alone.displacement) / np.linalg.norm(alone.displacement)
    assert difference < 2e-3, difference


@pytest.mark.parametrize("rtol, fp32, expected", [(1e-3, True, np.float32), (1e-2, True, np.float32),
                                                  (1e-6, True, np.float64), (1e-3, False, np.float64)])
def test_the_coarse_lu_is_fp32_only_with_fp32_factors_and_a_tolerance_of_1e_3_or_coarser(monkeypatch, rtol, fp32,
                                                                                         expected):
    """On the GPU; tighter tolerances took a third more iterations and more with it in FP32 (fmm_solve.py)."""
    from types import SimpleNamespace

    from paraflux.engine.bem import fmm_solve

    monkeypatch.setattr(fmm_solve, "get_backend", lambda name: SimpleNamespace(is_gpu=name == "cupy"))
    settings = FmmSettings(backend="cupy", rtol=rtol, preconditioner_fp32=fp32)
    assert fmm_solve.coarse_dtype(settings) == expected
    assert fmm_solve.coarse_dtype(FmmSettings(backend="numpy", rtol=rtol)) == np.float64  # the host: FP64
