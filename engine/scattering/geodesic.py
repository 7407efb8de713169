"""A sphere's surface as a geodesic triangulation: each face of the icosahedron cut into n^2 triangles and
the points projected onto the sphere, n the smallest whose mean edge is at most the size asked (as gmsh's
element size is a mean; the longest edge is about 1.1 times it).
Vectorised and O(triangles): what the PEC sphere's scatterer is meshed with at any size (gmsh's surface
mesher took most of a 20-wavelength sphere's meshing)."""

from __future__ import annotations

import math

import numpy as np

from ..truncation.surfaces import TriSurface, compact_surface

_PHI = (1 + math.sqrt(5)) / 2
ICOSAHEDRON = np.array([[-1, _PHI, 0], [1, _PHI, 0], [-1, -_PHI, 0], [1, -_PHI, 0], [0, -1, _PHI], [0, 1, _PHI],
                        [0, -1, -_PHI], [0, 1, -_PHI], [_PHI, 0, -1], [_PHI, 0, 1], [-_PHI, 0, -1], [-_PHI, 0, 1]],
                       dtype=float) / math.sqrt(1 + _PHI ** 2)
FACES = np.array([[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4], [11, 10, 2],
                  [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5],
                  [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]])  # outward (counter-clockwise seen from outside)
MERGE_DECIMALS = 12  # points of neighbouring faces equal to this many decimals (on the unit sphere) are one


def geodesic_sphere(radius: float, size: float, name: str) -> TriSurface:
    """The sphere of radius (m) about the origin, triangles outward, their mean edge at most size (m)."""
    n = max(1, math.ceil(0.9 * _edge_angle() * radius / size))
    while True:
        points, triangles = subdivided(n)
        if mean_edge(radius * points, triangles) <= size:
            return compact_surface(name, radius * points, triangles)
        n += max(1, n // 20)


def _edge_angle() -> float:
    """The angle (rad) an edge of the icosahedron spans on its circumscribed sphere."""
    return math.acos(float(ICOSAHEDRON[0] @ ICOSAHEDRON[11]))


def subdivided(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(points (10 n^2 + 2, 3) on the unit sphere, triangles (20 n^2, 3) outward): every face cut n times
    along each edge, the shared points merged."""
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    keep = i + j <= n
    i, j = i[keep], j[keep]
    local = np.full((n + 1, n + 1), -1)
    local[i, j] = np.arange(len(i))
    a, b, c = (ICOSAHEDRON[FACES[:, k]] for k in range(3))  # (20, 3) each
    grid = a[:, None] + (b - a)[:, None] * (i / n)[None, :, None] + (c - a)[:, None] * (j / n)[None, :, None]
    up = (i + j < n)
    tri_up = np.column_stack([local[i[up], j[up]], local[i[up] + 1, j[up]], local[i[up], j[up] + 1]])
    down = (i + j < n - 1)
    tri_down = np.column_stack([local[i[down] + 1, j[down]], local[i[down] + 1, j[down] + 1],
                                local[i[down], j[down] + 1]])
    per_face = np.concatenate([tri_up, tri_down])
    triangles = (per_face[None] + len(i) * np.arange(20)[:, None, None]).reshape(-1, 3)
    points = grid.reshape(-1, 3)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    _, first, inverse = np.unique(np.round(points, MERGE_DECIMALS), axis=0, return_index=True, return_inverse=True)
    return points[first], inverse.reshape(-1)[triangles]


def mean_edge(points: np.ndarray, triangles: np.ndarray) -> float:
    """The mean edge length (m) of triangles (m, 3) over points (n, 3), each edge counted in both its triangles."""
    p = points[triangles]
    return float(np.linalg.norm(p - np.roll(p, 1, axis=1), axis=2).mean())
