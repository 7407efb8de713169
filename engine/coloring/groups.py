"""Colour groups as a permutation plus offsets, validity checks, and the one entry point that colours
a mesh by any method."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import ProblemError
from ..variants import COLORING
from .adjacency import max_node_degree


@dataclass(frozen=True, eq=False)
class ColorGroups:
    """colors: (n_elements,) int32; permutation: (n_elements,) element indices grouped by colour (stored
    order kept within a group); offsets: (n_colors + 1,) group c = permutation[offsets[c]:offsets[c+1]]."""

    colors: np.ndarray
    permutation: np.ndarray
    offsets: np.ndarray
    method: str
    seconds: float  # colouring time (balancing included)
    lower_bound: int  # most elements meeting at one node

    @property
    def n_colors(self) -> int:
        return len(self.offsets) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def balance_ratio(self) -> float:
        """Largest over smallest group size."""
        return float(self.sizes.max() / self.sizes.min())


def groups_from_colors(colors: np.ndarray, method: str = "", seconds: float = 0.0,
                       lower_bound: int = 0) -> ColorGroups:
    permutation = np.argsort(colors, kind="stable").astype(np.int32)
    offsets = np.zeros(int(colors.max()) + 2, dtype=np.int64)
    np.cumsum(np.bincount(colors), out=offsets[1:])
    return ColorGroups(colors.astype(np.int32), permutation, offsets, method, seconds, lower_bound)


def is_valid_coloring(connectivity: np.ndarray, colors: np.ndarray) -> bool:
    """True when every element has a colour and no two elements sharing a node share a colour."""
    if colors.shape != (connectivity.shape[0],) or (colors < 0).any():
        return False
    k = connectivity.shape[1]
    pairs = np.stack([connectivity.ravel(), np.repeat(colors, k)], axis=1)
    # an element appears once per node, so a repeated (node, colour) pair means two elements clash
    return len(np.unique(pairs, axis=0)) == len(pairs)


def color_elements(connectivity: np.ndarray, n_nodes: int, method: str = "ofcm", balance: bool = True,
                   backend: str = "numpy") -> ColorGroups:
    """Colour the elements by 'ccm', 'fcm', 'ofcm' (Numba, one core) or 'parallel' (CuPy when backend is
    'cupy', vectorised NumPy otherwise), optionally balanced, as groups ready for kernels."""
    from .parallel import color_parallel_gpu, color_parallel_numpy  # noqa: PLC0415
    from .sequential import _compiled, balance_colors, color_sequential  # noqa: PLC0415

    if method not in COLORING.names:
        raise ProblemError(f"unknown colouring method '{method}'; choose one of: {', '.join(COLORING.names)}")
    if balance or method != "parallel":
        _compiled()  # compile before the clock starts
    start = time.perf_counter()
    if method == "parallel":
        colors, _ = (color_parallel_gpu if backend == "cupy" else color_parallel_numpy)(connectivity, n_nodes)
    else:
        colors = color_sequential(method, connectivity, n_nodes)
    if balance:
        colors = balance_colors(connectivity, n_nodes, colors)
    seconds = time.perf_counter() - start
    return groups_from_colors(colors, method, seconds, max_node_degree(connectivity, n_nodes))
