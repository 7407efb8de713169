"""The coarse level's plain-rule Galerkin part on the host (Numba), the twin of kernels/coarse_galerkin.cu: for
every cluster (in parallel) and quadrature point q, out[R, col] += K_R(q) cols(q, col) over the coarse rows R of
the cluster, K_R(q) the members' weighted sum of [U | T](y_q - x_i) where y_q lies within near_radii radii of the
centre, else sqrt(count_R) [U | T](y_q - c). Argument layout as the kernel's (engine/bem/coarse.py)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _kelvin(r, n, mu, nu, k):
    """k (2, 3, 3) = [U, T](r) with the normal n (engine/bem/kelvin.py); zero at r = 0."""
    d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    if d2 == 0.0:
        k[:] = 0.0
        return
    d = np.sqrt(d2)
    e = r / d
    cu = 1.0 / (16.0 * np.pi * mu * (1.0 - nu) * d)
    ct = -1.0 / (8.0 * np.pi * (1.0 - nu) * d2)
    drdn = e[0] * n[0] + e[1] * n[1] + e[2] * n[2]
    for l in range(3):
        for j in range(3):
            delta = 1.0 if l == j else 0.0
            outer = e[l] * e[j]
            k[0, l, j] = cu * ((3.0 - 4.0 * nu) * delta + outer)
            k[1, l, j] = ct * (drdn * ((1.0 - 2.0 * nu) * delta + 3.0 * outer)
                               - (1.0 - 2.0 * nu) * (e[l] * n[j] - n[l] * e[j]))


@numba.njit(parallel=True, cache=True)
def coarse_rows_host(centres, radius, y, normals, indptr, indices, data, members, member_weight, row_of, root,
                     targets, out, near_radii, mu, nu):
    """Add the plain-rule part of P^T A P to out (C, C); members (n, m) padded with -1, member_weight (n, m, 3, 2),
    row_of (n, 3, 2) (-1: no such coarse unknown), root (n, 3, 2); cols as CSR (indptr, indices, data) of 6Q rows."""
    n_c = out.shape[1]
    for cluster in numba.prange(len(centres)):
        acc = np.zeros((3, n_c))
        k = np.empty((2, 3, 3))
        w = np.empty((3, 2, 2, 3))
        reach2 = (near_radii * radius[cluster]) ** 2
        rows = row_of[cluster]
        for q in range(len(y)):
            r = y[q] - centres[cluster]
            if r[0] * r[0] + r[1] * r[1] + r[2] * r[2] > reach2:
                _kelvin(r, normals[q], mu, nu, k)
                for layer in range(2):
                    for j in range(3):
                        for e in range(indptr[6 * q + 3 * layer + j], indptr[6 * q + 3 * layer + j + 1]):
                            for l in range(3):
                                acc[l, indices[e]] += k[layer, l, j] * data[e]
                continue
            w[:] = 0.0
            for m in range(members.shape[1]):
                i = members[cluster, m]
                if i < 0:
                    break
                _kelvin(y[q] - targets[i], normals[q], mu, nu, k)
                for l in range(3):
                    for t in range(2):
                        for layer in range(2):
                            for j in range(3):
                                w[l, t, layer, j] += member_weight[cluster, m, l, t] * k[layer, l, j]
            for layer in range(2):
                for j in range(3):
                    for e in range(indptr[6 * q + 3 * layer + j], indptr[6 * q + 3 * layer + j + 1]):
                        for l in range(3):
                            for t in range(2):
                                if rows[l, t] >= 0:
                                    out[rows[l, t], indices[e]] += w[l, t, layer, j] * data[e]
        for l in range(3):
            for t in range(2):
                if rows[l, t] >= 0:
                    out[rows[l, t]] += root[cluster, l, t] * acc[l]
