"""Sparse direct factorisations of the complex symmetric FEM matrix, by name: UMFPACK (multifrontal, BLAS
3; through CVXOPT's bundled SuiteSparse) and SciPy's SuperLU (symmetric mode)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import SolverError

SOLVERS = ("umfpack", "superlu")


@dataclass(frozen=True, eq=False)
class Factorised:
    """solve(B (n, r)) -> X (n, r); name of the solver; nonzeros of the factors where the solver says."""

    solve: Callable[[np.ndarray], np.ndarray]
    name: str
    nonzeros: int | None


def resolve(name: str) -> str:
    """The solver that runs: "auto" is UMFPACK where CVXOPT is installed, SuperLU otherwise."""
    if name == "auto":
        return "umfpack" if importlib.util.find_spec("cvxopt") else "superlu"
    if name not in SOLVERS:
        raise SolverError(f"unknown linear solver '{name}'; known: auto, {', '.join(SOLVERS)}")
    return name


def _singular(what: str, exc) -> SolverError:
    return SolverError(f"{what} is singular ({exc}); the frequency may be a resonance of the cavity between the "
                       "scatterer and S, or the mesh is broken")


def _umfpack(matrix: sp.spmatrix, what: str) -> Factorised:
    import cvxopt  # noqa: PLC0415
    from cvxopt import umfpack  # noqa: PLC0415

    coo = matrix.tocoo()
    a = cvxopt.spmatrix(cvxopt.matrix(coo.data.astype(complex)), cvxopt.matrix(coo.row.astype(np.int64)),
                        cvxopt.matrix(coo.col.astype(np.int64)), size=coo.shape, tc="z")
    try:
        numeric = umfpack.numeric(a, umfpack.symbolic(a))
    except ArithmeticError as exc:
        raise _singular(what, exc) from None

    def solve(b: np.ndarray) -> np.ndarray:
        x = cvxopt.matrix(np.asfortranarray(b, dtype=complex))
        umfpack.solve(a, numeric, x)
        return np.array(x).reshape(b.shape)

    return Factorised(solve, "umfpack", None)


def _superlu(matrix: sp.spmatrix, what: str) -> Factorised:
    """Symmetric mode (minimum degree on A + A^T, diagonal pivots); partial pivoting where a residual check
    on a random vector shows the diagonal pivots lost accuracy."""
    matrix = matrix.tocsc()
    probe = np.random.default_rng(0).standard_normal(matrix.shape[0])
    try:
        lu = spla.splu(matrix, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        x = lu.solve(probe.astype(lu.U.dtype))
        if not np.isfinite(x).all() or np.linalg.norm(matrix @ x - probe) > 1e-8 * np.linalg.norm(probe):
            lu = spla.splu(matrix, permc_spec="MMD_AT_PLUS_A")
    except RuntimeError as exc:  # "Factor is exactly singular"
        raise _singular(what, exc) from None
    def solve(b: np.ndarray) -> np.ndarray:
        if np.iscomplexobj(b) and not np.iscomplexobj(lu.U.data):  # a real factor: real and imaginary parts
            return lu.solve(np.ascontiguousarray(b.real)) + 1j * lu.solve(np.ascontiguousarray(b.imag))
        return lu.solve(np.ascontiguousarray(b))

    return Factorised(solve, "superlu", int(lu.L.nnz + lu.U.nnz))


def factorise(matrix: sp.spmatrix, solver: str, what: str) -> Factorised:
    """Factorise a square sparse matrix (real or complex) by solver name ("auto", "umfpack", "superlu")."""
    return {"umfpack": _umfpack, "superlu": _superlu}[resolve(solver)](matrix, what)
