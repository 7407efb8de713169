"""Exact fields of electric Hertzian dipoles in vacuum, time convention e^{+j w t}: the sources and the
reference of the truncation study."""

from __future__ import annotations

import numpy as np

C0 = 299_792_458.0
MU0 = 4e-7 * np.pi


def wavenumber(frequency: float) -> float:
    """k = 2 pi f / c0 in 1/m for a frequency in Hz."""
    return 2 * np.pi * frequency / C0


def dipole_fields(points, position, moment, k: float):
    """E (V/m) and curl E (V/m^2), each (n, 3) complex, at points (n, 3) m of a dipole of current moment
    I l = moment (3,) complex A m at position (3,) m:
    E = -j w mu0 [I l G + (I l . grad) grad G / k^2], curl E = -j w mu0 grad G x I l, G = exp(-jkR)/(4 pi R)."""
    omega = k * C0
    r = np.asarray(points, dtype=float) - np.asarray(position, dtype=float)
    dist = np.linalg.norm(r, axis=1)
    unit = r / dist[:, None]
    g = np.exp(-1j * k * dist) / (4 * np.pi * dist)
    moment = np.asarray(moment, dtype=complex)
    along = unit @ moment
    kr = k * dist
    e = -1j * omega * MU0 * g[:, None] * (
        moment * (1 - (1 + 1j * kr) / kr ** 2)[:, None]
        + (along * (3 + 3j * kr - kr ** 2) / kr ** 2)[:, None] * unit)
    grad_g = (-(1 + 1j * kr) * g / dist)[:, None] * unit
    curl = -1j * omega * MU0 * np.cross(grad_g, moment)
    return e, curl
