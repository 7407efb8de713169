"""FE-IIIEE truncation operator: exact dipole fields, the operator against them (quadrature orders),
the extinction of a source-free field, and every CPU loop strategy against the NumPy specification."""

from math import factorial

import numpy as np
import pytest

from paraflux.engine.quadrature import dunavant
from paraflux.engine.truncation.fields import dipole_fields, wavenumber
from paraflux.engine.truncation.loops import CPU_LOOPS, apply_cpu
from paraflux.engine.truncation.operator import Currents, apply_reference, currents
from paraflux.engine.truncation.surfaces import TriSurface, check_closed_outward, quadrature, uv_sphere


def surface_quadrature(pts, tri, n_points: int):
    """The study's quadrature of a closed surface: points (n, 3), outward unit normals (n, 3), weights
    times area (n,)."""
    q = quadrature(check_closed_outward(TriSurface("S'", pts, tri)), n_points)
    return q.points, q.normals, q.weights


@pytest.mark.parametrize("n_points, degree", [(1, 1), (3, 2), (6, 4), (7, 5), (12, 6)])
def test_each_choice_of_the_study_is_a_rule_of_its_points_and_degree(n_points, degree):
    """On the face z = 0 of a tetrahedron: n_points per triangle, x^i y^j integrated exactly to i! j! /
    (i + j + 2)! up to the degree, and not beyond it."""
    pts = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    tri = np.array([[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])
    q = quadrature(check_closed_outward(TriSurface("tetrahedron", pts, tri)), n_points)
    assert np.array_equal(np.bincount(q.triangle), [n_points] * 4)
    face = q.triangle == 0
    x, y, w = q.points[face, 0], q.points[face, 1], q.weights[face]

    def worst(d):
        return max(abs(w @ (x ** i * y ** (d - i)) * factorial(d + 2) / (factorial(i) * factorial(d - i)) - 1)
                   for i in range(d + 1))

    assert all(worst(d) < 1e-13 for d in range(degree + 1)) and worst(degree + 1) > 1e-6


def test_degree_six_rule_has_12_points_and_is_exact():
    rule = dunavant(6)
    assert len(rule.weights) == 12
    for i in range(7):
        for j in range(7 - i):
            exact = 2 * factorial(i) * factorial(j) / factorial(i + j + 2)
            assert (rule.weights * rule.points[:, 0] ** i * rule.points[:, 1] ** j).sum() == pytest.approx(exact,
                                                                                                          abs=1e-14)


def test_dipole_curl_matches_finite_differences():
    k = wavenumber(600e6)
    x = np.array([[0.4, -0.2, 0.3]])
    moment = np.array([0.3, -0.5, 1.0]) + 0.2j
    _, curl = dipole_fields(x, [0.01, 0.02, -0.01], moment, k)
    h = 1e-6
    de = [(dipole_fields(x + h * np.eye(3)[i], [0.01, 0.02, -0.01], moment, k)[0]
           - dipole_fields(x - h * np.eye(3)[i], [0.01, 0.02, -0.01], moment, k)[0])[0] / (2 * h) for i in range(3)]
    fd = np.array([de[1][2] - de[2][1], de[2][0] - de[0][2], de[0][1] - de[1][0]])
    assert np.abs(fd - curl[0]).max() < 1e-6 * np.abs(curl).max()


def truncation_error(n_points: int, n_theta: int = 10, frequency=300e6):
    k = wavenumber(frequency)
    pts, tri = uv_sphere(n_theta, 0.3)
    q, n, w = surface_quadrature(pts, tri, n_points)
    sources = [([0.02, 0.01, -0.03], [0, 0, 1]), ([-0.05, 0.04, 0.02], [1, 0.5j, 0])]
    fields = [dipole_fields(q, pos, mom, k) for pos, mom in sources]
    cur = currents(n, w, np.stack([e for e, _ in fields]), np.stack([f for _, f in fields]))
    outer = np.random.default_rng(0).standard_normal((80, 3))
    outer = 0.6 * outer / np.linalg.norm(outer, axis=1, keepdims=True)
    e, f = apply_reference(outer, q, cur, k)
    exact = [dipole_fields(outer, pos, mom, k) for pos, mom in sources]
    ee, fe = np.stack([a for a, _ in exact]), np.stack([b for _, b in exact])
    return np.linalg.norm(e - ee) / np.linalg.norm(ee), np.linalg.norm(f - fe) / np.linalg.norm(fe)


def test_dipole_field_on_S_converges_with_the_quadrature_order():
    """S' a sphere of 0.3 m with edges about a tenth of the wavelength (1 m at 300 MHz), S at 0.6 m."""
    errors = [truncation_error(n) for n in (1, 3, 6, 12)]
    assert errors[0][0] < 3e-2 and errors[1][0] < 3e-4 and errors[2][0] < 3e-6 and errors[3][0] < 1e-7, errors
    for (a, b), (c, d) in zip(errors, errors[1:]):
        assert c < a / 10 and d < b / 10
    seven = truncation_error(7)  # degree 5: as accurate as the 6-point rule here (2.7e-6 and 2.3e-6)
    assert errors[3][0] < seven[0] < 3e-6 and errors[3][1] < seven[1] < 3e-6, (seven, errors)


def test_a_plane_wave_through_S_prime_vanishes_on_S():
    k = wavenumber(300e6)
    pts, tri = uv_sphere(12, 0.3)
    q, n, w = surface_quadrature(pts, tri, 6)
    phase = np.exp(-1j * k * q[:, 2])
    e = np.zeros((1, len(q), 3), complex)
    f = np.zeros_like(e)
    e[0, :, 0] = phase
    f[0, :, 1] = -1j * k * phase  # curl of x exp(-jkz)
    outer = np.random.default_rng(1).standard_normal((50, 3))
    outer = 0.7 * outer / np.linalg.norm(outer, axis=1, keepdims=True)
    es, fs = apply_reference(outer, q, currents(n, w, e, f), k)
    assert np.abs(es).max() < 1e-5 and np.abs(fs).max() < 1e-5 * k


@pytest.mark.parametrize("loop", list(CPU_LOOPS))
def test_every_cpu_loop_matches_the_specification(loop):
    rng = np.random.default_rng(2)
    n_s, n_t, n_rhs = 300, 200, 3
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    cur = Currents(cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s), cplx(n_rhs, n_s))
    sources, targets = 0.3 * rng.standard_normal((n_s, 3)), rng.standard_normal((n_t, 3)) + 2.0
    e_ref, f_ref = apply_reference(targets, sources, cur, 6.0)
    e, f = apply_cpu(loop, targets, sources, cur, 6.0)
    assert np.abs(e - e_ref).max() < 1e-12 * np.abs(e_ref).max()
    assert np.abs(f - f_ref).max() < 1e-12 * np.abs(f_ref).max()


def test_surface_checks_orient_and_refuse_bad_surfaces():
    from paraflux.engine.errors import MeshError, ProblemError  # noqa: PLC0415
    from paraflux.engine.truncation.surfaces import (TriSurface, check_closed_outward, check_inside,  # noqa: PLC0415
                                                     quadrature, winding_number)

    pts, tri = uv_sphere(8, 0.3)
    inward = check_closed_outward(TriSurface("inner", pts, tri[:, ::-1]))
    q = quadrature(inward, 3)
    assert ((q.normals * q.points).sum(axis=1) > 0).all()  # outward after the check
    assert q.weights.sum() == pytest.approx(4 * np.pi * 0.3 ** 2, rel=0.05)  # the inscribed polyhedron
    assert winding_number(inward, np.array([[0.0, 0, 0], [1.0, 0, 0]])) == pytest.approx([1, 0], abs=1e-9)
    with pytest.raises(MeshError, match="not closed"):
        check_closed_outward(TriSurface("open", pts, tri[:-5]))
    flipped = tri.copy()
    flipped[0] = flipped[0, ::-1]
    with pytest.raises(MeshError, match="inconsistently oriented"):
        check_closed_outward(TriSurface("mixed", pts, flipped))
    outer = check_closed_outward(TriSurface("outer", *uv_sphere(8, 0.6)))
    check_inside(inward, outer)
    with pytest.raises(ProblemError, match="not inside"):
        check_inside(outer, inward)
    with pytest.raises(ProblemError, match="quadrature must be one of"):
        quadrature(outer, 4)


def test_pipeline_on_the_built_in_case_and_its_refusals():
    from paraflux.engine.errors import ProblemError  # noqa: PLC0415
    from paraflux.engine.truncation.cases import mesh_surface_case  # noqa: PLC0415
    from paraflux.engine.truncation.run import Dipole, TruncationSetup, run_truncation  # noqa: PLC0415

    inner, outer = mesh_surface_case("sphere-in-box", 600, 400)
    setup = TruncationSetup(inner, outer, 300e6, 6, (Dipole((0.02, 0.01, -0.03), (0, 0, 1)),
                                                     Dipole((-0.05, 0.04, 0.02), (1, 0.5j, 0))), "cpu-s")
    result = run_truncation(setup)
    assert result.e.shape == (2, 6 * outer.n_elements, 3)
    assert result.relative_error < 1e-5 and result.relative_error_curl < 1e-5
    assert result.flops > 0 and result.gflops > 0
    from dataclasses import replace  # noqa: PLC0415

    for bad, message in ((replace(setup, frequency=0.0), "frequency must be positive"),
                         (replace(setup, sources=(Dipole((0.4, 0, 0), (0, 0, 1)),)), "outside the inner surface"),
                         (replace(setup, sources=(Dipole(tuple(inner.points[inner.triangles[0]].mean(axis=0)),
                                                         (0, 0, 1)),)), "outside the inner surface .* or on it"),
                         (replace(setup, inner=outer, outer=inner), "not inside"),
                         (replace(setup, loop="gpu-magic"), "unknown loop")):
        with pytest.raises(ProblemError, match=message):
            run_truncation(bad)


def test_almond_is_closed_outward_and_converges_to_its_volume():
    from scipy.integrate import quad

    from paraflux.engine.truncation.almond import ALMOND_LENGTH as d, T_BACK, T_TIP, almond_surface, half_width

    def section(t):  # area of the 3:1 elliptic section, / d^2
        return np.pi * half_width(np.array([t]))[0] ** 2 / 3

    exact = d ** 3 * (quad(section, T_BACK, 0)[0] + quad(section, 0, T_TIP)[0])
    errors = []
    for n in (1272, 5088, 20352):
        s = almond_surface(n)
        assert abs(s.n_elements - n) < 0.03 * n
        p = s.points[s.triangles]
        volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6
        errors.append(abs(volume / exact - 1))
    assert np.allclose(s.points[:, 0].min(), T_BACK * d) and np.allclose(s.points[:, 0].max(), T_TIP * d)
    assert np.isclose(np.abs(s.points[:, 1]).max(), 0.193333 * d, rtol=1e-3)
    assert np.isclose(np.abs(s.points[:, 2]).max(), 0.193333 * d / 3, rtol=1e-3)
    assert errors[0] < 0.03 and errors[0] / errors[1] > 3.5 and errors[1] / errors[2] > 3.5  # O(h^2)


def test_almond_case_error_falls_with_the_quadrature_order():
    from paraflux.engine.problems import load_case_problem
    from paraflux.engine.studies import STUDIES

    study = STUDIES["truncation"]
    problem = load_case_problem("almond")
    errors = [study.run(study.with_variants(problem, {"quadrature": q})).relative_error for q in ("1", "6")]
    assert errors[0] < 1e-2 and errors[1] < 1e-4 and errors[0] / errors[1] > 30


def test_nearest_point_on_a_surface_matches_a_dense_sampling():
    from paraflux.engine.truncation.surfaces import compact_surface, nearest_on_surface, uv_sphere  # noqa: PLC0415

    s = compact_surface("sphere", *uv_sphere(6, 1.0))
    u, v = np.meshgrid(np.linspace(0, 1, 41), np.linspace(0, 1, 41))
    keep = u + v <= 1
    bary = np.stack([1 - u[keep] - v[keep], u[keep], v[keep]], axis=1)  # (k, 3) over each triangle
    samples = np.einsum("ka,tad->tkd", bary, s.points[s.triangles]).reshape(-1, 3)
    rng = np.random.default_rng(0)
    for x in np.vstack([rng.normal(size=(20, 3)) * 1.5, s.points[:3] * 1.01]):
        triangle, weights, distance = nearest_on_surface(s, x)
        closest = weights @ s.points[s.triangles[triangle]]
        assert weights.min() >= -1e-12 and abs(weights.sum() - 1) < 1e-12
        assert abs(np.linalg.norm(x - closest) - distance) < 1e-12
        assert distance <= np.linalg.norm(samples - x, axis=1).min() + 1e-12
        assert distance > np.linalg.norm(samples - x, axis=1).min() - 0.02  # the sampling's spacing


def test_winding_number_checks_for_cancel_before_each_chunk():
    from paraflux.engine.truncation.surfaces import TriSurface, check_closed_outward, winding_number  # noqa: PLC0415

    surface = check_closed_outward(TriSurface("sphere", *uv_sphere(12, 1.0)))
    calls = []
    x = np.zeros((20_000, 3))  # several chunks of about 64 MB of scratch
    w = winding_number(surface, x, lambda: calls.append(1))
    assert len(calls) > 1 and np.allclose(w, 1.0)
