"""Point location in a triangle mesh (KD-tree over centroids, exact barycentric test)."""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from .trimesh import TriMesh


class PointLocator:
    """Finds the triangle holding each query point; built once per mesh."""

    def __init__(self, mesh: TriMesh, candidates: int = 24):
        self.mesh = mesh
        coords = mesh.element_coords()
        self.centroids = coords.mean(axis=1)
        d1 = coords[:, 1] - coords[:, 0]
        d2 = coords[:, 2] - coords[:, 0]
        det = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
        # rows map (p - v0) to barycentric (l1, l2)
        self.inverse = np.stack([np.stack([d2[:, 1], -d2[:, 0]], 1),
                                 np.stack([-d1[:, 1], d1[:, 0]], 1)], 1) / det[:, None, None]
        self.origin = coords[:, 0]
        self.tree = cKDTree(self.centroids)
        self.candidates = min(candidates, mesh.n_elements)

    def barycentric(self, elements: np.ndarray, points: np.ndarray) -> np.ndarray:
        """(..., 3) barycentric coordinates of points (..., 2) in elements (...)."""
        l12 = np.einsum("...ij,...j->...i", self.inverse[elements], points - self.origin[elements])
        return np.concatenate([1.0 - l12.sum(-1, keepdims=True), l12], axis=-1)

    def locate(self, points: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
        """Element index (n,) and barycentric coordinates (n, 3) for points (n, 2); element -1 when outside."""
        points = np.atleast_2d(np.asarray(points, dtype=np.float64))
        _, near = self.tree.query(points, k=self.candidates)
        near = near.reshape(len(points), -1)
        bary = self.barycentric(near, points[:, None, :])
        best = np.argmax(bary.min(axis=2), axis=1)
        rows = np.arange(len(points))
        element, lam = near[rows, best], bary[rows, best]
        inside = lam.min(axis=1) >= -tol
        if not inside.all():  # thin or badly graded meshes: fall back to an exhaustive test
            for i in np.flatnonzero(~inside):
                all_bary = self.barycentric(np.arange(self.mesh.n_elements), points[i][None, :])
                j = int(np.argmax(all_bary.min(axis=1)))
                if all_bary[j].min() >= -tol:
                    element[i], lam[i], inside[i] = j, all_bary[j], True
        element = np.where(inside, element, -1)
        return element, lam

    def interpolate(self, nodal: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Linear interpolation of nodal values (n_nodes,) at points (n, 2); NaN outside the mesh."""
        element, lam = self.locate(points)
        values = np.einsum("ni,ni->n", lam, nodal[self.mesh.triangles[np.maximum(element, 0)]])
        return np.where(element >= 0, values, np.nan)
