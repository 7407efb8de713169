"""The truncation operator as the paper's triple loop (S' elements, S points, right-hand sides) on the
CPU with Numba: the sequential order and the three ways of running one loop level in parallel.

Sources are the S' quadrature points with their currents (operator.Currents); each strategy adds
E and F (n_rhs, n_S, 3) at the S points. operator.apply_reference is the specification."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(inline="always")
def _pair(tx, ty, tz, sx, sy, sz, k):  # pragma: no cover - compiled
    """G and grad'G (3 complex) of one (S point, S' point) pair."""
    rx, ry, rz = tx - sx, ty - sy, tz - sz
    d = np.sqrt(rx * rx + ry * ry + rz * rz)
    g = np.exp(-1j * k * d) / (4 * np.pi * d)
    c = (1 + 1j * k * d) * g / (d * d)
    return g, c * rx, c * ry, c * rz


@numba.njit(inline="always")
def _accumulate(e, f, r, t, s, g, gx, gy, gz, ce, cf, de, df, k2):  # pragma: no cover - compiled
    ex, ey, ez = ce[r, s, 0], ce[r, s, 1], ce[r, s, 2]
    fx, fy, fz = cf[r, s, 0], cf[r, s, 1], cf[r, s, 2]
    e[r, t, 0] += fx * g + (ey * gz - ez * gy) + de[r, s] * gx
    e[r, t, 1] += fy * g + (ez * gx - ex * gz) + de[r, s] * gy
    e[r, t, 2] += fz * g + (ex * gy - ey * gx) + de[r, s] * gz
    f[r, t, 0] += k2 * ex * g + (fy * gz - fz * gy) + df[r, s] * gx
    f[r, t, 1] += k2 * ey * g + (fz * gx - fx * gz) + df[r, s] * gy
    f[r, t, 2] += k2 * ez * g + (fx * gy - fy * gx) + df[r, s] * gz


@numba.njit(parallel=True, cache=True)
def coupling_rows(targets, sources, k, out):  # pragma: no cover - compiled
    """zgemm.coupling_numpy's tile written in place, threads sharing its rows: out (n_t, 4 n_s) complex gets
    G, then grad'G's x, y, z components, each (n_t, n_s)."""
    n_s = sources.shape[0]
    for t in numba.prange(targets.shape[0]):
        for s in range(n_s):
            g, gx, gy, gz = _pair(targets[t, 0], targets[t, 1], targets[t, 2],
                                  sources[s, 0], sources[s, 1], sources[s, 2], k)
            out[t, s], out[t, n_s + s], out[t, 2 * n_s + s], out[t, 3 * n_s + s] = g, gx, gy, gz


@numba.njit(cache=True)
def serial(targets, sources, ce, cf, de, df, k, e, f):  # pragma: no cover - compiled
    """One core, the paper's order: S' outer, S middle, right-hand sides inner."""
    k2 = k * k
    for s in range(sources.shape[0]):
        for t in range(targets.shape[0]):
            g, gx, gy, gz = _pair(targets[t, 0], targets[t, 1], targets[t, 2],
                                  sources[s, 0], sources[s, 1], sources[s, 2], k)
            for r in range(ce.shape[0]):
                _accumulate(e, f, r, t, s, g, gx, gy, gz, ce, cf, de, df, k2)


@numba.njit(parallel=True, cache=True)
def parallel_s(targets, sources, ce, cf, de, df, k, e, f):  # pragma: no cover - compiled
    """omp_S: threads share the S points; each owns its rows of the output."""
    k2 = k * k
    for t in numba.prange(targets.shape[0]):
        for s in range(sources.shape[0]):
            g, gx, gy, gz = _pair(targets[t, 0], targets[t, 1], targets[t, 2],
                                  sources[s, 0], sources[s, 1], sources[s, 2], k)
            for r in range(ce.shape[0]):
                _accumulate(e, f, r, t, s, g, gx, gy, gz, ce, cf, de, df, k2)


@numba.njit(parallel=True, cache=True)
def parallel_rhs(targets, sources, ce, cf, de, df, k, e, f):  # pragma: no cover - compiled
    """omp_rhs: threads share the right-hand sides (the coupling is recomputed by each)."""
    k2 = k * k
    for r in numba.prange(ce.shape[0]):
        for s in range(sources.shape[0]):
            for t in range(targets.shape[0]):
                g, gx, gy, gz = _pair(targets[t, 0], targets[t, 1], targets[t, 2],
                                      sources[s, 0], sources[s, 1], sources[s, 2], k)
                _accumulate(e, f, r, t, s, g, gx, gy, gz, ce, cf, de, df, k2)


@numba.njit(parallel=True, cache=True)
def parallel_sprime(targets, sources, ce, cf, de, df, k, e, f, n_threads):  # pragma: no cover - compiled
    """omp_S': threads share the S' points, each adding into a private copy of the output; the copies
    are then summed in parallel over the output entries."""
    k2 = k * k
    private_e = np.zeros((n_threads,) + e.shape, dtype=e.dtype)
    private_f = np.zeros((n_threads,) + f.shape, dtype=f.dtype)
    per = (sources.shape[0] + n_threads - 1) // n_threads
    for th in numba.prange(n_threads):
        for s in range(th * per, min((th + 1) * per, sources.shape[0])):
            for t in range(targets.shape[0]):
                g, gx, gy, gz = _pair(targets[t, 0], targets[t, 1], targets[t, 2],
                                      sources[s, 0], sources[s, 1], sources[s, 2], k)
                for r in range(ce.shape[0]):
                    _accumulate(private_e[th], private_f[th], r, t, s, g, gx, gy, gz, ce, cf, de, df, k2)
    flat_e, flat_f = e.reshape(-1), f.reshape(-1)
    pe, pf = private_e.reshape(n_threads, -1), private_f.reshape(n_threads, -1)
    for i in numba.prange(flat_e.shape[0]):
        for th in range(n_threads):
            flat_e[i] += pe[th, i]
            flat_f[i] += pf[th, i]


def private_copy_bytes(n_rhs: int, n_targets: int, n_threads: int) -> int:
    """Extra memory of cpu-sprime: one complex E and F output per thread."""
    return 2 * n_threads * n_rhs * n_targets * 3 * 16


CPU_LOOPS = {"serial": serial, "cpu-s": parallel_s, "cpu-rhs": parallel_rhs, "cpu-sprime": parallel_sprime}


def apply_cpu(loop: str, targets, sources, cur, k: float):
    """E, F (n_rhs, n_S, 3) complex by one of CPU_LOOPS."""
    n_rhs = cur.dot_e.shape[0]
    e = np.zeros((n_rhs, len(targets), 3), dtype=complex)
    f = np.zeros_like(e)
    args = (np.ascontiguousarray(targets, dtype=float), np.ascontiguousarray(sources, dtype=float),
            np.ascontiguousarray(cur.cross_e), np.ascontiguousarray(cur.cross_f),
            np.ascontiguousarray(cur.dot_e), np.ascontiguousarray(cur.dot_f), float(k), e, f)
    if loop == "cpu-sprime":
        CPU_LOOPS[loop](*args, numba.get_num_threads())
    else:
        CPU_LOOPS[loop](*args)
    return e, f
