"""Inner-product reductions, NumPy twins of the CUDA kernels in kernels/reductions.cu.

Each twin adds in exactly the order its kernel does (products rounded, then sums, no fused
multiply-add), so on the same data a kernel and its twin agree bit for bit. They are the
specification and test oracle of the kernels, and the reductions the NumPy solver uses when a
variant is chosen by name.
"""

from __future__ import annotations

import numpy as np

BLOCK = 256  # threads per block of every reduction kernel
WARP = 32
MAX_SHUFFLE_BLOCKS = 1024


def shuffle_grid(n: int) -> int:
    """Blocks of the grid-stride shuffle kernel for n values: about 4 values per thread, at most 1024 blocks."""
    return max(1, min(MAX_SHUFFLE_BLOCKS, -(-n // (4 * BLOCK))))


def _pad(values: np.ndarray, multiple: int) -> np.ndarray:
    pad = -len(values) % multiple
    return np.concatenate([values, np.zeros(pad)]) if pad or len(values) == 0 else values


def _tree_sequential(rows: np.ndarray) -> np.ndarray:
    """Halve each row: first half + second half, until one column (shared-memory 'sequential')."""
    while rows.shape[1] > 1:
        half = rows.shape[1] // 2
        rows = rows[:, :half] + rows[:, half:]
    return rows[:, 0]


def _tree_adjacent(rows: np.ndarray) -> np.ndarray:
    """Add neighbours (0+1, 2+3, ...) until one column (shared-memory 'adjacent', tid % (2s) == 0)."""
    while rows.shape[1] > 1:
        rows = rows[:, 0::2] + rows[:, 1::2]
    return rows[:, 0]


def _multi_pass(values: np.ndarray, tree) -> float:
    """One value per thread, one partial per block, repeated over the partials until one is left."""
    while True:
        values = tree(_pad(values, BLOCK).reshape(-1, BLOCK))
        if len(values) == 1:
            return float(values[0])


def dot_adjacent(a: np.ndarray, b: np.ndarray) -> float:
    """Twin of dot_adjacent + sum_adjacent passes (paper 000, Fig. 5)."""
    return _multi_pass(a * b, _tree_adjacent)


def dot_sequential(a: np.ndarray, b: np.ndarray) -> float:
    """Twin of dot_sequential + sum_sequential passes (paper 000, Fig. 6)."""
    return _multi_pass(a * b, _tree_sequential)


def shuffle_pass(values: np.ndarray, grid: int) -> np.ndarray:
    """Twin of one grid-stride + warp-shuffle pass: (grid,) block partials of values (n,)."""
    threads = grid * BLOCK
    rounds = _pad(values, threads).reshape(-1, threads)
    acc = np.zeros(threads)
    for row in rounds:  # each thread adds its strided values in order
        acc = acc + row
    warps = _tree_sequential(acc.reshape(-1, WARP))  # shfl_down 16, 8, 4, 2, 1 within each warp
    per_block = warps.reshape(grid, BLOCK // WARP)
    first_warp = np.concatenate([per_block, np.zeros((grid, WARP - BLOCK // WARP))], axis=1)
    return _tree_sequential(first_warp)


def dot_warp_shuffle(a: np.ndarray, b: np.ndarray) -> float:
    """Twin of dot_shuffle (grid-stride, warp shuffles) and its one-block second pass."""
    partial = shuffle_pass(a * b, shuffle_grid(len(a)))
    return float(shuffle_pass(partial, 1)[0])


def sum_one_per_thread(values: np.ndarray) -> float:
    """Twin of the fused kernels' reduction: one value per thread, block shuffle partials, then
    sum_partials adds them with the one-block shuffle pass."""
    partial = shuffle_pass(values, -(-len(values) // BLOCK))
    return float(shuffle_pass(partial, 1)[0])


def dot_library(a: np.ndarray, b: np.ndarray) -> float:
    """NumPy's own dot (BLAS), the CPU counterpart of CuPy's library reduction."""
    return float(np.dot(a, b))


TWINS = {
    "adjacent": dot_adjacent,
    "sequential": dot_sequential,
    "warp-shuffle": dot_warp_shuffle,
    "library": dot_library,
}
