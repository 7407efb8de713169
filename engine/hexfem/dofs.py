"""Global numbering of the hierarchical DOFs with edge and face orientation, so that neighbours agree.

Edges are oriented from the lower to the higher global vertex number; a face's canonical (u', v')
axes start at its lowest-numbered corner and run first toward the lower-numbered of that corner's two
neighbours. An element's own functions then map to the global ones by a signed permutation: the
element matrices stay in reference order and the signs are applied when gathering and scattering.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .basis import EDGE, FACE, HEX_EDGES, HEX_FACE_CORNERS, INTERIOR, VERTEX, face_pairs, hex_basis


@dataclass(frozen=True, eq=False)
class DofMap:
    """scalar: (n_elements, n_functions) global scalar-function numbers; sign: same shape, +1 or -1.

    Displacement DOF of global scalar function g and component i (0, 1, 2 for x, y, z) is 3 g + i;
    vertex functions come first, numbered by compressed mesh node (node_of_vertex_dof).
    """

    order: int
    scalar: np.ndarray
    sign: np.ndarray
    n_scalar: int
    node_of_vertex_dof: np.ndarray  # (n_vertex_dofs,) mesh node id of each vertex function

    @property
    def n_dofs(self) -> int:
        return 3 * self.n_scalar

    def vector(self) -> tuple[np.ndarray, np.ndarray]:
        """Element DOFs (n_elements, 3 n_functions) in local order 3 a + i, and their signs."""
        dofs = (3 * self.scalar[:, :, None] + np.arange(3)).reshape(len(self.scalar), -1)
        return dofs, np.repeat(self.sign, 3, axis=1)


def _unique_rows(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Inverse index of each row among the unique rows, and how many unique rows there are."""
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return inverse, int(inverse.max()) + 1 if len(inverse) else 0


def build_dof_map(hexes: np.ndarray, p: int) -> DofMap:
    """Number the DOFs of order p on hexahedra (n_elements, 8) in VTK order."""
    basis = hex_basis(p)
    hexes = np.asarray(hexes, dtype=np.int64)
    m = len(hexes)
    scalar = np.empty((m, basis.n_functions), dtype=np.int64)
    sign = np.ones((m, basis.n_functions))

    used, vertex_number = np.unique(hexes, return_inverse=True)
    vertex_number = vertex_number.reshape(m, 8)
    offset = len(used)
    kind, entity, deg = basis.entity_kind, basis.entity, basis.degrees
    cols = np.flatnonzero(kind == VERTEX)
    scalar[:, cols] = vertex_number[:, entity[cols]]

    if p >= 2:
        ends = hexes[:, HEX_EDGES]  # (m, 12, 2)
        edge_id, n_edges = _unique_rows(np.sort(ends, axis=2).reshape(-1, 2))
        edge_id = edge_id.reshape(m, 12)
        reversed_edge = ends[:, :, 0] > ends[:, :, 1]
        cols = np.flatnonzero(kind == EDGE)
        e, n = entity[cols], deg[cols, 0]
        scalar[:, cols] = offset + edge_id[:, e] * (p - 1) + (n - 2)
        sign[:, cols] = np.where(reversed_edge[:, e] & (n % 2 == 1), -1.0, 1.0)
        offset += n_edges * (p - 1)

    pairs = face_pairs(p)
    if pairs:
        reversed_pair = np.array([pairs.index((n, m)) for m, n in pairs])
        corners = hexes[:, HEX_FACE_CORNERS]  # (m, 6, 4) in (u, v) order
        face_id, n_faces = _unique_rows(np.sort(corners, axis=2).reshape(-1, 4))
        face_id = face_id.reshape(m, 6)
        origin = np.argmin(corners, axis=2)  # corner 0..3 of the lowest global number
        next_c = np.take_along_axis(corners, ((origin + 1) % 4)[..., None], axis=2)[..., 0]
        prev_c = np.take_along_axis(corners, ((origin + 3) % 4)[..., None], axis=2)[..., 0]
        corner_uv = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]])
        u0, v0 = corner_uv[origin, 0], corner_uv[origin, 1]
        # the neighbour toward which u' runs: corners c and c+1 differ in u for c = 0, 2 and in v for c = 1, 3
        toward_next = next_c < prev_c
        u_first = np.where(origin % 2 == 0, toward_next, ~toward_next)  # u' along local u: no swap
        su, sv = -u0, -v0  # signs that make the canonical axes run away from the origin corner
        cols = np.flatnonzero(kind == FACE)
        f, mm, nn = entity[cols], deg[cols, 0], deg[cols, 1]
        swap = ~u_first[:, f]
        local = np.array([pairs.index((a, b)) for a, b in zip(mm, nn)])
        canon = np.where(swap, reversed_pair[local], local)
        scalar[:, cols] = offset + face_id[:, f] * len(pairs) + canon
        # no swap: u' = su u, v' = sv v and canonical (m, n) = su^m sv^n local (m, n); swap: u' = sv v,
        # v' = su u and canonical (n, m) = sv^n su^m local (m, n): the same sign in local degrees
        sign[:, cols] = (su[:, f] ** mm) * (sv[:, f] ** nn)
        offset += n_faces * len(pairs)

    cols = np.flatnonzero(kind == INTERIOR)
    if len(cols):
        scalar[:, cols] = offset + np.arange(m)[:, None] * len(cols) + np.arange(len(cols))
        offset += m * len(cols)
    return DofMap(p, scalar, sign, offset, used)
