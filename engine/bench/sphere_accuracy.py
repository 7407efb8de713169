"""A PEC sphere's computed RCS against the Mie series by three measures, so that a large sphere is not judged
on its forward lobe alone: the largest |dB| error of the co-polarised cuts where Mie is within WINDOW_DB of
its peak, the error of the backscatter, and the relative L2 error of the far-field amplitude over the
sphere of directions. The far field is asked on FAR_FIELD's theta x phi grid (every direction's RCS kept)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..scattering.mie import pec_sphere_rcs
from ..scattering.waves import dbsm

WINDOW_DB = 40.0
FAR_FIELD = {"theta_deg": {"start": 0.0, "stop": 180.0, "step": 2.0},
             "phi_deg": {"start": 0.0, "stop": 350.0, "step": 10.0}}  # 91 x 36 directions, both cuts among them


@dataclass(frozen=True)
class SphereAccuracy:
    """window_db: largest |dB error| of sigma_theta at phi = 0 (E-plane) and sigma_phi at phi = 90 (H-plane)
    where Mie is within WINDOW_DB of its peak; backscatter_db: the error (signed, dB) toward the source;
    l2_relative: || |F| - |F_Mie| || / || F_Mie || over the sphere of directions, |F| = (sqrt(sigma_theta),
    sqrt(sigma_phi)) (amplitudes: the phase is not compared)."""

    window_db: float
    backscatter_db: float
    l2_relative: float


def mie_on_grid(radius: float, k: float, theta, phi) -> tuple[np.ndarray, np.ndarray]:
    """Mie's (sigma_theta, sigma_phi) m^2 at directions theta, phi (n,) degrees for a wave arriving from
    theta = 0 polarised along x: the E-plane's sigma times cos^2 phi, the H-plane's times sin^2 phi."""
    e_plane, h_plane = pec_sphere_rcs(radius, k, theta)
    c2 = np.cos(np.radians(phi)) ** 2
    return e_plane * c2, h_plane * (1 - c2)


def cut_error_db(theta, reference, computed, window_db: float = WINDOW_DB) -> float:
    """Largest |dB| difference of computed from reference sigma (n,) where the reference is within window_db
    of its peak; theta only orders the cut (both arrays at the same angles)."""
    ref, got = dbsm(np.asarray(reference)), dbsm(np.asarray(computed))
    near = ref >= ref.max() - window_db
    return float(np.abs(got - ref)[near].max()) if len(theta) else float("nan")


def sphere_accuracy(radius: float, k: float, theta, phi, sigma_theta, sigma_phi) -> SphereAccuracy:
    """The three measures for directions theta, phi (n,) degrees and computed sigma (n,) m^2 of a sphere of
    radius (m) at wavenumber k (1/m), lit from theta = 0 along x. The L2 norm weighs each direction by
    sin(theta) times its grid cell (a uniform theta x phi grid)."""
    theta, phi = np.asarray(theta, dtype=float), np.asarray(phi, dtype=float)
    mie_theta, mie_phi = mie_on_grid(radius, k, theta, phi)
    worst = 0.0
    for cut, computed, reference in ((0.0, sigma_theta, mie_theta), (90.0, sigma_phi, mie_phi)):
        pick = np.isclose(phi, cut)
        worst = max(worst, cut_error_db(theta[pick], np.asarray(reference)[pick], np.asarray(computed)[pick]))
    back = np.isclose(theta, 0.0) & np.isclose(phi, 0.0)
    backscatter = float((dbsm(np.asarray(sigma_theta)[back]) - dbsm(mie_theta[back]))[0]) if back.any() else np.nan
    weight = np.sin(np.radians(theta))
    difference = (np.sqrt(sigma_theta) - np.sqrt(mie_theta)) ** 2 + (np.sqrt(sigma_phi) - np.sqrt(mie_phi)) ** 2
    l2 = float(np.sqrt((weight * difference).sum() / (weight * (mie_theta + mie_phi)).sum()))
    return SphereAccuracy(worst, backscatter, l2)


def rcs_record(theta, phi, sigma_theta, sigma_phi) -> dict:
    """The RCS of every direction for a benchmark's JSON: angles in degrees, sigma in dBsm to 1e-4 dB."""
    return {"theta_deg": np.round(theta, 6).tolist(), "phi_deg": np.round(phi, 6).tolist(),
            "sigma_theta_dbsm": np.round(dbsm(np.asarray(sigma_theta)), 4).tolist(),
            "sigma_phi_dbsm": np.round(dbsm(np.asarray(sigma_phi)), 4).tolist()}
