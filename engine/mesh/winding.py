"""The generalized winding number of a closed triangle surface at points: 1 inside, 0 outside, 1/2 on it
(the solid angle the triangles subtend, Van Oosterom and Strackee's formula, summed)."""

from __future__ import annotations

import numpy as np


def winding_numbers(corners: np.ndarray, x: np.ndarray, check=lambda: None) -> np.ndarray:
    """Winding number (n,) of the outward triangles corners (m, 3, 3) at points x (n, 3), evaluated in chunks
    of points (about 64 MB of scratch); check() runs before each (it raises to stop)."""
    x = np.asarray(x, dtype=float)
    step = max(1, (1 << 23) // (9 * len(corners)))
    parts = []
    for i in range(0, len(x), step):
        check()
        parts.append(_winding(corners, x[i:i + step]))
    return np.concatenate(parts) if parts else np.zeros(0)


def _winding(corners, x):
    a = corners[None] - x[:, None, None, :]  # (n, m, 3, 3)
    la, lb, lc = (np.linalg.norm(a[:, :, i], axis=-1) for i in range(3))
    va, vb, vc = a[:, :, 0], a[:, :, 1], a[:, :, 2]
    num = np.einsum("nmk,nmk->nm", va, np.cross(vb, vc))
    den = (la * lb * lc + np.einsum("nmk,nmk->nm", va, vb) * lc + np.einsum("nmk,nmk->nm", vb, vc) * la
           + np.einsum("nmk,nmk->nm", vc, va) * lb)
    return (2 * np.arctan2(num, den)).sum(axis=1) / (4 * np.pi)
