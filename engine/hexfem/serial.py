"""Single-core Numba element matrices: the slides' one-CPU-core baseline, written as a compiled loop."""

from __future__ import annotations

import numba
import numpy as np

from .basis import reference_tables
from .geometry import vertex_gradients


@numba.njit(cache=True, fastmath=False)
def _stiffness_loop(coords, lam, mu, ref_grads, vgrads, weights, out):  # pragma: no cover - compiled
    m, n_q, n_s = coords.shape[0], ref_grads.shape[0], ref_grads.shape[1]
    jac = np.empty((3, 3))
    inv = np.empty((3, 3))
    g = np.empty((n_s, 3))
    for e in range(m):
        k = out[e]
        k[:, :] = 0.0
        for q in range(n_q):
            for i in range(3):
                for j in range(3):
                    s = 0.0
                    for v in range(8):
                        s += coords[e, v, i] * vgrads[q, v, j]
                    jac[i, j] = s
            det = (jac[0, 0] * (jac[1, 1] * jac[2, 2] - jac[1, 2] * jac[2, 1])
                   - jac[0, 1] * (jac[1, 0] * jac[2, 2] - jac[1, 2] * jac[2, 0])
                   + jac[0, 2] * (jac[1, 0] * jac[2, 1] - jac[1, 1] * jac[2, 0]))
            inv[0, 0] = (jac[1, 1] * jac[2, 2] - jac[1, 2] * jac[2, 1]) / det
            inv[0, 1] = (jac[0, 2] * jac[2, 1] - jac[0, 1] * jac[2, 2]) / det
            inv[0, 2] = (jac[0, 1] * jac[1, 2] - jac[0, 2] * jac[1, 1]) / det
            inv[1, 0] = (jac[1, 2] * jac[2, 0] - jac[1, 0] * jac[2, 2]) / det
            inv[1, 1] = (jac[0, 0] * jac[2, 2] - jac[0, 2] * jac[2, 0]) / det
            inv[1, 2] = (jac[0, 2] * jac[1, 0] - jac[0, 0] * jac[1, 2]) / det
            inv[2, 0] = (jac[1, 0] * jac[2, 1] - jac[1, 1] * jac[2, 0]) / det
            inv[2, 1] = (jac[0, 1] * jac[2, 0] - jac[0, 0] * jac[2, 1]) / det
            inv[2, 2] = (jac[0, 0] * jac[1, 1] - jac[0, 1] * jac[1, 0]) / det
            c = weights[q] * det
            for a in range(n_s):
                for j in range(3):
                    g[a, j] = (ref_grads[q, a, 0] * inv[0, j] + ref_grads[q, a, 1] * inv[1, j]
                               + ref_grads[q, a, 2] * inv[2, j])
            cl, cm = c * lam[e], c * mu[e]
            for a in range(n_s):
                for b in range(a, n_s):
                    dot = cm * (g[a, 0] * g[b, 0] + g[a, 1] * g[b, 1] + g[a, 2] * g[b, 2])
                    for i in range(3):
                        for j in range(3):
                            k[3 * a + i, 3 * b + j] += cl * g[a, i] * g[b, j] + cm * g[a, j] * g[b, i]
                        k[3 * a + i, 3 * b + i] += dot
        for r in range(3 * n_s):  # mirror the upper block triangle
            for s in range(r):
                if s // 3 < r // 3:
                    k[r, s] = k[s, r]


def stiffness_serial(coords, lam, mu, p: int) -> np.ndarray:
    """K^e (m, N_e, N_e) on one CPU core; coords (m, 8, 3) metres, lam / mu (m,) Pa."""
    t = reference_tables(p)
    out = np.empty((len(coords), t.basis.n_dofs, t.basis.n_dofs))
    _stiffness_loop(np.ascontiguousarray(coords, dtype=np.float64), np.ascontiguousarray(lam, dtype=np.float64),
                    np.ascontiguousarray(mu, dtype=np.float64), t.gradients, vertex_gradients(t.points),
                    t.weights, out)
    return out
