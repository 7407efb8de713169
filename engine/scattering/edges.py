"""The scatterer's sharp edges and the finer tetrahedra beside them. The field is singular along an edge of
a conducting body; with the element size of the rest of the mesh the FEM solution there sets the error of
the RCS (the 1,200-triangle NASA almond at order 2, 6 per wavelength: 2.1 dB at the HH null at phi = 70
degrees from an EFIE on the same facets; 0.7 dB with the tetrahedra graded from EDGE_SIZE at its rim,
docs/benchmarks/scattering-peers.md)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.spatial import cKDTree

from ..truncation.surfaces import TriSurface

EDGE_ANGLE_DEG = 30.0  # two facets whose normals differ by more than this meet at a sharp edge
EDGE_SIZE = 0.1  # tetrahedra at a sharp edge: this fraction of the element size (m) ...
EDGE_GROWTH = 0.3  # ... growing by this many metres per metre of distance from it


def sharp_edges(body: TriSurface, angle_deg: float = EDGE_ANGLE_DEG) -> np.ndarray:
    """The edges (k, 2) (node pairs) of a closed triangle surface whose two triangles' normals differ by
    more than angle_deg."""
    p, t = np.asarray(body.points, dtype=float), body.triangles
    normal = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    edges = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
    owner = np.tile(np.arange(len(t)), 3)
    order = np.lexsort(edges.T[::-1])  # each edge of a closed surface twice, side by side
    edges, owner = edges[order], owner[order]
    cosine = np.einsum("ij,ij->i", normal[owner[0::2]], normal[owner[1::2]])
    return edges[0::2][cosine < math.cos(math.radians(angle_deg))]


def edge_sizes(body: TriSurface, size: float) -> Callable[[np.ndarray], np.ndarray] | None:
    """size_at(points (n, 3) m) -> (n,) m: the tetrahedron edge wanted near the body's sharp edges,
    EDGE_SIZE * size on them growing by EDGE_GROWTH per metre away (size and beyond are the rest of the
    mesh's); None where the body has no sharp edge."""
    edges = sharp_edges(body)
    if len(edges) == 0:
        return None
    finest = EDGE_SIZE * size
    ends = np.asarray(body.points, dtype=float)[edges]  # (k, 2, 3)
    steps = max(1, math.ceil(float(np.linalg.norm(ends[:, 1] - ends[:, 0], axis=1).max()) / (finest / 2)))
    s = np.linspace(0.0, 1.0, steps + 1)[None, :, None]
    tree = cKDTree((ends[:, :1] * (1 - s) + ends[:, 1:] * s).reshape(-1, 3))  # samples finest / 2 apart
    return lambda points: finest + EDGE_GROWTH * tree.query(np.asarray(points, dtype=float))[0]
