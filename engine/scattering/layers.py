"""The volume between nested surfaces that share one triangulation (the same triangles over their own
points, as S' and S projected from the scatterer's nodes), meshed without gmsh: every triangle and its
copy on the next surface bound a prism, cut into three tetrahedra by the vertices' numbers so that
neighbouring prisms cut their shared quadrilateral along the same diagonal. O(triangles), vectorised."""

from __future__ import annotations

import numpy as np

from ..truncation.surfaces import TriSurface


def shares_triangulation(*surfaces: TriSurface) -> bool:
    """Whether the surfaces have the same number of points and the same triangles."""
    first = surfaces[0]
    return all(len(s.points) == len(first.points) and np.array_equal(s.triangles, first.triangles)
               for s in surfaces[1:])


def prism_tets(triangles: np.ndarray, offset: int) -> np.ndarray:
    """The tetrahedra (3 m, 4) filling the prisms between triangles (m, 3) and the same triangles shifted
    by offset in node number: with a < b < c, (a b c c'), (a b c' b'), (a a' b' c') (one orientation), so that the
    quadrilateral over edge (i, j), i < j, is cut along i-j' whichever prism holds it."""
    a, b, c = np.sort(triangles, axis=1).T
    a2, b2, c2 = a + offset, b + offset, c + offset
    return np.concatenate([np.column_stack(t) for t in ((a, b, c, c2), (a, b, c2, b2), (a, a2, b2, c2))])


def signed_volumes(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Six times the signed volume (m,) of each tetrahedron (m, 4) over points (n, 3)."""
    p = points[tets]
    return np.einsum("ij,ij->i", p[:, 1] - p[:, 0], np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]))


def layered_tets(layers: tuple[TriSurface, ...], size: float):
    """(points (N, 3), tets (M, 4), region (M,) int8: 0 between the first two surfaces, 1 between the next
    two, ..., offsets: the node number of each surface's first point) for surfaces sharing one
    triangulation, each gap cut into as many layers of prisms as its median thickness holds elements of
    edge size (m), their nodes on the straight lines between the surfaces' corresponding nodes; None when
    a prism folds (a tetrahedron of the wrong orientation or no volume), which an offset of a concave target
    can give: gmsh meshes that volume instead."""
    n, triangles = len(layers[0].points), layers[0].triangles
    points, region, offsets = [np.asarray(layers[0].points, dtype=float)], [], [0]
    for gap, (below, above) in enumerate(zip(layers[:-1], layers[1:])):
        low, high = np.asarray(below.points, dtype=float), np.asarray(above.points, dtype=float)
        count = max(1, round(float(np.median(np.linalg.norm(high - low, axis=1))) / size))
        points += [low + (high - low) * (i / count) for i in range(1, count + 1)]
        region += [gap] * count
        offsets.append((len(points) - 1) * n)
    points = np.concatenate(points)
    tets = np.concatenate([prism_tets(triangles + i * n, n) for i in range(len(region))])
    region = np.repeat(np.array(region, dtype=np.int8), 3 * len(triangles))
    turned = np.tile(sorting_parity(triangles), len(tets) // len(triangles))
    volumes = signed_volumes(points, tets) * turned
    if not (np.all(volumes > 0) or np.all(volumes < 0)):
        return None
    return points, tets, region, offsets


def sorting_parity(triangles: np.ndarray) -> np.ndarray:
    """+1 where sorting a triangle's (m, 3) vertices keeps its orientation (an even permutation), -1 where
    it reverses it: the sign that turns the sorted prisms' volumes into the surface's orientation."""
    t = np.asarray(triangles)
    inversions = (t[:, 0] > t[:, 1]).astype(int) + (t[:, 0] > t[:, 2]) + (t[:, 1] > t[:, 2])
    return 1 - 2 * (inversions % 2)
