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


FLOPS_PER_PAIR = 41  # G and grad'G: R, |R|^2, rsqrt (4), k d, cos and sin of k d (8 each), scalings
FLOPS_PER_PAIR_RHS = 158  # the two complex 3-vectors C (ce x R + de R), C (cf x R + df R) and the six sums


def operator_flops(n_sources: int, n_targets: int, n_rhs: int) -> int:
    """Real flops of one application as the kernels compute it: the coupling once per point pair, the
    currents' terms once per pair and right-hand side (the count GFLOP/s are stated with; strategies
    that recompute the coupling per right-hand side are credited the same useful work)."""
    pairs = n_sources * n_targets
    return pairs * (FLOPS_PER_PAIR + FLOPS_PER_PAIR_RHS * n_rhs)


def paper_flops(inner_elements: int, outer_elements: int, n_rhs: int) -> float:
    """Paper 003's count (its Table 2, millions of flops per S' element, times numSp): (1) 711 per S
    element and right-hand side, (2) 2787 per S element, (3) 0.0284e6 per right-hand side + 0.05e6."""
    per_inner = 711.0 * outer_elements * n_rhs + 2787.0 * outer_elements + 0.0284e6 * n_rhs + 0.05e6
    return inner_elements * per_inner


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
