"""Linear solvers of the assembled elasticity system: preconditioned CG (NumPy / CuPy) and a sparse
direct reference, on the system with prescribed DOFs eliminated symmetrically."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..pcg import PcgSpec, pcg
from .system import _sparse


DIRECT_RESIDUAL = 1e-6  # largest relative residual a sparse direct solve may leave


@dataclass(frozen=True, eq=False)
class LinearSolution:
    u: np.ndarray  # (n_dofs,) on the backend
    iterations: int
    relative_residual: float
    history: np.ndarray  # relative residual per iteration (host)


def constrained_system(k, force, dofs, values, xp=np):
    """(K~, b~): rows and columns of prescribed DOFs replaced by the identity, so K~ u = b~ gives the
    prescribed values there and K u = f elsewhere; K~ stays symmetric positive definite."""
    sparse = _sparse(xp)
    n = k.shape[0]
    fixed = xp.zeros(n)
    fixed[xp.asarray(dofs)] = 1.0
    u_c = xp.zeros(n)
    u_c[xp.asarray(dofs)] = xp.asarray(values)
    free = 1.0 - fixed
    keep, pin = sparse.diags(free), sparse.diags(fixed)
    k_tilde = (keep @ k @ keep + pin).tocsr()
    b_tilde = free * (xp.asarray(force) - k @ u_c) + u_c
    return k_tilde, b_tilde


def block_jacobi(k, xp=np):
    """Inverse 3 x 3 diagonal blocks (n_dofs / 3, 3, 3) of K (the x, y, z DOFs of one function)."""
    coo = k.tocoo()
    row, col = coo.row.astype(xp.int64), coo.col.astype(xp.int64)
    inside = row // 3 == col // 3
    flat = (row // 3) * 9 + (row % 3) * 3 + col % 3
    blocks = xp.bincount(flat[inside], weights=coo.data[inside], minlength=k.shape[0] * 3)
    return xp.linalg.inv(blocks.reshape(-1, 3, 3))


CG = PcgSpec("CG", "CG broke down: the stiffness matrix is not positive definite on the free DOFs (are all "
             "regions connected and held?)", "raise max_iterations, use preconditioner = \"block-jacobi\" or "
             "method = \"sparse-direct\"")


def solve_cg(k, b, preconditioner: str, rtol: float, max_iterations: int, xp=np, control=None) -> LinearSolution:
    """Preconditioned conjugate gradients for SPD K~; raises SolverError when rtol is not reached."""
    if preconditioner == "block-jacobi":
        inv_blocks = block_jacobi(k, xp)
        apply = lambda r: xp.einsum("bij,bj->bi", inv_blocks, r.reshape(-1, 3)).reshape(-1)  # noqa: E731
    else:
        diag = k.diagonal()
        apply = lambda r: r / diag  # noqa: E731
    report = None if control is None else (lambda f, m: control.report(0.3 + 0.6 * f, m))
    check = (lambda: None) if control is None else control.check
    solved = pcg(lambda d: k @ d, b, apply, rtol, max_iterations, CG, progress=report, check=check)
    return LinearSolution(solved.x, solved.iterations, solved.relative_residual, solved.history)


def solve_direct(k, b) -> LinearSolution:
    """SciPy SuperLU on the host; a singular matrix raises SolverError."""
    import scipy.sparse.linalg as spla  # noqa: PLC0415

    try:
        lu = spla.splu(k.tocsc())
    except RuntimeError as exc:
        raise SolverError(f"the stiffness matrix is singular ({exc}); check that every region is connected "
                          "and held") from None
    u = lu.solve(np.asarray(b))
    if not np.isfinite(u).all():
        raise SolverError("the sparse direct solve produced non-finite values: the system is singular")
    rel = float(np.linalg.norm(k @ u - b) / max(np.linalg.norm(b), 1e-300))
    if rel > DIRECT_RESIDUAL:  # SuperLU does not always notice a singular matrix
        raise SolverError(f"the sparse direct solve left a relative residual of {rel:.1e}: the stiffness matrix "
                          "is singular or nearly so; check that every region is connected and held")
    return LinearSolution(u, 1, rel, np.array([rel]))
