"""Hierarchical trunk-space basis on the reference cube [-1, 1]^3 (paper 004, eq. 4), orders p = 1..10.

Every scalar function is a product f1(r) f2(s) f3(t) of one-dimensional functions: index 0 is (1 - x)/2,
index 1 is (1 + x)/2 and index n >= 2 the normalised integrated Legendre polynomial
phi_n(x) = sqrt((2n - 1)/2) * int_{-1}^{x} L_{n-1}, which spans the same space as the slides' P_n and
keeps high orders well conditioned. Functions are ordered vertices (8), edges (12 x (p - 1)), faces
(6 x pairs m, n >= 2 with m + n <= p), interior (l, m, n >= 2 with l + m + n <= p).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import ProblemError

MAX_ORDER = 10
# VTK hexahedron: reference coordinates of local vertices 0..7
HEX_VERTICES = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=np.int64)
# edges as (start, end) with the end one step along the edge's axis from the start
HEX_EDGES = np.array([[0, 1], [3, 2], [4, 5], [7, 6],      # along r
                      [0, 3], [1, 2], [4, 7], [5, 6],      # along s
                      [0, 4], [1, 5], [3, 7], [2, 6]], dtype=np.int64)  # along t
# faces as (axis, side), corners listed in the face's (u, v) order (-1,-1), (1,-1), (1,1), (-1,1), where
# (u, v) are the two other reference coordinates in increasing axis order
HEX_FACE_AXIS_SIDE = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]], dtype=np.int64)


def _face_corners() -> np.ndarray:
    corners = np.empty((6, 4), dtype=np.int64)
    for f, (axis, side) in enumerate(HEX_FACE_AXIS_SIDE):
        u_axis, v_axis = [a for a in range(3) if a != axis]
        for c, (u, v) in enumerate([(-1, -1), (1, -1), (1, 1), (-1, 1)]):
            target = {axis: 2 * side - 1, u_axis: u, v_axis: v}
            want = np.array([target[0], target[1], target[2]])
            corners[f, c] = int(np.flatnonzero((HEX_VERTICES == want).all(axis=1))[0])
    return corners


HEX_FACE_CORNERS = _face_corners()

VERTEX, EDGE, FACE, INTERIOR = 0, 1, 2, 3


@dataclass(frozen=True, eq=False)
class HexBasis:
    """The scalar basis of order p.

    factors: (n_functions, 3) int, the 1D function index along r, s, t;
    entity_kind: (n_functions,) VERTEX/EDGE/FACE/INTERIOR; entity: (n_functions,) local vertex/edge/face
    number (0 for interior); degrees: (n_functions, 2) the edge degree n (first column) or the face pair
    (m, n) in the face's (u, v) axes; -1 where unused.
    """

    order: int
    factors: np.ndarray
    entity_kind: np.ndarray
    entity: np.ndarray
    degrees: np.ndarray

    @property
    def n_functions(self) -> int:
        return len(self.factors)

    @property
    def n_dofs(self) -> int:
        """Displacement DOFs per element: 3 per scalar function."""
        return 3 * len(self.factors)


def check_order(p: int) -> int:
    if isinstance(p, bool) or int(p) != p or not 1 <= p <= MAX_ORDER:
        raise ProblemError(f"order must be a whole number from 1 to {MAX_ORDER}, got {p}")
    return int(p)


def face_pairs(p: int) -> list[tuple[int, int]]:
    """Face degree pairs (m, n), m, n >= 2, m + n <= p, in a fixed order."""
    return [(m, s - m) for s in range(4, p + 1) for m in range(2, s - 1)]


def interior_triples(p: int) -> list[tuple[int, int, int]]:
    return [(l, m, s - l - m) for s in range(6, p + 1) for l in range(2, s - 3) for m in range(2, s - l - 1)]


@lru_cache(maxsize=None)
def hex_basis(p: int) -> HexBasis:
    """The trunk-space basis of order p; its size times 3 matches paper 004's Table 1."""
    p = check_order(p)
    rows = []  # (f_r, f_s, f_t, kind, entity, d1, d2)
    for v, corner in enumerate(HEX_VERTICES):
        f = [0 if c < 0 else 1 for c in corner]
        rows.append((*f, VERTEX, v, -1, -1))
    for e, (start, end) in enumerate(HEX_EDGES):
        axis = int(np.flatnonzero(HEX_VERTICES[end] != HEX_VERTICES[start])[0])
        for n in range(2, p + 1):
            f = [0 if c < 0 else 1 for c in HEX_VERTICES[start]]
            f[axis] = n
            rows.append((*f, EDGE, e, n, -1))
    for face, (axis, side) in enumerate(HEX_FACE_AXIS_SIDE):
        u_axis, v_axis = [a for a in range(3) if a != axis]
        for m, n in face_pairs(p):
            f = [0, 0, 0]
            f[axis], f[u_axis], f[v_axis] = int(side), m, n
            rows.append((*f, FACE, face, m, n))
    for triple in interior_triples(p):
        rows.append((*triple, INTERIOR, 0, -1, -1))
    a = np.array(rows, dtype=np.int64)
    return HexBasis(p, a[:, :3].copy(), a[:, 3].copy(), a[:, 4].copy(), a[:, 5:7].copy())


def lobatto_1d(p: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values and derivatives of the 1D functions 0..p at x: two (p + 1, len(x)) float64 arrays."""
    x = np.asarray(x, dtype=np.float64)
    legendre = [np.ones_like(x), x.copy()]  # L_0 .. L_p by Bonnet's recursion
    for n in range(1, p):
        legendre.append(((2 * n + 1) * x * legendre[n] - n * legendre[n - 1]) / (n + 1))
    values = np.empty((p + 1, len(x)))
    derivs = np.empty((p + 1, len(x)))
    values[0], values[1] = (1 - x) / 2, (1 + x) / 2
    derivs[0], derivs[1] = -0.5, 0.5
    for n in range(2, p + 1):
        values[n] = (legendre[n] - legendre[n - 2]) / math.sqrt(2 * (2 * n - 1))
        derivs[n] = math.sqrt((2 * n - 1) / 2) * legendre[n - 1]
    return values, derivs


def slides_points_1d(p: int) -> int:
    """Gauss points per direction of the slides' eq. (7): max(2, ceil((3p - 2) / 2))."""
    return max(2, math.ceil((3 * p - 2) / 2))


def quadrature_points_1d(p: int) -> int:
    """Gauss points per direction used here: the slides' count, but at least p + 1.

    The two differ only at p = 2, where the slides' 2^3 points give K^e a rank of at most 6 * 8 = 48
    < 60 - 6, i.e. six spurious zero-energy modes beyond the rigid-body ones; 3^3 points avoid them.
    """
    return max(p + 1, slides_points_1d(p))


@lru_cache(maxsize=None)
def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    points, weights = np.polynomial.legendre.leggauss(n)
    return points, weights


@dataclass(frozen=True, eq=False)
class ReferenceTables:
    """What every element-matrix variant reads, for order p and n_q Gauss points per direction.

    values, derivs: (p + 1, n_q) 1D function values / derivatives at the 1D Gauss points;
    points: (n_q^3, 3) tensor points, t fastest; weights: (n_q^3,);
    gradients: (n_q^3, n_functions, 3) reference gradients of every scalar function.
    """

    basis: HexBasis
    points_1d: np.ndarray
    weights_1d: np.ndarray
    values: np.ndarray
    derivs: np.ndarray
    points: np.ndarray
    weights: np.ndarray
    gradients: np.ndarray

    @property
    def n_q(self) -> int:
        return len(self.points_1d)


@lru_cache(maxsize=None)
def reference_tables(p: int, n_q: int | None = None) -> ReferenceTables:
    basis = hex_basis(p)
    n_q = quadrature_points_1d(p) if n_q is None else n_q
    x, w = gauss_legendre(n_q)
    values, derivs = lobatto_1d(p, x)
    grid = np.stack(np.meshgrid(x, x, x, indexing="ij"), axis=-1).reshape(-1, 3)
    weights = np.einsum("i,j,k->ijk", w, w, w).reshape(-1)
    gradients = reference_gradients(basis, values, derivs)
    return ReferenceTables(basis, x, w, values, derivs, grid, weights, gradients)


def reference_gradients(basis: HexBasis, values: np.ndarray, derivs: np.ndarray) -> np.ndarray:
    """(n_q^3, n_functions, 3) gradients on the tensor grid of the 1D points behind values / derivs."""
    fr, fs, ft = basis.factors.T
    vr, vs, vt = values[fr], values[fs], values[ft]  # (n_functions, n_q)
    dr, ds, dt = derivs[fr], derivs[fs], derivs[ft]
    g = np.stack([np.einsum("ai,aj,ak->ijka", dr, vs, vt), np.einsum("ai,aj,ak->ijka", vr, ds, vt),
                  np.einsum("ai,aj,ak->ijka", vr, vs, dt)], axis=-1)
    return g.reshape(-1, basis.n_functions, 3)


def evaluate(basis: HexBasis, rst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values (n_points, n_functions) and reference gradients (n_points, n_functions, 3) at points rst (n, 3)."""
    rst = np.asarray(rst, dtype=np.float64)
    v, d = zip(*(lobatto_1d(basis.order, rst[:, k]) for k in range(3)))
    fr, fs, ft = basis.factors.T
    vr, vs, vt = v[0][fr].T, v[1][fs].T, v[2][ft].T
    dr, ds, dt = d[0][fr].T, d[1][fs].T, d[2][ft].T
    return vr * vs * vt, np.stack([dr * vs * vt, vr * ds * vt, vr * vs * dt], axis=-1)
