"""Run a sweep on Dask distributed: one task per point not yet finished, on a LocalCluster made on the spot
(or LocalCUDACluster, one worker per GPU, where dask-cuda is importable and GPUs are present) or on an
existing scheduler by address; then the combined table and plots."""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import Cancelled, ProblemError
from .plots import SweepPlots, sweep_figures, write_plots
from .spec import SweepSpec, first_point_problem, grid_points
from .table import table_rows, write_table
from .task import PointOutcome, read_outcome, run_point


@dataclass(frozen=True)
class SweepProgress:
    """Counts of the sweep's points: done and failed (this run and skipped ones), running (on a worker
    now), queued, total, the scheduler's dashboard address ("" where it has none), and the outcomes that
    arrived since the previous report."""

    done: int
    running: int
    failed: int
    queued: int
    total: int
    dashboard: str
    latest: tuple = ()


@dataclass(frozen=True)
class SweepReport:
    """A finished sweep: every point's outcome in grid order, how many were skipped as already done, and
    the files written (table, plots)."""

    outcomes: tuple[PointOutcome, ...]
    skipped: int
    written: tuple[Path, ...]

    @property
    def failed(self) -> list[PointOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]


QUIET = logging.ERROR  # a local cluster's workers log no warnings (a cancelled task's, say) on the terminal


def holds_points(out_dir: Path) -> bool:
    """Whether out_dir holds a finished point (done or failed), which a re-run of the sweep skips."""
    return any(Path(out_dir).glob("points/*/point.json"))


def _never() -> bool:
    return False


def _quiet(progress: SweepProgress) -> None:
    """Default progress sink: ignore."""


def make_client(scheduler: str | None, workers: int | None, retries: int):
    """A distributed Client: on the scheduler at that address, else on a new local cluster of `workers`
    single-threaded processes (default one per core, or one per GPU with dask-cuda and GPUs present).
    A task whose worker dies is re-run up to `retries` more times (the scheduler's allowed-failures; on an
    existing scheduler its own setting applies)."""
    import dask  # noqa: PLC0415
    from distributed import Client, LocalCluster  # noqa: PLC0415

    cores = os.cpu_count() or 1
    if workers is not None and not 1 <= workers <= cores:  # single-threaded processes: more only contend
        raise ProblemError(f"local workers (--workers) must be from 1 to {cores}, this machine's cores; got {workers}")
    if scheduler is not None:
        try:
            return Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: not an address (no port, say)
            raise ProblemError(f"no Dask scheduler answers at {scheduler}: {exc}") from None
    with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
        cuda = _cuda_cluster(workers)
        cluster = cuda or LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=QUIET)
        return Client(cluster)


def close_client(client) -> None:
    """Close the client, and the local cluster it made (a cluster reached by address stays up)."""
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()


def _cuda_cluster(workers: int | None):
    """A LocalCUDACluster (one worker per GPU) where dask-cuda is importable and a GPU is visible."""
    from ..backend import gpu_available  # noqa: PLC0415

    try:
        from dask_cuda import LocalCUDACluster  # noqa: PLC0415
    except ImportError:
        return None
    if not gpu_available():
        return None
    return LocalCUDACluster(n_workers=workers, dashboard_address=":0", silence_logs=QUIET)


def run_sweep(spec: SweepSpec, out_dir: str | Path, client, progress: Callable[[SweepProgress], None] = _quiet,
              cancel: Callable[[], bool] = _never) -> SweepReport:
    """Run every point of the sweep not already done in out_dir/points, then write the table and plots.
    Cancelling (cancel() true, or KeyboardInterrupt) cancels the tasks and raises Cancelled, naming how
    many points finished."""
    out_dir = Path(out_dir)
    points_dir = out_dir / "points"
    points_dir.mkdir(parents=True, exist_ok=True)
    points = grid_points(spec)
    finished = {p.key: o for p in points if (o := read_outcome(points_dir / p.key)) and o.status == "done"}
    todo = [p for p in points if p.key not in finished]
    run_id = uuid.uuid4().hex[:8]  # a cancelled run's keys may linger on the scheduler: never reuse them
    futures = {client.submit(run_point, p, str(points_dir), key=f"sweep-point-{p.key}-{run_id}", pure=False,
                             retries=spec.retries): p for p in todo}
    outcomes = dict(finished)
    try:
        _collect(futures, outcomes, len(points), client, progress, cancel)
    except BaseException as exc:  # Ctrl-C, Cancel, SIGTERM: no task of this run goes on (on a cluster too)
        client.cancel(list(futures))
        if isinstance(exc, (KeyboardInterrupt, Cancelled)):
            raise Cancelled(_cancelled_message(points, outcomes, points_dir)) from None
        raise
    ordered = tuple(outcomes[p.key] for p in points)
    columns, rows = table_rows(spec.axes, ordered)
    written = write_table(out_dir, columns, rows)
    written += write_plots(out_dir, sweep_report_figures(spec, ordered))
    return SweepReport(ordered, len(finished), tuple(written))


def declared_plots(spec: SweepSpec) -> SweepPlots:
    """What the sweep's study plots for its first point's problem (SweepPlots() where it declares nothing)."""
    from ..problems import parse_problem  # noqa: PLC0415
    from ..studies import study_for_kind  # noqa: PLC0415

    problem = parse_problem(first_point_problem(spec), spec.base_dir)
    study = study_for_kind(problem.kind)
    return study.sweep_plots(problem) if study.sweep_plots is not None else SweepPlots()


def sweep_report_figures(spec: SweepSpec, outcomes) -> list[tuple[str, object]]:
    """(name, matplotlib Figure) for each plot of the finished sweep: the PNGs `paraflux sweep` writes and
    the window's sweep panel shows."""
    columns, rows = table_rows(spec.axes, outcomes)
    return sweep_figures(declared_plots(spec), spec.axes, columns, rows, spec.plots, spec.zip)


def _cancelled_message(points, outcomes: dict, points_dir: Path) -> str:
    """How many points finished, and which (their axis values, the first ten)."""
    ran = [p.values for p in points if p.key in outcomes and outcomes[p.key].status == "done"]
    listed = "; ".join(", ".join(f"{k}={v}" for k, v in values.items()) for values in ran[:10])
    more = f" and {len(ran) - 10} more" if len(ran) > 10 else ""
    return (f"sweep cancelled: {len(ran)} of {len(points)} points finished (in {points_dir})"
            + (f": {listed}{more}" if ran else "") + "; run it again to compute the rest")


def _collect(futures: dict, outcomes: dict, total: int, client, progress, cancel) -> None:
    """Gather the tasks' outcomes as they finish; a task that raised (after its retries) or whose workers
    kept dying is recorded as failed with the error's message."""
    from distributed import wait  # noqa: PLC0415

    pending = set(futures)
    dashboard = getattr(client, "dashboard_link", "") or ""
    while pending:
        if cancel():
            raise Cancelled("cancelled by the user")
        try:
            finished, pending = wait(pending, timeout=0.25, return_when="FIRST_COMPLETED")
        except TimeoutError:  # nothing finished in this quarter second: report, check cancel, wait again
            finished = set()
        latest = []
        for future in finished:
            point = futures[future]
            if future.status == "finished":
                outcomes[point.key] = future.result()
            else:
                error = future.exception() if future.status == "error" else f"task {future.status}"
                outcomes[point.key] = PointOutcome(point.key, point.values, "failed", (),
                                                   f"{type(error).__name__}: {error}" if future.status == "error"
                                                   else error)
            latest.append(outcomes[point.key])
        running = _running(client, pending)
        done = sum(1 for o in outcomes.values() if o.status == "done")
        failed = len(outcomes) - done
        progress(SweepProgress(done, running, failed, total - done - failed - running, total, dashboard,
                               tuple(latest)))


def _running(client, pending) -> int:
    """How many of the pending tasks are running: those the scheduler has handed to each worker, at most
    as many as the worker has threads (the rest wait in the worker's queue)."""
    keys = {f.key for f in pending}
    threads = client.nthreads()
    return sum(min(threads.get(worker, 1), sum(1 for k in tasks if k in keys))
               for worker, tasks in client.processing().items())
