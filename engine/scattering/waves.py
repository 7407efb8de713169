"""Plane waves, spherical unit vectors and the far field of the equivalent currents on S' (time convention
e^{+jwt}, E0 = 1 V/m)."""

from __future__ import annotations

import numpy as np

from ..backend import array_module, to_host
from ..truncation.operator import Currents
from .far_sums import phase_sums, phase_sums_numpy

POLARIZATIONS = ("theta", "phi")


def unit_vectors(theta_deg, phi_deg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r^, theta^, phi^ (..., 3) at angles (...) in degrees ((n,) at least)."""
    t, p = np.radians(np.atleast_1d(theta_deg)), np.radians(np.atleast_1d(phi_deg))
    r = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1)
    th = np.stack([np.cos(t) * np.cos(p), np.cos(t) * np.sin(p), -np.sin(t)], axis=-1)
    ph = np.stack([-np.sin(p), np.cos(p), np.zeros_like(p)], axis=-1)
    return r, th, ph


def plane_waves(points: np.ndarray, k: float, theta_deg, phi_deg, polarization) -> tuple[np.ndarray, np.ndarray]:
    """Unit plane waves arriving FROM (theta, phi) (n_inc,) degrees, so travelling along k^ = -r^, polarised
    along theta^ or phi^ there, at points (n, 3) m: E_inc = phase (n, n_inc) times polarisation (n_inc, 3);
    the phase on the points' device (NumPy or CuPy), the polarisation NumPy."""
    r, th, ph = unit_vectors(theta_deg, phi_deg)
    xp = array_module(points)
    return xp.exp(1j * k * (points @ xp.asarray(r.T))), np.where(np.asarray(polarization)[:, None] == "theta", th, ph)


def incident_field(points: np.ndarray, k: float, theta_deg, phi_deg, polarization) -> np.ndarray:
    """E_inc (n_inc, n, 3) complex V/m of plane_waves at points (n, 3) m."""
    phase, pol = plane_waves(points, k, theta_deg, phi_deg, polarization)
    return phase.T[:, :, None] * pol[:, None, :]


def far_field(directions: np.ndarray, sources: np.ndarray, cur: Currents, k: float, xp=np) -> np.ndarray:
    """The far-field pattern F (n_rhs, n_dir, 3) complex V, E ~ F exp(-jkr) / r, along unit directions
    (n_dir, 3) shared by every right-hand side or (n_rhs, n_dir, 3) each its own, from the currents at S'
    points sources (n', 3): the operator's kernel for r -> infinity,
    (1 / 4 pi) sum w' exp(jk r^.r') [n' x F + jk (n' x E) x r^ + jk (n' . E) r^], transverse part.
    Computed by the array module xp (CuPy: on the GPU; NumPy: far_sums.phase_sums on the host's cores),
    returned as a NumPy array."""
    d = directions if directions.ndim == 3 else directions[None]
    values = xp.concatenate([xp.asarray(cur.cross_f), xp.asarray(cur.cross_e), xp.asarray(cur.dot_e)[..., None]],
                            axis=-1)  # (r, n', 7)
    if xp is np:
        sums = phase_sums(d, sources, values, k)
    else:
        sums = phase_sums_numpy(d, sources, values, k, xp)
    a, b, c = sums[..., :3], sums[..., 3:6], sums[..., 6:]
    d = xp.asarray(d)
    f = a + 1j * k * (xp.cross(b, d) + c * d)
    return to_host(f - (f * d).sum(axis=-1, keepdims=True) * d)


def rcs(pattern: np.ndarray, theta_deg, phi_deg) -> tuple[np.ndarray, np.ndarray]:
    """sigma_theta, sigma_phi (..., n_dir) m^2 = 4 pi |F . theta^|^2, 4 pi |F . phi^|^2 for E0 = 1, the pattern
    (..., n_dir, 3) at angles (n_dir,) or (..., n_dir) degrees."""
    _, th, ph = unit_vectors(theta_deg, phi_deg)
    return (4 * np.pi * np.abs(np.einsum("...dk,...dk->...d", pattern, th)) ** 2,
            4 * np.pi * np.abs(np.einsum("...dk,...dk->...d", pattern, ph)) ** 2)


def dbsm(sigma: np.ndarray) -> np.ndarray:
    """10 log10(sigma / 1 m^2), -400 dBsm for an exact zero."""
    return 10 * np.log10(np.maximum(sigma, 1e-40))
