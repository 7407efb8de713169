"""Launcher of kernels/direct_sum.cu: the exact FP64 direct sum over all pairs on the GPU, the limit the FMM is
measured against below the crossover (NumPy twin and test oracle: operators.direct)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backend import kernel_module

TILE = 256  # threads per block and sources staged per tile (the kernel's TILE)


def direct_sum_gpu(sources, charges, targets):
    """Potential (n_t,) and gradient (n_t, 3) at targets (n_t, 3) of charges (n_s,) at sources (n_s, 3): sum_j
    q_j / |x - y_j| over every pair, coincident ones skipped; float64 CuPy arrays out (inputs host or device)."""
    import cupy as cp  # noqa: PLC0415

    src = cp.ascontiguousarray(cp.asarray(sources, dtype=cp.float64))
    q = cp.ascontiguousarray(cp.asarray(charges, dtype=cp.float64))
    tgt = cp.ascontiguousarray(cp.asarray(targets, dtype=cp.float64))
    phi, grad = cp.zeros(len(tgt)), cp.zeros((len(tgt), 3))
    if len(tgt):  # a grid of no blocks is a launch error
        kernel_module(Path(__file__).with_name("kernels") / "direct_sum.cu").get_function("direct_sum_charges")(
            (-(-len(tgt) // TILE),), (TILE,), (src, q, tgt, np.int32(len(src)), np.int32(len(tgt)), phi, grad))
    return phi, grad
