"""Jones-Plassmann parallel colouring: vectorised NumPy (the twin) and CUDA (kernels/jones_plassmann.cu).

Both run the same rounds on the element adjacency with the same hashed priorities, so they give
identical colours; the result does not depend on thread scheduling.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backend import kernel_module
from ..errors import MeshError
from .adjacency import element_adjacency

MAX_COLORS = 64
TOO_MANY_COLORS = (f"parallel colouring needs more than {MAX_COLORS} colours on this mesh (one bit per colour in a "
                   "64-bit word); use ccm, fcm or ofcm, which have no limit")


def priorities(n_el: int) -> np.ndarray:
    """(n_el,) uint64 priorities: a murmur3-finalised hash of the index in the high word, the index low."""
    with np.errstate(over="ignore"):
        h = np.arange(n_el, dtype=np.uint32) * np.uint32(0x9E3779B1)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return (h.astype(np.uint64) << np.uint64(32)) | np.arange(n_el, dtype=np.uint64)


def _smallest_free(taken: np.ndarray) -> np.ndarray:
    """Index of the lowest zero bit of each uint64 (64 when all bits are set)."""
    free = ~taken
    low = free & (~free + np.uint64(1))
    out = np.full(taken.shape, MAX_COLORS, dtype=np.int32)
    nonzero = low != 0
    out[nonzero] = np.log2(low[nonzero].astype(np.float64)).astype(np.int32)  # exact for powers of two
    return out


def color_parallel_numpy(connectivity: np.ndarray, n_nodes: int) -> tuple[np.ndarray, int]:
    """(colours (n_elements,) int32, rounds), each round vectorised over the edges still undecided."""
    offsets, neighbours = element_adjacency(connectivity, n_nodes)
    n_el = connectivity.shape[0]
    rows = np.repeat(np.arange(n_el, dtype=np.int32), np.diff(offsets))
    cols = neighbours
    key = priorities(n_el)
    color = np.full(n_el, -1, dtype=np.int32)
    rounds = 0
    while (color < 0).any():
        rounds += 1
        open_row = color[rows] < 0
        rows, cols = rows[open_row], cols[open_row]  # edges of coloured elements are done
        neighbour_color = color[cols]
        beaten = np.zeros(n_el, dtype=bool)
        uncoloured_edge = neighbour_color < 0
        beaten[rows[uncoloured_edge & (key[cols] > key[rows])]] = True
        winners = (color < 0) & ~beaten
        taken = np.zeros(n_el, dtype=np.uint64)
        coloured_edge = ~uncoloured_edge & winners[rows]
        np.bitwise_or.at(taken, rows[coloured_edge],
                         np.left_shift(np.uint64(1), neighbour_color[coloured_edge].astype(np.uint64)))
        chosen = _smallest_free(taken[winners])
        if (chosen >= MAX_COLORS).any():
            raise MeshError(TOO_MANY_COLORS)
        color[winners] = chosen
    return color, rounds


def _kernels():
    module = kernel_module(Path(__file__).with_name("kernels") / "jones_plassmann.cu")
    return module.get_function("jp_decide"), module.get_function("jp_apply")


def color_parallel_gpu(connectivity: np.ndarray, n_nodes: int) -> tuple[np.ndarray, int]:
    """The same rounds on the GPU with CuPy (the adjacency built there too). Returns host colours."""
    import cupy as cp  # noqa: PLC0415

    decide, apply = _kernels()
    offsets, neighbours = element_adjacency(cp.asarray(connectivity), n_nodes, cp)
    n_el = connectivity.shape[0]
    color = cp.full(n_el, -1, dtype=cp.int32)
    chosen = cp.empty(n_el, dtype=cp.int32)
    grid, block, n = (-(-n_el // 256),), (256,), np.int32(n_el)
    rounds = 0
    while True:
        rounds += 1
        decide(grid, block, (n, offsets, neighbours, color, chosen))
        apply(grid, block, (n, chosen, color))
        low, high = int(color.min()), int(color.max())  # one host read per round
        if high >= MAX_COLORS:
            raise MeshError(TOO_MANY_COLORS)
        if low >= 0:
            break
    return color.get(), rounds
