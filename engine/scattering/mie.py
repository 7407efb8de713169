"""Mie series of a perfectly conducting sphere: the reference RCS of the pec-sphere case.

For a plane wave along the z axis polarised along x, S1 and S2 at scattering angle gamma (from the
direction of travel) with a_n = psi_n'(x) / xi_n'(x), b_n = psi_n(x) / xi_n(x) (psi_n = x j_n, xi_n = x h_n):
    S1 = sum (2n + 1) / (n (n + 1)) (a_n pi_n + b_n tau_n),  S2 = sum (2n + 1) / (n (n + 1)) (a_n tau_n + b_n pi_n)
(Bohren and Huffman, sec. 4.4, with m -> infinity); sigma in the E-plane = 4 pi |S2|^2 / k^2, in the
H-plane 4 pi |S1|^2 / k^2."""

from __future__ import annotations

import numpy as np
from scipy.special import spherical_jn, spherical_yn


def _coefficients(x: float) -> tuple[np.ndarray, np.ndarray]:
    n = np.arange(1, int(x + 4 * x ** (1 / 3) + 12))
    j, y = spherical_jn(n, x), spherical_yn(n, x)
    jd, yd = spherical_jn(n, x, derivative=True), spherical_yn(n, x, derivative=True)
    h, hd = j + 1j * y, jd + 1j * yd
    a = (j + x * jd) / (h + x * hd)  # psi' / xi'
    b = j / h
    return a, b


def amplitudes(x: float, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S1, S2 (n,) complex at scattering angles gamma (n,) rad for size parameter x = k a."""
    a, b = _coefficients(x)
    mu = np.cos(np.asarray(gamma, dtype=float))
    pi_prev, pi_n = np.zeros_like(mu), np.ones_like(mu)
    s1 = np.zeros(mu.shape, dtype=complex)
    s2 = np.zeros_like(s1)
    for n in range(1, len(a) + 1):
        tau_n = n * mu * pi_n - (n + 1) * pi_prev
        c = (2 * n + 1) / (n * (n + 1))
        s1 += c * (a[n - 1] * pi_n + b[n - 1] * tau_n)
        s2 += c * (a[n - 1] * tau_n + b[n - 1] * pi_n)
        pi_prev, pi_n = pi_n, ((2 * n + 1) * mu * pi_n - (n + 1) * pi_prev) / n
    return s1, s2


def pec_sphere_rcs(radius: float, k: float, theta_deg) -> tuple[np.ndarray, np.ndarray]:
    """(E-plane sigma_theta at phi = 0, H-plane sigma_phi at phi = 90) in m^2 at observation angles theta
    (n,) degrees, for a wave arriving from theta = 0 (travelling along -z) polarised along theta^ (x)."""
    gamma = np.pi - np.radians(np.asarray(theta_deg, dtype=float))
    s1, s2 = amplitudes(k * radius, gamma)
    return 4 * np.pi * np.abs(s2) ** 2 / k ** 2, 4 * np.pi * np.abs(s1) ** 2 / k ** 2
