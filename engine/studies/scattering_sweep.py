"""What a sweep of the scattering study plots (Study.sweep_plots): the RCS against the swept key (frequency
in MHz) with a line per chosen direction and component, and the RCS against theta with a line per swept
value and a panel per cut (E-plane, H-plane), in dBsm; the Mie series beside a PEC sphere's lines."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..scattering.mie import pec_sphere_rcs
from ..scattering.waves import dbsm
from ..sweep.plots import Quantity, SweepPlot, SweepPlots
from ..truncation.fields import C0

SIGMA = (Quantity("sigma_theta_dbsm", "σθ", "dBsm"), Quantity("sigma_phi_dbsm", "σφ", "dBsm"))
FLOOR_DB = 60.0  # a component this far below the peak everywhere is numerical noise (a sphere's cross-polar)
FEW_DIRECTIONS = 4  # an incidence with at most this many far-field directions draws them all
OTHER_ANGLE = {"theta_deg": "phi_deg", "phi_deg": "theta_deg"}
POLARISED = {"theta": "θ-polarised", "phi": "φ-polarised"}
INCIDENCE = (Quantity("inc_theta_deg", "incidence θ", "°"), Quantity("inc_phi_deg", "incidence φ", "°"),
             Quantity("polarised", "polarisation", named=False))
QUANTITIES = (Quantity("problem.frequency", "frequency", "MHz", 1e-6, named=False),
              Quantity("geometry.elements_per_wavelength", "elements per λ"),
              Quantity("geometry.inner_gap", "S' gap", "λ"), Quantity("geometry.outer_gap", "S gap", "λ"),
              Quantity("solver.tolerance", "tolerance"), Quantity("theta_deg", "θ", "°"), Quantity("phi_deg", "φ", "°"))


def _unit(theta_deg, phi_deg) -> np.ndarray:
    t, p = np.radians(theta_deg), np.radians(phi_deg)
    return np.array([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)])


def _angles(theta, phi) -> str:
    return f"θ {theta:g}°, φ {phi:g}°"


def _incident(row: dict) -> str:
    return f"from {_angles(row['inc_theta_deg'], row['inc_phi_deg'])}, {POLARISED[row['polarization']]}"


def _by_incidence(rows: list[dict]) -> dict:
    """Rows grouped by point and incidence, in table order."""
    groups = defaultdict(list)
    for row in rows:
        groups[(row["point"], row["incidence"])].append(row)
    return groups


def _monostatic(rows: list[dict]) -> bool:
    """Whether each incidence's one far-field direction is its own back-scatter direction."""
    return all(len(g) == 1 and np.allclose(_unit(g[0]["theta_deg"], g[0]["phi_deg"]),
                                           _unit(g[0]["inc_theta_deg"], g[0]["inc_phi_deg"]), atol=1e-9)
               for g in _by_incidence(rows).values())


def chosen_directions(rows: list[dict]) -> list[dict]:
    """The rows at each incidence's chosen far-field directions, labelled with a "direction" and "polarised":
    every direction where an incidence has at most FEW_DIRECTIONS (a monostatic far field has one), else
    the back-scatter (monostatic) and forward directions where the grid holds them, else the grid's
    direction nearest to back-scatter."""
    chosen = []
    for group in _by_incidence(rows).values():
        back = _unit(group[0]["inc_theta_deg"], group[0]["inc_phi_deg"])
        named = {}
        for row in group:
            u = _unit(row["theta_deg"], row["phi_deg"])
            name = ("back-scatter" if np.allclose(u, back, atol=1e-9)
                    else "forward" if np.allclose(u, -back, atol=1e-9) else None)
            label = name or _angles(row["theta_deg"], row["phi_deg"])
            if (name or len(group) <= FEW_DIRECTIONS) and label not in named:  # a pole's first phi names it
                named[label] = row
        if not named:
            nearest = max(group, key=lambda row: float(_unit(row["theta_deg"], row["phi_deg"]) @ back))
            named[_angles(nearest["theta_deg"], nearest["phi_deg"])] = nearest
        chosen += [{**row, "direction": label, "polarised": POLARISED[row["polarization"]]}
                   for label, row in named.items()]
    return chosen


def _cut(row: dict, along: str, axial: bool) -> str:
    """The cut's name: for a theta cut, E- or H-plane where every incidence travels along z and the
    incident field lies in or across the cut's plane, else its phi; for a phi cut, its theta."""
    if along == "phi_deg":
        return f"θ {row['theta_deg']:g}° cut"
    label = f"φ {row['phi_deg']:g}°"
    if not axial:
        return f"{label} cut"
    t, p = np.radians(row["inc_theta_deg"]), np.radians(row["inc_phi_deg"])
    theta_hat = np.array([np.cos(t) * np.cos(p), np.cos(t) * np.sin(p), -np.sin(t)])
    field = theta_hat if row["polarization"] == "theta" else np.array([-np.sin(p), np.cos(p), 0.0])
    along_cut = abs(field @ _unit(90.0, row["phi_deg"]))
    return f"E-plane ({label})" if along_cut > 1 - 1e-9 else f"H-plane ({label})" if along_cut < 1e-9 \
        else f"{label} cut"


def _varies(rows: list[dict], angle: str, other: str) -> bool:
    """Whether `angle` takes several values within one point, source and value of `other`."""
    seen = defaultdict(set)
    for row in rows:
        seen[(row["point"], row["source"], row[other])].add(row[angle])
    return any(len(values) > 1 for values in seen.values())


def _cuts(rows: list[dict], along: str) -> list[dict]:
    """The rows labelled with their "cut" and "source" (the incidence, or the polarisation of a monostatic
    far field, whose direction moves along the cut) where the RCS is drawn against `along`: theta where
    it varies within a cut, else phi; [] for the other angle."""
    monostatic = _monostatic(rows)
    rows = [{**row, "source": f"monostatic, {POLARISED[row['polarization']]} incidence" if monostatic
             else f"incidence {_incident(row)}"} for row in rows]
    by_theta = _varies(rows, "theta_deg", "phi_deg")
    if along != ("theta_deg" if by_theta else "phi_deg") or not _varies(rows, along, OTHER_ANGLE[along]):
        return []
    axial = not monostatic and all(abs(np.sin(np.radians(r["inc_theta_deg"]))) < 1e-9 for r in rows)
    return [{**row, "cut": _cut(row, along, axial)} for row in rows]


def theta_cuts(rows: list[dict]) -> list[dict]:
    """The rows of the RCS against theta, a cut per phi (none where theta does not vary within a cut)."""
    return _cuts(rows, "theta_deg")


def phi_cuts(rows: list[dict]) -> list[dict]:
    """The rows of the RCS against phi, a cut per theta, where theta does not vary within a phi cut (e.g. a
    monostatic sweep around the horizon)."""
    return _cuts(rows, "phi_deg")


def mie_reference(problem):
    """reference(rows) -> rows: the Mie series' sigma_theta and sigma_phi (dBsm) at each row's direction and
    frequency (and radius, where swept) for a PEC sphere lit from theta = 0 polarised along theta; None for
    another case (the rows of other incidences get none)."""
    if problem.case != "pec-sphere":
        return None

    def reference(rows: list[dict]) -> list[dict]:
        groups = defaultdict(list)
        for row in rows:
            if row["inc_theta_deg"] == 0.0 and row["polarization"] == "theta":
                groups[(row.get("problem.frequency", problem.frequency),
                        row.get("geometry.radius", problem.radius))].append(row)
        out = []
        for (frequency, radius), group in groups.items():
            e_plane, h_plane = pec_sphere_rcs(radius * problem.length_scale, 2 * np.pi * frequency / C0,
                                              [row["theta_deg"] for row in group])
            across = np.cos(np.radians([row["phi_deg"] - row["inc_phi_deg"] for row in group])) ** 2
            out += [{**row, "sigma_theta_dbsm": float(t), "sigma_phi_dbsm": float(p)}
                    for row, t, p in zip(group, dbsm(e_plane * across), dbsm(h_plane * (1 - across)))]
        return out

    return reference


def _angle_plot(name: str, angle: str, symbol: str, select, reference) -> SweepPlot:
    return SweepPlot(name, f"RCS against {symbol}", SIGMA,
                     x=Quantity(angle, symbol, "°"),
                     panels=(Quantity("source", "incidence", named=False), Quantity("cut", "cut", named=False)),
                     select=select, y_label="RCS (dBsm)", floor_db=FLOOR_DB, reference=reference,
                     reference_label="Mie series")


def sweep_plots(problem) -> SweepPlots:
    """The scattering study's sweep figures, with the Mie series beside a PEC sphere's RCS."""
    reference = mie_reference(problem)
    return SweepPlots(figures=(
        SweepPlot("rcs-vs-{x}", "RCS against {x}", SIGMA,
                  lines=(*INCIDENCE, Quantity("direction", "direction")),
                  select=chosen_directions, y_label="RCS (dBsm)", floor_db=FLOOR_DB, reference=reference,
                  reference_label="Mie series"),
        _angle_plot("rcs-vs-theta", "theta_deg", "θ", theta_cuts, reference),
        _angle_plot("rcs-vs-phi", "phi_deg", "φ", phi_cuts, reference),
    ), quantities=(*QUANTITIES, Quantity("geometry.radius", "radius", problem.length_unit)))
