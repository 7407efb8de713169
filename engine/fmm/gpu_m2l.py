"""Launchers of kernels/fmm.cu: the paper's M2L (a block per target box) and the near-field P2P."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

MAX_DENS = 8


@functools.lru_cache(maxsize=1)
def _module():
    import cupy  # noqa: PLC0415

    return cupy.RawModule(code=(Path(__file__).with_name("kernels") / "fmm.cu").read_text())


def m2l_lists_gpu(multipole, local, targets, starts, sources, offsets, table_t) -> None:
    """local[targets[i]] += sum over k in [starts[i], starts[i+1]) of table[offsets[k]] @ multipole[sources[k]],
    all device arrays; table_t: the (n, width, width) table with its last two axes swapped."""
    import cupy as cp  # noqa: PLC0415

    n_dens, width = multipole.shape[1], multipole.shape[2]
    kernel = _module().get_function("m2l_lists")
    block = max(32, -(-width // 32) * 32)
    for d0 in range(0, n_dens, MAX_DENS):
        whole = d0 == 0 and n_dens <= MAX_DENS
        m = multipole if whole else cp.ascontiguousarray(multipole[:, d0:d0 + MAX_DENS])
        loc = local if whole else cp.ascontiguousarray(local[:, d0:d0 + MAX_DENS])
        nd = m.shape[1]
        kernel((len(targets),), (block,),
               (m, loc, targets, starts, sources, offsets, table_t, np.int32(nd), np.int32(width)),
               shared_mem=8 * nd * width)
        if not whole:
            local[:, d0:d0 + MAX_DENS] = loc


def p2p_gpu(tgt, src, charges, dipoles, leaf_of_target, pair_start, pair_leaf, leaf_first, leaf_stop,
            phi, grad) -> None:
    """Add the near field to phi (n_dens, n_t) and grad (n_dens, n_t, 3) or None, on the device."""
    import cupy as cp  # noqa: PLC0415

    n_t, n_s, n_dens = len(tgt), len(src), phi.shape[0]
    _module().get_function("p2p_leaves")(
        (-(-n_t // 128),), (128,),
        (tgt, src, cp.ascontiguousarray(charges) if charges is not None else phi,
         cp.ascontiguousarray(dipoles) if dipoles is not None else phi,
         cp.asarray(leaf_of_target, dtype=cp.int32), cp.asarray(pair_start, dtype=cp.int64),
         cp.asarray(pair_leaf, dtype=cp.int64), cp.asarray(leaf_first, dtype=cp.int64),
         cp.asarray(leaf_stop, dtype=cp.int64), np.int32(n_t), np.int32(n_s), np.int32(n_dens),
         np.int32(charges is not None), np.int32(dipoles is not None), np.int32(grad is not None), phi,
         grad if grad is not None else phi))
