"""Parameter, variant and frequency sweeps of any study, run as one Dask task per point (engine/sweep)."""

from .plots import Quantity, SweepPlot, SweepPlots
from .runner import (SweepProgress, SweepReport, close_client, declared_plots, holds_points, make_client, run_sweep,
                     sweep_report_figures)
from .spec import Axis, SweepPoint, SweepSpec, grid_points, load_sweep, numeric_keys, parse_sweep, set_dotted
from .task import PointOutcome, run_point

__all__ = ["Axis", "close_client", "declared_plots", "holds_points", "PointOutcome", "Quantity", "SweepPlot",
           "SweepPlots", "SweepPoint", "SweepProgress", "SweepReport", "SweepSpec", "grid_points", "load_sweep",
           "make_client", "numeric_keys", "parse_sweep", "run_point", "run_sweep", "set_dotted", "sweep_report_figures"]
