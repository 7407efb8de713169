"""Closed triangulated surfaces S' and S of the truncation study: quadrature points with outward normals,
and the checks the operator needs (closed, outward, S' inside S)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import MeshError, ProblemError
from ..finite import require_measurable
from ..mesh.checks import check_indices, check_no_duplicates, check_not_self_intersecting
from ..mesh.repair import closed_outward
from ..mesh.winding import winding_numbers
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

    @property
    def n_nodes(self) -> int:
        return len(self.points)


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
    doubled_area = np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    size = np.ptp(surface.points, axis=0).max()
    flat = doubled_area <= 1e-12 * size ** 2  # no normal to orient or integrate with
    if flat.any():
        raise MeshError(f"surface '{surface.name}' has {int(flat.sum())} degenerate (zero-area) triangles, the "
                        f"first at ({', '.join(f'{c:g}' for c in p[np.argmax(flat)].mean(axis=0))}) m")
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6
    if abs(volume) < 1e-300:
        raise MeshError(f"surface '{surface.name}' encloses no volume")
    return surface if volume > 0 else TriSurface(surface.name, surface.points, tri[:, ::-1].copy())


def banded_triangles(n_rings: int, n_phi: int) -> np.ndarray:
    """Triangles (m, 3) of a closed surface of rings of n_phi points between two poles, points ordered
    pole, ring 0, ..., ring n_rings - 1, pole (each ring by increasing angle); fans at the poles."""
    j = np.arange(n_phi)
    last = 1 + n_rings * n_phi
    tri = [np.column_stack([np.zeros(n_phi, int), 1 + j, 1 + (j + 1) % n_phi])]
    for i in range(n_rings - 1):
        a, b = 1 + i * n_phi, 1 + (i + 1) * n_phi
        tri += [np.column_stack([a + j, b + j, b + (j + 1) % n_phi]),
                np.column_stack([a + j, b + (j + 1) % n_phi, a + (j + 1) % n_phi])]
    a = 1 + (n_rings - 1) * n_phi
    tri.append(np.column_stack([a + j, np.full(n_phi, last), a + (j + 1) % n_phi]))
    return np.vstack(tri)


def uv_sphere(n_theta: int, radius: float):
    """A closed latitude-longitude triangulated sphere: points (n, 3), outward triangles (m, 3); n_theta bands,
    2 n_theta sectors (poles as fans)."""
    n_phi = 2 * n_theta
    theta = np.linspace(0, np.pi, n_theta + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, n_phi + 1)[:-1]
    ring = np.stack(np.meshgrid(theta, phi, indexing="ij"), -1).reshape(-1, 2)
    pts = np.vstack([[0, 0, radius], radius * np.column_stack([np.sin(ring[:, 0]) * np.cos(ring[:, 1]),
                                                               np.sin(ring[:, 0]) * np.sin(ring[:, 1]),
                                                               np.cos(ring[:, 0])]), [0, 0, -radius]])
    return pts, banded_triangles(n_theta - 1, n_phi)


def compact_surface(name: str, points: np.ndarray, triangles: np.ndarray) -> TriSurface:
    """The closed surface of these triangles, oriented outward, with the points no triangle uses dropped
    (finite coordinates, node indices in range and no degenerate or repeated triangle, else a MeshError)."""
    triangles = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    require_measurable(points, "triangles")
    check_indices(triangles, len(points), f"surface '{name}'", "triangle")
    check_no_duplicates(triangles, f"surface '{name}'", "triangle")
    used, tri = np.unique(triangles, return_inverse=True)
    return check_closed_outward(TriSurface(name, np.asarray(points, dtype=float)[used], tri.reshape(-1, 3)))


def read_triangle_mesh(path, what: str):
    """A meshio-readable file with finite 3D points and at least one triangle block (MeshError naming what
    otherwise): the meshio Mesh."""
    from ..mesh.meshio_read import read_meshio  # noqa: PLC0415

    path = Path(path)
    mesh = read_meshio(path, f"{what}: ")
    if not any(c.type == "triangle" for c in mesh.cells):
        raise MeshError(f"{what}: {path} has no triangles (a 2D physical group of first-order triangles is needed)")
    points = np.asarray(mesh.points)
    if points.ndim != 2 or points.shape[1] != 3 or not np.isfinite(points).all():
        raise MeshError(f"{what}: {path} needs finite 3D node coordinates")
    return mesh


def read_surface(path, scale: float, what: str) -> TriSurface:
    """All triangles of a meshio-readable file as a closed surface oriented outward, coordinates times
    scale (m per file unit), repaired as mesh.repair does a triangle soup (STL, OBJ, PLY as users have
    them); what names the surface in messages."""
    mesh = read_triangle_mesh(path, what)
    tri = np.concatenate([c.data for c in mesh.cells if c.type == "triangle"])
    name = Path(path).name
    surface = compact_surface(name, *closed_outward(scale * np.asarray(mesh.points, dtype=float), tri, name))
    check_not_self_intersecting(surface.points, surface.triangles, f"{what} {Path(path).name}")
    return surface


def winding_number(surface: TriSurface, x: np.ndarray, check=lambda: None) -> np.ndarray:
    """Generalized winding number (n,) of the closed outward surface at points x (n, 3): 1 inside, 0 outside
    (mesh.winding; check() runs before each chunk of points and raises to stop)."""
    return winding_numbers(surface.points[surface.triangles], x, check)


def nearest_on_surface(surface: TriSurface, x) -> tuple[int, np.ndarray, float]:
    """The point of the surface nearest to x (3,): (its triangle, its barycentric weights (3,) there, the
    distance in the surface's unit)."""
    a, b, c = (surface.points[surface.triangles[:, i]] for i in range(3))
    x = np.asarray(x, dtype=float)
    e0, e1 = b - a, c - a
    normal = np.cross(e0, e1)
    n2 = np.einsum("tk,tk->t", normal, normal)
    q = x - np.einsum("tk,tk->t", x - a, normal)[:, None] * normal / n2[:, None]  # projection onto each plane
    v = np.einsum("tk,tk->t", np.cross(q - a, e1), normal) / n2  # weight of b
    w = np.einsum("tk,tk->t", np.cross(e0, q - a), normal) / n2  # weight of c
    best = np.stack([1 - v - w, v, w], axis=1)
    dist = np.linalg.norm(x - q, axis=1)
    outside = (best < 0).any(axis=1)
    dist[outside] = np.inf
    for i, j in ((0, 1), (1, 2), (2, 0)):  # the edges, for the projections that fall outside their triangle
        p0, p1 = (a, b, c)[i], (a, b, c)[j]
        d = p1 - p0
        s = np.clip(np.einsum("tk,tk->t", x - p0, d) / np.einsum("tk,tk->t", d, d), 0.0, 1.0)
        edge = np.linalg.norm(x - (p0 + s[:, None] * d), axis=1)
        closer = outside & (edge < dist)
        dist[closer] = edge[closer]
        best[closer] = 0.0
        best[closer, i], best[closer, j] = 1 - s[closer], s[closer]
    t = int(np.argmin(dist))
    return t, best[t], float(dist[t])


INSIDE = 0.75  # winding number above which a point is inside a closed surface (0.5 or less on it, 1 inside)


def check_inside(inner: TriSurface, outer: TriSurface) -> None:
    """Every node of inner lies inside outer (and the two do not touch)."""
    w = winding_number(outer, inner.points)
    if (w < INSIDE).any():
        raise ProblemError(f"the inner surface '{inner.name}' is not inside the outer surface '{outer.name}': "
                           f"{int((w < INSIDE).sum())} of its nodes lie outside it or on it")


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
