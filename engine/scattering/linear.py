"""Sparse direct factorisations of the complex symmetric FEM matrix, by name (variants.LINEAR_SOLVER):
UMFPACK (multifrontal, BLAS 3; through CVXOPT's bundled SuiteSparse), SciPy's SuperLU (symmetric mode),
MKL PARDISO (complex symmetric LDL^T of the upper triangle; through py-mkl-pardiso) on the host, and cuDSS
(complex symmetric LDL^T of the upper triangle on the GPU; cudss_solver.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..backend import gpu_unavailable_reason
from ..errors import BackendError, SolverError
from ..variants import LINEAR_SOLVER

PARDISO_SETTINGS = {1: 2, 9: 8, 10: 1, 12: 1, 17: -1}  # iparm: METIS nested dissection; pivots perturbed
# below 1e-8 ||A||; symmetric scaling and weighted matching (for indefinite matrices); count the factors' nonzeros


@dataclass(frozen=True, eq=False)
class Factorised:
    """solve(B (n, r)) -> X (n, r); name of the solver; nonzeros of the factors and the peak memory of the
    factorisation (bytes) where the solver says; device: where the factor lives and solves ("host" or "GPU");
    details: the solver's own figures (cuDSS: its memory estimates and phase seconds)."""

    solve: Callable[[np.ndarray], np.ndarray]
    name: str
    nonzeros: int | None
    memory_bytes: int | None = None
    device: str = "host"
    details: dict = field(default_factory=dict)


def resolve(name: str) -> str:
    """The solver that runs: name itself, or the one "auto" stands for (variants.LINEAR_SOLVER) where the
    run happens (a usable GPU or not)."""
    return LINEAR_SOLVER.resolve(name, on_gpu=not gpu_unavailable_reason())


def singular(what: str, exc) -> SolverError:
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
        raise singular(what, exc) from None

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
        raise singular(what, exc) from None
    def solve(b: np.ndarray) -> np.ndarray:
        if np.iscomplexobj(b) and not np.iscomplexobj(lu.U.data):  # a real factor: real and imaginary parts
            return lu.solve(np.ascontiguousarray(b.real)) + 1j * lu.solve(np.ascontiguousarray(b.imag))
        return lu.solve(np.ascontiguousarray(b))

    return Factorised(solve, "superlu", int(lu.L.nnz + lu.U.nnz))


def upper_triangle(matrix: sp.spmatrix) -> sp.csr_matrix:
    """The upper triangle (n, n) complex CSR, sorted, every diagonal entry stored (PARDISO's symmetric input):
    the entries on and above the diagonal picked in place where every diagonal entry is stored (a FEM matrix),
    else with the missing ones added as zeros."""
    csr = sp.csr_matrix(matrix, dtype=complex)
    csr.sum_duplicates()
    n = csr.shape[0]
    rows = np.repeat(np.arange(n, dtype=csr.indices.dtype), np.diff(csr.indptr))
    keep = csr.indices >= rows
    counts = np.bincount(rows[keep], minlength=n)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(csr.indptr.dtype)
    columns = csr.indices[keep]
    if counts.all() and np.array_equal(columns[indptr[:-1]], np.arange(n)):
        return sp.csr_matrix((csr.data[keep], columns, indptr), shape=csr.shape)
    coo = sp.triu(matrix, k=1).tocoo()
    diagonal = np.arange(n)
    return sp.csr_matrix((np.concatenate([coo.data, matrix.diagonal()]).astype(complex),
                          (np.concatenate([coo.row, diagonal]), np.concatenate([coo.col, diagonal]))), shape=(n, n))


def _pardiso(matrix: sp.spmatrix, what: str) -> Factorised:
    """Complex symmetric (mtype 6, Bunch-Kaufman pivots); a pivot PARDISO had to perturb is accepted only
    where a random right-hand side still solves to 1e-8 (an exactly singular matrix does not)."""
    import pymklpardiso  # noqa: PLC0415

    try:
        pardiso = pymklpardiso.PardisoSolver(upper_triangle(matrix), pymklpardiso.MTYPE_COMPLEX_SYM,
                                             iparms=PARDISO_SETTINGS)
    except RuntimeError as exc:  # PARDISO's error codes, "zero pivot / numerical factorization failure" among them
        if "pivot" in str(exc):
            raise singular(what, exc) from None
        raise SolverError(f"PARDISO could not factorise {what} ({exc})") from None
    iparm = pardiso.get_iparm()

    def solve(b: np.ndarray) -> np.ndarray:
        return pardiso.solve(np.asfortranarray(b, dtype=complex)).reshape(b.shape)

    if iparm[13] > 0:
        probe = np.random.default_rng(0).standard_normal(matrix.shape[0]).astype(complex)
        residual = np.linalg.norm(matrix @ solve(probe) - probe) / np.linalg.norm(probe)
        if not residual <= 1e-8:
            raise singular(what, f"PARDISO perturbed {iparm[13]} pivots; residual {residual:.1e}")
    peak_kib = max(iparm[14], iparm[15] + iparm[16])
    return Factorised(solve, "pardiso", int(iparm[17]), 1024 * int(peak_kib))


def _cudss(matrix: sp.spmatrix, what: str) -> Factorised:
    """On the GPU (cudss_solver.py), real matrices in real arithmetic; BackendError where no GPU is usable or
    nvmath-python is missing. A zero pivot, or a random right-hand side solving to a residual above 1e-8 (the
    pivots cuDSS perturbed did not hold), is the singular-matrix error."""
    reason = LINEAR_SOLVER.choice("cudss").unavailable(gpu_unavailable_reason())
    if reason:
        raise BackendError(f"linear_solver \"cudss\" cannot run here: {reason}")
    from .cudss_solver import factorise_cudss  # noqa: PLC0415

    upper = upper_triangle(matrix)
    factor = factorise_cudss(upper if np.iscomplexobj(matrix.data) else upper.real, what)
    probe = np.random.default_rng(0).standard_normal(matrix.shape[0])
    residual = np.linalg.norm(matrix @ factor.solve(probe) - probe) / np.linalg.norm(probe)
    if factor.info != 0 or not residual <= 1e-8:
        raise singular(what, f"cuDSS info {factor.info}; residual {residual:.1e}")
    return Factorised(factor.solve, "cudss", factor.nonzeros, factor.details["peak_device_bytes"], "GPU",
                      {**factor.details, "probe_residual": float(residual)})


FACTORISERS = {"umfpack": _umfpack, "superlu": _superlu, "pardiso": _pardiso, "cudss": _cudss}


def factorise(matrix: sp.spmatrix, solver: str, what: str) -> Factorised:
    """Factorise a square sparse matrix (real or complex; symmetric for PARDISO) by solver name
    (variants.LINEAR_SOLVER: "auto" or one of FACTORISERS)."""
    return FACTORISERS[resolve(solver)](matrix, what)
