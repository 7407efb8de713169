"""Trilinear geometry of 8-node hexahedra: Jacobians, their inverses and determinants at reference points."""

from __future__ import annotations

import numpy as np

from .basis import HEX_VERTICES


def vertex_gradients(points: np.ndarray) -> np.ndarray:
    """(n_points, 8, 3) reference gradients of the trilinear vertex functions at points (n_points, 3)."""
    points = np.asarray(points, dtype=np.float64)
    one = 1 + points[:, None, :] * HEX_VERTICES[None, :, :]  # (n, 8, 3): 1 + x_k c_k
    grads = np.empty(one.shape)
    for k in range(3):
        others = [j for j in range(3) if j != k]
        grads[:, :, k] = HEX_VERTICES[None, :, k] * one[:, :, others[0]] * one[:, :, others[1]] / 8
    return grads


def jacobians(coords, points: np.ndarray, xp=np):
    """J (m, n_points, 3, 3) with J[e, q, i, k] = dx_i / dxi_k, its inverse, and det J (m, n_points).

    coords: (m, 8, 3) float64 vertex coordinates (metres); points: (n_points, 3) reference points.
    """
    dn = xp.asarray(vertex_gradients(points))
    jac = xp.einsum("evi,qvk->eqik", coords, dn)
    det = xp.linalg.det(jac)
    return jac, xp.linalg.inv(jac), det
