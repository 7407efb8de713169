"""The exponential (plane-wave) M2L of Greengard and Rokhlin (1997): M2X, X2X, X2L with six directional
lists, and the quadrature it rests on.

For points whose separation has e.(x - y) = Z in [1, 4] and a transverse part of length at most 4 sqrt(2)
(box units), 1/|x - y| ~ sum_k w_k / M_k sum_j exp(-lam_k Z + i lam_k (U cos a_j + V sin a_j)), U and V
the separation along two unit vectors u, v orthogonal to e, a_j = 2 pi j / M_k. The lam-quadratures of
8, 17 and 26 nodes are generalized Gaussian rules computed by node elimination (generate() below,
stored in exponential_quadrature.json); M_k is the fewest angles whose trapezoid rule reaches the
rule's own accuracy for lam_k. A pair of boxes goes to the list of the direction e along which the
target lies at least two boxes beyond the source (up, down, north, south, east, west, in that order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import ProblemError
from .harmonics import degree_order, full_order, regular

NODE_COUNTS = (8, 17, 26)
RHO_MAX = 4 * np.sqrt(2)
DATA = Path(__file__).with_name("exponential_quadrature.json")

# direction e and transverse unit vectors u, v of the six lists
FRAMES = {
    "up": ((0, 0, 1), (1, 0, 0), (0, 1, 0)), "down": ((0, 0, -1), (1, 0, 0), (0, -1, 0)),
    "north": ((0, 1, 0), (0, 0, 1), (1, 0, 0)), "south": ((0, -1, 0), (0, 0, 1), (-1, 0, 0)),
    "east": ((1, 0, 0), (0, 1, 0), (0, 0, 1)), "west": ((-1, 0, 0), (0, 1, 0), (0, 0, -1)),
}


@dataclass(frozen=True, eq=False)
class Quadrature:
    lam: np.ndarray      # (s,) exponents, per box side
    weight: np.ndarray   # (s,) weights w_k / M_k already divided by the angle count
    angles: np.ndarray   # (s,) M_k
    error: float         # the rule's largest relative error on its domain

    @property
    def size(self) -> int:
        """Exponential coefficients per expansion: sum of M_k."""
        return int(self.angles.sum())


def _residual(x, z, rho):
    from scipy.special import j0  # noqa: PLC0415

    s = len(x) // 2
    lam, w = np.exp(x[:s]), np.exp(x[s:])
    return (np.exp(-np.outer(z, lam)) * j0(np.outer(rho, lam))) @ w * np.hypot(z, rho) - 1


def _jacobian(x, z, rho):
    from scipy.special import j0, j1  # noqa: PLC0415

    s = len(x) // 2
    lam, w = np.exp(x[:s]), np.exp(x[s:])
    decay, bessel, d = np.exp(-np.outer(z, lam)), j0(np.outer(rho, lam)), np.hypot(z, rho)[:, None]
    d_lam = (-z[:, None] * decay * bessel - decay * j1(np.outer(rho, lam)) * rho[:, None]) * w * lam * d
    return np.hstack([d_lam, decay * bessel * w * d])


def _domain():
    z = np.cos(np.linspace(0, np.pi, 40)) * 1.5 + 2.5
    rho = (1 - np.cos(np.linspace(0, np.pi, 50))) / 2 * RHO_MAX
    zz, rr = np.meshgrid(z, rho, indexing="ij")
    return zz.ravel(), rr.ravel()


def generate() -> dict:
    """Generalized Gaussian rules for int_0^inf exp(-lam z) J0(lam rho) dlam = 1/sqrt(z^2 + rho^2) on
    1 <= z <= 4, 0 <= rho <= 4 sqrt(2): from 60 Gauss-Legendre nodes on [0, 30], drop the least
    significant node and refit (least squares on the relative error) until 26, 17, 8 nodes remain."""
    from scipy.optimize import least_squares  # noqa: PLC0415

    z, rho = _domain()
    t, wt = np.polynomial.legendre.leggauss(60)
    x = np.r_[np.log((t + 1) * 15.0), np.log(wt * 15.0)]
    rules = {}
    while True:
        x = least_squares(_residual, x, jac=_jacobian, args=(z, rho), method="lm", max_nfev=2000, xtol=1e-15, ftol=1e-15,
                          gtol=1e-15).x
        s = len(x) // 2
        if s in NODE_COUNTS:
            rules[str(s)] = {"lambda": np.exp(x[:s]).tolist(), "weight": np.exp(x[s:]).tolist(),
                             "max_relative_error": float(np.abs(_residual(x, z, rho)).max())}
        if s == min(NODE_COUNTS):
            return rules
        k = int(np.argmin(np.exp(x[s:]) * np.exp(-np.exp(x[:s]))))
        x = np.delete(x, [k, s + k])


@lru_cache(maxsize=None)
def quadrature(nodes: int) -> Quadrature:
    from scipy.special import jv  # noqa: PLC0415

    if nodes not in NODE_COUNTS:
        raise ProblemError(f"exponential_nodes must be one of {', '.join(map(str, NODE_COUNTS))}, got {nodes}")
    rule = json.loads(DATA.read_text())[str(nodes)]
    lam, w, err = np.array(rule["lambda"]), np.array(rule["weight"]), rule["max_relative_error"]
    angles = np.empty(len(lam), dtype=np.int64)
    for k, l in enumerate(lam):
        m = 4
        while 2 * abs(jv(m, l * RHO_MAX)) > 0.1 * err:
            m += 2
        angles[k] = m
    return Quadrature(lam, w / angles, angles, err)


def _plane_waves(q: Quadrature):
    """(S,) lam and angle of every exponential coefficient, and its weight."""
    lam = np.repeat(q.lam, q.angles)
    alpha = np.concatenate([2 * np.pi * np.arange(m) / m for m in q.angles])
    return lam, alpha, np.repeat(q.weight, q.angles)


def _fit_degrees(p: int, target, conj_basis: bool):
    """Coefficients (S, p+1, 2p+1) of harmonic functions given by their homogeneous parts:
    target(n, pts) -> (n_pts, S) values of the degree-n part; basis conj(R) or R."""
    rng = np.random.default_rng(7)
    pts = rng.standard_normal((6 * p + 12, 3))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    basis = full_order(regular(pts, p), p)  # (n_pts, p+1, 2p+1)
    if conj_basis:
        basis = np.conj(basis)
    out = None
    for n in range(p + 1):
        a = basis[:, n, p - n:p + n + 1]
        vals = target(n, pts)
        coef = np.linalg.lstsq(a, vals, rcond=None)[0]  # (2n+1, S)
        if out is None:
            out = np.zeros((vals.shape[1], p + 1, 2 * p + 1), dtype=np.complex128)
        out[:, n, p - n:p + n + 1] = coef.T
    return out


@lru_cache(maxsize=None)
def operators(p: int, nodes: int, direction: str):
    """(A1, A2, E) of one direction: W = M @ A1.T + conj(M) @ A2.T maps stored multipoles (…, P) to
    exponential coefficients (…, S); L = W @ E.T maps them to stored locals (…, P)."""
    q = quadrature(nodes)
    lam, alpha, weight = _plane_waves(q)
    e, u, v = (np.asarray(a, dtype=float) for a in FRAMES[direction])
    from math import factorial  # noqa: PLC0415

    def m2x_part(n, pts):  # degree n of exp(lam e.y - i lam (u.y cos a + v.y sin a))
        s = pts @ e
        t = np.outer(pts @ u, np.cos(alpha)) + np.outer(pts @ v, np.sin(alpha))
        return (lam * (s[:, None] - 1j * t)) ** n / factorial(n)

    def x2l_part(n, pts):  # degree n of exp(-lam e.x + i lam (u.x cos a + v.x sin a))
        s = pts @ e
        t = np.outer(pts @ u, np.cos(alpha)) + np.outer(pts @ v, np.sin(alpha))
        return (lam * (-s[:, None] + 1j * t)) ** n / factorial(n)

    c = _fit_degrees(p, m2x_part, conj_basis=True)   # (S, p+1, 2p+1): g = sum c_nm conj(R_n^m)
    d = _fit_degrees(p, x2l_part, conj_basis=False)  # h = sum d_nm R_n^m
    deg, order = degree_order(p)
    a1 = c[:, deg, p + order]
    a2 = np.where(order > 0, (-1.0) ** order * c[:, deg, p - order], 0.0)  # M_n^-m = (-1)^m conj(M_n^m)
    emat = (d[:, deg, p + order] * weight[:, None]).T
    return a1, a2, emat


def x2x_shift(nodes: int, direction: str, offset: np.ndarray) -> np.ndarray:
    """(n, S) factors carrying exponential expansions from source to target centres, offset = target -
    source centre (n, 3), box units."""
    lam, alpha, _ = _plane_waves(quadrature(nodes))
    e, u, v = (np.asarray(a, dtype=float) for a in FRAMES[direction])
    s = offset @ e
    t = np.outer(offset @ u, np.cos(alpha)) + np.outer(offset @ v, np.sin(alpha))
    return np.exp(lam * (-s[:, None] + 1j * t))


def direction_of(delta: np.ndarray) -> np.ndarray:
    """List of each well-separated pair from delta = target - source box offsets (n, 3), as an index
    into FRAMES' order: the target at least two boxes up, else down, north, south, east, west."""
    names = list(FRAMES)
    out = np.full(len(delta), -1)
    for name, (axis, sign) in zip(names, [(2, 1), (2, -1), (1, 1), (1, -1), (0, 1), (0, -1)]):
        hit = (out < 0) & (sign * delta[:, axis] >= 2)
        out[hit] = names.index(name)
    return out


if __name__ == "__main__":  # regenerate the stored rules (about five minutes)
    DATA.write_text(json.dumps(generate(), indent=1) + "\n")
