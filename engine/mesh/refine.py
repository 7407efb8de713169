"""Uniform red refinement of a triangle mesh: every triangle split into four by its edge midpoints."""

from __future__ import annotations

import numpy as np

from .trimesh import TriMesh, make_trimesh


def refine_uniform(mesh: TriMesh) -> TriMesh:
    """Split each triangle into four similar ones (straight edges stay exact); regions are inherited
    and each named boundary edge becomes two. Orientation is preserved."""
    n = mesh.n_nodes
    tri = mesh.triangles
    local_edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    keys = np.sort(local_edges, axis=1)
    unique, inverse = np.unique(keys[:, 0] * n + keys[:, 1], return_inverse=True)
    a, b = unique // n, unique % n
    midpoints = 0.5 * (mesh.points[a] + mesh.points[b])
    m = n + inverse.reshape(3, -1).T  # (n_elements, 3) midpoint of edges 01, 12, 20
    v0, v1, v2 = tri[:, 0], tri[:, 1], tri[:, 2]
    m01, m12, m20 = m[:, 0], m[:, 1], m[:, 2]
    children = np.concatenate([np.column_stack(c) for c in (
        (v0, m01, m20), (m01, v1, m12), (m20, m12, v2), (m01, m12, m20))])
    edge_key = np.sort(mesh.edges, axis=1)
    edge_mid = n + np.searchsorted(unique, edge_key[:, 0] * n + edge_key[:, 1])
    edges = np.concatenate([np.column_stack([mesh.edges[:, 0], edge_mid]),
                            np.column_stack([edge_mid, mesh.edges[:, 1]])])
    return make_trimesh(np.concatenate([mesh.points, midpoints]), children, np.tile(mesh.region_index, 4),
                        mesh.region_names, edges, np.tile(mesh.edge_boundary, 2), mesh.boundary_names)
