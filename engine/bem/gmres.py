"""Restarted GMRES with right preconditioning on NumPy or CuPy vectors: the Krylov basis stays where the
operator runs (on the GPU no vector crosses to the host), Gram-Schmidt twice (classical, as matrix-vector
products), the small Hessenberg least-squares problem on the host by Givens rotations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import array_module, to_host


BASIS_CHUNK = 8  # Krylov vectors allocated at a time: the basis holds what the iterations used, not `restart`


class KrylovBasis:
    """At most `most` Krylov vectors (n,) of module xp, in chunks of BASIS_CHUNK allocated as the iterations
    reach them and never copied (a grown copy would hold the old basis and the new one at once)."""

    def __init__(self, xp, n: int, most: int):
        self.xp, self.n, self.most, self.chunks = xp, n, most, []

    @property
    def rows(self) -> int:
        return sum(len(c) for c in self.chunks)

    def __setitem__(self, i: int, v) -> None:
        while i >= self.rows:
            self.chunks.append(self.xp.empty((min(BASIS_CHUNK, self.most - self.rows), self.n)))
        self.chunks[i // BASIS_CHUNK][i % BASIS_CHUNK] = v

    def __getitem__(self, i: int):
        return self.chunks[i // BASIS_CHUNK][i % BASIS_CHUNK]

    def _parts(self, k: int):
        """(first row, rows) of each chunk's part of the first k vectors."""
        for c, chunk in enumerate(self.chunks[:-(-k // BASIS_CHUNK)]):
            yield c * BASIS_CHUNK, chunk[:k - c * BASIS_CHUNK]

    def dot(self, w, k: int):
        """V_k w (k,): the first k vectors' products with w (n,)."""
        return self.xp.concatenate([part @ w for _, part in self._parts(k)])

    def combine(self, h, k: int):
        """V_k^T h (n,): the first k vectors weighted by h (k,)."""
        return sum(part.T @ h[lo:lo + len(part)] for lo, part in self._parts(k))


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
    basis = KrylovBasis(xp, n, restart + 1)
    residuals: list[float] = []
    r = b.copy()
    while True:
        beta = float(xp.linalg.norm(r))
        if beta / norm_b <= rtol or len(residuals) >= max_iterations or not np.isfinite(beta):
            return GmresResult(x, tuple(residuals), beta / norm_b <= rtol, beta / norm_b, basis.rows)
        basis[0] = r / beta
        hessenberg = np.zeros((restart + 1, restart))
        cos, sin = np.zeros(restart), np.zeros(restart)
        g = np.zeros(restart + 1)
        g[0] = beta
        k = 0
        while k < restart and len(residuals) < max_iterations:
            w = matvec(precondition(basis[k]))
            h = basis.dot(w, k + 1)
            w = w - basis.combine(h, k + 1)
            again = basis.dot(w, k + 1)  # the second pass restores orthogonality lost to cancellation
            w = w - basis.combine(again, k + 1)
            column = np.r_[to_host(h + again), float(xp.linalg.norm(w))]
            if column[-1] > 0:
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
        x = x + precondition(basis.combine(xp.asarray(y), k))
        r = b - matvec(x)
