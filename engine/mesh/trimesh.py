"""2D triangle mesh with named regions (per triangle) and named boundaries (per edge), and its validation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MeshError
from ..finite import require_measurable
from .checks import check_indices, check_no_duplicates


@dataclass(frozen=True, eq=False)
class TriMesh:
    """First-order triangle mesh in the plane.

    points: (n_nodes, 2) float64, metres.
    triangles: (n_elements, 3) int64 node indices, counter-clockwise.
    region_index: (n_elements,) int64 index into region_names.
    edges: (n_edges, 2) int64 node indices of named boundary edges.
    edge_boundary: (n_edges,) int64 index into boundary_names.
    """

    points: np.ndarray
    triangles: np.ndarray
    region_index: np.ndarray
    region_names: tuple[str, ...]
    edges: np.ndarray
    edge_boundary: np.ndarray
    boundary_names: tuple[str, ...]

    @property
    def n_nodes(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_elements(self) -> int:
        return int(self.triangles.shape[0])

    def element_coords(self) -> np.ndarray:
        """(n_elements, 3, 2) float64 vertex coordinates, metres."""
        return self.points[self.triangles]

    def boundary_nodes(self, name: str) -> np.ndarray:
        """Sorted unique node indices on the named boundary."""
        k = self.boundary_names.index(name)
        return np.unique(self.edges[self.edge_boundary == k])

    def scaled(self, factor: float) -> "TriMesh":
        """The same mesh with coordinates multiplied by factor (e.g. 1e-3 for mm -> m)."""
        return TriMesh(self.points * factor, self.triangles, self.region_index, self.region_names,
                       self.edges, self.edge_boundary, self.boundary_names)


def signed_areas(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(n_elements,) signed triangle areas, positive when counter-clockwise; units of points squared."""
    p = points[triangles]
    d1 = p[:, 1] - p[:, 0]
    d2 = p[:, 2] - p[:, 0]
    return 0.5 * (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0])


def _compact(points, triangles, edges, edge_boundary):
    """Checked arrays with the nodes no triangle uses dropped and the rest renumbered:
    (points, triangles, edges, edge_boundary)."""
    if points.ndim != 2 or points.shape[1] != 2:
        raise MeshError(f"mesh points must be 2D, got an array of shape {points.shape}")
    if triangles.shape[0] == 0:
        raise MeshError("the mesh has no triangles")
    require_measurable(points, "triangles")
    check_indices(triangles, len(points), "the mesh", "triangle")
    check_indices(edges, len(points), "the mesh", "boundary edge")
    check_no_duplicates(triangles, "the mesh", "triangle")
    used = np.zeros(points.shape[0], dtype=bool)
    used[triangles.ravel()] = True
    keep_edges = used[edges].all(axis=1) if edges.size else np.zeros(0, dtype=bool)
    new_index = np.cumsum(used) - 1
    return points[used], new_index[triangles], new_index[edges[keep_edges]], edge_boundary[keep_edges]


def _oriented(points, triangles, region_index, region_names) -> np.ndarray:
    """Triangles counter-clockwise: a region drawn clockwise is flipped as a whole; a zero-area triangle,
    or one whose orientation disagrees with the rest of its region, is a MeshError naming it."""
    area = signed_areas(points, triangles)
    extent = np.ptp(points, axis=0).max()
    degenerate = np.flatnonzero(np.abs(area) <= 1e-12 * extent * extent)
    if degenerate.size:
        t = degenerate[0]
        raise MeshError(f"zero-area triangle: {degenerate.size} triangle(s) have no area "
                        f"(first: triangle {t} with nodes at {points[triangles[t]].tolist()})")
    triangles = triangles.copy()
    for k, name in enumerate(region_names):
        in_region = region_index == k
        negative = in_region & (area < 0)
        n_neg, n_all = int(negative.sum()), int(in_region.sum())
        if n_neg == n_all:
            triangles[in_region] = triangles[in_region][:, [0, 2, 1]]
        elif 2 * n_neg > n_all:
            raise _inverted(name, np.flatnonzero(in_region & (area > 0)), n_all, points, triangles)
        elif n_neg:
            raise _inverted(name, np.flatnonzero(negative), n_all, points, triangles)
    return triangles


def make_trimesh(points, triangles, region_index, region_names, edges, edge_boundary,
                 boundary_names) -> TriMesh:
    """Validate raw mesh arrays and return a compact, counter-clockwise TriMesh.

    Drops nodes that no triangle uses (renumbering the rest), flips regions drawn
    clockwise as a whole, and raises MeshError naming the first zero-area or
    inverted triangle (one whose orientation disagrees with the rest of its region).
    """
    region_index = np.asarray(region_index, dtype=np.int64).reshape(-1)
    points, triangles, edges, edge_boundary = _compact(
        np.asarray(points, dtype=np.float64), np.asarray(triangles, dtype=np.int64).reshape(-1, 3),
        np.asarray(edges, dtype=np.int64).reshape(-1, 2), np.asarray(edge_boundary, dtype=np.int64).reshape(-1))
    triangles = _oriented(points, triangles, region_index, region_names)
    # Number nodes along a Morton curve and elements by their first node, so that elements close in
    # memory share nodes close in memory: gathers and scatters of every solver stay cache-local.
    node_order = np.argsort(morton_codes(points), kind="stable")
    new_index = np.empty_like(node_order)
    new_index[node_order] = np.arange(len(node_order))
    triangles = new_index[triangles]
    element_order = np.argsort(triangles.min(axis=1), kind="stable")
    return TriMesh(points[node_order], triangles[element_order], region_index[element_order],
                   tuple(region_names), new_index[edges], edge_boundary, tuple(boundary_names))


def morton_codes(points: np.ndarray) -> np.ndarray:
    """(n,) uint64 Z-order codes of points (n, 2) quantised to 16 bits per axis over their bounding box."""
    lo, span = points.min(axis=0), np.ptp(points, axis=0)
    q = ((points - lo) / np.where(span > 0, span, 1.0) * 65535.0).astype(np.uint64)

    def spread(v):
        v = (v | (v << np.uint64(8))) & np.uint64(0x00FF00FF)
        v = (v | (v << np.uint64(4))) & np.uint64(0x0F0F0F0F)
        v = (v | (v << np.uint64(2))) & np.uint64(0x33333333)
        return (v | (v << np.uint64(1))) & np.uint64(0x55555555)

    return spread(q[:, 0]) | (spread(q[:, 1]) << np.uint64(1))


def _inverted(region: str, bad: np.ndarray, n_all: int, points, triangles) -> MeshError:
    t = bad[0]
    return MeshError(f"inverted triangle: {bad.size} of {n_all} triangles in region '{region}' "
                     f"are oriented against the rest (first: triangle {t} with nodes at "
                     f"{points[triangles[t]].tolist()})")
