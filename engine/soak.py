"""Memory over a long session (issue 51), without Qt: the mixed cycle of a working day as a list of jobs, the
process's resident memory and the devices' memory sampled after each job, a Dask worker's resident memory over
hundreds of sweep points, and the targets they are judged by. app/soak.py runs the cycle in the window;
run_engine_cycle runs it through the studies alone (a GPU machine without the GUI packages);
`python -m paraflux.app.soak` writes the curves and docs/soak.md (engine/soak_report.py)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from .backend import device_memory_use, release_job_memory
from .errors import Cancelled
from .problems import load_case_problem, parse_problem, problem_as_dict
from .run_control import RunControl
from .studies import STUDIES
from .studies.compare import compare_variants
from .sweep.spec import set_dotted

MIB = 2**20
SOAK_JOBS = 500  # the mixed jobs the window's target is stated for
WINDOW_TARGET_MIB = 100.0  # resident memory after any later job at most this above its value after the first round
DEVICE_TARGET_MIB = 64.0  # device memory after each job within this of its value after the first round
WORKER_TARGET_MIB = 100.0  # a Dask worker's resident memory after WORKER_POINTS points at most this above ...
WORKER_POINTS, WORKER_WARMUP = 200, 10  # ... its value after the first WORKER_WARMUP points


@dataclass(frozen=True)
class Step:
    """One job of the cycle. action: "solve", "compare" (compare = (axis, choices)), "cancel" (a solve cancelled
    at its cancel_after-th iteration report) or "sweep" (a small sweep of sweep = (key, values) in the Sweep
    panel). size: the case's element count (the window's Elements box; 0: the case's own); changes: (dotted
    problem key, value) pairs set before it runs; variants: (axis, choice) pairs."""

    label: str
    action: str
    study: str
    case: str
    size: int = 0
    changes: tuple = ()
    variants: tuple = ()
    compare: tuple = ()
    sweep: tuple = ()
    cancel_after: int = 1


# every study at a small size, a study switch before each job, a Compare, a cancelled solve and a sweep
ROUND = (
    Step("magnetostatics", "solve", "magnetostatic", "open-slot", 1500),
    Step("elasticity", "solve", "elasticity", "cantilever"),
    Step("truncation", "solve", "truncation", "sphere-in-box", 300, variants=(("quadrature", "3"),)),
    Step("compare", "compare", "magnetostatic", "open-slot", 1500, compare=("method", ("ebe-jpcg", "sparse-direct"))),
    Step("bem", "solve", "elastostatic-bem", "bar", 200),
    Step("scattering", "solve", "scattering", "pec-sphere", changes=(("problem.frequency", 150e6), ("solver.order", 1)),
         variants=(("acceleration", "gmres"),)),
    Step("cancelled", "cancel", "magnetostatic", "transformer", 20000, variants=(("reduction", "adjacent"),)),
    Step("sweep", "sweep", "magnetostatic", "open-slot", 200, sweep=("boundaries.AB.value", (600.0, 700.0))),
)

GPU_VARIANTS = {"magnetostatic": (("backend", "cupy"),), "elasticity": (("backend", "cupy"), ("integration", "ai")),
                "truncation": (("loop", "cuda-s"),), "elastostatic-bem": (("backend", "cupy"),),
                "scattering": (("loop", "cuda-s"),)}  # what a GPU cycle adds to each step's variants


def gpu_round(steps=ROUND) -> tuple[Step, ...]:
    """The cycle with every study on the GPU (GPU_VARIANTS added to each step's variants)."""
    return tuple(replace(step, variants=(*step.variants, *GPU_VARIANTS.get(step.study, ()))) for step in steps)


@dataclass(frozen=True)
class Sample:
    """Memory after job `job` (1-based) of kind `label`: resident memory of this process and, where CuPy runs a
    device, the devices' memory in use (driver's view) and what CuPy's default pool holds, all in MiB."""

    job: int
    label: str
    rss_mib: float
    device_mib: float | None = None
    pool_mib: float | None = None


def rss_mib() -> float:
    """This process's resident memory in MiB (Linux's /proc/self/statm, else psutil, distributed's dependency)."""
    statm = Path("/proc/self/statm")
    if statm.exists():
        return int(statm.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB
    import psutil  # noqa: PLC0415

    return psutil.Process().memory_info().rss / MIB


def sample(job: int, label: str) -> Sample:
    """Memory now, after job `job`."""
    device = device_memory_use()
    if device is None:
        return Sample(job, label, rss_mib())
    return Sample(job, label, rss_mib(), device.device_used / MIB, device.pool_held / MIB)


def step_problem(step: Step):
    """The step's problem: its case at its size with its changes and variants (engine objects, no window)."""
    data = problem_as_dict(load_case_problem(step.case, step.size or None))
    for key, value in step.changes:
        data = set_dotted(data, key, value)
    study = STUDIES[step.study]
    return study, study.with_variants(parse_problem(data, Path.cwd()), dict(step.variants))


def cancel_after(reports: int) -> RunControl:
    """A RunControl whose cancel() turns true once the solver reported `reports` iterations (as a user presses
    Cancel while the residual falls)."""
    count = [0]

    def progress(fraction: float, message: str) -> None:
        count[0] += "iteration" in message

    return RunControl(progress=progress, cancel=lambda: count[0] >= reports)


def run_engine_step(step: Step) -> None:
    """One job through the studies alone, its memory released at its end as the window's job thread does.
    A sweep step runs as a solve here (the Dask worker has its own curve)."""
    study, problem = step_problem(step)
    try:
        if step.action == "compare":
            axis, choices = step.compare
            compare_variants(study, problem, study.compare_sets(axis, list(choices)), RunControl())
        elif step.action == "cancel":
            try:
                study.run(problem, cancel_after(step.cancel_after))
            except Cancelled:
                return
            raise RuntimeError(f"{step.label}: the solve ended before it was cancelled")
        else:
            study.run(problem, RunControl())
    finally:
        release_job_memory()


def run_engine_cycle(jobs: int, on_sample: Callable[[Sample], None], steps=ROUND) -> list[Sample]:
    """`jobs` jobs of the cycle through the studies alone; on_sample(each sample) as it comes."""
    samples = []
    for job in range(1, jobs + 1):
        step = steps[(job - 1) % len(steps)]
        run_engine_step(step)
        samples.append(sample(job, step.label))
        on_sample(samples[-1])
    return samples


def slope_mib_per_job(values, warmup: int) -> float:
    """Least-squares growth (MiB per job) of values (MiB after each job) over the jobs after the first warmup."""
    y = np.asarray(values[warmup:], dtype=float)
    if len(y) < 2:
        return 0.0
    return float(np.polyfit(np.arange(len(y), dtype=float), y, 1)[0])


def floor_slope_mib_per_job(values, per_round: int, warmup_rounds: int) -> float:
    """Least-squares growth (MiB per job) of each round's lowest value (values: MiB after each job, per_round
    jobs a round) over the rounds after the first warmup_rounds: what a round keeps, without the transient peaks
    of the steps within a round (a Compare, a sweep), which move a per-job fit by more than a small leak."""
    rounds = len(values) // per_round
    floors = [min(values[r * per_round:(r + 1) * per_round]) for r in range(warmup_rounds, rounds)]
    return slope_mib_per_job(floors, 0) / per_round


def measured_point(point, points_dir: str) -> tuple[str, float]:
    """Run one sweep point as a sweep task does (engine/sweep/task.run_point), then this worker's resident
    memory (MiB): (status, rss)."""
    from .sweep.task import run_point  # noqa: PLC0415

    return run_point(point, points_dir).status, rss_mib()


def worker_sweep(points: int, size: int = 1500):
    """A sweep of open-slot's potential on AB over `points` values (SweepSpec) for the worker's curve."""
    from .sweep.spec import parse_sweep  # noqa: PLC0415

    base = problem_as_dict(load_case_problem("open-slot", size))
    axis = {"key": "boundaries.AB.value", "values": [float(v) for v in np.linspace(100.0, 1000.0, points)]}
    return parse_sweep({"sweep": {}, "base": base, "axes": [axis]}, Path.cwd())


def worker_curve(points: int, on_point: Callable[[int, float], None]) -> list[float]:
    """A Dask worker (a LocalCluster of one single-threaded process, made by the sweep's make_client) solving
    `points` sweep points one after another: its resident memory in MiB after each, measured inside it."""
    from distributed import as_completed  # noqa: PLC0415

    from .sweep import close_client, grid_points, make_client  # noqa: PLC0415

    client = make_client(None, 1, 0)
    curve = []
    try:
        with tempfile.TemporaryDirectory(prefix="paraflux-soak-") as folder:
            futures = [client.submit(measured_point, p, folder, pure=False) for p in grid_points(worker_sweep(points))]
            for future in as_completed(futures):  # one thread: they finish in order
                status, rss = future.result()
                future.release()
                curve.append(rss)
                on_point(len(curve), rss)
    finally:
        close_client(client)
    return curve
