"""Launchers of kernels/truncation.cu (cuda-s, cuda-rhs, cuda-tiled, cuda-tiled-fp32); multi_gpu.py runs them
on several GPUs.

launch works on device arrays; apply_gpu takes host arrays and returns host arrays E, F (n_rhs, n_S, 3)
complex128, like loops.apply_cpu; operator.apply_reference is the specification they are tested against."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from ..backend import kernel_module

BLOCK = 128
BLOCKS_PER_SM = 32  # cuda-tiled: 4 resident blocks of 128 threads per SM at its register use, 8 waves (a
# chunk sweep on an H200 at numS 8,166 and 32,422 found the time flat from there, 7 % below one wave's)
PARTIAL_BYTES = 1 << 30  # cuda-tiled: most device memory for the S' chunks' partial sums
TILED_KERNELS = {"cuda-tiled": "cuda_tiled", "cuda-tiled-fp32": "cuda_tiled32"}  # loop: its kernels' stem
_multiprocessors: dict[int, int] = {}
_lock = threading.Lock()


def compiled_module(cp):
    """The compiled module of the current device (one per device, for multi-gpu-tiled), loaded there now rather
    than in a first timed call."""
    module = kernel_module(Path(__file__).with_name("kernels") / "truncation.cu", ("-std=c++17",))
    module.get_function("cuda_s")
    return module


def _device_inputs(cp, targets, sources, cur):
    return (cp.asarray(targets, dtype=cp.float64), cp.asarray(sources, dtype=cp.float64),
            cp.asarray(cur.cross_e, dtype=cp.complex128), cp.asarray(cur.cross_f, dtype=cp.complex128),
            cp.asarray(cur.dot_e, dtype=cp.complex128), cp.asarray(cur.dot_f, dtype=cp.complex128))


def launch(cp, loop: str, tgt, src, ce, cf, de, df, k: float, q: int):
    """E, F as device arrays by cuda-s, cuda-rhs or a tiled loop; tgt (n_t, 3) ... on the current device. q: S
    points per element (cuda-s's thread granularity)."""
    n_t, n_rhs = len(tgt), de.shape[0]
    e = cp.empty((n_rhs, n_t, 3), dtype=cp.complex128)  # every kernel writes every output
    f = cp.empty_like(e)
    if loop == "cuda-rhs":
        cur_t = cp.ascontiguousarray(cp.concatenate([ce.transpose(1, 2, 0), cf.transpose(1, 2, 0),
                                                     de.T[:, None, :], df.T[:, None, :]], axis=1))  # (n_s, 8, n_rhs)
        threads = min(BLOCK, -(-n_rhs // 32) * 32)
        compiled_module(cp).get_function("cuda_rhs")((n_t, -(-n_rhs // threads)), (threads,),
                                                     (tgt, src, np.int32(len(src)), cur_t, np.int32(n_rhs),
                                                      np.int64(n_t), np.float64(k), e, f))
    else:
        for call in kernel_calls(cp, loop, tgt, src, ce, cf, de, df, k, q, e, f):
            call()
    return e, f


def kernel_calls(cp, loop: str, tgt, src, ce, cf, de, df, k: float, q: int, e, f) -> list[Callable[[], None]]:
    """The kernel launches, in order, by which cuda-s or a tiled loop writes E, F into e, f (n_rhs, n_t, 3)
    complex on the current device, from device arrays tgt (n_t, 3), src (n_s, 3) and the currents; any
    scratch they need is allocated here and held by the calls. Each call queues on the current stream; a
    caller that applies the operator again to new currents in the same arrays (multi_gpu) prepares them once."""
    n_t, n_s, n_rhs = len(tgt), len(src), de.shape[0]
    if n_t % q:
        raise ValueError(f"{n_t} S points are not whole elements of {q} points")
    module = compiled_module(cp)
    if loop == "cuda-s":
        n_elem = n_t // q
        return [partial(module.get_function("cuda_s"), (-(-n_elem // BLOCK),), (BLOCK,),
                        (tgt, np.int32(n_elem), np.int32(q), src, np.int32(n_s), ce, cf, de, df, np.int32(n_rhs),
                         np.float64(k), e, f))]
    if loop not in TILED_KERNELS:
        raise ValueError(f"no CUDA kernel for loop '{loop}'")
    blocks = -(-n_t // BLOCK)
    chunks = s_chunks(multiprocessors(cp), blocks, n_s, n_rhs * n_t)
    pe, pf = (e, f) if chunks == 1 else (cp.empty((chunks, *e.shape), dtype=e.dtype) for _ in range(2))
    kernel = module.get_function(f"{TILED_KERNELS[loop]}_{4 if n_rhs >= 4 else 1}")
    calls = [partial(kernel, (blocks, chunks), (BLOCK,), (tgt, np.int32(n_t), src, np.int32(n_s),
                                                          np.int32(-(-n_s // chunks)), ce, cf, de, df,
                                                          np.int32(n_rhs), np.float64(k), pe, pf))]
    if chunks > 1:
        n = 2 * e.size  # doubles
        calls.append(partial(module.get_function("sum_chunks"), (-(-n // 256),), (256,),
                             (pe, pf, np.int64(n), np.int32(chunks), e, f)))
    return calls


def s_chunks(sms: int, blocks: int, n_s: int, outputs: int) -> int:
    """How many S' chunks cuda-tiled splits into on a GPU of sms multiprocessors so that its blocks x
    chunks come to about BLOCKS_PER_SM per multiprocessor, with at least one shared-memory tile per chunk
    and the partial sums (outputs = n_rhs n_S vectors, 96 bytes each for E and F) within PARTIAL_BYTES."""
    chunks = max(1, round(BLOCKS_PER_SM * sms / blocks))
    return int(max(1, min(chunks, n_s // 128, PARTIAL_BYTES // (96 * outputs))))


def multiprocessors(cp) -> int:
    """The current device's multiprocessor count, queried once per device."""
    device = cp.cuda.Device().id
    if device not in _multiprocessors:
        _multiprocessors[device] = cp.cuda.runtime.getDeviceProperties(device)["multiProcessorCount"]
    return _multiprocessors[device]


def apply_gpu(loop: str, targets, sources, cur, k: float, q: int):
    """E, F (n_rhs, n_S, 3) complex on the host, by cuda-s, cuda-rhs or a tiled loop on the current GPU."""
    import cupy as cp  # noqa: PLC0415

    e, f = launch(cp, loop, *_device_inputs(cp, targets, sources, cur), k, q)
    return e.get(), f.get()
