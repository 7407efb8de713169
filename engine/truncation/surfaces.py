"""Closed triangulated surfaces S' and S of the truncation study: quadrature points with outward normals,
and the checks the operator needs (closed, outward, S' inside S)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MeshError, ProblemError
from ..quadrature import dunavant

POINTS_TO_DEGREE = {1: 1, 3: 2, 6: 4, 7: 5, 12: 6}  # points per triangle -> Dunavant degree


@dataclass(frozen=True, eq=False)
class TriSurface:
    """points (n, 3) metres, triangles (m, 3) node indices, oriented with outward normals once checked."""

    name: str
    points: np.ndarray
    triangles: np.ndarray

    @property
    def n_elements(self) -> int:
        return len(self.triangles)


@dataclass(frozen=True, eq=False)
class SurfaceQuadrature:
    """points (q, 3) m, outward unit normals (q, 3), weights (q,) m^2 (rule weight times area), and the
    triangle of each point."""

    points: np.ndarray
    normals: np.ndarray
    weights: np.ndarray
    triangle: np.ndarray


def check_closed_outward(surface: TriSurface) -> TriSurface:
    """The surface with its triangles oriented outward; MeshError naming the surface if it is not a
    closed, consistently orientable triangulation."""
    tri = np.asarray(surface.triangles, dtype=np.int64)
    edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    key = np.sort(edges, axis=1)
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    if (counts != 2).any():
        raise MeshError(f"surface '{surface.name}' is not closed: {int((counts == 1).sum())} edges belong to one "
                        f"triangle only and {int((counts > 2).sum())} to more than two")
    # consistently oriented: the two triangles of an edge run along it in opposite directions
    forward = edges[:, 0] < edges[:, 1]
    same = np.bincount(inverse.reshape(-1), weights=forward, minlength=len(counts))
    if (same != 1).any():
        raise MeshError(f"surface '{surface.name}' has inconsistently oriented triangles "
                        f"({int((same != 1).sum())} edges run the same way in both their triangles)")
    p = surface.points[tri]
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6
    if abs(volume) < 1e-300:
        raise MeshError(f"surface '{surface.name}' encloses no volume")
    return surface if volume > 0 else TriSurface(surface.name, surface.points, tri[:, ::-1].copy())


def winding_number(surface: TriSurface, x: np.ndarray) -> np.ndarray:
    """Generalized winding number (n,) of the closed outward surface at points x (n, 3): 1 inside, 0 outside."""
    a = surface.points[surface.triangles][None] - x[:, None, None, :]  # (n, m, 3, 3)
    la, lb, lc = (np.linalg.norm(a[:, :, i], axis=-1) for i in range(3))
    va, vb, vc = a[:, :, 0], a[:, :, 1], a[:, :, 2]
    num = np.einsum("nmk,nmk->nm", va, np.cross(vb, vc))
    den = (la * lb * lc + np.einsum("nmk,nmk->nm", va, vb) * lc + np.einsum("nmk,nmk->nm", vb, vc) * la
           + np.einsum("nmk,nmk->nm", vc, va) * lb)
    return (2 * np.arctan2(num, den)).sum(axis=1) / (4 * np.pi)


def check_inside(inner: TriSurface, outer: TriSurface) -> None:
    """Every node of inner lies inside outer (and the two do not touch)."""
    w = winding_number(outer, inner.points)
    if (w < 0.5).any():
        raise ProblemError(f"the inner surface '{inner.name}' is not inside the outer surface '{outer.name}': "
                           f"{int((w < 0.5).sum())} of its nodes lie outside")


def quadrature(surface: TriSurface, n_points: int) -> SurfaceQuadrature:
    """Dunavant points on every flat triangle, n_points in 1, 3, 6, 7, 12."""
    if n_points not in POINTS_TO_DEGREE:
        raise ProblemError(f"quadrature must be one of {', '.join(map(str, POINTS_TO_DEGREE))} points per "
                           f"triangle, got {n_points}")
    rule = dunavant(POINTS_TO_DEGREE[n_points])
    corners = surface.points[surface.triangles]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    area = 0.5 * np.linalg.norm(normal, axis=1)
    if (area <= 0).any():
        raise MeshError(f"surface '{surface.name}' has {int((area <= 0).sum())} degenerate triangles")
    normal /= 2 * area[:, None]
    q = len(rule.weights)
    return SurfaceQuadrature(np.einsum("qi,tik->tqk", rule.points, corners).reshape(-1, 3),
                             np.repeat(normal, q, axis=0), (area[:, None] * rule.weights).reshape(-1),
                             np.repeat(np.arange(len(area)), q))
