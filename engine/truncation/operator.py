"""The FE-IIIEE truncation operator: E and F = curl E on S from the field on S' (the NumPy reference).

With n' the outward unit normal of S', w' the quadrature weight times the triangle area, R = r - r',
G = exp(-jkR)/(4 pi R) and grad'G = (1 + jkR) G R / R^2:
    E(r) = sum w' [(n' x F) G + (n' x E) x grad'G + (n' . E) grad'G]
    F(r) = sum w' [k^2 (n' x E) G + (n' x F) x grad'G + (n' . F) grad'G]
The per-point "currents" are formed once per right-hand side; G and grad'G depend on geometry and k only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Currents:
    """Per S' point and right-hand side: w' n' x E, w' n' x F (n_rhs, n', 3) and w' n'.E, w' n'.F (n_rhs, n')."""

    cross_e: np.ndarray
    cross_f: np.ndarray
    dot_e: np.ndarray
    dot_f: np.ndarray


def currents(normals, weights, e, f) -> Currents:
    """normals (n', 3), weights (n',), fields e, f (n_rhs, n', 3) complex on S'."""
    w = weights[None, :, None]
    n = normals[None]
    return Currents(w * np.cross(n, e), w * np.cross(n, f), weights * np.einsum("pk,rpk->rp", normals, e),
                    weights * np.einsum("pk,rpk->rp", normals, f))


def flops_per_pair_rhs() -> int:
    """Real flops counted per (S point, S' point, right-hand side): 2 complex 3-vector cross products,
    3 complex scalar-vector products and the sums (E and F), plus the coupling G, grad'G amortised."""
    return 2 * (2 * 6 * 6 + 3 * 6 + 3 * 2 * 6)


def apply_reference(targets, sources, cur: Currents, k: float, chunk: int = 256):
    """E, F (n_rhs, n_S, 3) complex at targets (n_S, 3) m from currents at sources (n', 3) m."""
    n_rhs = cur.dot_e.shape[0]
    e = np.zeros((n_rhs, len(targets), 3), dtype=complex)
    f = np.zeros_like(e)
    for lo in range(0, len(targets), chunk):
        r = targets[lo:lo + chunk, None, :] - sources[None, :, :]  # (t, s, 3)
        dist = np.linalg.norm(r, axis=2)
        g = np.exp(-1j * k * dist) / (4 * np.pi * dist)
        gg = ((1 + 1j * k * dist) * g / dist ** 2)[..., None] * r  # grad'G (t, s, 3)
        cr_e = np.cross(cur.cross_e[:, None, :, :], gg[None])       # (n_rhs, t, s, 3)
        cr_f = np.cross(cur.cross_f[:, None, :, :], gg[None])
        e[:, lo:lo + chunk] = (np.einsum("rsk,ts->rtk", cur.cross_f, g) + cr_e.sum(axis=2)
                               + np.einsum("rs,tsk->rtk", cur.dot_e, gg))
        f[:, lo:lo + chunk] = (k * k * np.einsum("rsk,ts->rtk", cur.cross_e, g) + cr_f.sum(axis=2)
                               + np.einsum("rs,tsk->rtk", cur.dot_f, gg))
    return e, f
