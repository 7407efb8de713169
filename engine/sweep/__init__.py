"""Parameter, variant and frequency sweeps of any study, run as one Dask task per point (engine/sweep)."""

from .runner import SweepProgress, SweepReport, make_client, run_sweep
from .spec import Axis, SweepPoint, SweepSpec, grid_points, load_sweep, parse_sweep, set_dotted
from .task import PointOutcome, run_point

__all__ = ["Axis", "PointOutcome", "SweepPoint", "SweepProgress", "SweepReport", "SweepSpec", "grid_points",
           "load_sweep", "make_client", "parse_sweep", "run_point", "run_sweep", "set_dotted"]
