"""Both polarisations side by side: for each arrival direction that has incidences and each far-field direction,
VV (theta-polarised incidence, sigma_theta), HH (phi-polarised incidence, sigma_phi) and the cross-polarised
parts HV (theta incidence, sigma_phi) and VH (phi incidence, sigma_theta); and the angle a monostatic sweep
runs along, for RCS-against-angle and polar charts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .waves import dbsm

PARTS = {"VV": ("theta", "theta"), "HH": ("phi", "phi"), "HV": ("theta", "phi"), "VH": ("phi", "theta")}
# part -> (the incidence's polarisation, the far field's component)
POLARISED_HEADER = ("inc_theta_deg", "inc_phi_deg", "theta_deg", "phi_deg",
                    *(f"sigma_{p.lower()}_dbsm" for p in PARTS))


@dataclass(frozen=True, eq=False)
class PolarisedRcs:
    """inc_theta, inc_phi (n,) degrees: the arrival directions in the order the incidences first name them;
    theta, phi (n, d) degrees: their far-field directions (monostatic: d = 1, the back-scatter direction);
    sigma: part name (PARTS) -> (n, d) m^2, NaN where no incidence of that polarisation arrives there."""

    inc_theta: np.ndarray
    inc_phi: np.ndarray
    theta: np.ndarray
    phi: np.ndarray
    sigma: dict

    def dbsm(self, part: str) -> np.ndarray:
        """sigma of a part in dBsm (n, d), NaN where it is missing."""
        return dbsm(self.sigma[part])


def _incidence_of(incidences) -> dict[tuple[float, float], dict[str, int]]:
    """(theta_deg, phi_deg) -> {polarisation: the first incidence of it arriving from there}, in order."""
    found: dict[tuple[float, float], dict[str, int]] = {}
    for i, inc in enumerate(incidences):
        found.setdefault((inc.theta_deg, inc.phi_deg), {}).setdefault(inc.polarization, i)
    return found


def polarised_rcs(result) -> PolarisedRcs:
    """The result's RCS by arrival direction and part (VV, HH, HV, VH)."""
    found = _incidence_of(result.problem.incidences)
    received = {"theta": np.asarray(result.sigma_theta), "phi": np.asarray(result.sigma_phi)}
    any_of = [next(iter(pols.values())) for pols in found.values()]
    sigma = {}
    for part, (sent, component) in PARTS.items():
        rows = [received[component][pols[sent]] if sent in pols else np.full(received[component].shape[1], np.nan)
                for pols in found.values()]
        sigma[part] = np.array(rows, dtype=float)
    directions = np.array(list(found), dtype=float).reshape(-1, 2)
    return PolarisedRcs(directions[:, 0], directions[:, 1], np.asarray(result.theta)[any_of],
                        np.asarray(result.phi)[any_of], sigma)


def both_polarisations(problem) -> bool:
    """Whether some arrival direction has a theta- and a phi-polarised incidence."""
    return any(len(pols) == 2 for pols in _incidence_of(problem.incidences).values())


def sweep_angle(inc_theta: np.ndarray, inc_phi: np.ndarray) -> tuple[str, np.ndarray]:
    """The angle a sweep of arrival directions (n,) degrees runs along: ("phi_deg", phi) where theta is one
    value (an azimuth sweep), ("theta_deg", theta) where phi is, ("incidence", 0..n-1) where both vary."""
    if np.ptp(inc_theta) == 0 and np.ptp(inc_phi) > 0:
        return "phi_deg", np.asarray(inc_phi, dtype=float)
    if np.ptp(inc_phi) == 0:
        return "theta_deg", np.asarray(inc_theta, dtype=float)
    return "incidence", np.arange(len(inc_theta), dtype=float)


def polarised_rows(result) -> list[tuple]:
    """One row per arrival direction and far-field direction, in POLARISED_HEADER's order (NaN: missing)."""
    rcs = polarised_rcs(result)
    parts = [rcs.dbsm(p) for p in PARTS]
    return [(float(rcs.inc_theta[i]), float(rcs.inc_phi[i]), float(rcs.theta[i, j]), float(rcs.phi[i, j]),
             *(float(part[i, j]) for part in parts))
            for i in range(len(rcs.inc_theta)) for j in range(rcs.theta.shape[1])]
