"""A monostatic RCS sweep's polar plot for a benchmark page: every polarisation part in dBsm against the
azimuth it was lit from, drawn by matplotlib (imported only here) and written as a PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..output import replace_atomically

FLOOR_DB = 50.0  # the plot's centre: this far below the largest RCS (deeper nulls sit on it)
STYLES = {"VV": ("tab:blue", "-"), "HH": ("tab:red", "-"), "HV": ("tab:green", "--"), "VH": ("tab:purple", ":")}
LABELS = {"VV": "VV (θ-polarised, θ received)", "HH": "HH (φ-polarised, φ received)",
          "HV": "HV (θ-polarised, φ received)", "VH": "VH (φ-polarised, θ received)"}


def polar_figure(phi_deg, rcs_dbsm: dict, title: str):
    """A matplotlib Figure: each part of rcs_dbsm (name -> (n,) dBsm, NaN where missing) against phi_deg
    (n,) degrees, phi = 0 (the nose) at the top, increasing anticlockwise as seen from above; the radius in
    dBsm from FLOOR_DB below the peak."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    phi = np.radians(np.append(phi_deg, phi_deg[0]))  # closed round the circle
    values = {name: np.append(v, v[0]) for name, v in ((n, np.asarray(v, dtype=float)) for n, v in rcs_dbsm.items())}
    peak = max(float(np.nanmax(v)) for v in values.values())
    top = 5 * np.ceil((peak + 2) / 5)
    floor = top - FLOOR_DB
    figure = Figure(figsize=(7.5, 6.4), dpi=100, layout="constrained")
    ax = figure.add_subplot(projection="polar")
    for name, v in values.items():
        colour, style = STYLES.get(name, ("black", "-"))
        ax.plot(phi, np.clip(v, floor, None), color=colour, linestyle=style, linewidth=1.2,
                label=LABELS.get(name, name))
    ax.set_theta_zero_location("N")
    ax.set_rlim(floor, top)
    ax.set_rlabel_position(22.5)
    ax.yaxis.set_major_formatter(lambda value, _: f"{value:g} dBsm")
    ax.tick_params(axis="y", labelsize="small")
    ax.set_title(title, fontsize="medium")
    figure.legend(loc="outside lower center", ncols=2, fontsize="small", frameon=False)
    return figure


def write_polar_png(path: Path, phi_deg, rcs_dbsm: dict, title: str) -> Path:
    """polar_figure written to path as a PNG (through a temporary name)."""
    figure = polar_figure(phi_deg, rcs_dbsm, title)
    return replace_atomically(Path(path), lambda tmp: figure.savefig(tmp, format="png"))
