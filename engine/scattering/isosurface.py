"""Marching tetrahedra: the closed triangle surface where a function sampled on a regular grid crosses zero
(each grid cube cut into six tetrahedra about its main diagonal, so neighbouring cubes agree on their shared
faces and the surface is watertight). The offset surfaces S' and S of a target are built from it."""

from __future__ import annotations

import numpy as np

CUBE_CORNERS = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 1]])
CUBE_TETS = np.array([[0, 1, 3, 7], [0, 3, 2, 7], [0, 2, 6, 7], [0, 6, 4, 7], [0, 4, 5, 7], [0, 5, 1, 7]])
TET_EDGES = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])


def zero_surface(values: np.ndarray, origin: np.ndarray, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 3), triangles (m, 3)) of {f = 0} for f sampled at values (nx, ny, nz) on the grid
    origin + spacing * (i, j, k); triangles oriented with their normals toward f > 0; every vertex on a grid
    edge is shared by the triangles that meet there. values must not be zero (shift them first)."""
    shape = np.array(values.shape)
    cells = np.stack(np.meshgrid(*(np.arange(n - 1) for n in shape), indexing="ij"), -1).reshape(-1, 3)
    strides = np.array([shape[1] * shape[2], shape[2], 1])
    corner = (cells[:, None, :] + CUBE_CORNERS[None]) @ strides  # (c, 8) flat node index
    flat = values.ravel()
    positive = flat[corner] > 0
    mixed = positive.any(axis=1) & ~positive.all(axis=1)
    tets = corner[mixed][:, CUBE_TETS].reshape(-1, 4)  # (t, 4) node indices
    sign = flat[tets] > 0
    count = sign.sum(axis=1)
    cut = (count > 0) & (count < 4)
    tets, sign, count = tets[cut], sign[cut], count[cut]
    edge_key, edge_t = _crossing_edges(tets, flat)
    crossing = sign[:, TET_EDGES[:, 0]] != sign[:, TET_EDGES[:, 1]]  # (t, 6)
    keys, inverse = np.unique(edge_key[crossing], return_inverse=True)
    where = np.zeros(len(keys), dtype=np.int64)
    where[inverse.ravel()] = np.arange(inverse.size)  # any one occurrence: all give the same point
    vertex = np.full(crossing.shape, -1, dtype=np.int64)
    vertex[crossing] = inverse.ravel()
    a, b = keys // flat.size, keys % flat.size
    t = edge_t[crossing][where]
    grid = lambda n: origin + spacing * np.column_stack(np.unravel_index(n, values.shape))  # noqa: E731
    points = grid(a) * (1 - t)[:, None] + grid(b) * t[:, None]
    slots = _triangles(crossing, count)
    return points, _oriented(points, vertex.ravel()[slots], grid, tets, sign, slots[:, 0] // 6)


def _crossing_edges(tets, flat):
    """Per tetrahedron and edge: the key a * N + b (a < b grid nodes) and where f crosses zero along a->b."""
    a, b = tets[:, TET_EDGES[:, 0]], tets[:, TET_EDGES[:, 1]]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    f_lo, f_hi = flat[lo], flat[hi]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(f_lo / (f_lo - f_hi), 0.0, 1.0)
    return lo * flat.size + hi, np.nan_to_num(t)


def _triangles(crossing, count):
    """(m, 3) indices into the flattened (t, 6) edge table of the triangles of every tetrahedron."""
    out = []
    index = np.arange(len(crossing))[:, None] * 6
    single = (count == 1) | (count == 3)
    edges = np.nonzero(crossing[single])[1].reshape(-1, 3)
    out.append(index[single] + edges)
    double = count == 2
    quad = np.nonzero(crossing[double])[1].reshape(-1, 4)  # edges in TET_EDGES order: 01 02 03 12 13 23
    cycle = _cycle(quad)
    base = index[double]
    out.append(base + cycle[:, [0, 1, 2]])
    out.append(base + cycle[:, [0, 2, 3]])
    return np.concatenate(out)


def _cycle(quad: np.ndarray) -> np.ndarray:
    """The four crossing edges (q, 4) of a 2-2 split reordered so that consecutive ones share a vertex of
    the tetrahedron: the two edges sharing no vertex sit opposite each other in the quadrilateral."""
    ends = TET_EDGES[quad]  # (q, 4, 2)
    shares = (ends[:, :, None, :, None] == ends[:, None, :, None, :]).any(axis=(3, 4))  # (q, 4, 4)
    opposite_of_first = np.argmin(shares[:, 0], axis=1)  # the edge sharing no vertex with edge 0
    rows = np.arange(len(quad))
    others = np.array([[2, 3], [1, 3], [1, 2]])[opposite_of_first - 1]  # the two edges beside it
    return np.column_stack([quad[:, 0], quad[rows, others[:, 0]], quad[rows, opposite_of_first],
                            quad[rows, others[:, 1]]])


def _oriented(points, tri, grid, tets, sign, owner):
    """Triangles flipped where their normal points toward f < 0 (from the negative corners of their
    tetrahedron to its positive ones)."""
    corners = grid(tets[owner].ravel()).reshape(-1, 4, 3)
    s = sign[owner][..., None]
    toward = (corners * s).sum(1) / s.sum(1) - (corners * ~s).sum(1) / (~s).sum(1)
    p = points[tri]
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    flip = np.einsum("ij,ij->i", normal, toward) < 0
    tri = tri.copy()
    tri[flip] = tri[flip][:, ::-1]
    return tri
