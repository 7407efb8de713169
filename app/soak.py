"""The window's long-run memory check (issue 51): the mixed cycle of engine/soak.py (every study at a small
size, a study switch before each job, a Compare, a cancelled solve, a small sweep in the Sweep panel) driven
through the real window, the memory sampled after each job. `python -m paraflux.app.soak --jobs 500` (or
`make soak`) runs it under a display and writes the curves and docs/soak.md; tests/test_app_soak.py runs a
few rounds and fits the slope."""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from paraflux.engine.problems import case_boundaries
from paraflux.engine.soak import ROUND, Sample, Step, sample
from paraflux.engine.sweep.spec import set_dotted

JOB_TIMEOUT_S = 600.0


def wait_until(condition: Callable[[], bool], timeout_s: float = JOB_TIMEOUT_S) -> None:
    """Run the window's event loop in short waits until condition() holds (TimeoutError after timeout_s). A
    tight processEvents loop instead crashed PySide6 here (None's reference count, in a 2-second solve)."""
    from PySide6.QtTest import QTest  # noqa: PLC0415

    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError(f"the window did not get there in {timeout_s:g} s")
        QTest.qWait(20)


def switch_to(window, step: Step) -> None:
    """Select the step's study (from another one: a switch before every job), case, size, variants (the rest
    at their defaults) and problem changes, as a user would in the Model dock."""
    if window.panel.study.name == step.study:
        other = next(name for name in window.panels if name != step.study)
        window.study_box.setCurrentIndex(window.study_box.findData(other))
    window.study_box.setCurrentIndex(window.study_box.findData(step.study))
    window.case_box.setCurrentText(step.case)
    window.size_box.setValue(step.size)
    chosen = dict(step.variants)
    for axis in window.study.axes:
        window.axis_boxes[axis.name].setCurrentText(chosen.get(axis.name, axis.default))
    if step.changes:
        data = window.problem_data
        for key, value in step.changes:
            data = set_dotted(data, key, value)
        window._show_problem(data, None, case_boundaries(step.case))


def compare(window, step: Step) -> None:
    from PySide6.QtCore import Qt  # noqa: PLC0415

    axis, choices = step.compare
    window.compare_axis.setCurrentText(axis)
    for i in range(window.compare_choices.count()):
        item = window.compare_choices.item(i)
        item.setCheckState(Qt.Checked if item.text() in choices else Qt.Unchecked)
    window.compare_button.click()
    wait_until(window.compare_button.isEnabled)


def cancelled_solve(window, step: Step) -> None:
    """Solve, and press Cancel once the solver reports its first iterations."""
    window.solve_button.click()
    wait_until(lambda: "iteration" in window.status.text() or window.solve_button.isEnabled())
    window.cancel_button.click()
    wait_until(window.solve_button.isEnabled)
    if window.status.text() != "cancelled":
        raise RuntimeError(f"the solve to cancel ended otherwise: {window.status.text()}")


def sweep(window, step: Step, scheduler: str, out: Path) -> None:
    """Tools > Sweep on the current problem: the step's key over its values on the scheduler; then closed."""
    key, values = step.sweep
    window.open_sweep()
    panel = window.sweep_panel
    panel.key_boxes[0].setCurrentText(key)
    panel.value_edits[0].setText(", ".join(f"{v:g}" for v in values))
    panel.scheduler_edit.setText(scheduler)
    panel.out_edit.setText(str(out))
    panel.run_button.click()
    wait_until(panel.run_button.isEnabled)
    status = panel.status.text()
    panel.close()
    if f"{len(values)} done" not in status:
        raise RuntimeError(f"the sweep did not finish: {status}")


def run_step(window, step: Step, scheduler: str, out: Path) -> None:
    """One job of the cycle in the window; RuntimeError names a job that did not end as it should."""
    switch_to(window, step)
    if step.action == "compare":
        compare(window, step)
    elif step.action == "cancel":
        cancelled_solve(window, step)
    elif step.action == "sweep":
        sweep(window, step, scheduler, out)
    else:
        window.solve_button.click()
        wait_until(window.solve_button.isEnabled)
        if window.last_result is None:
            raise RuntimeError(f"{step.label}: the solve gave no result ({window.status.text()})")


def run_window_cycle(window, jobs: int, scheduler: str, errors: list, on_sample: Callable[[Sample], None],
                     steps=ROUND) -> list[Sample]:
    """`jobs` jobs of the cycle in the window; after each, a full collection in the window's thread (as its
    own collector would do within a second) and a sample. errors: where the window's dialogs go; one
    stops the run (RuntimeError), as a job that ends otherwise than it should."""
    from PySide6 import QtCore, QtWidgets  # noqa: PLC0415

    samples = []
    with tempfile.TemporaryDirectory(prefix="paraflux-soak-") as folder:
        for job in range(1, jobs + 1):
            step = steps[(job - 1) % len(steps)]
            run_step(window, step, scheduler, Path(folder) / f"sweep-{job}")
            QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
            gc.collect()
            if errors:
                raise RuntimeError(f"job {job} ({step.label}): {errors[-1]}")
            samples.append(sample(job, step.label))
            on_sample(samples[-1])
    return samples


def window_soak(jobs: int, on_sample: Callable[[Sample], None], steps=ROUND) -> list[Sample]:
    """The cycle (`steps`) in a new window at 1366x768 (needs a display: xvfb-run where there is none), with an
    in-process Dask cluster for its sweeps."""
    from distributed import LocalCluster  # noqa: PLC0415
    from PySide6 import QtWidgets  # noqa: PLC0415

    from . import gui_thread_gc  # noqa: PLC0415
    from .main import MainWindow  # noqa: PLC0415

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    gui_thread_gc.install(app)
    window = MainWindow(remember_layout=False)
    errors: list[str] = []
    window.show_error = errors.append  # said in the run's error, not in a modal dialog
    window.resize(1366, 768)
    window.show()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        try:
            return run_window_cycle(window, jobs, cluster.scheduler_address, errors, on_sample, steps)
        finally:
            window.close()


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    from paraflux.engine.soak import SOAK_JOBS, WORKER_POINTS  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m paraflux.app.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=SOAK_JOBS, help="jobs of the mixed cycle (0: none)")
    parser.add_argument("--engine", action="store_true",
                        help="run the cycle through the studies alone, without the window (a GPU machine without Qt)")
    parser.add_argument("--worker-points", type=int, default=WORKER_POINTS,
                        help="sweep points on one Dask worker (0: none)")
    parser.add_argument("--out", type=Path, default=Path("docs/soak"), help="folder of the records (JSON, PNG)")
    parser.add_argument("--page", type=Path, default=Path("docs/soak.md"), help="the Markdown page written from them")
    return parser.parse_args(argv)


def _cycle(args: argparse.Namespace) -> None:
    """The mixed cycle (on the GPU where there is one), its record and page rewritten after every round."""
    from paraflux.engine import soak_report  # noqa: PLC0415
    from paraflux.engine.backend import gpu_available  # noqa: PLC0415
    from paraflux.engine.soak import gpu_round, run_engine_cycle  # noqa: PLC0415

    kind, start, samples = "engine" if args.engine else "window", time.monotonic(), []
    header = soak_report.run_header(kind, args.jobs)

    def record(s: Sample) -> None:
        device = "" if s.device_mib is None else f", device {s.device_mib:.0f} MiB (pool {s.pool_mib:.0f})"
        print(f"job {s.job} {s.label}: RSS {s.rss_mib:.0f} MiB{device}", flush=True)
        samples.append(s)
        if s.job % len(ROUND) == 0 or s.job == args.jobs:
            soak_report.save_cycle(args.out, header, samples, time.monotonic() - start)
            soak_report.write_page(args.out, args.page)

    steps = gpu_round() if gpu_available() else ROUND
    (run_engine_cycle if args.engine else window_soak)(args.jobs, record, steps)


def _worker(args: argparse.Namespace) -> None:
    """The Dask worker's curve, its record and page rewritten every 10 points."""
    from paraflux.engine import soak_report  # noqa: PLC0415
    from paraflux.engine.backend import gpu_available  # noqa: PLC0415
    from paraflux.engine.soak import worker_curve  # noqa: PLC0415

    start, curve, header = time.monotonic(), [], soak_report.run_header("worker", args.worker_points)

    def point(n: int, rss: float) -> None:
        print(f"point {n}: worker RSS {rss:.0f} MiB", flush=True)
        curve.append(rss)
        if n % 10 == 0 or n == args.worker_points:
            device = "gpu" if gpu_available() else "cpu"
            soak_report.save_worker(args.out, header, curve, time.monotonic() - start, device)
            soak_report.write_page(args.out, args.page)

    worker_curve(args.worker_points, point)


def main(argv: list[str] | None = None) -> int:
    """python -m paraflux.app.soak [--jobs N] [--engine] [--worker-points N] [--out DIR] [--page MD]: the record
    and the page are rewritten after every round (every 10 points), so a stopped run leaves what it measured;
    with --jobs 0 --worker-points 0 only the page is written, from the records in DIR."""
    from paraflux.engine import soak_report  # noqa: PLC0415

    args = _arguments(argv)
    if args.jobs:
        _cycle(args)
    if args.worker_points:
        _worker(args)
    soak_report.write_page(args.out, args.page)
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
