"""Kernels of the pair integrals h, g (n_pairs, 3, 3, 3) of assembly._pair_integrals, parallel over pairs:
the near-field setup's hot loop, in Numba on the host and in CUDA (kernels/pair_integrals.cu) on the GPU,
with one signature. Each pair has its own rule (an index into stacked barycentric rules); the NumPy
function assembly._pair_integrals is their specification."""

from __future__ import annotations

import math
from pathlib import Path

import numba
import numpy as np

from ..backend import array_module, kernel_module

THREADS = 128  # CUDA threads per block, one pair each


@numba.njit(parallel=True, cache=True)
def pair_integrals(x, corners, normals, areas, pairs_p, pairs_e, rule_of, rule_start, rule_count, bary, weights,
                   mu, nu):
    """x (P, 3); corners (E, 3, 3), normals (E, 3), areas (E,); pairs (n,), rule_of (n,) into rule_start /
    rule_count, slices of bary (Q, 3) and weights (Q,)."""
    n = pairs_p.shape[0]
    h = np.zeros((n, 3, 3, 3))
    g = np.zeros((n, 3, 3, 3))
    cu = 1.0 / (16.0 * math.pi * mu * (1.0 - nu))
    ct = -1.0 / (8.0 * math.pi * (1.0 - nu))
    a1 = 1.0 - 2.0 * nu
    for i in numba.prange(n):
        p, e, r0 = pairs_p[i], pairs_e[i], rule_start[rule_of[i]]
        nx, ny, nz = normals[e, 0], normals[e, 1], normals[e, 2]
        nv = (nx, ny, nz)
        for q in range(r0, r0 + rule_count[rule_of[i]]):
            y0 = bary[q, 0] * corners[e, 0, 0] + bary[q, 1] * corners[e, 1, 0] + bary[q, 2] * corners[e, 2, 0]
            y1 = bary[q, 0] * corners[e, 0, 1] + bary[q, 1] * corners[e, 1, 1] + bary[q, 2] * corners[e, 2, 1]
            y2 = bary[q, 0] * corners[e, 0, 2] + bary[q, 1] * corners[e, 1, 2] + bary[q, 2] * corners[e, 2, 2]
            r = (y0 - x[p, 0], y1 - x[p, 1], y2 - x[p, 2])
            d = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
            ev = (r[0] / d, r[1] / d, r[2] / d)
            drdn = ev[0] * nx + ev[1] * ny + ev[2] * nz
            w = weights[q] * areas[e]
            wu = w * cu / d
            wt = w * ct / (d * d)
            for l in range(3):
                for k in range(3):
                    delta = 1.0 if l == k else 0.0
                    u = wu * ((3.0 - 4.0 * nu) * delta + ev[l] * ev[k])
                    t = wt * (drdn * (a1 * delta + 3.0 * ev[l] * ev[k]) - a1 * (ev[l] * nv[k] - ev[k] * nv[l]))
                    for a in range(3):
                        g[i, l, k, a] += u * bary[q, a]
                        h[i, l, k, a] += t * bary[q, a]
    return h, g


def stacked_rules(rules) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start (R,), count (R,), bary (Q, 3), weights (Q,)) of a list of (bary, weights) rules."""
    counts = np.array([len(w) for _, w in rules])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return starts, counts, np.concatenate([b for b, _ in rules]), np.concatenate([w for _, w in rules])


def _module():
    return kernel_module(Path(__file__).with_name("kernels") / "pair_integrals.cu")


def device_pair_integrals(x, corners, normals, areas, pairs_p, pairs_e, rule_of, rule_start, rule_count, bary,
                          weights, mu, nu):
    """pair_integrals on CuPy arrays: the CUDA kernel, one thread per pair."""
    import cupy as cp  # noqa: PLC0415

    n = len(pairs_p)
    h, g = cp.empty((n, 3, 3, 3)), cp.empty((n, 3, 3, 3))
    if n:
        as_i8 = lambda a: cp.ascontiguousarray(a, dtype=cp.int64)  # noqa: E731
        _module().get_function("pair_integrals")(
            (-(-n // THREADS),), (THREADS,),
            (cp.ascontiguousarray(x, dtype=cp.float64), cp.ascontiguousarray(corners[pairs_e]),
             cp.ascontiguousarray(normals[pairs_e]), cp.ascontiguousarray(areas[pairs_e]), as_i8(pairs_p),
             as_i8(rule_of), as_i8(rule_start), as_i8(rule_count), cp.ascontiguousarray(bary),
             cp.ascontiguousarray(weights), np.float64(mu), np.float64(nu), np.int64(n), h, g))
    return h, g


CHUNK = 1 << 16  # pairs per compiled call: Python, and so Ctrl-C and SIGTERM, gets a turn between calls


def chunked_pair_integrals(x, corners, normals, areas, pairs_p, pairs_e, rule_of, rule_start, rule_count, bary,
                           weights, mu, nu):
    """pair_integrals over CHUNK pairs at a time: a compiled loop cannot be interrupted, so a long one is cut
    into calls, between which a pending KeyboardInterrupt or SIGTERM is raised (in a few ms, not at the
    end of the whole setup)."""
    n = len(pairs_p)
    if n <= CHUNK:
        return pair_integrals(x, corners, normals, areas, pairs_p, pairs_e, rule_of, rule_start, rule_count, bary,
                              weights, mu, nu)
    h, g = np.empty((n, 3, 3, 3)), np.empty((n, 3, 3, 3))
    for start in range(0, n, CHUNK):
        part = slice(start, start + CHUNK)
        h[part], g[part] = pair_integrals(x, corners, normals, areas, pairs_p[part], pairs_e[part], rule_of[part],
                                          rule_start, rule_count, bary, weights, mu, nu)
    return h, g


def kernel_for(a):
    """The pair_integrals kernel for the array module of a: Numba (in chunks) for NumPy, CUDA for CuPy."""
    return chunked_pair_integrals if array_module(a) is np else device_pair_integrals
