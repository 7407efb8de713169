"""The NASA almond (EMCC benchmark shape, Woo et al., IEEE AP Magazine 35(1), 1993) as a closed triangulated
surface. Length d along x; for -0.416667 < t < 0 (the rounded end) and 0 < t < 0.583333 (the tip):
    x = d t,  y = a(t) cos psi,  z = a(t) / 3 sin psi,
    a(t) = 0.193333 d sqrt(1 - (t / 0.416667)^2)            for t < 0,
    a(t) = 4.83345 d (sqrt(1 - (t / 2.08335)^2) - 0.96)     for t > 0."""

from __future__ import annotations

import math

import numpy as np

from .surfaces import TriSurface, banded_triangles, check_closed_outward

ALMOND_LENGTH = 9.936 * 0.0254  # m, the EMCC almond
T_BACK, T_TIP = -0.416667, 0.583333


def half_width(t: np.ndarray) -> np.ndarray:
    """a(t) / d: the y half-width of the almond's cross-section at x = d t."""
    back = 0.193333 * np.sqrt(np.clip(1 - (t / T_BACK) ** 2, 0, None))
    tip = 4.83345 * (np.sqrt(np.clip(1 - (t / 2.08335) ** 2, 0, None)) - 0.96)
    return np.where(t < 0, back, np.clip(tip, 0, None))


def _equal_arc(curve: np.ndarray, n: int) -> np.ndarray:
    """Parameters (n,) at equal arc length along a sampled curve (m, k) whose parameter runs 0..1."""
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(curve, axis=0), axis=1))])
    return np.interp(np.linspace(0, s[-1], n), s, np.linspace(0, 1, len(curve)))


def almond_surface(target: int, length: float = ALMOND_LENGTH) -> TriSurface:
    """The almond with about `target` triangles (at least 20), length in m, outward orientation: rings at equal
    arc length along the profile, points at equal arc length around each 3:1 elliptic section."""
    fine = np.linspace(0, 1, 4001)
    theta = math.pi * fine  # the profile, densest at the rounded end and at the tip
    t_fine = np.where(theta < math.pi / 2, T_BACK * np.cos(theta), T_TIP * (1 - np.cos(theta - math.pi / 2)))
    profile = np.column_stack([t_fine, half_width(t_fine)])
    ellipse = np.column_stack([np.cos(2 * math.pi * fine), np.sin(2 * math.pi * fine) / 3])
    arc = np.linalg.norm(np.diff(profile, axis=0), axis=1).sum()
    perimeter = np.linalg.norm(np.diff(ellipse, axis=0), axis=1).sum() * half_width(np.zeros(1))[0]
    h = math.sqrt(2 * perimeter * arc / (math.sqrt(3) / 2 * max(target, 20)))
    n_phi = max(4, round(perimeter / h))
    n_rings = max(2, round(max(target, 20) / (2 * n_phi)))
    u = _equal_arc(profile, n_rings + 2)[1:-1]  # interior rings; the ends are the poles
    t = np.interp(u, fine, t_fine)
    psi = 2 * math.pi * _equal_arc(ellipse, n_phi + 1)[:-1]
    a = half_width(t)[:, None]
    rings = np.stack([np.repeat(t[:, None], n_phi, axis=1), a * np.cos(psi), a / 3 * np.sin(psi)],
                     axis=-1).reshape(-1, 3)
    points = length * np.vstack([[T_BACK, 0, 0], rings, [T_TIP, 0, 0]])
    return check_closed_outward(TriSurface("almond", points, banded_triangles(n_rings, n_phi)))
