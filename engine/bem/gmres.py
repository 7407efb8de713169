"""Restarted GMRES with right preconditioning on NumPy or CuPy vectors: the Krylov basis stays where the
operator runs (on the GPU no vector crosses to the host), Gram-Schmidt twice (classical, as matrix-vector
products), the small Hessenberg least-squares problem on the host by Givens rotations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import array_module, to_host


BASIS_CHUNK = 32  # Krylov vectors allocated at a time: the basis holds what the iterations used, not `restart`


def _room_for(basis, row: int, most: int):
    """basis itself, or a copy with BASIS_CHUNK more rows (at most `most`) when row is past its end."""
    if row < len(basis):
        return basis
    xp = array_module(basis)
    grown = xp.empty((min(most, len(basis) + BASIS_CHUNK), basis.shape[1]))
    grown[:len(basis)] = basis
    return grown


@dataclass(frozen=True, eq=False)
class GmresResult:
    x: object  # the solution (n,), an array of the right-hand side's module
    residuals: tuple[float, ...]  # ||b - A x|| / ||b|| after each iteration, as GMRES's least squares gives it
    converged: bool  # the true residual reached rtol
    relative_residual: float  # ||b - A x|| / ||b||, recomputed
    basis_rows: int = 0  # Krylov vectors allocated (n each): at most restart + 1


def gmres(matvec, precondition, b, rtol: float, restart: int, max_iterations: int) -> GmresResult:
    """Solve A x = b with x = M^-1 y and A M^-1 y = b: matvec(v) = A v, precondition(v) = M^-1 v, both on
    arrays of b's module; at most max_iterations inner iterations over restarts of `restart` vectors."""
    xp = array_module(b)
    n = len(b)
    norm_b = float(xp.linalg.norm(b)) or 1.0
    x = xp.zeros(n)
    basis = xp.empty((min(restart + 1, BASIS_CHUNK), n))  # grown as the iterations need it
    residuals: list[float] = []
    r = b.copy()
    while True:
        beta = float(xp.linalg.norm(r))
        if beta / norm_b <= rtol or len(residuals) >= max_iterations or not np.isfinite(beta):
            return GmresResult(x, tuple(residuals), beta / norm_b <= rtol, beta / norm_b, len(basis))
        basis[0] = r / beta
        hessenberg = np.zeros((restart + 1, restart))
        cos, sin = np.zeros(restart), np.zeros(restart)
        g = np.zeros(restart + 1)
        g[0] = beta
        k = 0
        while k < restart and len(residuals) < max_iterations:
            w = matvec(precondition(basis[k]))
            h = basis[:k + 1] @ w
            w = w - basis[:k + 1].T @ h
            again = basis[:k + 1] @ w  # the second pass restores orthogonality lost to cancellation
            w = w - basis[:k + 1].T @ again
            column = np.r_[to_host(h + again), float(xp.linalg.norm(w))]
            if column[-1] > 0:
                basis = _room_for(basis, k + 1, restart + 1)
                basis[k + 1] = w / column[-1]
            for i in range(k):  # earlier rotations, then a new one zeroing the subdiagonal
                column[i], column[i + 1] = (cos[i] * column[i] + sin[i] * column[i + 1],
                                            -sin[i] * column[i] + cos[i] * column[i + 1])
            radius = np.hypot(column[k], column[k + 1])
            cos[k], sin[k] = (column[k] / radius, column[k + 1] / radius) if radius > 0 else (1.0, 0.0)
            column[k], column[k + 1] = radius, 0.0
            g[k], g[k + 1] = cos[k] * g[k], -sin[k] * g[k]
            hessenberg[:k + 2, k] = column
            k += 1
            residuals.append(abs(g[k]) / norm_b)
            if residuals[-1] <= rtol or radius == 0:
                break
        y = np.linalg.lstsq(np.triu(hessenberg[:k, :k]), g[:k], rcond=None)[0]
        x = x + precondition(basis[:k].T @ xp.asarray(y))
        r = b - matvec(x)
