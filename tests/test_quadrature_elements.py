"""Triangle quadrature exactness and basic properties of the element matrices."""

import math

import numpy as np
import pytest

from paraflux.engine.magnetostatics import elements
from paraflux.engine.quadrature import dunavant


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
def test_rule_integrates_monomials_exactly(degree):
    rule = dunavant(degree)
    # integral over the reference triangle (area 1/2) of x^i y^j = i! j! / (i + j + 2)!
    for i in range(degree + 1):
        for j in range(degree + 1 - i):
            x, y = rule.points[:, 1], rule.points[:, 2]
            approx = 0.5 * np.sum(rule.weights * x**i * y**j)
            exact = math.factorial(i) * math.factorial(j) / math.factorial(i + j + 2)
            assert approx == pytest.approx(exact, rel=1e-12, abs=1e-15)


def _random_triangles(n, rng, x_min=0.0):
    coords = rng.uniform(0.0, 1.0, size=(n, 3, 2))
    coords[..., 0] += x_min
    area, _ = elements.shape_gradients(coords)
    coords[area < 0] = coords[area < 0][:, [0, 2, 1]]
    return coords


def test_planar_stiffness_is_symmetric_with_zero_row_sums():
    coords = _random_triangles(50, np.random.default_rng(0))
    ke = elements.planar_stiffness(coords, np.full(50, 2.0))
    assert np.allclose(ke, ke.transpose(0, 2, 1))
    assert np.allclose(ke.sum(axis=2), 0.0, atol=1e-9 * np.abs(ke).max())
    assert np.all(np.linalg.eigvalsh(ke)[:, 0] > -1e-9 * np.abs(ke).max())


def test_axisymmetric_matrix_matches_brute_force_quadrature():
    """Compare with a sub-triangulated midpoint integration of the energy density (independent rule)."""
    rng = np.random.default_rng(1)
    coords = _random_triangles(3, rng, x_min=0.0)
    ke = elements.axisymmetric_stiffness(coords, np.ones(3))
    m = 60  # sub-triangle grid in barycentric space
    pts, wts = [], []
    for i in range(m):
        for j in range(m - i):
            pts.append(((i + 1 / 3) / m, (j + 1 / 3) / m))
            wts.append(1.0)
            if i + j < m - 1:
                pts.append(((i + 2 / 3) / m, (j + 2 / 3) / m))
                wts.append(1.0)
    pts = np.array(pts)
    bary = np.column_stack([1 - pts.sum(1), pts])
    wts = np.array(wts) / len(wts)
    for e in range(3):
        area, grads = elements.shape_gradients(coords[e:e + 1])
        r = bary @ coords[e, :, 0]
        br = -r[:, None] * grads[0, :, 1][None, :]
        bz = 2 * bary + r[:, None] * grads[0, :, 0][None, :]
        ref = 2 * np.pi * area[0] * np.einsum("q,qi,qj->ij", wts * r, br, br) \
            + 2 * np.pi * area[0] * np.einsum("q,qi,qj->ij", wts * r, bz, bz)
        assert np.allclose(ke[e], ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


def test_axisymmetric_load_integrates_current_times_radius_squared():
    coords = np.array([[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])
    fe = elements.axisymmetric_load(coords, np.array([3.0]))
    # sum_i f_i = 2 pi J integral(r^2) over the unit right triangle = 2 pi * 3 * 1/12
    assert fe.sum() == pytest.approx(2 * np.pi * 3.0 / 12.0, rel=1e-12)
