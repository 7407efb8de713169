"""Manufactured solutions: second order in L2, first order in the energy norm (planar and axisymmetric)."""

import numpy as np

from paraflux.engine.magnetostatics import elements
from paraflux.engine.magnetostatics.direct import solve_sparse_direct
from paraflux.engine.magnetostatics.system import ElementSystem
from paraflux.engine.quadrature import dunavant

from .conftest import structured_square

RULE = dunavant(5)


def _quad_points(coords):
    """Quadrature points (m, q, 2) and weights times area (m, q)."""
    area, _ = elements.shape_gradients(coords)
    xq = np.einsum("qk,ekd->eqd", RULE.points, coords)
    return xq, area[:, None] * RULE.weights[None, :]


def _solve(mesh, ke, load_density, radial_weight, fixed_names):
    coords = mesh.element_coords()
    xq, w = _quad_points(coords)
    weight = w * load_density(xq[..., 0], xq[..., 1]) * radial_weight(xq[..., 0])
    fe = np.einsum("eq,qi->ei", weight, RULE.points)
    fixed = np.unique(np.concatenate([mesh.boundary_nodes(n) for n in fixed_names]))
    system = ElementSystem(ke, fe, mesh.triangles, mesh.n_nodes, fixed, np.zeros(fixed.size))
    return solve_sparse_direct(system).x


def _rates(errors):
    e = np.array(errors)
    return np.log2(e[:-1] / e[1:])


def test_planar_manufactured_solution_orders():
    exact = lambda x, y: np.sin(np.pi * x) * np.sin(np.pi * y)  # noqa: E731
    grad = lambda x, y: np.pi * np.stack([np.cos(np.pi * x) * np.sin(np.pi * y),  # noqa: E731
                                          np.sin(np.pi * x) * np.cos(np.pi * y)], -1)
    l2, energy = [], []
    for n in (8, 16, 32, 64):
        mesh = structured_square(n)
        coords = mesh.element_coords()
        ke = elements.planar_stiffness(coords, np.ones(mesh.n_elements))
        a = _solve(mesh, ke, lambda x, y: 2 * np.pi**2 * exact(x, y), lambda r: 1.0,
                   ("left", "right", "bottom", "top"))
        xq, w = _quad_points(coords)
        ah = np.einsum("qk,ek->eq", RULE.points, a[mesh.triangles])
        _, g = elements.shape_gradients(coords)
        gh = np.einsum("ei,eid->ed", a[mesh.triangles], g)[:, None, :]
        l2.append(np.sqrt(np.sum(w * (ah - exact(xq[..., 0], xq[..., 1])) ** 2)))
        energy.append(np.sqrt(np.sum(w * np.sum((gh - grad(xq[..., 0], xq[..., 1])) ** 2, -1))))
    assert np.all(_rates(l2) > 1.9), l2
    assert np.all(_rates(energy) > 0.95), energy


def test_axisymmetric_manufactured_solution_orders():
    """A_phi = r (1 - r^2) sin(pi z) on r, z in [0, 1]; J_phi = (8 r + pi^2 (r - r^3)) sin(pi z) with nu = 1."""
    a_exact = lambda r, z: r * (1 - r**2) * np.sin(np.pi * z)  # noqa: E731
    b_exact = lambda r, z: np.stack([-(r - r**3) * np.pi * np.cos(np.pi * z),  # noqa: E731
                                     (2 - 4 * r**2) * np.sin(np.pi * z)], -1)
    source = lambda r, z: (8 * r + np.pi**2 * (r - r**3)) * np.sin(np.pi * z)  # noqa: E731
    l2, energy = [], []
    for n in (8, 16, 32, 64):
        mesh = structured_square(n)
        coords = mesh.element_coords()
        ke = elements.axisymmetric_stiffness(coords, np.ones(mesh.n_elements))
        u = _solve(mesh, ke, source, lambda r: 2 * np.pi * r * r, ("right", "bottom", "top"))
        xq, w = _quad_points(coords)
        r, z = xq[..., 0], xq[..., 1]
        uq = np.einsum("qk,ek->eq", RULE.points, u[mesh.triangles])
        bq = np.stack([elements.flux_density_at("axisymmetric", "vector", coords, u[mesh.triangles],
                                                np.broadcast_to(RULE.points[q], (mesh.n_elements, 3)),
                                                np.ones(mesh.n_elements))
                       for q in range(len(RULE.weights))], axis=1)
        wr = 2 * np.pi * w * r
        l2.append(np.sqrt(np.sum(wr * (r * uq - a_exact(r, z)) ** 2)))
        energy.append(np.sqrt(np.sum(wr * np.sum((bq - b_exact(r, z)) ** 2, -1))))
    assert np.all(_rates(l2) > 1.9), l2
    assert np.all(_rates(energy) > 0.95), energy
