"""Kelvin's fundamental solution of 3D isotropic elasticity (Brebbia and Dominguez's convention).

For a unit point load in direction l at the source x and r = y - x (to the field point y, normal n there):
    U_lk = ((3 - 4 nu) delta_lk + r_l r_k) / (16 pi mu (1 - nu) |r|)                      (m / N)
    T_lk = -(dr/dn ((1 - 2 nu) delta_lk + 3 r_l r_k) - (1 - 2 nu)(r_l n_k - r_k n_l)) / (8 pi (1 - nu) |r|^2)
with r_l the unit vector's components: displacement and traction components k at y. The boundary integral
equation is c u(x) + int T u dS = int U t dS."""

from __future__ import annotations

import numpy as np

EYE = np.eye(3)


def kelvin_u(r: np.ndarray, mu: float, nu: float) -> np.ndarray:
    """U (..., 3, 3) for r (..., 3) in m; mu in Pa."""
    d = np.linalg.norm(r, axis=-1)
    e = r / d[..., None]
    c = 1.0 / (16 * np.pi * mu * (1 - nu) * d)
    return c[..., None, None] * ((3 - 4 * nu) * EYE + e[..., :, None] * e[..., None, :])


def kelvin_t(r: np.ndarray, n: np.ndarray, nu: float) -> np.ndarray:
    """T (..., 3, 3) for r (..., 3) in m and unit normals n broadcastable to r; 1 / m^2."""
    d = np.linalg.norm(r, axis=-1)
    e = r / d[..., None]
    n = np.broadcast_to(n, e.shape)
    drdn = np.einsum("...k,...k->...", e, n)
    outer = e[..., :, None] * e[..., None, :]
    skew = e[..., :, None] * n[..., None, :] - n[..., :, None] * e[..., None, :]
    c = -1.0 / (8 * np.pi * (1 - nu) * d * d)
    return c[..., None, None] * (drdn[..., None, None] * ((1 - 2 * nu) * EYE + 3 * outer) - (1 - 2 * nu) * skew)


def kelvin_d(r: np.ndarray, nu: float) -> np.ndarray:
    """D (..., 3, 3, 3) [k, i, j], 1 / m^2: the stress sigma_ij at the source point x from a unit traction
    t_k at y, r = y - x; sigma(x) = int D t dS - int S u dS."""
    d = np.linalg.norm(r, axis=-1)
    e = r / d[..., None]
    c = 1.0 / (8 * np.pi * (1 - nu) * d * d)
    ek, ei, ej = e[..., :, None, None], e[..., None, :, None], e[..., None, None, :]
    dki, dkj, dij = EYE[:, :, None], EYE[:, None, :], EYE[None, :, :]
    return c[..., None, None, None] * ((1 - 2 * nu) * (dki * ej + dkj * ei - dij * ek) + 3 * ei * ej * ek)


def kelvin_s(r: np.ndarray, n: np.ndarray, mu: float, nu: float) -> np.ndarray:
    """S (..., 3, 3, 3) [k, i, j], Pa / m^3: the stress sigma_ij at x from a unit displacement u_k at y with
    normal n, r = y - x."""
    d = np.linalg.norm(r, axis=-1)
    e = r / d[..., None]
    n = np.broadcast_to(n, e.shape)
    drdn = np.einsum("...k,...k->...", e, n)[..., None, None, None]
    ek, ei, ej = e[..., :, None, None], e[..., None, :, None], e[..., None, None, :]
    nk, ni, nj = n[..., :, None, None], n[..., None, :, None], n[..., None, None, :]
    dik, djk, dij = EYE[:, :, None], EYE[:, None, :], EYE[None, :, :]
    c = 2 * mu / (8 * np.pi * (1 - nu) * d ** 3)
    return c[..., None, None, None] * (
        3 * drdn * ((1 - 2 * nu) * dij * ek + nu * (dik * ej + djk * ei) - 5 * ei * ej * ek)
        + 3 * nu * (ni * ej * ek + nj * ei * ek) + (1 - 2 * nu) * (3 * nk * ei * ej + nj * dik + ni * djk)
        - (1 - 4 * nu) * nk * dij)
