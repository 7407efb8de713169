"""Nedelec elements of every order, order 3 in particular: the space (dimension, polynomials reproduced
exactly on a mesh), the kernel of the curl-curl matrix, tangential continuity, the exact element matrices
against quadrature of the basis, the PEC cube's resonances, and the PEC sphere at order 3 against the Mie
series (float64)."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import eigh
from scipy.sparse.linalg import eigsh

from paraflux.engine.scattering import cases, nedelec
from paraflux.engine.scattering.fem import element_matrices
from paraflux.engine.scattering.run import run_problem
from tests.test_scattering import mie_error_db, sphere

RNG = np.random.default_rng(11)
ORDERS = nedelec.ORDERS


def kuhn_mesh(n: int, jitter: float = 0.15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The unit cube in n^3 cubes of 6 tetrahedra each, interior nodes moved randomly by up to jitter / n
    and the nodes numbered randomly (so the sorted local orders differ from tetrahedron to tetrahedron)."""
    rng = np.random.default_rng(seed)
    grid = np.stack(np.meshgrid(*(np.arange(n + 1),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    index = lambda c: (c[..., 0] * (n + 1) + c[..., 1]) * (n + 1) + c[..., 2]  # noqa: E731
    corners = grid[(grid < n).all(axis=1)]
    tets = []
    for perm in permutations(range(3)):
        path = [corners]
        for axis in perm:
            path.append(path[-1] + np.eye(3, dtype=int)[axis])
        tets.append(np.stack([index(p) for p in path], axis=1))
    points = grid / n
    interior = ((grid > 0) & (grid < n)).all(axis=1)
    points[interior] += rng.uniform(-jitter, jitter, (int(interior.sum()), 3)) / n
    label = rng.permutation(len(points))
    relabelled = np.empty_like(points)
    relabelled[label] = points
    return relabelled, nedelec.sorted_tets(label[np.concatenate(tets)], len(points))


def assembled(order: int, points, tets):
    """The DOF map and the sparse curl-curl and mass matrices of a mesh."""
    geom = nedelec.geometry(points, tets)
    dofs = nedelec.dof_map(tets, order)
    k_e, m_e = element_matrices(order, geom.grads, geom.volumes)
    rows = np.repeat(dofs.cell_dofs, k_e.shape[1], axis=1).ravel()
    cols = np.tile(dofs.cell_dofs, (1, k_e.shape[1])).ravel()
    shape = (dofs.n_dofs, dofs.n_dofs)
    return dofs, *(sp.csr_matrix((a.ravel(), (rows, cols)), shape=shape) for a in (k_e, m_e))


def global_basis(order: int, points, tets, lam):
    """Values and curls (m, q, n_f, 3) at barycentric points lam (q, 4) and the DOF map of a mesh."""
    geom = nedelec.geometry(points, tets)
    values, curls = nedelec.basis(order, lam, geom.grads)
    return geom, nedelec.dof_map(tets, order), values, curls


def polynomial_field(x: np.ndarray, degree: int, coefficients: np.ndarray) -> np.ndarray:
    """sum_c coefficients[c] x^alpha_c over the monomials of degree <= degree: (q, 3) at points (q, 3)."""
    powers = [a for a in np.ndindex(degree + 1, degree + 1, degree + 1) if sum(a) <= degree]
    return np.stack([np.prod(x ** np.array(a), axis=-1) for a in powers], axis=-1) @ coefficients[:len(powers)]


@pytest.mark.parametrize("order", ORDERS)
def test_the_local_functions_are_independent_and_as_many_as_the_space(order):
    geom = nedelec.geometry(RNG.random((4, 3)), np.array([[0, 1, 2, 3]]))
    values, _ = nedelec.basis(order, RNG.dirichlet(np.ones(4), size=80), geom.grads)
    rows = values[0].transpose(1, 0, 2).reshape(nedelec.FUNCTIONS[order], -1)
    assert np.linalg.matrix_rank(rows) == order * (order + 2) * (order + 3) // 2  # dim of the first-kind space


@pytest.mark.parametrize("order", ORDERS)
def test_the_l2_projection_reproduces_fields_of_degree_order_minus_1_on_a_mesh(order):
    """On 48 distorted tetrahedra the global (glued) space contains every vector field of degree order - 1
    (projection error at rounding level), and not those of degree order."""
    points, tets = kuhn_mesh(2)
    lam, w = nedelec.tet_rule(order + 2)  # exact for the load, degree 2 order
    geom, dofs, values, _ = global_basis(order, points, tets, lam)
    x = np.einsum("qi,mik->mqk", lam, points[tets])
    coefficients = RNG.standard_normal((20, 3))
    errors = []
    for degree in (order - 1, order):
        field = polynomial_field(x, degree, coefficients)
        scale = geom.volumes[:, None] * w  # (m, q)
        mass = np.zeros((dofs.n_dofs,) * 2)
        load = np.zeros(dofs.n_dofs)
        np.add.at(mass, (dofs.cell_dofs[:, :, None], dofs.cell_dofs[:, None, :]),
                  np.einsum("mq,mqik,mqjk->mij", scale, values, values))
        np.add.at(load, dofs.cell_dofs, np.einsum("mq,mqik,mqk->mi", scale, values, field))
        u = np.linalg.solve(mass, load)
        projected = np.einsum("mqfk,mf->mqk", values, u[dofs.cell_dofs])
        errors.append(np.abs(projected - field).max() / np.abs(field).max())
    assert errors[0] < 1e-10
    assert errors[1] > 1e-3


@pytest.mark.parametrize("order", ORDERS)
def test_the_curl_curl_kernel_is_the_gradients_of_continuous_lagrange_elements(order):
    """K u = mu M u has as many zero eigenvalues as the continuous Lagrange space of degree order has
    functions less the constants: nodes + (p - 1) edges + (p - 1)(p - 2)/2 faces; the rest are positive."""
    points, tets = kuhn_mesh(2)
    dofs, stiffness, mass = assembled(order, points, tets)
    mu = eigh(stiffness.toarray(), mass.toarray(), eigvals_only=True)
    p = order
    gradients = len(points) + (p - 1) * len(dofs.edges) + (p - 1) * (p - 2) // 2 * len(dofs.faces) - 1
    zero = np.abs(mu) < 1e-8 * mu.max()
    assert zero.sum() == gradients
    assert mu[~zero].min() > 1.0  # the smallest non-gradient mode of the unit cube has mu = 2 pi^2 ~ 19.7 at best


@pytest.mark.parametrize("order", ORDERS)
def test_the_tangential_trace_and_normal_curl_agree_across_every_interior_face(order):
    points, tets = kuhn_mesh(1, jitter=0.0)
    geom = nedelec.geometry(points, tets)
    dofs = nedelec.dof_map(tets, order)
    u = RNG.standard_normal(dofs.n_dofs)
    face_bary = RNG.dirichlet(np.ones(3), size=7)
    owners = [np.flatnonzero((dofs.tet_faces == f).any(axis=1)) for f in range(len(dofs.faces))]
    shared = [(f, o) for f, o in enumerate(owners) if len(o) == 2]
    assert len(shared) == 6  # the Kuhn cube's six internal faces
    for f, pair in shared:
        nodes = dofs.faces[f]
        normal = np.cross(points[nodes[1]] - points[nodes[0]], points[nodes[2]] - points[nodes[0]])
        sides = []
        for t in pair:
            lam = np.zeros((len(face_bary), 4))
            for k, node in enumerate(nodes):
                lam[:, list(tets[t]).index(node)] = face_bary[:, k]
            v, c = nedelec.basis(order, lam, geom.grads[t:t + 1])
            sides.append((np.einsum("qfk,f->qk", v[0], u[dofs.cell_dofs[t]]),
                          np.einsum("qfk,f->qk", c[0], u[dofs.cell_dofs[t]])))
        (e0, c0), (e1, c1) = sides
        assert np.abs(np.cross(normal, e0 - e1)).max() < 1e-12 * np.abs(e0).max() * np.linalg.norm(normal)
        assert np.abs((c0 - c1) @ normal).max() < 1e-12 * np.abs(c0).max() * np.linalg.norm(normal)


@pytest.mark.parametrize("order", ORDERS)
def test_the_curls_are_the_derivatives_of_the_values(order):
    cell = RNG.random((4, 3))
    geom = nedelec.geometry(cell, np.array([[0, 1, 2, 3]]))
    x0 = RNG.dirichlet(np.ones(4)) @ cell

    def at(x):
        lam = np.linalg.solve(np.vstack([np.ones(4), cell.T]), np.r_[1.0, x])
        return nedelec.basis(order, lam[None], geom.grads)

    h, jac = 1e-6, np.zeros((nedelec.FUNCTIONS[order], 3, 3))
    for d in range(3):
        step = np.eye(3)[d] * h
        jac[:, :, d] = (at(x0 + step)[0][0, 0] - at(x0 - step)[0][0, 0]) / (2 * h)
    curl = np.stack([jac[:, 2, 1] - jac[:, 1, 2], jac[:, 0, 2] - jac[:, 2, 0], jac[:, 1, 0] - jac[:, 0, 1]], axis=1)
    assert np.abs(curl - at(x0)[1][0, 0]).max() < 1e-6 * np.abs(curl).max()


@pytest.mark.parametrize("order", ORDERS)
def test_the_exact_element_matrices_are_the_quadrature_of_the_basis(order):
    points = RNG.random((6, 3))
    tets = nedelec.sorted_tets(np.array([[0, 1, 2, 3], [1, 2, 3, 4], [0, 2, 4, 5]]), 6)
    lam, w = nedelec.tet_rule(order + 2)
    geom, _, values, curls = global_basis(order, points, tets, lam)
    scale = geom.volumes[:, None] * w
    stiffness, mass = element_matrices(order, geom.grads, geom.volumes)
    for exact, f in ((stiffness, curls), (mass, values)):
        assert np.abs(exact - np.einsum("mq,mqik,mqjk->mij", scale, f, f)).max() < 1e-13 * np.abs(exact).max()
        assert np.abs(exact - exact.transpose(0, 2, 1)).max() < 1e-13 * np.abs(exact).max()


def test_order_3_numbers_three_functions_per_edge_six_per_face_and_three_per_cell():
    points, tets = kuhn_mesh(2)
    dofs = nedelec.dof_map(tets, 3)
    assert dofs.n_dofs == 3 * len(dofs.edges) + 6 * len(dofs.faces) + 3 * len(tets)
    assert all(len(np.unique(row)) == 45 for row in dofs.cell_dofs)
    cell_dofs = dofs.cell_dofs[:, 42:]
    assert len(np.unique(cell_dofs)) == cell_dofs.size  # the cell functions belong to one tetrahedron each


def cavity_eigenvalues(order: int, n: int) -> np.ndarray:
    """The three smallest non-zero eigenvalues k^2 (1/m^2) of the unit cube with PEC walls (n x E = 0: the
    unknowns of the boundary's edges and faces removed) on kuhn_mesh(n)."""
    points, tets = kuhn_mesh(n, jitter=0.1)
    dofs, stiffness, mass = assembled(order, points, tets)
    boundary = np.flatnonzero(np.bincount(dofs.tet_faces.ravel()) == 1)
    triangles = dofs.faces[boundary]
    edges = np.unique(np.concatenate([triangles[:, [0, 1]], triangles[:, [0, 2]], triangles[:, [1, 2]]]), axis=0)
    edge_index = np.flatnonzero((dofs.edges[:, None, :] == edges[None]).all(axis=2).any(axis=1))
    free = np.setdiff1d(np.arange(dofs.n_dofs), dofs.trace_dofs(edge_index, boundary))
    k, m = stiffness[free][:, free], mass[free][:, free]
    return np.sort(eigsh(k.tocsc(), k=3, M=m.tocsc(), sigma=15.0, which="LM", return_eigenvectors=False))


def test_the_pec_cube_cavity_eigenvalues_converge_at_rate_2_order():
    """The lowest resonance of the unit cube, k^2 = 2 pi^2 (three modes TE/TM 110), on distorted meshes of 2
    and 3 cubes a side: the error falls with the order on one mesh and, at order 3, by about (3/2)^6 = 11.4
    from one mesh to the next (measured 10; the eigenvalues' error is of order h^(2p)); no spurious mode below."""
    exact = 2 * np.pi ** 2
    errors = {(p, n): np.abs(cavity_eigenvalues(p, n) / exact - 1).max() for p in ORDERS for n in (2, 3)}
    assert errors[(1, 2)] > errors[(2, 2)] > errors[(3, 2)]
    assert errors[(3, 3)] < 2e-4 and errors[(3, 2)] / errors[(3, 3)] > 7.0
    assert errors[(2, 2)] / errors[(2, 3)] > 3.0  # (3/2)^4 = 5.1


@pytest.fixture(scope="module")
def order_3_sphere():
    """The ka = 1 PEC sphere at order 3, 4 elements per wavelength (about 97,000 unknowns)."""
    return run_problem(sphere(solver__order=3, geometry__elements_per_wavelength=4))


def test_order_3_is_closer_to_mie_than_order_2_on_the_same_mesh(order_3_sphere):
    """Measured (the faceted sphere with the true sphere's volume): order 3 0.024 / 0.011 dB (E- / H-plane),
    order 2 0.082 / 0.082 dB."""
    order_2 = run_problem(sphere(solver__order=2, geometry__elements_per_wavelength=4))
    assert order_2.mesh.n_elements == order_3_sphere.mesh.n_elements
    e3, e3_cross, h3, h3_cross = mie_error_db(order_3_sphere, 1.0)
    e2, _, h2, _ = mie_error_db(order_2, 1.0)
    assert e3 < 0.6 * e2 and h3 < 0.6 * h2
    assert max(e3, h3) <= 0.04 and min(e3_cross, h3_cross) >= 40
    assert order_3_sphere.converged.all()


def test_order_3_converges_to_mie_as_the_sphere_and_its_mesh_are_refined(order_3_sphere, monkeypatch):
    """The sphere with 30 instead of 60 edges around a great circle (and the tetrahedra grown from it, which
    is all the mesh near a sphere of ka = 1 follows): measured 0.036 / 0.035 dB (E- / H-plane) against
    0.024 / 0.011 dB, both with the true sphere's volume (without it: 0.178 / 0.070 against 0.034 / 0.030)."""
    monkeypatch.setattr(cases, "CURVATURE_ELEMENTS", 30)
    coarse = run_problem(sphere(solver__order=3, geometry__elements_per_wavelength=4))
    assert coarse.mesh.n_elements < order_3_sphere.mesh.n_elements / 2
    e_coarse, _, h_coarse, _ = mie_error_db(coarse, 1.0)
    e_fine, _, h_fine, _ = mie_error_db(order_3_sphere, 1.0)
    assert e_fine < 0.75 * e_coarse and h_fine < 0.5 * h_coarse


@pytest.mark.gpu
@pytest.mark.parametrize("order", ORDERS)
def test_the_element_matrices_on_cupy_are_numpys(order):
    """fem.element_matrices over CuPy arrays (what gpu_assembly runs) against its NumPy run, float64."""
    cp = pytest.importorskip("cupy")
    points, tets = kuhn_mesh(2)
    geom = nedelec.geometry(points, tets)
    for on_host, on_device in zip(element_matrices(order, geom.grads, geom.volumes),
                                  element_matrices(order, cp.asarray(geom.grads), cp.asarray(geom.volumes))):
        assert np.abs(cp.asnumpy(on_device) - on_host).max() < 1e-13 * np.abs(on_host).max()
