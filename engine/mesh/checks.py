"""Checks every mesh reader shares: node indices in range, no repeated cells, and surfaces that do not cut
through themselves or each other (a spatial hash over the triangles, then an exact edge-triangle test on
the candidate pairs only)."""

from __future__ import annotations

import numpy as np

from ..errors import MeshError

HASH_CELLS_PER_TRIANGLE = 64  # a triangle spanning more grid cells than this is hashed by a coarser grid


def check_indices(cells: np.ndarray, n_points: int, what: str) -> None:
    """Every node index of cells (n, k) is in 0..n_points-1 (a negative one would wrap silently)."""
    if cells.size and (cells.min() < 0 or cells.max() >= n_points):
        bad = int(cells.min()) if cells.min() < 0 else int(cells.max())
        raise MeshError(f"{what}: a cell refers to node {bad}, but the nodes are numbered 0 to {n_points - 1}")


def check_no_duplicates(cells: np.ndarray, what: str) -> None:
    """No cell (n, k) lists the same nodes as another one, in any order."""
    if len(cells) < 2:
        return
    ordered = np.sort(cells, axis=1)
    _, first, counts = np.unique(ordered, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        twin = ordered[first[np.argmax(counts > 1)]]
        copies = np.flatnonzero((ordered == twin).all(axis=1))
        raise MeshError(f"{what}: cells {copies[0]} and {copies[1]} are the same cell (nodes "
                        f"{sorted(int(v) for v in twin)}); remove the duplicate")


def _candidate_pairs(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(m, 2) pairs i < j of triangles whose bounding boxes share a cell of a uniform grid."""
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
    key, owner = key[order], owner[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    pairs = [np.zeros((0, 2), dtype=np.int64)]
    lengths = np.diff(np.r_[starts, len(key)])
    for n in np.unique(lengths[lengths > 1]):  # cells of n triangles, all at once
        members = owner[starts[lengths == n][:, None] + np.arange(n)]
        i, j = np.triu_indices(n, 1)
        pairs.append(np.column_stack([members[:, i].ravel(), members[:, j].ravel()]))
    pairs = np.unique(np.sort(np.concatenate(pairs), axis=1), axis=0)
    return pairs[pairs[:, 0] != pairs[:, 1]]


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


def check_not_self_intersecting(points: np.ndarray, triangles: np.ndarray, what: str) -> None:
    """No two triangles that share no node cut through each other (an edge of one through the other's
    inside); MeshError naming the first such pair."""
    pairs = _candidate_pairs(points, triangles)
    shared = (triangles[pairs[:, 0], :, None] == triangles[pairs[:, 1], None, :]).any(axis=(1, 2))
    pairs = pairs[~shared]
    if not len(pairs):
        return
    a, b = pairs[:, 0], pairs[:, 1]
    crossing = _edges_cross(points, triangles, a, b) | _edges_cross(points, triangles, b, a)
    if crossing.any():
        i, j = pairs[np.argmax(crossing)]
        where = points[triangles[i]].mean(axis=0)
        raise MeshError(f"{what} intersects itself: triangles {i} and {j} cut through each other near "
                        f"({', '.join(f'{c:.4g}' for c in where)})")


def check_apart(points_a, triangles_a, points_b, triangles_b, what: str) -> None:
    """Two surfaces that do not cut through each other (what names them in the message)."""
    points = np.concatenate([points_a, points_b])
    triangles = np.concatenate([triangles_a, triangles_b + len(points_a)])
    pairs = _candidate_pairs(points, triangles)
    pairs = pairs[(pairs[:, 0] < len(triangles_a)) & (pairs[:, 1] >= len(triangles_a))]
    if not len(pairs):
        return
    a, b = pairs[:, 0], pairs[:, 1]
    crossing = _edges_cross(points, triangles, a, b) | _edges_cross(points, triangles, b, a)
    if crossing.any():
        where = points[triangles[a[np.argmax(crossing)]]].mean(axis=0)
        raise MeshError(f"{what} intersect each other near ({', '.join(f'{c:.4g}' for c in where)})")
