"""The scattering study (FE-IIIEE): Nedelec elements, the Mie reference, the far field, and PEC spheres
against the Mie series (float64; tolerances in dB as the issue states them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paraflux.engine.problems.scattering import parse_scattering, scattering_to_dict
from paraflux.engine.scattering import mie, nedelec, waves
from paraflux.engine.scattering.run import run_problem
from paraflux.engine.truncation.fields import C0
from paraflux.engine.truncation.operator import apply_reference, currents
from paraflux.engine.variants import LINEAR_SOLVER

RNG = np.random.default_rng(7)


def _two_tets():
    points = RNG.random((5, 3))
    tets = nedelec.sorted_tets(np.array([[0, 1, 2, 3], [1, 2, 3, 4]]), 5)
    return points, tets, nedelec.geometry(points, tets)


def test_order_2_spans_the_complete_linear_fields_and_order_1_the_whitney_ones():
    points, tets, geom = _two_tets()
    lam = RNG.dirichlet(np.ones(4), size=60)
    for order, rank in ((1, 6), (2, 20)):
        values, _ = nedelec.basis(order, lam, geom.grads[:1])
        assert np.linalg.matrix_rank(values[0].transpose(1, 0, 2).reshape(rank, -1)) == rank
    values, _ = nedelec.basis(2, lam, geom.grads[:1])
    x = lam @ points[tets[0]]
    linear = [np.outer(f, np.eye(3)[k]).ravel() for k in range(3) for f in (np.ones(60), *x.T)]
    both = np.vstack([values[0].transpose(1, 0, 2).reshape(20, -1), linear])
    assert np.linalg.matrix_rank(both) == 20  # P1^3 lies in the order-2 space


@pytest.mark.parametrize("order", [1, 2])
def test_tangential_trace_and_normal_curl_agree_across_a_shared_face(order):
    points, tets, geom = _two_tets()
    dofs = nedelec.dof_map(tets, order)
    u = RNG.standard_normal(dofs.n_dofs)
    face_bary = RNG.dirichlet(np.ones(3), size=5)
    normal = np.cross(points[2] - points[1], points[3] - points[1])
    normal /= np.linalg.norm(normal)
    sides = []
    for t in range(2):
        lam = np.zeros((5, 4))
        for k, node in enumerate((1, 2, 3)):
            lam[:, list(tets[t]).index(node)] = face_bary[:, k]
        v, c = nedelec.basis(order, lam, geom.grads[t:t + 1])
        sides.append((np.einsum("qfk,f->qk", v[0], u[dofs.cell_dofs[t]]),
                      np.einsum("qfk,f->qk", c[0], u[dofs.cell_dofs[t]])))
    (e0, c0), (e1, c1) = sides
    assert np.abs(np.cross(normal, e0 - e1)).max() < 1e-12 * np.abs(e0).max()
    assert np.abs((c0 - c1) @ normal).max() < 1e-12 * np.abs(c0).max()


def test_curls_are_the_derivatives_of_the_values():
    points, tets, geom = _two_tets()
    cell = points[tets[0]]
    x0 = RNG.dirichlet(np.ones(4)) @ cell

    def at(x):
        lam = np.linalg.solve(np.vstack([np.ones(4), cell.T]), np.r_[1.0, x])
        return nedelec.basis(2, lam[None], geom.grads[:1])

    h, jac = 1e-6, np.zeros((20, 3, 3))
    for d in range(3):
        step = np.eye(3)[d] * h
        jac[:, :, d] = (at(x0 + step)[0][0, 0] - at(x0 - step)[0][0, 0]) / (2 * h)
    curl = np.stack([jac[:, 2, 1] - jac[:, 1, 2], jac[:, 0, 2] - jac[:, 2, 0], jac[:, 1, 0] - jac[:, 0, 1]], axis=1)
    assert np.abs(curl - at(x0)[1][0, 0]).max() < 1e-7


def test_the_tetrahedron_rule_integrates_quartics_exactly():
    lam, w = nedelec.tet_rule(3)
    assert (lam[:, 1] ** 2 * lam[:, 2] ** 2 * w).sum() == pytest.approx(2 * 2 * 6 / 5040, rel=1e-13)


def test_mie_series_matches_miepython_and_the_rayleigh_limit():
    miepython = pytest.importorskip("miepython")
    mu = np.linspace(-1, 1, 41)
    for x in (0.5, 1.0, 3.0, 10.0):
        s1, s2 = mie.amplitudes(x, np.arccos(mu))
        r1, r2 = miepython.S1_S2(0, x, mu, norm="wiscombe")  # m = 0: miepython's perfect conductor
        assert np.abs(np.abs(s1) - np.abs(r1)).max() < 1e-10 * np.abs(s1).max()
        assert np.abs(np.abs(s2) - np.abs(r2)).max() < 1e-10 * np.abs(s2).max()
    e_plane, _ = mie.pec_sphere_rcs(1.0, 1e-2, [0.0])
    assert e_plane[0] == pytest.approx(9 * np.pi * 1e-8, rel=1e-3)  # back-scatter 9 pi a^2 (ka)^4


def test_the_far_field_is_the_operator_at_a_large_distance():
    k = 2 * np.pi
    sources = RNG.standard_normal((30, 3)) * 0.3
    normals = RNG.standard_normal((30, 3))
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    e, f = (RNG.standard_normal((1, 30, 3)) + 1j * RNG.standard_normal((1, 30, 3)) for _ in range(2))
    cur = currents(normals, RNG.random(30), e, f)
    r, _, _ = waves.unit_vectors([30.0, 100.0], [10.0, 250.0])
    distance = 1e6
    near, _ = apply_reference(distance * r, sources, cur, k)
    near = near - np.einsum("rdk,dk->rd", near, r)[..., None] * r  # random currents radiate a radial 1/r part too
    pattern = waves.far_field(r, sources, cur, k)
    assert np.abs(near * distance * np.exp(1j * k * distance) - pattern).max() < 1e-4 * np.abs(pattern).max()


def sphere(tmp_path=Path("."), **changes):
    """A PEC-sphere problem of radius ka / k at 300 MHz (lambda ~ 1 m), bistatic cuts every 5 degrees."""
    ka = changes.pop("ka", 1.0)
    wavelength = C0 / 300e6
    data = {"problem": {"kind": "scattering", "case": "pec-sphere", "frequency": 300e6},
            "geometry": {"radius": ka * wavelength / (2 * np.pi)},
            "far_field": {"theta_deg": {"start": 0.0, "stop": 180.0, "step": 5.0}, "phi_deg": [0.0, 90.0]}}
    for key, value in changes.items():
        table, name = key.split("__")
        data.setdefault(table, {})[name] = value
    return parse_scattering(data, tmp_path)


def mie_error_db(result, ka):
    """Largest |dB error| against Mie where Mie is within 20 dB of its peak (E-plane, H-plane) and how far
    the cross-polarised RCS stays below the co-polarised peak (dB)."""
    p = result.problem
    k = 2 * np.pi * p.frequency / C0
    theta, phi = result.theta[0], result.phi[0]
    out = []
    for cut, co, cross in ((0.0, result.sigma_theta[0], result.sigma_phi[0]),
                           (90.0, result.sigma_phi[0], result.sigma_theta[0])):
        pick = phi == cut
        ref = mie.pec_sphere_rcs(ka / k, k, theta[pick])[0 if cut == 0.0 else 1]
        near_peak = waves.dbsm(ref) > waves.dbsm(ref).max() - 20
        out.append(np.abs(waves.dbsm(co[pick]) - waves.dbsm(ref))[near_peak].max())
        out.append(waves.dbsm(co[pick]).max() - waves.dbsm(cross[pick]).max())
    return out


@pytest.fixture(scope="module")
def ka1():
    return run_problem(sphere())


def test_pec_sphere_ka_1_matches_mie_within_half_a_db_with_the_defaults(ka1):
    e_err, e_cross, h_err, h_cross = mie_error_db(ka1, 1.0)
    assert e_err <= 0.5 and h_err <= 0.5
    assert e_cross >= 25 and h_cross >= 25
    assert ka1.converged.all() and ka1.iterations <= 10


def test_the_charts_mie_overlay_is_the_co_polarised_mie_rcs(ka1):
    from paraflux.engine.scattering.write import scattering_fields

    fields = {f.name: f.values for f in scattering_fields(ka1).fields}
    k = 2 * np.pi * 300e6 / C0
    e_plane, h_plane = mie.pec_sphere_rcs(1.0 / k, k, ka1.theta[0])
    expected = np.where(ka1.phi[0] == 0.0, waves.dbsm(e_plane), waves.dbsm(h_plane))
    assert np.abs(fields["sigma_mie"] - expected).max() < 1e-9
    assert mie_error_db(ka1, 1.0)[0] <= 0.5  # and the FEM's sigma_theta lies on it


def test_the_first_order_abc_alone_is_visibly_worse(ka1):
    k = 2 * np.pi * 300e6 / C0
    theta = ka1.theta[0][ka1.phi[0] == 0.0]
    ref = mie.pec_sphere_rcs(1.0 / k, k, theta)[0]
    abc = waves.dbsm(ka1.sigma_abc[0][0][ka1.phi[0] == 0.0])
    assert np.abs(abc - waves.dbsm(ref)).max() > 2 * mie_error_db(ka1, 1.0)[0]


def test_gmres_gives_the_fixed_point_rcs_in_no_more_iterations(ka1):
    other = run_problem(ka1.problem.with_solver(acceleration="gmres"))
    assert other.converged.all() and other.iterations <= ka1.iterations
    for a, b in ((other.sigma_theta, ka1.sigma_theta), (other.sigma_phi, ka1.sigma_phi)):
        assert np.abs(a - b).max() < 1e-3 * b.max()  # both reach the tolerance 1e-4 of U


def test_the_rcs_does_not_depend_on_the_gaps(ka1):
    other = run_problem(sphere(geometry__inner_gap=0.15, geometry__outer_gap=0.3))
    both = waves.dbsm(np.concatenate([ka1.sigma_theta[0][ka1.phi[0] == 0], ka1.sigma_phi[0][ka1.phi[0] == 90]]))
    again = waves.dbsm(np.concatenate([other.sigma_theta[0][other.phi[0] == 0],
                                       other.sigma_phi[0][other.phi[0] == 90]]))
    assert np.abs(both - again).max() <= 0.3


def test_a_sphere_gives_the_same_monostatic_rcs_from_every_direction_and_polarisation():
    result = run_problem(sphere(incidence__theta_deg=[0.0, 40.0, 90.0, 135.0], incidence__phi_deg=[0.0, 75.0, 200.0, 310.0],
                                incidence__polarization=["theta", "phi", "theta", "phi"], far_field__monostatic=True))
    co = np.where([i.polarization == "theta" for i in result.problem.incidences], result.sigma_theta[:, 0],
                  result.sigma_phi[:, 0])
    assert np.ptp(waves.dbsm(co)) <= 0.3
    k = 2 * np.pi * 300e6 / C0
    assert abs(waves.dbsm(co[0]) - waves.dbsm(mie.pec_sphere_rcs(1.0 / k, k, [0.0])[0][0])) <= 0.5


def test_monostatic_incidences_sharing_theta_each_look_back_along_their_own_direction():
    result = run_problem(sphere(incidence__theta_deg=90.0,
                                incidence__phi_deg=[0.0, 60.0, 120.0], far_field__monostatic=True))
    assert (result.phi[:, 0] == [0.0, 60.0, 120.0]).all()
    assert np.ptp(waves.dbsm(result.sigma_theta[:, 0])) <= 0.3  # a sphere: the same back-scatter every way


def test_order_2_and_a_finer_mesh_reduce_the_error():
    coarse = mie_error_db(run_problem(sphere(solver__order=1, geometry__elements_per_wavelength=7)), 1.0)
    fine = mie_error_db(run_problem(sphere(solver__order=1, geometry__elements_per_wavelength=14)), 1.0)
    order2 = mie_error_db(run_problem(sphere(solver__order=2, geometry__elements_per_wavelength=5)), 1.0)
    assert max(fine[0], fine[2]) < max(coarse[0], coarse[2])
    assert max(order2[0], order2[2]) < max(coarse[0], coarse[2])


def test_the_problem_round_trips_through_its_dictionary():
    p = sphere(incidence__theta_deg=[10.0, 20.0], incidence__polarization="phi", solver__acceleration="gmres")
    assert parse_scattering(scattering_to_dict(p), Path("/elsewhere")) == p
    assert [i.polarization for i in p.incidences] == ["phi", "phi"]


def test_pec_sphere_ka_3_at_order_2_matches_mie_within_half_a_db_with_the_defaults():
    e_err, e_cross, h_err, h_cross = mie_error_db(run_problem(sphere(ka=3.0, solver__order=2)), 3.0)
    assert e_err <= 0.5 and h_err <= 0.5 and min(e_cross, h_cross) >= 25


def test_the_almond_is_reciprocal():
    """sigma_theta from A seen at B equals sigma_theta from B seen at A (A = (90, 30), B = (60, 120))."""
    data = {"problem": {"kind": "scattering", "case": "nasa-almond", "frequency": 1.19e9},
            "incidence": {"theta_deg": [90.0, 60.0], "phi_deg": [30.0, 120.0]},
            "far_field": {"theta_deg": [60.0, 90.0], "phi_deg": [30.0, 120.0]}}
    result = run_problem(parse_scattering(data, Path(".")))
    at = lambda i, t, p: result.sigma_theta[i][(result.theta[i] == t) & (result.phi[i] == p)][0]  # noqa: E731
    assert abs(waves.dbsm(at(0, 60.0, 120.0)) - waves.dbsm(at(1, 90.0, 30.0))) <= 0.3
    assert result.converged.all()


@pytest.mark.gpu
def test_the_gpu_loops_give_the_cpu_rcs(ka1):
    for loop in ("cuda-tiled", "cuda-s"):
        gpu = run_problem(ka1.problem.with_solver(loop=loop))
        assert gpu.backend == "cupy" and gpu.iterations == ka1.iterations
        assert np.abs(gpu.solution - ka1.solution).max() < 1e-6  # dB, the same RCS


SMALL_SPHERE = dict(geometry__elements_per_wavelength=6, far_field__phi_deg=[0.0])


@pytest.fixture(scope="module")
def umfpack_small_sphere():
    return run_problem(sphere(**SMALL_SPHERE, solver__linear_solver="umfpack"))


def test_the_assembly_names_where_its_time_goes(umfpack_small_sphere):
    """The result's assembly phases: the DOF numbering and build_system's parts, within the assembly's time."""
    parts, total = umfpack_small_sphere.assembly_timings, umfpack_small_sphere.timings["assembly"]
    assert list(parts) == ["numbering", "surface traces", "FEM blocks", "surface masses", "weak flux"]
    assert all(v >= 0 for v in parts.values()) and sum(parts.values()) <= total


@pytest.mark.parametrize("changes", [{"solver__linear_solver": n} for n in LINEAR_SOLVER.concrete if n != "umfpack"]
                         + [{"solver__linear_solver": "umfpack", "solver__loop": "cpu-s"}],
                         ids=lambda c: c.get("solver__loop", c["solver__linear_solver"]))
def test_every_linear_solver_and_a_cpu_loop_give_the_same_rcs(umfpack_small_sphere, changes):
    """Every installed linear solver of the axis to 1e-8 of UMFPACK's RCS; the cpu-s loop, which sums the
    operator in another order, to 1e-6."""
    solver = changes["solver__linear_solver"]
    why = LINEAR_SOLVER.choice(solver).unavailable(None)
    if why:
        pytest.skip(why)
    reference = umfpack_small_sphere
    other = run_problem(sphere(**SMALL_SPHERE, **changes))
    assert other.linear_solver == solver
    tolerance = 1e-6 if "solver__loop" in changes else 1e-8
    assert np.abs(other.sigma_theta - reference.sigma_theta).max() < tolerance * reference.sigma_theta.max()


def test_the_3d_pattern_holds_the_computed_cuts():
    """The first incidence's 3D pattern (5 degree grid, sigma_theta + sigma_phi) equals the RCS the run
    computed on the E- and H-plane cuts where the two grids meet."""
    from paraflux.engine.scattering.run import run_problem

    result = run_problem(sphere(ka=0.6, far_field__theta_deg={"start": 0.0, "stop": 180.0, "step": 10.0}))
    assert result.pattern_sigma.shape == (37, 72)
    total = result.sigma_theta[0] + result.sigma_phi[0]
    for j, phi in ((0, 0.0), (18, 90.0)):
        pick = result.phi[0] == phi
        rows = np.searchsorted(result.pattern_theta, result.theta[0][pick])
        np.testing.assert_allclose(result.pattern_sigma[rows, j], total[pick], rtol=1e-10)
