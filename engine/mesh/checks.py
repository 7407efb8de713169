"""Checks every mesh reader shares: node indices in range, no degenerate or repeated cells, and surfaces
that do not cut through themselves or each other (a spatial hash over the triangles, then an exact
edge-triangle test on the candidate pairs only). Each raises MeshError naming what it found and where;
`what` names the mesh in messages. (Coordinates too large to square: finite.require_measurable.)"""

from __future__ import annotations

import numpy as np

from ..errors import MeshError
from ..sorted_sets import unique_sorted

HASH_CELLS_PER_TRIANGLE = 64  # a triangle spanning more grid cells than this is hashed by a coarser grid


def check_indices(cells: np.ndarray, n_points: int, what: str, kind: str = "cell") -> None:
    """Every node index of cells (n, k) is in 0..n_points-1 (a negative one would wrap silently); kind names
    a cell in the message ('triangle', 'boundary face')."""
    cells = np.asarray(cells)
    if cells.size and (cells.min() < 0 or cells.max() >= n_points):
        bad = np.flatnonzero(((cells < 0) | (cells >= n_points)).any(axis=1))
        raise MeshError(f"{what}: a {kind} refers to a node that does not exist ({bad.size} such; first: {kind} "
                        f"{bad[0]} with nodes {cells[bad[0]].tolist()}, but the nodes are numbered 0 to "
                        f"{n_points - 1})")


def check_no_duplicates(cells: np.ndarray, what: str, kind: str = "cell") -> None:
    """No cell (n, k) uses a node twice (a degenerate cell) and none lists the same nodes as another one, in
    any order."""
    cells = np.asarray(cells, dtype=np.int64)
    if not cells.size:
        return
    ordered = np.sort(cells, axis=1)
    repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if repeated.size:
        raise MeshError(f"{what}: {repeated.size} degenerate {kind}(s) use a node twice (first: {kind} "
                        f"{repeated[0]} with nodes {cells[repeated[0]].tolist()})")
    if len(cells) < 2:
        return
    _, first, counts = np.unique(ordered, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        twin = ordered[first[np.argmax(counts > 1)]]
        copies = np.flatnonzero((ordered == twin).all(axis=1))
        kinds = "hexahedra" if kind == "hexahedron" else f"{kind}s"
        raise MeshError(f"{what}: {kinds} {copies[0]} and {copies[1]} are the same {kind} (nodes "
                        f"{sorted(int(v) for v in twin)}; {int((counts - 1).sum())} duplicate(s) in all); "
                        "remove the duplicate")


def _candidate_pairs(points: np.ndarray, triangles: np.ndarray, split: int | None = None) -> np.ndarray:
    """(m, 2) pairs i < j of triangles whose bounding boxes share a cell of a uniform grid; with split, only
    the pairs of a triangle below split with one from split on."""
    key, owner = _grid_cells(points, triangles)
    if split is not None:
        return _pairs_across(key, owner, split)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    pairs = [np.zeros((0, 2), dtype=np.int64)]
    lengths = np.diff(np.r_[starts, len(key)])
    for n in np.unique(lengths[lengths > 1]):  # cells of n triangles, all at once
        members = owner[starts[lengths == n][:, None] + np.arange(n)]
        i, j = np.triu_indices(n, 1)
        pairs.append(np.column_stack([members[:, i].ravel(), members[:, j].ravel()]))
    pairs = np.unique(np.sort(np.concatenate(pairs), axis=1), axis=0)
    return pairs[pairs[:, 0] != pairs[:, 1]]


def _pairs_across(key: np.ndarray, owner: np.ndarray, split: int) -> np.ndarray:
    """The pairs (a, b), a < split <= b, of triangles in a common cell, from the cells' sorted keys and
    owners: each b's cell looked up among the a's, without forming the pairs within either side."""
    below = owner < split
    key_a, owner_a, key_b, owner_b = key[below], owner[below], key[~below], owner[~below]
    lo, hi = np.searchsorted(key_a, key_b, "left"), np.searchsorted(key_a, key_b, "right")
    counts = hi - lo
    a = owner_a[np.repeat(lo, counts) + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)]
    b = np.repeat(owner_b, counts)
    n = int(owner.max()) + 1
    unique = unique_sorted(a * n + b)
    return np.column_stack([unique // n, unique % n])


def _grid_cells(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(key, owner): every cell of a uniform grid that a triangle's bounding box covers, as a key, and that
    triangle, sorted by key (the grid as fine as the median triangle allows within HASH_CELLS_PER_TRIANGLE)."""
    corners = points[triangles]
    low, high = corners.min(axis=1), corners.max(axis=1)
    size = np.median(np.linalg.norm(high - low, axis=1)) or 1.0
    while True:
        first, last = np.floor(low / size).astype(np.int64), np.floor(high / size).astype(np.int64)
        span = last - first + 1
        if span.prod(axis=1).max() <= HASH_CELLS_PER_TRIANGLE:
            break
        size *= 2.0
    counts = span.prod(axis=1)
    owner = np.repeat(np.arange(len(triangles)), counts)
    local = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    sx, sy = span[owner, 0], span[owner, 1]
    cell = first[owner] + np.column_stack([local % sx, (local // sx) % sy, local // (sx * sy)])
    key = (cell - cell.min(axis=0)) @ np.array([1, 1 << 21, 1 << 42], dtype=np.int64)
    order = np.lexsort((owner, key))
    return key[order], owner[order]


def _edges_cross(points, triangles, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether an edge of triangle a[k] passes through the inside of triangle b[k] (Moller-Trumbore, with
    a small tolerance so that edges touching b's boundary do not count)."""
    hit = np.zeros(len(a), dtype=bool)
    p0, p1, p2 = (points[triangles[b, c]] for c in range(3))
    e1, e2 = p1 - p0, p2 - p0
    for u, v in ((0, 1), (1, 2), (2, 0)):
        start, end = points[triangles[a, u]], points[triangles[a, v]]
        d = end - start
        h = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, h)
        ok = np.abs(det) > 1e-14 * np.linalg.norm(e1, axis=1) * np.linalg.norm(e2, axis=1) * np.linalg.norm(d, axis=1)
        f = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        s = start - p0
        bu = f * np.einsum("ij,ij->i", s, h)
        q = np.cross(s, e1)
        bv = f * np.einsum("ij,ij->i", d, q)
        t = f * np.einsum("ij,ij->i", e2, q)
        eps = 1e-9
        hit |= ok & (bu > eps) & (bv > eps) & (bu + bv < 1 - eps) & (t > eps) & (t < 1 - eps)
    return hit


def _straddles(points, triangles, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether triangle b[k] touches the plane of triangle a[k] (its corners not all strictly on one side):
    two triangles cut through each other only where each touches the other's plane."""
    p0, p1, p2 = (points[triangles[a, c]] for c in range(3))
    normal = np.cross(p1 - p0, p2 - p0)
    side = np.einsum("ikj,ij->ik", points[triangles[b]] - p0[:, None], normal)
    return (side.min(axis=1) <= 0) & (side.max(axis=1) >= 0)


def crossing_pairs(points: np.ndarray, triangles: np.ndarray, split: int | None = None) -> np.ndarray:
    """(k, 2) pairs i < j of triangles that share no node and cut through each other (an edge of one through
    the other's inside); with split, only pairs of a triangle below split with one from split on (two
    surfaces stacked into one array)."""
    points, triangles = np.asarray(points, dtype=np.float64), np.asarray(triangles, dtype=np.int64)
    if len(triangles) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = _candidate_pairs(points, triangles, split)
    shared = (triangles[pairs[:, 0], :, None] == triangles[pairs[:, 1], None, :]).any(axis=(1, 2))
    pairs = pairs[~shared]
    pairs = pairs[_straddles(points, triangles, pairs[:, 0], pairs[:, 1])]
    pairs = pairs[_straddles(points, triangles, pairs[:, 1], pairs[:, 0])]
    a, b = pairs[:, 0], pairs[:, 1]
    crossing = _edges_cross(points, triangles, a, b) | _edges_cross(points, triangles, b, a)
    return pairs[crossing]


def check_not_self_intersecting(points: np.ndarray, triangles: np.ndarray, what: str) -> None:
    """No two triangles that share no node cut through each other (an edge of one through the other's
    inside); MeshError naming the first such pair and how many there are."""
    pairs = crossing_pairs(points, triangles)
    if len(pairs):
        i, j = pairs[0]
        where = points[triangles[i]].mean(axis=0)
        raise MeshError(f"{what} intersects itself: triangles {i} and {j} cut through each other near "
                        f"({', '.join(f'{c:.4g}' for c in where)}) ({len(pairs)} such pair(s))")


def check_apart(points_a, triangles_a, points_b, triangles_b, what: str) -> None:
    """Two surfaces that do not cut through each other (what names them in the message)."""
    points = np.concatenate([points_a, points_b])
    triangles = np.concatenate([triangles_a, np.asarray(triangles_b) + len(points_a)])
    pairs = crossing_pairs(points, triangles, split=len(triangles_a))
    if len(pairs):
        where = points[triangles[pairs[0, 0]]].mean(axis=0)
        raise MeshError(f"{what} intersect each other near ({', '.join(f'{c:.4g}' for c in where)}) "
                        f"({len(pairs)} crossing pair(s) of triangles)")
