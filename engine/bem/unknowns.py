"""Where the unknowns of the collocation BEM live, with traction jumps across sharp edges.

Each mesh node has three slots (components): its displacement where that is unknown, else the nodal traction
of the elements that prescribe the displacement. Where such elements meet across a sharp edge (normals more
than SHARP_DEGREES apart) the traction may jump, so each further smooth cluster of them at the node gets an
extra traction node (a double node): three more slots, with three more equations, the boundary integral
equation collocated at a point shifted into one of the cluster's elements (barycentric SHIFT, the node's
weight first). Slots that carry no unknown (an extra node's components its cluster does not prescribe) are
idle: their rows are the identity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..backend import array_module
from .assembly import elements_of

SHARP_DEGREES = 40.0  # the normals of two elements across a sharp edge differ by more than this
SHIFT = (0.6, 0.2, 0.2)  # barycentric weights of an extra collocation point: its node's, then the others'


@dataclass(frozen=True, eq=False)
class UnknownLayout:
    """N nodes and K extra traction nodes. traction_node (M, 3, 3) int < N + K: the traction node of element e's
    node a for component k; extra_node (K,): its mesh node; extra_element (K,): the element holding its
    collocation point; extra_weights (K, 3): that point's barycentric weights over the element's nodes;
    traction (N + K, 3) bool: the slot is a traction unknown; displacement (N, 3) bool: the slot is a
    displacement unknown."""

    traction_node: np.ndarray
    extra_node: np.ndarray
    extra_element: np.ndarray
    extra_weights: np.ndarray
    traction: np.ndarray
    displacement: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.displacement)

    @property
    def n_targets(self) -> int:
        """Collocation points (N + K): the nodes, then the extra points."""
        return len(self.traction)

    @property
    def idle(self) -> np.ndarray:
        """(N + K, 3) bool: slots with no unknown (identity rows)."""
        unknown = self.traction.copy()
        unknown[: self.n_nodes] |= self.displacement
        return ~unknown

    def collocation(self, points, triangles):
        """The collocation points (N + K, 3) m; their mesh nodes (N + K,) (-1 for the extra ones); the element
        holding each extra point (-1 for the nodes) and its barycentric weights there (N + K, 3)."""
        n, k = self.n_nodes, len(self.extra_node)
        own_weights = np.concatenate([np.zeros((n, 3)), self.extra_weights])
        return (self.at_targets(points, triangles), np.r_[np.arange(n), np.full(k, -1)],
                np.r_[np.full(n, -1), self.extra_element], own_weights)

    def at_targets(self, nodal, triangles):
        """A nodal field (N, c) interpolated to the collocation points: (N + K, c); NumPy or CuPy arrays."""
        xp = array_module(nodal)
        corners = nodal[xp.asarray(triangles[self.extra_element])]  # (K, 3, c)
        extra = xp.einsum("ka,kac->kc", xp.asarray(self.extra_weights), corners)
        return xp.concatenate([nodal, extra])

    def interpolation(self, triangles) -> sp.csr_matrix:
        """(N + K, N): nodal values to the collocation points."""
        n, k = self.n_nodes, len(self.extra_node)
        rows = np.r_[np.arange(n), np.repeat(n + np.arange(k), 3)]
        cols = np.r_[np.arange(n), triangles[self.extra_element].reshape(-1)]
        return sp.csr_matrix((np.r_[np.ones(n), self.extra_weights.reshape(-1)], (rows, cols)),
                             shape=(n + k, n))

    def element_traction(self, slots, displacement_type, known):
        """Element-node tractions (M, 3, 3) Pa: the traction slots (N + K, 3) where the component is a
        prescribed displacement, known (M, 3, 3) elsewhere; NumPy or CuPy arrays."""
        xp = array_module(slots)
        gathered = slots[xp.asarray(self.traction_node), xp.arange(3)[None, None, :]]
        return xp.where(xp.asarray(displacement_type)[:, None, :], gathered, known)


def unknown_layout(points, triangles, displacement_type, sharp_degrees: float = SHARP_DEGREES) -> UnknownLayout:
    """The slots of a mesh whose element components displacement_type (M, 3) bool are prescribed."""
    n, m = len(points), len(triangles)
    disp = np.asarray(displacement_type, dtype=bool)
    normals = elements_of(points, triangles).normals
    e1, e2, ends = _edge_pairs(triangles, n)
    smooth = np.einsum("ij,ij->i", normals[e1], normals[e2]) > np.cos(np.radians(sharp_degrees))
    corner_node = triangles.reshape(-1)
    canonical = np.full((m, 3, 3), -1)  # per corner and component: the first corner of its cluster
    first_of_node = np.full((n, 3), -1)
    for k in range(3):
        link = smooth & disp[e1, k] & disp[e2, k]
        a, b = (np.concatenate([_corner(triangles, e, ends[link, j]) for j in (0, 1)]) for e in (e1[link], e2[link]))
        graph = sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(3 * m, 3 * m))
        _, label = connected_components(graph, directed=False)
        corners = np.flatnonzero(np.repeat(disp[:, k], 3))
        lowest = np.full(label.max() + 1, 3 * m)
        np.minimum.at(lowest, label[corners], corners)
        canonical.reshape(-1, 3)[corners, k] = lowest[label[corners]]
        first = np.full(n, 3 * m)
        np.minimum.at(first, corner_node[corners], lowest[label[corners]])
        first_of_node[:, k] = np.where(first < 3 * m, first, -1)
    flat = canonical.reshape(-1, 3)
    is_extra = (flat >= 0) & (flat != first_of_node[corner_node])
    extra_corner = np.unique(flat[is_extra])
    tnode = np.repeat(corner_node[:, None], 3, axis=1)
    tnode[is_extra] = n + np.searchsorted(extra_corner, flat[is_extra])
    traction = np.zeros((n + len(extra_corner), 3), dtype=bool)
    rows, comps = np.nonzero(np.repeat(disp, 3, axis=0))
    traction[tnode[rows, comps], comps] = True
    weights = np.tile(np.asarray(SHIFT[1:2] * 3), (len(extra_corner), 1))
    weights[np.arange(len(extra_corner)), extra_corner % 3] = SHIFT[0]
    fixed = traction[:n]  # a node's component is prescribed on some element iff its first cluster holds it
    return UnknownLayout(tnode.reshape(m, 3, 3), corner_node[extra_corner], extra_corner // 3, weights, traction,
                         ~fixed)


def _edge_pairs(triangles, n):
    """The two elements (e1, e2) of every edge of a closed surface and the edge's end nodes (E, 2)."""
    ends = np.stack([triangles, np.roll(triangles, -1, axis=1)], axis=2).reshape(-1, 2)
    ends = np.sort(ends, axis=1)
    key = ends[:, 0] * n + ends[:, 1]
    order = np.argsort(key, kind="stable")
    same = key[order][1:] == key[order][:-1]
    first, second = order[:-1][same], order[1:][same]
    return first // 3, second // 3, ends[first]


def _corner(triangles, e, node):
    """Flat corner index 3 e + a of node in element e."""
    return 3 * e + np.argmax(triangles[e] == node[:, None], axis=1)
