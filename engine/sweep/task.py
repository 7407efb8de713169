"""One sweep point run on a Dask worker: parse its problem, apply its variants, solve, and write its
folder POINTS/<key>/ all at once (the study's files, then point.json, which marks it finished)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParaFluxError
from .spec import SweepPoint

POINT_FILE = "point.json"


@dataclass(frozen=True)
class PointOutcome:
    """What one point gave: status "done" or "failed", its table rows (output name -> number; one row
    for most studies, several where a study tabulates e.g. angles), the error message if failed, and
    the seconds the worker spent."""

    key: str
    values: dict
    status: str
    rows: tuple
    message: str = ""
    seconds: float = 0.0


def scalar_numbers(summary: dict) -> dict:
    """The summary's top-level finite numbers (not flags), by name: the generic table row of a point."""
    return {k: v for k, v in summary.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def point_rows(study, result, written: list[Path]) -> tuple:
    """The study's own sweep_rows(result) where it declares them, else one row of the scalar numbers of
    the summary.json it wrote."""
    if study.sweep_rows is not None:
        return tuple(dict(row) for row in study.sweep_rows(result))
    summary = next((p for p in written if p.name == "summary.json"), None)
    return (scalar_numbers(json.loads(summary.read_text())),) if summary else ({},)


def run_point(point: SweepPoint, points_dir: str) -> PointOutcome:
    """Solve one point and write its folder; a problem the engine rejects (ParaFluxError) gives a failed
    outcome with its message, and a failed point.json, so that re-running reports it again. The device memory
    the solve held goes back to the device before it returns (a worker solves hundreds of points)."""
    from ..backend import release_job_memory  # noqa: PLC0415

    folder = Path(points_dir) / point.key
    try:
        failed = _solve_point(point, folder)
    finally:
        release_job_memory()
    return failed if failed is not None else read_outcome(folder)


def _solve_point(point: SweepPoint, folder: Path) -> PointOutcome | None:
    """Solve the point into folder: None when done, its failed outcome when the engine rejects it."""
    import time  # noqa: PLC0415

    from ..output import write_all, write_json  # noqa: PLC0415
    from ..problems import parse_problem  # noqa: PLC0415
    from ..run_control import RunControl  # noqa: PLC0415
    from ..studies import study_for_kind  # noqa: PLC0415

    start = time.perf_counter()
    try:
        problem = parse_problem(point.problem, Path(point.base_dir))
        study = study_for_kind(problem.kind)
        result = study.run(study.with_variants(problem, point.variants), RunControl())

        def writer(staging: Path) -> list[Path]:
            written = study.writer(result, staging)
            outcome = PointOutcome(point.key, point.values, "done", point_rows(study, result, written),
                                   seconds=time.perf_counter() - start)
            write_json(staging / POINT_FILE, outcome_to_dict(outcome))
            return [*written, staging / POINT_FILE]  # point.json last: its presence marks the point done

        write_all(folder, writer)
    except ParaFluxError as exc:
        outcome = PointOutcome(point.key, point.values, "failed", (), str(exc), time.perf_counter() - start)
        write_all(folder, lambda staging: [_write_outcome(staging, outcome)])
        return outcome
    return None


def _write_outcome(folder: Path, outcome: PointOutcome) -> Path:
    from ..output import write_json  # noqa: PLC0415

    write_json(folder / POINT_FILE, outcome_to_dict(outcome))
    return folder / POINT_FILE


def outcome_to_dict(outcome: PointOutcome) -> dict:
    return {"key": outcome.key, "values": outcome.values, "status": outcome.status, "rows": list(outcome.rows),
            "message": outcome.message, "seconds": outcome.seconds}


def read_outcome(folder: Path) -> PointOutcome | None:
    """The outcome recorded in folder/point.json, or None where the point has not finished."""
    path = Path(folder) / POINT_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    return PointOutcome(data["key"], data["values"], data["status"], tuple(data["rows"]), data["message"],
                        data["seconds"])
