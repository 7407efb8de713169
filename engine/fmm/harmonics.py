"""Solid harmonics for the Laplace FMM, stored for m >= 0 only (paper 001, eqs. 6-7).

R_n^m(x) = i^m r^n P_n^m(cos t) e^{i m phi} / (n + m)!  and  I_n^m(x) = i^m (n - m)! P_n^m(cos t) e^{i m phi} / r^(n+1),
P_n^m without the Condon-Shortley phase. The factor i^m makes the translation theorems sign-free:
    1 / |x - y| = sum_{n,m} conj(R_n^m(y)) I_n^m(x)                       (|y| < |x|)
    R_n^m(a + b) = sum_{j,k} R_j^k(a) R_{n-j}^{m-k}(b)
    I_n^m(x - y) = sum_{j,k} conj(R_j^k(y)) I_{n+j}^{m+k}(x)               (|y| < |x|)
and negative orders follow from Y_n^{-m} = (-1)^m conj(Y_n^m). Coefficient (n, m) sits at n (n + 1) / 2 + m.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def n_coefficients(p: int) -> int:
    """Stored coefficients of an expansion of order p: (p + 1)(p + 2) / 2."""
    return (p + 1) * (p + 2) // 2


def index(n, m):
    return n * (n + 1) // 2 + m


@lru_cache(maxsize=None)
def degree_order(p: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, m) of every stored coefficient, each (n_coefficients,) int."""
    n = np.concatenate([np.full(k + 1, k) for k in range(p + 1)])
    m = np.concatenate([np.arange(k + 1) for k in range(p + 1)])
    return n, m


def regular(x, p: int, xp=np):
    """R_n^m(x) for n <= p, m >= 0: (n_points, n_coefficients) complex; x: (n_points, 3)."""
    x = xp.asarray(x, dtype=xp.float64)
    z = x[:, 2]
    w = x[:, 0] + 1j * x[:, 1]
    r2 = (x * x).sum(axis=1)
    out = xp.zeros((len(x), n_coefficients(p)), dtype=xp.complex128)
    out[:, 0] = 1.0
    for m in range(p + 1):
        if m > 0:
            out[:, index(m, m)] = out[:, index(m - 1, m - 1)] * w / (2 * m)
        if m + 1 <= p:
            out[:, index(m + 1, m)] = z * out[:, index(m, m)]
        for n in range(m + 2, p + 1):
            out[:, index(n, m)] = ((2 * n - 1) * z * out[:, index(n - 1, m)]
                                   - r2 * out[:, index(n - 2, m)]) / ((n + m) * (n - m))
    return out * xp.asarray(1j ** degree_order(p)[1])


def irregular(x, p: int, xp=np):
    """I_n^m(x) for n <= p, m >= 0: (n_points, n_coefficients) complex; x: (n_points, 3), x != 0."""
    x = xp.asarray(x, dtype=xp.float64)
    z = x[:, 2]
    w = x[:, 0] + 1j * x[:, 1]
    r2 = (x * x).sum(axis=1)
    out = xp.zeros((len(x), n_coefficients(p)), dtype=xp.complex128)
    out[:, 0] = 1.0 / xp.sqrt(r2)
    for m in range(p + 1):
        if m > 0:
            out[:, index(m, m)] = out[:, index(m - 1, m - 1)] * (2 * m - 1) * w / r2
        if m + 1 <= p:
            out[:, index(m + 1, m)] = (2 * m + 1) * z * out[:, index(m, m)] / r2
        for n in range(m + 2, p + 1):
            out[:, index(n, m)] = ((2 * n - 1) * z * out[:, index(n - 1, m)]
                                   - (n + m - 1) * (n - m - 1) * out[:, index(n - 2, m)]) / r2
    return out * xp.asarray(1j ** degree_order(p)[1])


def full_order(values, p: int, xp=np):
    """Expand stored m >= 0 coefficients (..., n_coefficients) to all orders: (..., p + 1, 2p + 1),
    entry [n, p + m] = Y_n^m, zero where |m| > n."""
    n, m = degree_order(p)
    out = xp.zeros(values.shape[:-1] + (p + 1, 2 * p + 1), dtype=xp.complex128)
    sign = xp.asarray((-1.0) ** m)
    n, m = xp.asarray(n), xp.asarray(m)
    out[..., n, p - m] = sign * xp.conj(values)
    out[..., n, p + m] = values  # after the line above, so that m = 0 keeps its own value
    return out
