"""Checks a study runs on a mesh before using it: node indices in range, finite coordinates of a size
double precision can square, no degenerate or duplicate cells, and surfaces that do not cross themselves
or each other (candidate triangle pairs from a spatial hash, then exact edge-through-triangle tests, all
vectorised). Each raises MeshError naming what it found and where; `what` names the mesh in messages."""

from __future__ import annotations

import numpy as np

from ..errors import MeshError

MAX_COORDINATE = 1e150  # beyond it, squared lengths and areas overflow double precision


def check_node_indices(cells: np.ndarray, n_nodes: int, what: str, kind: str = "cell") -> None:
    """cells: (n_cells, k) integer node indices; each must lie in 0..n_nodes - 1 (a negative index would
    silently wrap to a node counted from the end)."""
    cells = np.asarray(cells)
    bad = np.flatnonzero(((cells < 0) | (cells >= n_nodes)).any(axis=1)) if cells.size else []
    if len(bad):
        raise MeshError(f"{what}: a {kind} refers to a node that does not exist ({len(bad)} such; first: {kind} "
                        f"{bad[0]} with nodes {cells[bad[0]].tolist()}, the mesh has nodes 0 to {n_nodes - 1})")


def check_coordinates(points: np.ndarray, what: str) -> None:
    """points: (n_nodes, d) float; every coordinate finite and at most MAX_COORDINATE in magnitude."""
    points = np.asarray(points, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(points).all(axis=1))
    if bad.size:
        raise MeshError(f"{what}: {bad.size} node(s) have non-finite coordinates (first: node "
                        f"{bad[0]} at {points[bad[0]].tolist()})")
    big = np.flatnonzero((np.abs(points) > MAX_COORDINATE).any(axis=1))
    if big.size:
        raise MeshError(f"{what}: {big.size} node(s) have coordinates beyond {MAX_COORDINATE:g} (first: node "
                        f"{big[0]} at {np.abs(points[big[0]]).max():g}), whose squared lengths and areas "
                        "overflow double precision; check the length unit")


def check_distinct_cells(cells: np.ndarray, what: str, kind: str = "cell") -> None:
    """cells: (n_cells, k) node indices; no cell uses a node twice and no two cells have the same nodes."""
    cells = np.asarray(cells, dtype=np.int64)
    if not cells.size:
        return
    ordered = np.sort(cells, axis=1)
    repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if repeated.size:
        raise MeshError(f"{what}: {repeated.size} degenerate {kind}(s) use a node twice (first: {kind} "
                        f"{repeated[0]} with nodes {cells[repeated[0]].tolist()})")
    _, first, counts = np.unique(ordered, axis=0, return_index=True, return_counts=True)
    twice = np.sort(first[counts > 1])
    if twice.size:
        raise MeshError(f"{what}: {int((counts - 1).sum())} duplicate {kind}(s) repeat the nodes of another "
                        f"(first: {kind} {twice[0]} with nodes {cells[twice[0]].tolist()})")


def check_surface_not_self_intersecting(points: np.ndarray, triangles: np.ndarray, what: str) -> None:
    """points (n, 3), triangles (m, 3): no two triangles that share no node cross each other."""
    pairs = crossing_triangle_pairs(points, triangles)
    if len(pairs):
        i, j = pairs[0]
        at = points[triangles[i]].mean(axis=0)
        raise MeshError(f"{what}: the surface intersects itself: {len(pairs)} pair(s) of triangles cross "
                        f"(first: triangles {i} and {j}, near ({', '.join(f'{c:g}' for c in at)}))")


def check_surfaces_apart(points_a, triangles_a, points_b, triangles_b, what: str) -> None:
    """Two triangle surfaces (points (n, 3), triangles (m, 3) each) that must not cross each other."""
    m = len(triangles_a)
    points = np.concatenate([points_a, points_b])
    triangles = np.concatenate([triangles_a, np.asarray(triangles_b) + len(points_a)])
    pairs = crossing_triangle_pairs(points, triangles, groups=np.repeat([0, 1], [m, len(triangles_b)]))
    if len(pairs):
        i, j = pairs[0]
        at = points[triangles[i]].mean(axis=0)
        raise MeshError(f"{what}: {len(pairs)} pair(s) of triangles cross (first: triangle {i} of the first "
                        f"and {j - m} of the second, near ({', '.join(f'{c:g}' for c in at)}))")


def crossing_triangle_pairs(points: np.ndarray, triangles: np.ndarray, groups=None) -> np.ndarray:
    """(k, 2) index pairs (i < j) of triangles that share no node and cross: an edge of one passes
    through the inside of the other. With groups (m,), only pairs from different groups. Touching
    (an edge meeting a triangle's edge or plane without passing through) and coplanar overlaps are not
    crossings; duplicate triangles are check_distinct_cells' to find."""
    points = np.asarray(points, dtype=np.float64)
    triangles = np.asarray(triangles, dtype=np.int64)
    i, j = near_triangle_pairs(points, triangles)
    keep = ~(triangles[i][:, :, None] == triangles[j][:, None, :]).any(axis=(1, 2))
    if groups is not None:
        keep &= groups[i] != groups[j]
    i, j = i[keep], j[keep]
    size = max(float(np.ptp(points, axis=0).max()), 1e-300)
    crossing = np.zeros(len(i), dtype=bool)
    step = 1 << 16
    for start in range(0, len(i), step):
        a = points[triangles[i[start:start + step]]]
        b = points[triangles[j[start:start + step]]]
        crossing[start:start + step] = _edges_through(a, b, size) | _edges_through(b, a, size)
    return np.column_stack([i[crossing], j[crossing]])


def near_triangle_pairs(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs (i, j), i < j, of triangles whose bounding boxes overlap, found through a uniform
    grid hash (cell edge about the triangles' typical size): each triangle is entered in the cells its box
    covers, and pairs are formed within each cell only."""
    corners = points[triangles]
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    extent = float(np.ptp(points, axis=0).max()) or 1.0
    cell = max(float(np.percentile((hi - lo).max(axis=1), 90)), extent / 2**20)
    while True:
        first, last = np.floor(lo / cell).astype(np.int64), np.floor(hi / cell).astype(np.int64)
        span = last - first + 1
        count = span.prod(axis=1)
        if count.sum() <= 64 * len(triangles) + 1024:
            break
        cell *= 2  # a few huge triangles: coarser cells
    owner = np.repeat(np.arange(len(triangles)), count)
    local = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    sx, sy = span[owner, 0], span[owner, 1]
    coords = first[owner] + np.column_stack([local % sx, (local // sx) % sy, local // (sx * sy)])
    coords -= coords.min(axis=0)
    dims = coords.max(axis=0) + 1
    key = coords[:, 0] + dims[0] * (coords[:, 1] + dims[1] * coords[:, 2])
    order = np.argsort(key, kind="stable")
    key, owner = key[order], owner[order]
    group_end = np.searchsorted(key, key, side="right")
    partners = group_end - np.arange(len(key)) - 1
    left = np.repeat(np.arange(len(key)), partners)
    right = left + 1 + np.arange(partners.sum()) - np.repeat(np.cumsum(partners) - partners, partners)
    i, j = np.minimum(owner[left], owner[right]), np.maximum(owner[left], owner[right])
    pair = np.unique(i * len(triangles) + j)
    i, j = pair // len(triangles), pair % len(triangles)
    overlap = ((lo[i] <= hi[j]) & (lo[j] <= hi[i])).all(axis=1) & (i != j)
    return i[overlap], j[overlap]


def _edges_through(a: np.ndarray, b: np.ndarray, size: float) -> np.ndarray:
    """(k,) whether an edge of triangle a[k] (3, 3) passes through the inside of triangle b[k]: its ends
    strictly on both sides of b's plane and the line strictly inside b's three edges (signed volumes
    beyond a tolerance of 1e-12 size^3)."""
    tol = 1e-12 * size**3
    normal = np.cross(b[:, 1] - b[:, 0], b[:, 2] - b[:, 0])
    result = np.zeros(len(a), dtype=bool)
    for e in range(3):
        p, q = a[:, e], a[:, (e + 1) % 3]
        dp = np.einsum("kj,kj->k", normal, p - b[:, 0])
        dq = np.einsum("kj,kj->k", normal, q - b[:, 0])
        sides = ((dp > tol) & (dq < -tol)) | ((dp < -tol) & (dq > tol))
        d = q - p
        v = [np.einsum("kj,kj->k", d, np.cross(b[:, s] - p, b[:, (s + 1) % 3] - p)) for s in range(3)]
        inside = ((v[0] > tol) & (v[1] > tol) & (v[2] > tol)) | ((v[0] < -tol) & (v[1] < -tol) & (v[2] < -tol))
        result |= sides & inside
    return result
