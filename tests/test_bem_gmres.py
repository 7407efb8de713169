"""The restarted, right-preconditioned GMRES of engine/bem/gmres.py against a direct solve and SciPy's."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from paraflux.engine.bem.gmres import gmres


def system(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = (sp.random(n, n, density=0.02, random_state=rng) + sp.diags(rng.uniform(1, 3, n))).tocsr()
    return a, rng.standard_normal(n)


def test_gmres_with_restarts_and_a_preconditioner_reaches_the_direct_solution():
    a, b = system()
    exact = sla.spsolve(a.tocsc(), b)
    jacobi = 1 / a.diagonal()
    result = gmres(lambda v: a @ v, lambda v: jacobi * v, b, 1e-10, restart=15, max_iterations=500)
    assert result.converged and result.relative_residual <= 1e-10
    assert np.linalg.norm(b - a @ result.x) <= 1e-10 * np.linalg.norm(b)
    assert np.linalg.norm(result.x - exact) < 1e-8 * np.linalg.norm(exact)
    assert len(result.residuals) > 15 and result.residuals[-1] <= 1e-10  # it restarted
    scipy_history = []
    sla.gmres(sla.LinearOperator(a.shape, matvec=lambda v: a @ (jacobi * v)), b, rtol=1e-10, restart=15,
              maxiter=100, callback=scipy_history.append, callback_type="pr_norm")
    assert abs(len(result.residuals) - len(scipy_history)) <= 2
    assert np.allclose(result.residuals[:10], scipy_history[:10], rtol=1e-6)


def test_gmres_stops_at_the_iteration_limit_unconverged():
    a, b = system(seed=1)
    result = gmres(lambda v: a @ v, lambda v: v, b, 1e-14, restart=5, max_iterations=12)
    assert not result.converged and len(result.residuals) == 12
    assert np.isclose(result.relative_residual, np.linalg.norm(b - a @ result.x) / np.linalg.norm(b))


def test_the_krylov_basis_holds_the_vectors_used_not_the_restart_length():
    """restart = 200 and about 40 iterations: the basis grows in chunks of BASIS_CHUNK vectors instead of
    allocating 201; the iterates are those of a basis allocated whole (a chunk as large as the restart), but for
    the order of the sums."""
    from paraflux.engine.bem import gmres as module

    rng = np.random.default_rng(2)
    a = (0.2 * sp.random(2000, 2000, density=0.02, random_state=rng) + sp.diags(rng.uniform(1, 3, 2000))).tocsr()
    b = rng.standard_normal(2000)
    run = lambda: module.gmres(lambda v: a @ v, lambda v: v, b, 1e-12, restart=200, max_iterations=500)  # noqa: E731
    result = run()
    used = len(result.residuals)
    assert result.converged and 32 < used < 200, used
    assert result.basis_rows == min(201, -(-(used + 1) // module.BASIS_CHUNK) * module.BASIS_CHUNK)
    whole = module.BASIS_CHUNK
    try:
        module.BASIS_CHUNK = 201
        reference = run()
    finally:
        module.BASIS_CHUNK = whole
    assert reference.basis_rows == 201 and reference.residuals == pytest.approx(result.residuals, rel=1e-9)
    assert np.linalg.norm(reference.x - result.x) <= 1e-12 * np.linalg.norm(reference.x)


def test_a_wider_preconditioner_reach_takes_fewer_iterations_to_the_same_solution():
    """The ILU's matrix out to 6 element sizes instead of 3 (the pairs beyond 3 by the plain rule; the accurate
    corrections, so the operator, unchanged): the bracket of 3,207 DOFs needs a third fewer GMRES iterations (24
    -> 16 when measured at rtol 1e-3) to the same solution, within GMRES's tolerance."""
    from paraflux.engine.bem.fmm_solve import FmmSettings, solve_fmm
    from paraflux.engine.bench.fmbem import bracket_model

    surface, data = bracket_model(3000)
    runs = [solve_fmm(surface.points, surface.triangles, data, 260e9, 0.3,
                      FmmSettings(order=6, rtol=1e-8, precondition_ratio=reach, coarse_clusters=0))
            for reach in (None, 6.0)]
    (narrow, narrow_report), (wide, wide_report) = runs
    assert wide_report.near_pairs > 3 * narrow_report.near_pairs
    assert wide_report.iterations <= 0.75 * narrow_report.iterations
    difference = np.linalg.norm(wide.displacement - narrow.displacement) / np.linalg.norm(narrow.displacement)
    assert difference < 1e-6, difference


def test_the_preconditioner_s_reach_leaves_the_corrections_and_the_operator_as_they_are():
    from paraflux.engine.bem.cases import pressurised_octant
    from paraflux.engine.bem.fmm_operator import FmmBemOperator
    from paraflux.engine.bem.unknowns import unknown_layout

    s, _, data = pressurised_octant(300)
    layout = unknown_layout(s.points, s.triangles, data.displacement_type)
    ops = [FmmBemOperator(s.points, s.triangles, layout, data.displacement_type, data.traction, 1e11, 0.3,
                          order=6, precondition_ratio=reach) for reach in (None, 6.0, 1.5)]
    usual, wide, short = (op.correction.toarray() for op in ops)
    assert np.abs(usual - wide).max() <= 1e-14 * np.abs(usual).max()  # the sums' order may differ
    assert np.abs(usual - short).max() <= 1e-14 * np.abs(usual).max()
    x = np.random.default_rng(0).standard_normal((layout.n_targets, 3))
    for op in ops[1:]:
        assert np.array_equal(ops[0].known_correction, op.known_correction)
        assert np.allclose(ops[0].apply(x), op.apply(x), rtol=0, atol=1e-13 * np.abs(ops[0].apply(x)).max())
    usual, wide, short = (op.near.toarray() for op in ops)  # the preconditioner's blocks: more, or fewer
    assert np.count_nonzero(wide) > 2 * np.count_nonzero(usual) > 4 * np.count_nonzero(short)
    # a target's own elements are all within reach 1.5: its diagonal (with the rigid-body terms) is complete
    assert np.abs(np.diag(short) - np.diag(usual)).max() <= 1e-12 * np.abs(np.diag(usual)).max()


@pytest.mark.parametrize("passes", [2, 7])
def test_the_far_field_in_several_fmm_passes_is_the_far_field_of_one(passes):
    """The seven densities split over FMM passes give the same product (the same sums, regrouped), and the
    operator refuses a split into no pass or more passes than densities."""
    from paraflux.engine.bem.cases import pressurised_octant
    from paraflux.engine.bem.fmm_operator import FmmBemOperator
    from paraflux.engine.bem.unknowns import unknown_layout

    s, _, data = pressurised_octant(300)
    layout = unknown_layout(s.points, s.triangles, data.displacement_type)
    make = lambda k: FmmBemOperator(s.points, s.triangles, layout, data.displacement_type,  # noqa: E731
                                    data.traction, 1e11, 0.3, order=6, far_passes=k)
    one, split = make(1), make(passes)
    assert [len(r) for r in split.passes] == [len(r) for r in np.array_split(range(7), passes)]
    x = np.random.default_rng(1).standard_normal((layout.n_targets, 3))
    expected = one.apply(x)
    assert np.abs(split.apply(x) - expected).max() <= 1e-13 * np.abs(expected).max()
    assert np.abs(split.known_part() - one.known_part()).max() <= 1e-13 * np.abs(one.known_part()).max()
    for bad in (0, 8):
        with pytest.raises(ValueError, match="1 to 7 FMM passes"):
            make(bad)
