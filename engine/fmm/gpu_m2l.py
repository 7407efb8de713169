"""Launchers of kernels/fmm.cu: the list translations (M2L, M2M, L2L) by tiles of target boxes, the near-field
P2P and the fused P2M / L2P at the leaves."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..backend import kernel_module
from .plan import TILE_SLOTS

P2P_BLOCK = 64  # p2p_leaves' block (at most its P2P_THREADS, 128): within 10 % of the best of 32, 64 and 128 on
# uniform and sphere points (H100)
TILE_COLS, TILE_THREADS = 64, 256  # m2l_tiles' block: (slot, density) columns, threads (16 x 16)
TILE_R_CHOICES = (6, 5, 4, 3)  # output rows per thread m2l_tiles may be compiled for (its registers: 6 at most)
FILL_BLOCKS = 32  # m2l_tiles' blocks per multiprocessor below which a tile's segments are split over blocks
# (measured on the H100 at 1e6 points: 0 / 8 / 32 gave 0.100 / 0.045 / 0.043 s for the M2L of uniform points)
P2M_COMBOS_PER_THREAD = 8  # (density, coefficient) accumulators per thread of p2m_leaves
P2M_MAX_THREADS = 256  # its registers allow no more at p = 20
P2M_SHARED_BYTES = 32 << 10  # staged harmonics per block
L2P_BLOCK = 64
L2P_MAX_COEF = 231  # the kernel's per-thread harmonics array: order 20 (fmm.MAX_ORDER)


def _module(table_dtype=np.float64, tile_r: int | None = None, cuda_cores: bool = False):
    """kernels/fmm.cu, its list kernel reading tables of table_dtype (float64, or float32: -DTABLE_T=float) with
    tile_r output rows per thread (-DTILE_R; the kernel's default where None), its products on the FP64 CUDA
    cores even where the device has FP64 tensor cores if cuda_cores (-DM2L_CUDA_CORES)."""
    options = ("-DTABLE_T=float",) if np.dtype(table_dtype) == np.float32 else ()
    options += (f"-DTILE_R={tile_r}",) if tile_r else ()
    options += ("-DM2L_CUDA_CORES",) if cuda_cores else ()
    return kernel_module(Path(__file__).with_name("kernels") / "fmm.cu", options)


def tile_rows(width: int) -> tuple[int, int]:
    """(rows per thread r, row blocks b) of m2l_tiles for expansions of `width` real coefficients (16 r b >=
    width): the fewest instructions a CUDA-core thread issues per staged coefficient over the b blocks,
    b (r + 4 shared loads + 4 r FMAs), then the fewest blocks (each re-reads the source columns). At p = 6
    (width 56): 4 rows, one block of 64 where 6 rows gave 96; p = 14 (240): 5 rows, 3 blocks, no padding.
    Measured on the H100 (uniform points, M2L phase, CUDA cores): 23 % faster at p = 6, 8 % at p = 14."""
    return min(((r, -(-width // (16 * r))) for r in TILE_R_CHOICES), key=lambda rb: (rb[1] * (5 * rb[0] + 4), rb[1]))


def m2l_tiles_gpu(source, dest, work, cuda_cores: bool = False) -> None:
    """dest[t] += table[o] @ source[s] over every pair of work (plan.TileWork) by the tiled kernel; source and
    dest (n_boxes, n_dens, width) contiguous device arrays (the same array for M2M and L2L). The products run on
    the FP64 tensor cores from compute capability 8.0 on, else (or if cuda_cores) on the FP64 CUDA cores.
    Measured on the H100 (uniform points, the M2L phase), against the CUDA-core kernel of 6 rows per thread
    it replaced: 1.6x at p = 6 (1e7 points, leaf 32), 1.3x at p = 14 (1e7, leaf 64)."""
    n_tiles = len(work.tile_target) // TILE_SLOTS
    if not n_tiles:
        return
    n_dens, width = source.shape[1], source.shape[2]
    rows, row_blocks = tile_rows(width)
    blocks = n_tiles * row_blocks * -(-TILE_SLOTS * n_dens // TILE_COLS)
    splits = int(min(work.most_segments, max(1, -(-FILL_BLOCKS * _sm_count(source.device.id) // blocks))))
    grid = (n_tiles * splits, row_blocks, -(-TILE_SLOTS * n_dens // TILE_COLS))
    _module(work.table.dtype, rows, cuda_cores).get_function("m2l_tiles")(
        grid, (TILE_THREADS,),
        (source, dest, work.tile_target, work.tile_segments, work.segment_table, work.segment_pairs,
         work.pair_slot, work.pair_source, work.table, np.int32(n_dens), np.int32(width), np.int32(splits)))


def product_units(device: int = 0) -> str:
    """The units m2l_tiles_gpu's products run on, on this device."""
    import cupy as cp  # noqa: PLC0415

    tensor = int(cp.cuda.Device(device).compute_capability) >= 80
    return "FP64 tensor cores (mma.sync m8n8k4)" if tensor else "FP64 CUDA cores"


@lru_cache(maxsize=None)
def _sm_count(device: int) -> int:
    import cupy as cp  # noqa: PLC0415

    return int(cp.cuda.Device(device).attributes["MultiProcessorCount"])


def p2p_gpu(tgt, src, charges, dipoles, tgt_first, tgt_stop, pair_start, pair_leaf, leaf_first, leaf_stop,
            phi, grad) -> None:
    """Add the near field to phi (n_dens, n_t) and grad (n_dens, n_t, 3) or None, on the device: one block per
    target leaf [tgt_first, tgt_stop) of the sorted targets; the CSR arrays (plan.near_csr) already there, all
    int64."""
    import cupy as cp  # noqa: PLC0415

    n_t, n_s, n_dens = len(tgt), len(src), phi.shape[0]
    if not len(tgt_first):
        return
    _module().get_function("p2p_leaves")(
        (len(tgt_first),), (P2P_BLOCK,),
        (tgt, src, cp.ascontiguousarray(charges) if charges is not None else phi,
         cp.ascontiguousarray(dipoles) if dipoles is not None else phi,
         tgt_first, tgt_stop, pair_start, pair_leaf, leaf_first, leaf_stop, np.int32(n_t), np.int32(n_s),
         np.int32(n_dens), np.int32(charges is not None), np.int32(dipoles is not None),
         np.int32(grad is not None), phi, grad if grad is not None else phi))


def p2m_gpu(src, charges, dipoles, idx, centre, side, gid, order: int, multipole) -> None:
    """multipole[gid[b], d] = [Re M | Im M] of each source leaf b (operators.p2m, fused): src (n_s, 3) sorted
    sources, charges (n_dens, n_s) or None, dipoles (n_dens, n_s, 3) or None, idx (n_leaves, width) sorted
    source per slot or -1, centre (n_leaves, 3), side (n_leaves,), gid (n_leaves,); device arrays."""
    import cupy as cp  # noqa: PLC0415

    n_coef = (order + 1) * (order + 2) // 2
    dens = (charges if charges is not None else dipoles).shape[0]
    per_launch = max(1, P2M_MAX_THREADS * P2M_COMBOS_PER_THREAD // n_coef)  # densities one block can hold
    width = idx.shape[1]
    chunk = int(min(64, width, max(1, P2M_SHARED_BYTES // (16 * n_coef))))  # 64: the kernel's point list
    kernel = _module().get_function("p2m_leaves")
    for d0 in range(0, dens, per_launch):
        part = slice(d0, min(dens, d0 + per_launch))
        q = cp.ascontiguousarray(charges[part]) if charges is not None else side
        d = cp.ascontiguousarray(dipoles[part]) if dipoles is not None else side
        n_dens = part.stop - part.start
        whole = n_dens == dens
        out = multipole if whole else cp.empty((multipole.shape[0], n_dens, multipole.shape[2]))
        threads = min(P2M_MAX_THREADS, max(32, -(-n_dens * n_coef // 32) * 32))  # one combination each, up to 8
        kernel((len(idx),), (threads,), (src, q, d, idx, centre, side, gid, np.int32(width), np.int32(chunk),
                                         np.int32(len(src)), np.int32(n_dens), np.int32(order),
                                         np.int32(charges is not None), np.int32(dipoles is not None), out),
               shared_mem=16 * chunk * n_coef)
        if not whole:
            multipole[gid, part] = out[gid]


def l2p_gpu(tgt, local, idx, centre, side, gid, order: int, phi, grad) -> None:
    """phi (n_dens, n_t) and grad (n_dens, n_t, 3) or None at the sorted targets from the local expansions
    (n_boxes, n_dens, 2 n_coef) of the target leaves (operators.l2p, fused); idx (n_leaves, width) sorted
    target per slot or -1, centre, side, gid per leaf; device arrays. Overwrites the targets' entries."""
    n_coef = (order + 1) * (order + 2) // 2
    if n_coef > L2P_MAX_COEF:
        raise ValueError(f"l2p_leaves holds at most {L2P_MAX_COEF} coefficients (order 20), got order {order}")
    width = idx.shape[1]
    _module().get_function("l2p_leaves")(
        (len(idx),), (min(L2P_BLOCK, -(-width // 32) * 32),),
        (tgt, local, idx, centre, side, gid, np.int32(width), np.int32(len(tgt)), np.int32(local.shape[1]),
         np.int32(order), np.int32(grad is not None), phi, grad if grad is not None else phi),
        shared_mem=16 * n_coef)
