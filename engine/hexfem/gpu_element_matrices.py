"""CUDA element matrices of paper 004: AI (a thread per element) and AII (a thread per element and
Gauss point, then a summation over the points), launched from kernels/hex_stiffness.cu."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from .basis import reference_tables
from .geometry import vertex_gradients

BLOCK = 128


@functools.lru_cache(maxsize=1)
def _module():
    import cupy  # noqa: PLC0415

    return cupy.RawModule(code=(Path(__file__).with_name("kernels") / "hex_stiffness.cu").read_text())


@functools.lru_cache(maxsize=None)
def _device_tables(p: int):
    import cupy as cp  # noqa: PLC0415

    t = reference_tables(p)
    return (cp.asarray(t.gradients), cp.asarray(vertex_gradients(t.points)), cp.asarray(t.weights),
            len(t.weights), t.basis.n_functions)


def _inputs(coords, lam, mu):
    import cupy as cp  # noqa: PLC0415

    return (cp.ascontiguousarray(cp.asarray(coords, dtype=cp.float64)),
            cp.ascontiguousarray(cp.asarray(lam, dtype=cp.float64)),
            cp.ascontiguousarray(cp.asarray(mu, dtype=cp.float64)))


def stiffness_ai(coords, lam, mu, p: int):
    """K^e (m, N_e, N_e) as a CuPy array, one thread per element; coords (m, 8, 3) metres, lam / mu Pa."""
    import cupy as cp  # noqa: PLC0415

    coords, lam, mu = _inputs(coords, lam, mu)
    ref_grads, vgrads, weights, nq, ns = _device_tables(p)
    m, ne = len(coords), 3 * ns
    g = cp.empty((3 * ns, m))
    k = cp.empty((ne, ne, m))
    _module().get_function("hex_stiffness_ai")(
        (-(-m // BLOCK),), (BLOCK,),
        (coords, lam, mu, ref_grads, vgrads, weights, np.int32(m), np.int32(nq), np.int32(ns), g, k))
    return cp.ascontiguousarray(k.transpose(2, 0, 1))


def point_gradients(coords, p: int):
    """AII's first pass: gradients (m, n_q^3, n_s, 3) in 1/m and w det J (m, n_q^3), one thread per point."""
    import cupy as cp  # noqa: PLC0415

    coords, _, _ = _inputs(coords, np.zeros(0), np.zeros(0))
    ref_grads, vgrads, weights, nq, ns = _device_tables(p)
    m = len(coords)
    grads = cp.empty((m, nq, ns, 3))
    c = cp.empty((m, nq))
    _module().get_function("hex_point_gradients")(
        (-(-(m * nq) // BLOCK),), (BLOCK,),
        (coords, ref_grads, vgrads, weights, np.int32(m), np.int32(nq), np.int32(ns), grads, c))
    return grads, c


def stiffness_aii(coords, lam, mu, p: int):
    """K^e (m, N_e, N_e) as a CuPy array: point gradients, then one thread per (element, a, b) block."""
    import cupy as cp  # noqa: PLC0415

    coords, lam, mu = _inputs(coords, lam, mu)
    grads, c = point_gradients(coords, p)
    m, nq, ns = grads.shape[0], grads.shape[1], grads.shape[2]
    k = cp.empty((m, 3 * ns, 3 * ns))
    _module().get_function("hex_sum_points")(
        (-(-(m * ns * ns) // BLOCK),), (BLOCK,),
        (grads, c, lam, mu, np.int32(m), np.int32(nq), np.int32(ns), k))
    return k


def stiffness_gemm_gpu(coords, lam, mu, p: int):
    """The gemm variant on the GPU: the operand X (m, n_G, 3 n_s) of gradients scaled by sqrt(w det J)
    from two kernels, the Gram matrices X^T X by one batched cuBLAS DGEMM, K^e by a last kernel.
    NumPy twin: element_matrices.stiffness_gemm."""
    import cupy as cp  # noqa: PLC0415

    coords, lam, mu = _inputs(coords, lam, mu)
    ref_grads, vgrads, weights, nq, ns = _device_tables(p)
    m, f = len(coords), _module().get_function
    s = cp.empty((m, nq, 3, 3))
    f("hex_scaled_inverse")((-(-(m * nq) // BLOCK),), (BLOCK,),
                            (coords, vgrads, weights, np.int32(m), np.int32(nq), s))
    x = cp.empty((m, nq, 3 * ns))
    f("hex_gram_operand")((-(-(m * nq * ns) // BLOCK),), (BLOCK,),
                          (ref_grads, s, np.int32(m), np.int32(nq), np.int32(ns), x))
    gram = cp.matmul(x.transpose(0, 2, 1), x)
    del x
    k = cp.empty((m, 3 * ns, 3 * ns))
    f("hex_gram_to_stiffness")((-(-(m * ns * ns) // BLOCK),), (BLOCK,),
                               (gram, lam, mu, np.int32(m), np.int32(ns), k))
    return k
