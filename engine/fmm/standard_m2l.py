"""The paper's M2L on the CPU: a Numba-parallel loop over target boxes, each summing the translations of
its interaction list (no write conflicts: one thread owns a target box)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(parallel=True, cache=True)
def m2l_lists_numba(multipole, local, targets, starts, sources, offsets, table):  # pragma: no cover - compiled
    """local[targets[i]] += sum over k in [starts[i], starts[i+1]) of table[offsets[k]] @ multipole[sources[k]].

    multipole, local: (n_boxes, n_dens, 2P); table: (343, 2P, 2P)."""
    n_dens, width = multipole.shape[1], multipole.shape[2]
    for i in numba.prange(len(targets)):
        t = targets[i]
        for k in range(starts[i], starts[i + 1]):
            mat = table[offsets[k]]
            s = sources[k]
            for dd in range(n_dens):
                for r in range(width):
                    acc = 0.0
                    for c in range(width):
                        acc += mat[r, c] * multipole[s, dd, c]
                    local[t, dd, r] += acc
