"""A triangle soup made a closed surface with outward normals, as surface meshes come from users (STL, OBJ,
PLY) and from CAD meshers: coincident vertices merged, degenerate triangles and zero-thickness folds
dropped, each closed component oriented consistently and outward, components enclosed by another dropped
(no wave reaches them). A hole, an edge of more than two triangles or a one-sided surface is refused with
a MeshError naming its place in the points' unit (metres where the caller has scaled them)."""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components
from scipy.spatial import cKDTree

from ..errors import MeshError
from ..finite import require_measurable
from .checks import check_indices
from .winding import winding_numbers

MERGE_TOLERANCE = 1e-6  # of the bounding box's diagonal: vertices closer than this are one vertex
FLAT = 1e-12  # a triangle whose doubled area is below FLAT * size^2 is degenerate (size: the widest extent)


def closed_outward(points: np.ndarray, triangles: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 3), triangles (m, 3)) of the soup's closed surface, every component outward; name is
    the surface's name in messages."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    triangles = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    require_measurable(points, "triangles")
    check_indices(triangles, len(points), f"surface '{name}'", "triangle")
    points, triangles = merged_vertices(points, triangles)
    triangles = without_folds(points, without_degenerate(points, triangles))
    if not len(triangles):
        raise MeshError(f"surface '{name}' has no triangle with an area")
    check_closed_manifold(points, triangles, name)
    triangles, component = oriented(points, triangles, name)
    triangles = outward(points, triangles, component, name)
    return points, triangles


def merged_vertices(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points within MERGE_TOLERANCE of the bounding box's diagonal of each other made one (the first)."""
    tolerance = MERGE_TOLERANCE * float(np.linalg.norm(np.ptp(points, axis=0))) if len(points) else 0.0
    pairs = cKDTree(points).query_pairs(tolerance, output_type="ndarray")
    n = len(points)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    first = np.full(label.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, label, np.arange(n))
    return points[first], label[triangles]


def without_degenerate(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The triangles that use three distinct vertices and have an area."""
    return triangles[has_area(points, triangles)]


def has_area(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(k,) bool: which triangles use three distinct vertices and have an area (above FLAT of the points'
    extent squared)."""
    ordered = np.sort(triangles, axis=1)
    distinct = (ordered[:, 1:] != ordered[:, :-1]).all(axis=1)
    p = points[triangles]
    doubled_area = np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    size = float(np.ptp(points, axis=0).max()) if len(points) else 0.0
    return distinct & (doubled_area > FLAT * size ** 2)


def without_folds(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """A triangle listed more than once kept once where its edges are open without it (a repeated facet),
    dropped where they are closed without it (two copies folded onto each other, as gmsh can make at a
    cone's apex: their tip kept, tips_kept)."""
    ordered = np.sort(triangles, axis=1)
    _, first, inverse, counts = np.unique(ordered, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True)
    single = counts[inverse.reshape(-1)] == 1
    repeated = triangles[first[counts > 1]]
    if not len(repeated):
        return triangles
    keys, uses = np.unique(edge_keys(triangles[single]), return_counts=True)
    at = np.clip(np.searchsorted(keys, edge_keys(repeated)), 0, max(len(keys) - 1, 0))
    found = uses[at] * (keys[at] == edge_keys(repeated)) if len(keys) else np.zeros(3 * len(repeated), int)
    open_without = (found.reshape(3, -1) == 1).all(axis=0)
    return tips_kept(points, np.concatenate([triangles[single], repeated[open_without]]), repeated[~open_without])


def tips_kept(points: np.ndarray, triangles: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """The triangles with the tip of each dropped fold put back: where a vertex v of a fold (v, a, b) is in
    no triangle left (gmsh's mesh of a cone's apex: a fold hanging off edge ab of a flat cap), the
    triangles on edge ab replaced by a fan from v (tip_fan), so that the surface reaches its apex again
    (folds hanging off folds in turn, from the surface outward)."""
    folds = list(folds)
    while folds:
        hanging = [f for f in folds if np.isin(f, triangles).sum() == 2]
        if not hanging:
            return triangles
        for fold in hanging:
            used = np.isin(fold, triangles)
            if used.sum() != 2:  # its tip put back by a fold before it
                continue
            v, (a, b) = fold[~used][0], fold[used]
            triangles = tip_fan(points, triangles, np.flatnonzero(np.isin(triangles, [a, b]).sum(axis=1) == 2), v)
        folds = [f for f in folds if not any(f is h for h in hanging)]
    return triangles


def tip_fan(points: np.ndarray, triangles: np.ndarray, region: np.ndarray, v: int, grow: int = 6) -> np.ndarray:
    """The triangles with those of region (indices) replaced by a fan from vertex v over the region's boundary,
    oriented as they were; where a fan triangle would have no area (v in line with a boundary edge), the
    region grows across that edge, up to grow times; the triangles unchanged where no fan has area."""
    region = set(region.tolist())
    if not region:  # no triangle on the fold's edge: nothing to replace
        return triangles
    for _ in range(grow):
        inside = triangles[sorted(region)]
        directed = np.concatenate([inside[:, [0, 1]], inside[:, [1, 2]], inside[:, [2, 0]]])
        inner = {tuple(e) for e in directed.tolist()}
        boundary = np.array([e for e in directed.tolist() if (e[1], e[0]) not in inner], dtype=triangles.dtype)
        boundary = boundary.reshape(-1, 2)
        if not len(boundary):  # a closed region (a whole part): no rim to fan over
            return triangles
        fan = np.column_stack([boundary, np.full(len(boundary), v)])
        flat = ~has_area(points, fan)
        if not flat.any():
            return np.concatenate([np.delete(triangles, sorted(region), axis=0), fan])
        for e0, e1 in boundary[flat]:  # the neighbour across each flat triangle's edge joins the region
            region |= set(np.flatnonzero(np.isin(triangles, [e0, e1]).sum(axis=1) == 2).tolist())
    return triangles


def edge_keys(triangles: np.ndarray) -> np.ndarray:
    """One int64 per edge (3m,) of the triangles (m, 3), the same for both directions: edges 01, 12, 20 of
    every triangle in turn (edge e belongs to triangle e % m)."""
    a, b = directed_edges(np.asarray(triangles, dtype=np.int64)).T
    return np.minimum(a, b) * (1 << 31) + np.maximum(a, b)


def directed_edges(triangles: np.ndarray) -> np.ndarray:
    return np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]])


def check_closed_manifold(points: np.ndarray, triangles: np.ndarray, name: str) -> None:
    """MeshError at the first edge of more than two triangles, else at the first of one triangle only (a hole
    or a gap)."""
    keys, first, counts = np.unique(edge_keys(triangles), return_index=True, return_counts=True)
    edges = directed_edges(triangles)
    for bad, what in ((counts > 2, "is not a manifold: {n} edges are shared by more than two triangles, the "
                                   "first from {a} to {b}"),
                      (counts == 1, "is not closed: {n} edges belong to one triangle only (a hole or a gap), "
                                    "the first from {a} to {b}")):
        if bad.any():
            a, b = points[edges[first[np.argmax(bad)]]]
            raise MeshError(f"surface '{name}' " + what.format(n=int(bad.sum()), a=place(a), b=place(b)))


def place(x) -> str:
    return "(" + ", ".join(f"{c:.4g}" for c in x) + ") m"


def oriented(points: np.ndarray, triangles: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(triangles, component (m,)) of a closed manifold surface: each triangle flipped where needed so that
    the two triangles of every edge run along it in opposite directions (a breadth-first walk from one
    triangle of each component, the flips summed along the walk by pointer jumping), and the connected
    component of each; MeshError where no orientation exists (a one-sided surface)."""
    m = len(triangles)
    edges = directed_edges(triangles)
    pairs = np.argsort(edge_keys(triangles), kind="stable").reshape(-1, 2)  # the two edges of each key
    t1, t2 = pairs.T % m
    same = (edges[pairs[:, 0], 0] == edges[pairs[:, 1], 0]).astype(np.int64)  # one of the two must flip
    graph = csr_matrix((np.ones(len(t1)), (t1, t2)), shape=(m, m))
    n_components, component = connected_components(graph, directed=False)
    roots = np.unique(component, return_index=True)[1]
    rows = np.concatenate([t1, t2, np.full(n_components, m)])
    cols = np.concatenate([t2, t1, roots])
    walk = csr_matrix((np.concatenate([same, same, np.zeros(n_components, np.int64)]) + 1, (rows, cols)),
                      shape=(m + 1, m + 1))
    _, parent = breadth_first_order(walk, m, directed=True, return_predecessors=True)
    parent[m] = m
    flip = np.zeros(m + 1, dtype=np.int64)
    flip[:m] = np.asarray(walk[parent[:m], np.arange(m)]).ravel() - 1
    while (parent != m).any():
        flip, parent = flip ^ flip[parent], parent[parent]
    wrong = (flip[t1] ^ flip[t2]) != same
    if wrong.any():
        where = points[edges[pairs[np.argmax(wrong), 0]]].mean(axis=0)
        raise MeshError(f"surface '{name}' cannot be oriented: it is one-sided (like a Moebius strip) near "
                        f"{place(where)}")
    flipped = flip[:m].astype(bool)
    triangles = triangles.copy()
    triangles[flipped] = triangles[flipped][:, ::-1]
    return triangles, component


def outward(points: np.ndarray, triangles: np.ndarray, component: np.ndarray, name: str) -> np.ndarray:
    """The consistently oriented components each turned to enclose a positive volume (normals out), those
    inside another component dropped; MeshError for a component that encloses no volume."""
    p = points[triangles] - points.mean(axis=0)
    volume = np.bincount(component, np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])) / 6)
    size = float(np.ptp(points, axis=0).max())
    flat = np.abs(volume) <= FLAT * size ** 3
    if flat.any():
        where = points[triangles[np.argmax(component == np.argmax(flat))]].mean(axis=0)
        raise MeshError(f"surface '{name}' has a closed part that encloses no volume, near {place(where)}")
    inward = volume[component] < 0
    triangles = triangles.copy()
    triangles[inward] = triangles[inward][:, ::-1]
    return triangles[~enclosed(points, triangles, component)[component]]


def enclosed(points: np.ndarray, triangles: np.ndarray, component: np.ndarray) -> np.ndarray:
    """(k,) whether each of the k outward components lies inside another one (a vertex of it at winding
    number above one half), tested only against the components whose bounding box holds its own."""
    k = int(component.max()) + 1
    inside = np.zeros(k, dtype=bool)
    if k == 1:
        return inside
    corners = points[triangles]
    low, high = np.full((k, 3), np.inf), np.full((k, 3), -np.inf)
    np.minimum.at(low, component, corners.min(axis=1))
    np.maximum.at(high, component, corners.max(axis=1))
    probe = points[triangles[np.unique(component, return_index=True)[1], 0]]
    holds = (low[None] <= low[:, None]).all(axis=2) & (high[:, None] <= high[None]).all(axis=2)
    for c, d in zip(*np.nonzero(holds & ~np.eye(k, dtype=bool))):
        if not inside[c]:
            inside[c] = winding_numbers(points[triangles[component == d]], probe[c:c + 1])[0] > 0.5
    return inside
