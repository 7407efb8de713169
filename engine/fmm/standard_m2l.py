"""The paper's M2L on the CPU: a Numba-parallel loop over target boxes, each summing the translations of
its interaction list (no write conflicts: one thread owns a target box)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(parallel=True, cache=True, fastmath=True)
def m2l_lists_numba(multipole, local, targets, starts, sources, offsets, table):  # pragma: no cover - compiled
    """local[targets[i]] += sum over k in [starts[i], starts[i+1]) of table[offsets[k]] @ multipole[sources[k]].

    multipole, local: (n_boxes, n_dens, 2P); table: (n_offsets, 2P, 2P), operators.standard_m2l_table. Each row
    of a table is read once for all densities, its dot products vectorised (fastmath: summed in SIMD lanes)."""
    n_dens, width = multipole.shape[1], multipole.shape[2]
    for i in numba.prange(len(targets)):
        acc = np.zeros((n_dens, width))
        for k in range(starts[i], starts[i + 1]):
            mat = table[offsets[k]]
            src = multipole[sources[k]]
            for r in range(width):
                row = mat[r]
                for dd in range(n_dens):
                    total = 0.0
                    for c in range(width):
                        total += row[c] * src[dd, c]
                    acc[dd, r] += total
        local[targets[i]] += acc


@numba.njit(parallel=True, cache=True)
def p2p_numba(tgt, src, charges, dipoles, has_charges, has_dipoles, gradient, leaf_of_target, pair_start,
              pair_leaf, leaf_first, leaf_stop, phi, grad):  # pragma: no cover - compiled
    """Near field on the CPU, the twin of kernels/fmm.cu's p2p_leaves: each target (sorted order) sums
    the sources of the leaves paired with its own, the coincident pair skipped; adds to phi (n_dens,
    n_t) and grad (n_dens, n_t, 3)."""
    n_dens = phi.shape[0]
    for t in numba.prange(tgt.shape[0]):
        x, y, z = tgt[t, 0], tgt[t, 1], tgt[t, 2]
        leaf = leaf_of_target[t]
        for d in range(n_dens):
            p = gx = gy = gz = 0.0
            for k in range(pair_start[leaf], pair_start[leaf + 1]):
                s_leaf = pair_leaf[k]
                for j in range(leaf_first[s_leaf], leaf_stop[s_leaf]):
                    dx, dy, dz = x - src[j, 0], y - src[j, 1], z - src[j, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 == 0.0:
                        continue
                    inv = 1.0 / np.sqrt(r2)
                    inv3 = inv * inv * inv
                    if has_charges:
                        q = charges[d, j]
                        p += q * inv
                        gx -= q * inv3 * dx
                        gy -= q * inv3 * dy
                        gz -= q * inv3 * dz
                    if has_dipoles:
                        vx, vy, vz = dipoles[d, j, 0], dipoles[d, j, 1], dipoles[d, j, 2]
                        dot = vx * dx + vy * dy + vz * dz
                        inv5 = inv3 * inv * inv
                        p += dot * inv3
                        gx += vx * inv3 - 3.0 * dot * inv5 * dx
                        gy += vy * inv3 - 3.0 * dot * inv5 * dy
                        gz += vz * inv3 - 3.0 * dot * inv5 * dz
            phi[d, t] += p
            if gradient:
                grad[d, t, 0] += gx
                grad[d, t, 1] += gy
                grad[d, t, 2] += gz
