"""Curl-conforming Nedelec elements of the first kind on tetrahedra, order 1 (6 functions) and order 2
(20), hierarchical, with barycentric coordinates lambda_i and their gradients g_i:
    edge (a, b):      w_ab = lambda_a g_b - lambda_b g_a                  (orders 1 and 2)
                      grad(lambda_a lambda_b) = lambda_a g_b + lambda_b g_a (order 2)
    face (a, b, c):   lambda_c w_ab, lambda_a w_bc                         (order 2)
Every tetrahedron lists its vertices by increasing global node number, so an edge runs from its lower
to its higher node and a face's vertices are sorted in every element that shares it: neighbours agree on
the functions and tangential continuity holds without sign flips.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import roots_jacobi

from ..errors import MeshError, ProblemError

LOCAL_EDGES = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
LOCAL_FACES = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))  # face i is opposite vertex i
ORDERS = (1, 2)
FUNCTIONS = {1: 6, 2: 20}


@lru_cache(maxsize=None)
def local_functions(order: int) -> tuple[tuple[str, int, int, int], ...]:
    """(kind, a, b, c) per local function: "w" (w_ab), "g" (grad lambda_a lambda_b), "f" (lambda_c w_ab)."""
    if order not in ORDERS:
        raise ProblemError(f"the Nedelec order must be 1 or 2, got {order}")
    funcs = [("w", a, b, -1) for a, b in LOCAL_EDGES]
    if order == 2:
        funcs += [("g", a, b, -1) for a, b in LOCAL_EDGES]
        for a, b, c in LOCAL_FACES:
            funcs += [("f", a, b, c), ("f", b, c, a)]
    return tuple(funcs)


@lru_cache(maxsize=None)
def tet_rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Stroud's conical product rule: barycentric points (n^3, 4) and weights (n^3,) summing to 1, exact to
    polynomial degree 2n - 1."""
    (x1, w1), (x2, w2), (x3, w3) = (roots_jacobi(n, alpha, 0.0) for alpha in (2.0, 1.0, 0.0))
    u, v, w = ((x + 1) / 2 for x in (x1, x2, x3))
    U, V, W = np.meshgrid(u, v, w, indexing="ij")
    weight = np.einsum("i,j,k->ijk", w1, w2, w3).reshape(-1)
    x = U.reshape(-1)
    y = (V * (1 - U)).reshape(-1)
    z = (W * (1 - U) * (1 - V)).reshape(-1)
    return np.column_stack([1 - x - y - z, x, y, z]), weight / weight.sum()


@dataclass(frozen=True, eq=False)
class Geometry:
    """Per tetrahedron: gradients of the barycentric coordinates (m, 4, 3) in 1/m and volumes (m,) in m^3."""

    grads: np.ndarray
    volumes: np.ndarray


def geometry(points: np.ndarray, tets: np.ndarray) -> Geometry:
    """Gradients and volumes of tetrahedra (m, 4) over points (n, 3); MeshError on a flat one."""
    x = points[tets]
    jac = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=2)  # columns: edges
    det = np.linalg.det(jac)
    scale = np.abs(jac).max(axis=(1, 2)) ** 3
    flat = np.abs(det) <= 1e-12 * scale
    if flat.any():
        first = x[np.argmax(flat)].mean(axis=0)
        raise MeshError(f"the volume mesh has {int(flat.sum())} flat (zero-volume) tetrahedra, the first at "
                        f"({', '.join(f'{c:.4g}' for c in first)}) m")
    inv = np.linalg.inv(jac)  # rows: gradients of lambda_1..3
    grads = np.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)
    return Geometry(grads, np.abs(det) / 6)


def basis(order: int, lam: np.ndarray, grads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values and curls (m, q, n_f, 3) of every local function at barycentric points lam (m, q, 4) or (q, 4)
    of tetrahedra with barycentric gradients grads (m, 4, 3)."""
    lam = np.broadcast_to(lam, (len(grads),) + lam.shape[-2:])
    g = grads[:, None, :, :]  # (m, 1, 4, 3)
    values, curls = [], []
    for kind, a, b, c in local_functions(order):
        la, lb = lam[..., a, None], lam[..., b, None]
        w = la * g[:, :, b] - lb * g[:, :, a]
        curl_w = np.broadcast_to(2 * np.cross(g[:, :, a], g[:, :, b]), w.shape)
        if kind == "w":
            values.append(w)
            curls.append(curl_w)
        elif kind == "g":
            values.append(la * g[:, :, b] + lb * g[:, :, a])
            curls.append(np.zeros_like(w))
        else:
            lc = lam[..., c, None]
            values.append(lc * w)
            curls.append(np.cross(np.broadcast_to(g[:, :, c], w.shape), w) + lc * curl_w)
    return np.stack(values, axis=2), np.stack(curls, axis=2)


@dataclass(frozen=True, eq=False)
class DofMap:
    """Global numbering: edges (n_e, 2) and faces (n_f, 3) by sorted node numbers, the global function of
    each local one (m, n_local), and the tetrahedra's faces (m, 4) as face indices."""

    order: int
    edges: np.ndarray
    faces: np.ndarray
    cell_dofs: np.ndarray
    tet_faces: np.ndarray

    @property
    def n_dofs(self) -> int:
        return int(self.cell_dofs.max()) + 1


def _numbered(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def dof_map(tets: np.ndarray, order: int) -> DofMap:
    """Numbering of the functions of sorted tetrahedra (m, 4): edge functions first (w, then grad), then two
    per face."""
    m = len(tets)
    edges, edge_of = _numbered(np.concatenate([tets[:, list(e)] for e in LOCAL_EDGES]))
    faces, face_of = _numbered(np.concatenate([tets[:, list(f)] for f in LOCAL_FACES]))
    edge_of = edge_of.reshape(6, m).T
    face_of = face_of.reshape(4, m).T
    n_e = len(edges)
    blocks = [edge_of]
    if order == 2:
        blocks += [n_e + edge_of, np.repeat(2 * n_e + 2 * face_of, 2, axis=1) + np.tile([0, 1], 4)]
    return DofMap(order, edges, faces, np.concatenate(blocks, axis=1), face_of)


def sorted_tets(tets: np.ndarray, n_points: int) -> np.ndarray:
    """Tetrahedra with their vertices by increasing node number; MeshError on bad indices or a repeated
    vertex."""
    tets = np.sort(np.asarray(tets, dtype=np.int64), axis=1)
    if len(tets) == 0:
        raise MeshError("the volume mesh has no tetrahedra")
    if tets[:, 0].min() < 0 or tets[:, 3].max() >= n_points:
        raise MeshError(f"the volume mesh has node indices outside 0..{n_points - 1}")
    if (np.diff(tets, axis=1) == 0).any():
        raise MeshError("the volume mesh has tetrahedra with a repeated vertex")
    return tets
