"""The surface traces and tangential mass matrices of engine/scattering/fem.py against independent formulas:
the mass as V^T P V (V the value map, P the tangential projector weighted by the quadrature, a sparse
product), the value and curl maps as the mean of the two sides' functions assembled entry by entry (COO),
and the DOF numbering's edges and faces as NumPy's unique rows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from paraflux.engine.quadrature import dunavant
from paraflux.engine.scattering import nedelec
from paraflux.engine.scattering.cases import sphere_case
from paraflux.engine.scattering.fem import _barycentric_in_tets, adjacent_tets, discretise, surface_trace
from paraflux.engine.scattering.mesh import volume_mesh
from paraflux.engine.scattering.nedelec import basis

SURFACES = ("scatterer", "inner", "outer")


@pytest.fixture(scope="module", params=[1, 2, 3])
def disc(request):
    return discretise(volume_mesh(*sphere_case(0.3, 1.0, 0.1, 0.2, 6.0), 1.0 / 6.0), request.param)


def _projected_mass(trace) -> sp.csr_matrix:
    """V^T P V: P block diagonal, w (I - n n^T) at each point."""
    p, n = len(trace.weights), trace.normals
    block = trace.weights[:, None, None] * (np.eye(3)[None] - n[:, :, None] * n[:, None, :])
    base = 3 * np.arange(p)[:, None, None]
    rows = np.broadcast_to(base + np.arange(3)[None, :, None], block.shape)
    cols = np.broadcast_to(base + np.arange(3)[None, None, :], block.shape)
    proj = sp.csr_matrix((block.ravel(), (rows.ravel(), cols.ravel())), shape=(3 * p, 3 * p))
    return (trace.value.T @ proj @ trace.value).tocsr()


def _two_sided_maps(disc, name):
    """The value and curl maps as the mean of both adjacent tetrahedra's functions (the same one twice on a
    boundary), entry by entry."""
    triangles = disc.mesh.surfaces[name]
    rule = dunavant(2 * disc.order)
    pair, _ = adjacent_tets(disc, triangles)
    maps = [[], []]
    for side in range(2):
        tets = pair[:, side]
        lam = _barycentric_in_tets(disc.mesh.tets[tets], triangles, rule.points)
        for i, x in enumerate(basis(disc.order, lam, disc.geom.grads[tets])):
            k, q, f, _ = x.shape
            rows = np.broadcast_to(np.arange(k * q * 3).reshape(k, q, 1, 3), x.shape)
            cols = np.broadcast_to(disc.dofs.cell_dofs[tets][:, None, :, None], x.shape)
            maps[i].append(sp.coo_matrix((0.5 * x.ravel(), (rows.ravel(), cols.ravel())),
                                         shape=(k * q * 3, disc.dofs.n_dofs)))
    return [(a + b).tocsr() for a, b in maps]


@pytest.mark.parametrize("name", SURFACES)
def test_the_tangential_mass_is_the_projected_product_of_the_value_map(disc, name):
    trace = surface_trace(disc, name)
    reference = _projected_mass(trace)
    assert abs(trace.mass - reference).max() <= 1e-12 * abs(reference).max()
    assert abs(trace.mass - trace.mass.T).max() <= 1e-12 * abs(reference).max()


@pytest.mark.parametrize("name", SURFACES)
def test_value_and_curl_maps_are_the_mean_of_both_sides(disc, name):
    trace = surface_trace(disc, name)
    for fast, reference in zip((trace.value, trace.curl), _two_sided_maps(disc, name)):
        assert fast.has_canonical_format and fast.shape == reference.shape
        assert abs(fast - reference).max() <= 1e-12 * abs(reference).max()


@pytest.mark.parametrize("largest", [40, 2**21])  # keys, and unique rows where the keys would overflow
def test_edges_and_faces_are_numbered_as_numpys_unique_rows(largest):
    rng = np.random.default_rng(3)
    for columns in (2, 3):
        rows = np.sort(rng.choice(largest, (500, columns)), axis=1)
        rows = np.concatenate([rows, rows[::3]])  # repeated rows
        unique, inverse = nedelec._numbered(rows)
        expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
        assert np.array_equal(unique, expected) and np.array_equal(inverse, expected_inverse.reshape(-1))


@pytest.mark.parametrize("order", nedelec.ORDERS)
def test_only_a_faces_own_functions_have_a_tangential_trace_on_it(order):
    """nedelec.face_functions: on each face of a random tetrahedron, every other local function's tangential
    value vanishes (to 1e-13 of the largest) at random points of the face, and each listed one does not."""
    rng = np.random.default_rng(order)
    corners = rng.standard_normal((4, 3))
    grads = np.linalg.inv(np.c_[corners, np.ones(4)])[:3].T[None]  # (1, 4, 3): rows of the inverse are g_i
    listed = nedelec.face_functions(order)
    assert listed.shape == (4, {1: 3, 2: 8, 3: 15}[order])
    for i, face in enumerate(nedelec.LOCAL_FACES):
        bary = rng.dirichlet(np.ones(3), 7)
        lam = np.zeros((1, 7, 4))
        lam[0, :, list(face)] = bary.T
        values = basis(order, lam, grads)[0][0]  # (7, f, 3)
        a, b, c = corners[list(face)]
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n)
        tangential = np.linalg.norm(values - (values @ n)[..., None] * n, axis=2).max(axis=0)  # (f,)
        others = np.setdiff1d(np.arange(len(tangential)), listed[i])
        assert tangential[others].max() <= 1e-13 * tangential.max()
        assert tangential[listed[i]].min() > 1e-3 * tangential.max()


@pytest.mark.parametrize("name", SURFACES)
def test_a_trace_built_in_blocks_equals_one_built_whole(disc, name, monkeypatch):
    from paraflux.engine.scattering import fem  # noqa: PLC0415

    whole = surface_trace(disc, name)
    monkeypatch.setattr(fem, "TRACE_CHUNK", 4000)  # a few triangles a block
    blocks = surface_trace(disc, name)
    for a, b in ((whole.value, blocks.value), (whole.curl, blocks.curl), (whole.mass, blocks.mass)):
        assert a.shape == b.shape and abs(a - b).max() <= 1e-15 * abs(a).max()
    np.testing.assert_array_equal(whole.points, blocks.points)
    np.testing.assert_array_equal(whole.weights, blocks.weights)


def test_a_surface_without_triangles_has_empty_maps(disc):
    from dataclasses import replace  # noqa: PLC0415

    from paraflux.engine.scattering.fem import Discretisation  # noqa: PLC0415

    mesh = replace(disc.mesh, surfaces={**disc.mesh.surfaces, "outer": np.zeros((0, 3), dtype=np.int64)})
    trace = surface_trace(Discretisation(mesh, disc.dofs, disc.geom), "outer")
    assert trace.value.shape == trace.curl.shape == (0, disc.dofs.n_dofs)
    assert trace.mass.shape == (disc.dofs.n_dofs,) * 2 and trace.mass.nnz == 0 and len(trace.points) == 0
