"""The far field's phase sums on the host's cores with Numba: for each right-hand side and direction d,
sum over the S' points s of exp(jk d . s) / 4 pi times the values there, without forming the (directions,
points) phase matrix. phase_sums_numpy, the same sums through that matrix, is the specification (and what
runs on a GPU, by CuPy)."""

from __future__ import annotations

import numba
import numpy as np


def phase_sums_numpy(directions, sources, values, k: float, xp=np):
    """(r, n_dir, v) complex: sum_s exp(jk d . s) / 4 pi values[q, s] for unit directions (1 or r, n_dir, 3),
    points sources (n', 3) m and values (r, n', v); by the array module xp through the phase matrix."""
    phase = xp.exp(1j * k * (xp.asarray(directions) @ xp.asarray(sources).T)) / (4 * np.pi)  # (1 or r, n_dir, n')
    return phase @ xp.asarray(values)


def phase_sums(directions: np.ndarray, sources: np.ndarray, values: np.ndarray, k: float) -> np.ndarray:
    """phase_sums_numpy's sums on the host's cores (Numba, directions shared among the threads)."""
    if directions.shape[0] not in (1, values.shape[0]):
        raise ValueError(f"directions for {directions.shape[0]} right-hand sides, values for {values.shape[0]}")
    directions = np.ascontiguousarray(directions, dtype=np.float64)
    out = np.zeros((values.shape[0], directions.shape[1], values.shape[2]), dtype=np.complex128)
    _sums(directions, np.ascontiguousarray(sources, dtype=np.float64),
          np.ascontiguousarray(values, dtype=np.complex128), float(k), out)
    return out


@numba.njit(parallel=True, cache=True)
def _sums(directions, sources, values, k, out):  # pragma: no cover - compiled
    """out (r, n_dir, v) += the phase sums; directions (m, n_dir, 3) with m = 1 (shared by every right-hand
    side) or r (each its own)."""
    m, n_dir = directions.shape[0], directions.shape[1]
    r, n_src, n_val = values.shape
    scale = 1.0 / (4 * np.pi)
    for i in numba.prange(n_dir):
        for g in range(m):
            dx, dy, dz = directions[g, i, 0], directions[g, i, 1], directions[g, i, 2]
            first, last = (0, r) if m == 1 else (g, g + 1)
            for s in range(n_src):
                arg = k * (dx * sources[s, 0] + dy * sources[s, 1] + dz * sources[s, 2])
                phase = complex(np.cos(arg) * scale, np.sin(arg) * scale)
                for q in range(first, last):
                    for v in range(n_val):
                        out[q, i, v] += phase * values[q, s, v]
