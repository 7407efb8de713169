"""Element-node integral blocks summed onto the columns of the dense BEM matrices (assembly.assemble): Numba,
parallel over the collocation rows, writing into the matrices' rows in place."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(parallel=True, cache=True)
def blocks_onto_columns(blocks, columns, weights, out):  # pragma: no cover - compiled
    """out[p, l, columns[e, a, k], k] += weights[e, k] blocks[p, e, l, k, a] over elements e and nodes a;
    blocks (P, M, 3, 3, 3), columns (M, 3, 3) int, weights (M, 3), out (P, 3, C, 3); zero weights skipped."""
    for p in numba.prange(blocks.shape[0]):
        for e in range(blocks.shape[1]):
            for k in range(3):
                w = weights[e, k]
                if w == 0.0:
                    continue
                for a in range(3):
                    c = columns[e, a, k]
                    for l in range(3):  # noqa: E741
                        out[p, l, c, k] += w * blocks[p, e, l, k, a]


def node_columns(triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(columns, weights) of blocks_onto_columns that sum an element node's blocks onto its mesh node."""
    return np.repeat(triangles[:, :, None], 3, axis=2), np.ones((len(triangles), 3))
