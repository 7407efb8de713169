"""Curl-conforming Nedelec elements of the first kind on tetrahedra, orders 1 (6 functions), 2 (20) and 3
(45), hierarchical (each order's functions include the lower order's), with barycentric coordinates lambda_i,
their gradients g_i and w_ab = lambda_a g_b - lambda_b g_a (Whitney):
    edge (a, b):      w_ab (1), grad(lambda_a lambda_b) (2), grad(lambda_a lambda_b (lambda_b - lambda_a)) (3)
    face (a, b, c):   lambda_c w_ab, lambda_a w_bc (2);
                      grad(lambda_a lambda_b lambda_c), lambda_c^2 w_ab, lambda_a^2 w_bc, lambda_b^2 w_ca (3)
    cell:             lambda_2 lambda_3 w_01, lambda_1 lambda_3 w_02, lambda_1 lambda_2 w_03 (3)
in parentheses the order that adds them. A face function vanishes tangentially on the tetrahedron's other
faces, a cell function on all four, and an edge or face function's tangential trace on a face involves only
that face's vertices. Every tetrahedron lists its vertices by increasing global node number, so an edge
runs from its lower to its higher node and a face's vertices are sorted in every element that shares it:
neighbours agree on the functions and tangential continuity holds without sign flips.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np
from scipy.special import roots_jacobi

from ..backend import array_module
from ..errors import MeshError, ProblemError

LOCAL_EDGES = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
LOCAL_FACES = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))  # face i is opposite vertex i
ORDERS = (1, 2, 3)
PER_ENTITY = {1: (1, 0, 0), 2: (2, 2, 0), 3: (3, 6, 3)}  # functions per edge, per face, per cell
FUNCTIONS = {p: 6 * e + 4 * f + c for p, (e, f, c) in PER_ENTITY.items()}  # 6, 20, 45

Form = dict  # {(s, exponents of lambda_0..3): coefficient}: sum coefficient * lambda^exponents * g_s


def _monomial(*vertices: int) -> tuple[int, ...]:
    return tuple(vertices.count(i) for i in range(4))


def _whitney(a: int, b: int, *factor: int) -> Form:
    """lambda_factor... w_ab."""
    return {(b, _monomial(a, *factor)): 1.0, (a, _monomial(b, *factor)): -1.0}


def _gradient(*terms: tuple[float, tuple[int, ...]]) -> Form:
    """grad of sum coefficient * prod lambda_vertices over terms (coefficient, vertices)."""
    form: Form = {}
    for coefficient, vertices in terms:
        exponents = _monomial(*vertices)
        for s in set(vertices):
            lowered = tuple(e - (i == s) for i, e in enumerate(exponents))
            form[(s, lowered)] = form.get((s, lowered), 0.0) + coefficient * exponents[s]
    return form


def _edge_forms(level: int, a: int, b: int) -> Form:
    if level == 0:
        return _whitney(a, b)
    if level == 1:
        return _gradient((1.0, (a, b)))
    return _gradient((1.0, (a, b, b)), (-1.0, (a, a, b)))


def _face_forms(order: int, a: int, b: int, c: int) -> list[Form]:
    forms = [_whitney(a, b, c), _whitney(b, c, a)]
    if order == 3:
        forms += [_gradient((1.0, (a, b, c))), _whitney(a, b, c, c), _whitney(b, c, a, a), _whitney(c, a, b, b)]
    return forms


@lru_cache(maxsize=None)
def local_functions(order: int) -> tuple[Form, ...]:
    """The local functions in DOF order: the edges' level by level (every edge's w_ab, then every edge's
    first gradient, ...), then each face's, then the cell's (PER_ENTITY counts them)."""
    if order not in ORDERS:
        raise ProblemError(f"the Nedelec order must be 1, 2 or 3, got {order}")
    per_edge, per_face, per_cell = PER_ENTITY[order]
    forms = [_edge_forms(level, a, b) for level in range(per_edge) for a, b in LOCAL_EDGES]
    if per_face:
        forms += [form for face in LOCAL_FACES for form in _face_forms(order, *face)]
    if per_cell:
        forms += [_whitney(0, b, *(v for v in (1, 2, 3) if v != b)) for b in (1, 2, 3)]
    return tuple(forms)


@lru_cache(maxsize=None)
def face_functions(order: int) -> np.ndarray:
    """(4, m): for each local face (LOCAL_FACES, face i opposite vertex i) the local functions whose tangential
    trace on it can be nonzero, in DOF order: its three edges' at every level, then its own (m = 3, 8, 15 for
    orders 1, 2, 3). Every other function vanishes tangentially there (the module's docstring)."""
    per_edge, per_face, _ = PER_ENTITY[order]
    rows = []
    for i, face in enumerate(LOCAL_FACES):
        edges = [e for e, (a, b) in enumerate(LOCAL_EDGES) if a in face and b in face]
        own = 6 * per_edge + i * per_face + np.arange(per_face)
        rows.append(np.concatenate([[6 * level + e for level in range(per_edge) for e in edges], own]))
    return np.array(rows, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Polynomials:
    """The local functions as polynomials in lambda: monomial exponents (n_mono, 4); value coefficients
    (n_f, 4, n_mono) of g_s; curl coefficients (n_f, 6, n_mono) of g_t x g_s for (t, s) in LOCAL_EDGES."""

    exponents: np.ndarray
    value: np.ndarray
    curl: np.ndarray

    def monomials(self, lam: np.ndarray) -> np.ndarray:
        """Every monomial (..., n_mono) at barycentric points lam (..., 4)."""
        return np.prod(lam[..., None, :] ** self.exponents, axis=-1)


@lru_cache(maxsize=None)
def polynomials(order: int) -> Polynomials:
    """The local functions of an order as coefficient arrays (curl(P g_s) = sum_t dP/dlambda_t g_t x g_s)."""
    exponents = [e for d in range(order + 1) for e in _degree(d)]
    column = {e: i for i, e in enumerate(exponents)}
    forms = local_functions(order)
    value = np.zeros((len(forms), 4, len(exponents)))
    curl = np.zeros((len(forms), len(LOCAL_EDGES), len(exponents)))
    pair = {edge: (p, 1.0) for p, edge in enumerate(LOCAL_EDGES)} | {
        (b, a): (p, -1.0) for p, (a, b) in enumerate(LOCAL_EDGES)}
    for f, form in enumerate(forms):
        for (s, e), coefficient in form.items():
            value[f, s, column[e]] += coefficient
            for t in range(4):
                if t != s and e[t]:
                    p, sign = pair[(t, s)]
                    curl[f, p, column[tuple(x - (i == t) for i, x in enumerate(e))]] += sign * e[t] * coefficient
    return Polynomials(np.array(exponents), value, curl)


def _degree(d: int) -> list[tuple[int, ...]]:
    """Exponents (of lambda_0..3) of the monomials of degree d."""
    return [_monomial(*vertices) for vertices in combinations_with_replacement(range(4), d)]


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


def edge_crosses(grads: np.ndarray) -> np.ndarray:
    """g_t x g_s (m, 6, 3) for (t, s) in LOCAL_EDGES, from gradients (m, 4, 3) (NumPy or CuPy)."""
    xp = array_module(grads)
    t, s = (xp.asarray(i) for i in zip(*LOCAL_EDGES))
    return xp.cross(grads[:, t], grads[:, s])


def basis(order: int, lam: np.ndarray, grads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values and curls (m, q, n_f, 3) of every local function at barycentric points lam (m, q, 4) or (q, 4)
    of tetrahedra with barycentric gradients grads (m, 4, 3)."""
    poly = polynomials(order)
    m, q, f = len(grads), lam.shape[-2], len(poly.value)
    mono = poly.monomials(lam)  # (m, q, n_mono) or (q, n_mono)
    values = (mono @ poly.value.reshape(f * 4, -1).T).reshape(-1, q * f, 4)
    curls = (mono @ poly.curl.reshape(f * 6, -1).T).reshape(-1, q * f, 6)
    return ((values @ grads).reshape(m, q, f, 3),  # batched products (BLAS), not einsum (slower, measured)
            (curls @ edge_crosses(grads)).reshape(m, q, f, 3))


@lru_cache(maxsize=None)
def reference_integrals(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean over a tetrahedron of the products of the local functions' coefficient polynomials, exact (the
    conical rule of degree 2 order + 1): mass (16, n_f^2) [(s, t), (i, j)] of P_is P_jt, the coefficients of
    g_s . g_t; curl (36, n_f^2) [(p, r), (i, j)] of the curl coefficients, of (g x g)_p . (g x g)_r."""
    poly = polynomials(order)
    lam, w = tet_rule(order + 1)
    mono = poly.monomials(lam)  # (q, n_mono)
    p_value = np.einsum("qn,fsn->qfs", mono, poly.value)
    p_curl = np.einsum("qn,fpn->qfp", mono, poly.curl)
    n = len(poly.value)
    mass = np.einsum("q,qis,qjt->stij", w, p_value, p_value).reshape(16, n * n)
    curl = np.einsum("q,qip,qjr->prij", w, p_curl, p_curl).reshape(36, n * n)
    return mass, curl


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

    def trace_dofs(self, edges: np.ndarray, faces: np.ndarray) -> np.ndarray:
        """The functions (sorted) of the given edges and faces (global indices): those whose tangential trace
        on a surface made of these faces is not zero."""
        per_edge, per_face, _ = PER_ENTITY[self.order]
        on_edges = (np.arange(per_edge)[:, None] * len(self.edges) + edges[None]).ravel()
        on_faces = (per_edge * len(self.edges) + per_face * faces[:, None] + np.arange(per_face)[None]).ravel()
        return np.sort(np.concatenate([on_edges, on_faces]))


def _numbered(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (k, c) of node numbers, in lexicographic order, and each row's index among them: by
    one int64 key per row where the keys fit (an order of magnitude faster than unique rows), else by rows."""
    n = int(rows.max()) + 1 if len(rows) else 1
    if float(n) ** rows.shape[1] >= 2.0 ** 62:
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        return unique, inverse.reshape(-1)
    keys = rows[:, 0].astype(np.int64)
    for column in rows.T[1:]:
        keys = keys * n + column
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1)


def dof_map(tets: np.ndarray, order: int) -> DofMap:
    """Numbering of the functions of sorted tetrahedra (m, 4) in local_functions' order: the edges' functions
    level by level (all w_ab, then all first gradients, ...), then each face's, then each cell's."""
    per_edge, per_face, per_cell = PER_ENTITY[order]
    m = len(tets)
    edges, edge_of = _numbered(np.concatenate([tets[:, list(e)] for e in LOCAL_EDGES]))
    faces, face_of = _numbered(np.concatenate([tets[:, list(f)] for f in LOCAL_FACES]))
    edge_of = edge_of.reshape(6, m).T
    face_of = face_of.reshape(4, m).T
    n_edge_dofs = per_edge * len(edges)
    blocks = [level * len(edges) + edge_of for level in range(per_edge)]
    blocks.append(n_edge_dofs + np.repeat(per_face * face_of, per_face, axis=1) + np.tile(np.arange(per_face), 4))
    first_cell = n_edge_dofs + per_face * len(faces)
    blocks.append(first_cell + per_cell * np.arange(m)[:, None] + np.arange(per_cell)[None])
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
