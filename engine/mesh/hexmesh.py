"""3D mesh of 8-node hexahedra with named regions (per element) and named boundaries (per quadrilateral
face), the trilinear map's Jacobian, and the validation every reader and built-in case goes through."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MeshError
from ..finite import require_measurable
from .checks import check_indices, check_no_duplicates

# Reference coordinates (r, s, t) of the local nodes of a VTK / gmsh hexahedron: 0-3 the bottom face
# (t = -1), 4-7 the top face (t = +1) above them.
HEX_REF_NODES = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                          [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=np.float64)

# Local nodes of the six faces, each counter-clockwise seen from outside (outward normal by the
# right-hand rule): t = -1, t = +1, s = -1, r = +1, s = +1, r = -1.
HEX_FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4],
                      [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]], dtype=np.int64)

# Where make_hexmesh checks the Jacobian: the 8 corners and the centre.
_CHECK_POINTS = np.vstack([HEX_REF_NODES, np.zeros((1, 3))])
_CHUNK = 200_000  # elements per batch of Jacobians, to bound temporary memory


@dataclass(frozen=True, eq=False)
class HexMesh:
    """First-order (8-node) hexahedral mesh.

    points: (n_nodes, 3) float64, in the problem's length unit.
    hexes: (n_elements, 8) int64 node indices, VTK_HEXAHEDRON order (see HEX_REF_NODES).
    region_index: (n_elements,) int32 index into region_names.
    faces: (n_faces, 4) int64 node indices of named boundary quadrilaterals, as read.
    face_boundary: (n_faces,) int32 index into boundary_names.
    """

    points: np.ndarray
    hexes: np.ndarray
    region_index: np.ndarray
    region_names: tuple[str, ...]
    faces: np.ndarray
    face_boundary: np.ndarray
    boundary_names: tuple[str, ...]

    @property
    def n_nodes(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_elements(self) -> int:
        return int(self.hexes.shape[0])

    def element_coords(self) -> np.ndarray:
        """(n_elements, 8, 3) float64 corner coordinates, in the mesh's length unit."""
        return self.points[self.hexes]

    def boundary_faces(self, name: str) -> np.ndarray:
        """(k, 4) int64 node indices of the faces of the named boundary."""
        if name not in self.boundary_names:
            known = ", ".join(self.boundary_names) or "none"
            raise MeshError(f"the mesh has no boundary '{name}'; it has: {known}")
        return self.faces[self.face_boundary == self.boundary_names.index(name)]

    def boundary_nodes(self, name: str) -> np.ndarray:
        """Sorted unique node indices on the named boundary."""
        return np.unique(self.boundary_faces(name))

    def scaled(self, factor: float) -> "HexMesh":
        """The same mesh with coordinates multiplied by factor (e.g. 1e-3 for mm -> m)."""
        return HexMesh(self.points * factor, self.hexes, self.region_index, self.region_names,
                       self.faces, self.face_boundary, self.boundary_names)


def trilinear_gradients(rst: np.ndarray) -> np.ndarray:
    """(q, 8, 3) derivatives d N_a / d(r, s, t) of the 8 trilinear shape functions at points rst (q, 3)."""
    rst = np.asarray(rst, dtype=np.float64).reshape(-1, 3)
    factors = 1.0 + rst[:, None, :] * HEX_REF_NODES[None, :, :]  # (q, 8, 3): 1 + r r_a, 1 + s s_a, 1 + t t_a
    grads = np.empty_like(factors)
    for axis in range(3):
        others = [a for a in range(3) if a != axis]
        grads[..., axis] = 0.125 * HEX_REF_NODES[None, :, axis] * factors[..., others[0]] * factors[..., others[1]]
    return grads


def hex_jacobian_dets(points: np.ndarray, hexes: np.ndarray, rst: np.ndarray) -> np.ndarray:
    """(m, q) determinants of the trilinear map's Jacobian d x / d(r, s, t) of hexes (m, 8) at rst (q, 3).

    Units of points cubed; the element volume is the integral of the determinant over [-1, 1]^3.
    """
    grads = trilinear_gradients(rst)
    jac = np.einsum("mai,qaj->mqij", points[hexes], grads, optimize=True)
    return np.linalg.det(jac)


def face_owners(hexes: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each quadrilateral of faces (k, 4) the hexahedron of hexes (m, 8) it is a face of, and which
    local face (row of HEX_FACES) it is; -1 and -1 for a quadrilateral that is no face of any
    hexahedron. A face shared by two hexahedra reports one of them."""
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 4)
    owner = np.full(len(faces), -1, dtype=np.int64)
    if not len(faces):
        return owner, owner.copy()
    hex_sorted = np.sort(hexes[:, HEX_FACES].reshape(-1, 4), axis=1)  # row 6 e + f: face f of hex e
    face_sorted = np.sort(faces, axis=1)
    hex_keys, face_keys = _hash_rows(hex_sorted), _hash_rows(face_sorted)
    order = np.argsort(hex_keys)
    sorted_keys = hex_keys[order]
    first = np.searchsorted(sorted_keys, face_keys, side="left")
    last = np.searchsorted(sorted_keys, face_keys, side="right")
    candidate = order[np.minimum(first, len(order) - 1)]
    exact = (last > first) & (hex_sorted[candidate] == face_sorted).all(axis=1)
    owner[exact] = candidate[exact]
    # equal hashes of different faces are vanishingly rare: look past the first candidate only then
    for i in np.flatnonzero(~exact & (last - first > 1)):
        for j in order[first[i] + 1:last[i]]:
            if np.array_equal(hex_sorted[j], face_sorted[i]):
                owner[i] = j
                break
    found = owner >= 0
    local = np.where(found, owner % 6, -1)
    return np.where(found, owner // 6, -1), local


def _hash_rows(rows: np.ndarray) -> np.ndarray:
    """(k,) uint64 mixing hash of the int64 rows (k, 4)."""
    h = np.full(len(rows), 0xCBF29CE484222325, dtype=np.uint64)
    for column in rows.T:
        h = (h ^ column.astype(np.uint64)) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
    return h


def make_hexmesh(points, hexes, region_index, region_names, faces, face_boundary,
                 boundary_names) -> HexMesh:
    """Validate raw mesh arrays and return a compact HexMesh.

    Drops nodes that no hexahedron uses (renumbering the rest) and raises MeshError naming the
    first problem: no hexahedra, non-finite coordinates, node indices out of range, a node repeated
    within a hexahedron, an inverted or degenerate hexahedron (Jacobian determinant <= 0 at a corner
    or the centre), or a boundary quadrilateral that is no face of any hexahedron.
    """
    points = np.asarray(points, dtype=np.float64)
    hexes = np.asarray(hexes, dtype=np.int64)
    region_index = np.asarray(region_index, dtype=np.int32).reshape(-1)
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 4)
    face_boundary = np.asarray(face_boundary, dtype=np.int32).reshape(-1)
    region_names, boundary_names = tuple(region_names), tuple(boundary_names)
    if points.ndim != 2 or points.shape[1] != 3:
        raise MeshError(f"mesh points must be 3D, got an array of shape {points.shape}")
    if hexes.size == 0:
        raise MeshError("the mesh has no hexahedra")
    if hexes.ndim != 2 or hexes.shape[1] != 8:
        raise MeshError(f"hexahedra must have 8 nodes each, got an array of shape {hexes.shape}")
    if region_index.shape != (len(hexes),):
        raise MeshError(f"{len(hexes)} hexahedra but {region_index.size} region indices")
    if region_index.min() < 0 or region_index.max() >= len(region_names):
        raise MeshError("a hexahedron refers to a region that has no name")
    if face_boundary.shape != (len(faces),):
        raise MeshError(f"{len(faces)} boundary faces but {face_boundary.size} boundary indices")
    if faces.size and (face_boundary.min() < 0 or face_boundary.max() >= len(boundary_names)):
        raise MeshError("a boundary face refers to a boundary that has no name")
    require_measurable(points, "hexahedra")
    check_indices(hexes, len(points), "the mesh", "hexahedron")
    check_indices(faces, len(points), "the mesh", "boundary face")
    check_no_duplicates(hexes, "the mesh", "hexahedron")

    used = np.zeros(len(points), dtype=bool)
    used[hexes.ravel()] = True
    new_index = np.cumsum(used) - 1
    orphan_faces = np.flatnonzero(~used[faces].all(axis=1)) if faces.size else np.zeros(0, np.int64)
    if orphan_faces.size:
        raise _not_a_face(orphan_faces, faces, face_boundary, boundary_names)
    points, hexes, faces = points[used], new_index[hexes], new_index[faces]

    _check_jacobians(points, hexes, region_index, region_names)
    owner, _ = face_owners(hexes, faces)
    loose = np.flatnonzero(owner < 0)
    if loose.size:
        raise _not_a_face(loose, faces, face_boundary, boundary_names)
    return HexMesh(points, hexes, region_index, region_names, faces, face_boundary, boundary_names)


def _check_jacobians(points, hexes, region_index, region_names) -> None:
    """Raise MeshError if any hexahedron's Jacobian determinant is <= 0 (relative to its size) at a
    corner or the centre."""
    bad = []
    for start in range(0, len(hexes), _CHUNK):
        chunk = hexes[start:start + _CHUNK]
        dets = hex_jacobian_dets(points, chunk, _CHECK_POINTS)
        size = np.ptp(points[chunk], axis=1).max(axis=1)  # bounding-box extent of each element
        # det ~ (size / 2)^3 for a sound element: anything below a tiny fraction of it is degenerate
        bad.append(start + np.flatnonzero((dets <= 1e-12 * size[:, None] ** 3).any(axis=1)))
    bad = np.concatenate(bad)
    if bad.size:
        e = bad[0]
        centre = points[hexes[e]].mean(axis=0)
        raise MeshError(f"inverted or degenerate hexahedra: {bad.size} of {len(hexes)} hexahedra have a "
                        f"Jacobian determinant <= 0 at a corner or the centre (first: hexahedron {e} in "
                        f"region '{region_names[region_index[e]]}' centred at {np.round(centre, 12).tolist()})")


def _not_a_face(which, faces, face_boundary, boundary_names) -> MeshError:
    i = which[0]
    name = boundary_names[face_boundary[i]]
    return MeshError(f"boundary '{name}' has {np.count_nonzero(face_boundary[which] == face_boundary[i])} "
                     f"quadrilateral(s) that are not a face of any hexahedron (first: face {i} with "
                     f"nodes {faces[i].tolist()})")
