"""The monostatic RCS charts of the scattering study: VV, HH and the cross-polarised HV and VH (as the engine
pairs them, engine/scattering/polarisations.py) against the swept angle in dBsm, Cartesian and polar (a full
circle for an azimuth sweep). Visual only: every value comes from the engine's result."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paraflux.engine.scattering.polarisations import PARTS, polarised_rcs, sweep_angle
STYLES = {"VV": {"color": "tab:blue", "linewidth": 1.8}, "HH": {"color": "tab:orange", "linewidth": 1.8},
          "HV": {"color": "tab:green", "linewidth": 1.0, "linestyle": "--"},
          "VH": {"color": "tab:red", "linewidth": 1.0, "linestyle": ":"}}
LABELS = {"VV": "VV", "HH": "HH", "HV": "HV (cross)", "VH": "VH (cross)"}
AXIS_NAMES = {"phi_deg": "azimuth phi (deg)", "theta_deg": "theta (deg)", "incidence": "incidence"}


def monostatic_curves(result) -> tuple[str, np.ndarray, list[tuple[str, np.ndarray]], float]:
    """(the swept angle's name, its values sorted (n,), [(part, dBsm (n,))] of the parts that were sent,
    the largest of them in dBsm)."""
    rcs = polarised_rcs(result)
    name, angle = sweep_angle(rcs.inc_theta, rcs.inc_phi)
    order = np.argsort(angle, kind="stable")
    curves = [(part, rcs.dbsm(part)[order, 0]) for part in PARTS if not np.isnan(rcs.sigma[part]).all()]
    top = max(float(np.nanmax(values)) for _, values in curves)
    return name, angle[order], curves, max(top, -300.0)


def _title(result, name: str) -> str:
    first = result.problem.incidences[0]
    fixed = {"phi_deg": f" at theta = {first.theta_deg:g} deg", "theta_deg": f" at phi = {first.phi_deg:g} deg"}
    return "Monostatic RCS" + fixed.get(name, "")


def _angle_ticks(ax, angle: np.ndarray) -> None:
    """Ticks every 45 degrees over a sweep of more than 180 degrees (else matplotlib's own)."""
    if np.ptp(angle) > 180.0:
        ax.set_xticks(np.arange(45.0 * np.floor(angle.min() / 45.0), angle.max() + 1.0, 45.0))


def cartesian_chart(figure: Figure, result, legend, db_range: float) -> list:
    """RCS (dBsm) against the swept angle, a line per part, db_range dB under the peak; legend(figure, axes)
    places the legend (the charts' own rule); the lines drawn."""
    name, angle, curves, top = monostatic_curves(result)
    ax = figure.add_subplot()
    lines = [ax.plot(angle, values, label=LABELS[part], marker="." if len(angle) <= 60 else None,
                     **STYLES[part])[0] for part, values in curves]
    ax.set(xlabel=AXIS_NAMES[name], ylabel="RCS (dBsm)", title=_title(result, name),
           ylim=(top - db_range, top + 5.0))
    _angle_ticks(ax, angle)
    ax.grid(True, alpha=0.3)
    legend(figure, ax)
    return lines


def polar_chart(figure: Figure, result, legend, db_range: float):
    """The same curves in polar form (radius in dBsm from db_range under the peak; a sweep over all
    directions closes its curves); None, with a note, when the incidences are not one sweep of an angle."""
    name, angle, curves, top = monostatic_curves(result)
    if name == "incidence":
        ax = figure.add_subplot()
        ax.set_axis_off()
        ax.text(0.5, 0.5, "the incidences vary in theta and phi: no single angle to draw around",
                ha="center", va="center", wrap=True, transform=ax.transAxes)
        return None
    ax = figure.add_subplot(projection="polar")
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    closed = len(angle) > 2 and np.ptp(angle) + np.min(np.diff(angle), initial=360.0) >= 359.999
    radians = np.radians(np.append(angle, angle[0] + 360.0) if closed else angle)
    for part, values in curves:
        shown = np.maximum(values, top - db_range)  # under the centre's value: drawn at the centre
        ax.plot(radians, np.append(shown, shown[0]) if closed else shown, label=LABELS[part], **STYLES[part])
    ax.set_rlim(top - db_range, top + 3.0)
    ax.set_rlabel_position(112.5)  # between the angle labels of 90 and 135 degrees
    ax.tick_params(labelsize="small")
    ax.set_title(f"{_title(result, name)}, dBsm\nangle: {AXIS_NAMES[name]}", fontsize="medium")
    legend(figure, ax)
    return ax
