"""The soak's record (engine/soak.py, app/soak.py): each run's samples as JSON beside its memory curve (PNG),
and docs/soak.md written from every record in the folder, with each target's measurement and verdict."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .output import write_text_atomic
from .soak import (DEVICE_TARGET_MIB, ROUND, SOAK_JOBS, WINDOW_TARGET_MIB, WORKER_POINTS, WORKER_TARGET_MIB,
                   WORKER_WARMUP, Sample, slope_mib_per_job)

TITLES = {"window": "The window, mixed cycle", "engine": "The studies without the window, mixed cycle",
          "worker": "A Dask worker solving sweep points"}


@dataclass(frozen=True)
class Verdict:
    """One target: what it asks, what was measured, and "met", "MISSED" or "not measured" (the run stopped
    before the jobs or points the target names)."""

    target: str
    measured: str
    status: str


def _status(met: bool, done: int, needed: int) -> str:
    return "not measured" if done < needed else "met" if met else "MISSED"


def _commit() -> str:
    if os.environ.get("PARAFLUX_COMMIT"):
        return os.environ["PARAFLUX_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_header(kind: str, planned: int) -> dict:
    """What a record says of its run, taken as it starts: kind, the commit it ran, when, where, the jobs (or
    points) planned."""
    return {"kind": kind, "commit": _commit(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "host": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "planned": planned}


def save_cycle(out: Path, header: dict, samples: list[Sample], seconds: float) -> Path:
    """Record a cycle's samples so far as OUT/<kind>-<cpu|gpu>.json with its curve beside it; the JSON's path."""
    device = "gpu" if any(s.device_mib is not None for s in samples) else "cpu"
    record = {**header, "seconds": round(seconds, 1), "device": device, "round": [s.label for s in ROUND],
              "samples": [asdict(s) for s in samples]}
    return _save(out, f"{header['kind']}-{device}", record)


def save_worker(out: Path, header: dict, curve: list[float], seconds: float, device: str) -> Path:
    """Record a worker's resident memory after each sweep point so far as OUT/worker-<cpu|gpu>.json with its
    curve (device: where its points ran)."""
    return _save(out, f"worker-{device}", {**header, "seconds": round(seconds, 1), "device": device,
                                           "rss_mib": [round(v, 1) for v in curve]})


def _save(out: Path, name: str, record: dict) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    write_text_atomic(path, json.dumps(record, indent=1) + "\n")
    figure = curve_figure(record)
    figure.savefig(out / f"{name}.png", dpi=100)
    return path


def cycle_verdicts(record: dict) -> list[Verdict]:
    """The window's (or the studies') targets: resident memory after every job past the first round at most
    WINDOW_TARGET_MIB above its value after the first round; on a GPU, device memory within DEVICE_TARGET_MIB."""
    samples, first = record["samples"], len(record["round"])
    if len(samples) <= first:
        return [Verdict("more than one round of the cycle", f"{len(samples)} jobs", "not measured")]
    rss = np.array([s["rss_mib"] for s in samples])
    growth = rss[first:].max() - rss[first - 1]
    slope = slope_mib_per_job(rss, first)
    verdicts = [Verdict(f"{SOAK_JOBS} mixed jobs: resident memory at most {WINDOW_TARGET_MIB:g} MiB above its "
                        f"value after the first round ({rss[first - 1]:.0f} MiB)",
                        f"{len(samples)} jobs: largest {growth:+.1f} MiB (last {rss[-1] - rss[first - 1]:+.1f} MiB; "
                        f"least-squares slope {slope:+.3f} MiB per job after the first round)",
                        _status(growth <= WINDOW_TARGET_MIB, len(samples), SOAK_JOBS))]
    if record["device"] == "gpu":  # a cycle's record (a worker's has no device curve)
        device = np.array([s["device_mib"] for s in samples])
        pool = np.array([s["pool_mib"] for s in samples])
        worst = np.abs(device[first:] - device[first - 1]).max()
        verdicts.append(Verdict(f"device memory after each job within {DEVICE_TARGET_MIB:g} MiB of its value after "
                                f"the first round ({device[first - 1]:.0f} MiB)",
                                f"largest difference {worst:.1f} MiB; CuPy's pool held at most {pool.max():.1f} MiB "
                                "after a job", _status(worst <= DEVICE_TARGET_MIB, len(samples), SOAK_JOBS)))
    return verdicts


def worker_verdicts(record: dict) -> list[Verdict]:
    """A worker's resident memory after its last point at most WORKER_TARGET_MIB above its value after
    WORKER_WARMUP points (the largest after the warm-up is what counts)."""
    rss = np.array(record["rss_mib"])
    if len(rss) <= WORKER_WARMUP:
        return [Verdict(f"more than {WORKER_WARMUP} points", f"{len(rss)} points", "not measured")]
    growth = rss[WORKER_WARMUP:].max() - rss[WORKER_WARMUP - 1]
    return [Verdict(f"a Dask worker after {WORKER_POINTS} sweep points: resident memory at most "
                    f"{WORKER_TARGET_MIB:g} MiB above its value after the first {WORKER_WARMUP} "
                    f"({rss[WORKER_WARMUP - 1]:.0f} MiB)",
                    f"{len(rss)} points: largest {growth:+.1f} MiB (last {rss[-1] - rss[WORKER_WARMUP - 1]:+.1f} MiB; "
                    f"slope {slope_mib_per_job(rss, WORKER_WARMUP):+.3f} MiB per point after the warm-up)",
                    _status(growth <= WORKER_TARGET_MIB, len(rss), WORKER_POINTS))]


def curve_figure(record: dict) -> Figure:
    """Resident memory against job (or point), and on a GPU the device's memory and CuPy's pool below it,
    with the first round's (warm-up's) value and the target above it."""
    worker = record["kind"] == "worker"
    rss = np.array(record["rss_mib"] if worker else [s["rss_mib"] for s in record["samples"]])
    first = WORKER_WARMUP if worker else len(record["round"])
    gpu = record["device"] == "gpu" and not worker
    figure = Figure(figsize=(8, 6.5 if gpu else 4), layout="constrained")
    axes = figure.subplots(2 if gpu else 1, 1, sharex=True, squeeze=False)[:, 0]
    x = np.arange(1, len(rss) + 1)
    _curve(axes[0], x, rss, first, WORKER_TARGET_MIB if worker else WINDOW_TARGET_MIB, "resident memory (MiB)")
    if gpu:
        device = np.array([s["device_mib"] for s in record["samples"]])
        _curve(axes[1], x, device, first, DEVICE_TARGET_MIB, "device memory in use (MiB)")
        axes[1].plot(x, [s["pool_mib"] for s in record["samples"]], color="tab:green", label="CuPy pool held")
        axes[1].legend(loc="center right", fontsize="small")
    axes[-1].set_xlabel("sweep point" if worker else "job (solve, compare, cancelled solve or sweep)")
    axes[0].set_title(f"{TITLES[record['kind']]}: {len(rss)} {'points' if worker else 'jobs'}, "
                      f"{record['device'].upper()}, commit {record['commit']}", fontsize="medium")
    return figure


def _curve(ax, x, y, first: int, target: float, label: str) -> None:
    ax.plot(x, y, color="tab:blue", marker=".", markersize=3, linewidth=1.0)
    if len(y) >= first:
        ax.axhline(y[first - 1] + target, color="tab:red", linestyle="--", linewidth=1.0)
        ax.axhline(y[first - 1], color="gray", linestyle=":", linewidth=1.0)
        ax.axvline(first, color="gray", linestyle=":", linewidth=1.0)
    ax.set_ylabel(label)
    ax.grid(True, alpha=0.3)


def write_page(out: Path, page: Path) -> Path:
    """docs/soak.md from every record in out: per record its curve, the targets, what was measured and the
    verdict, as the soak command measured them."""
    lines = [line for path in sorted(out.glob("*.json")) for line in _section(json.loads(path.read_text()),
                                                                              path, page.parent)]
    write_text_atomic(page, PAGE_HEAD + "\n".join(lines) + "\n")
    return page


def _done(record: dict) -> str:
    return f"{len(record['rss_mib'])} points" if record["kind"] == "worker" else f"{len(record['samples'])} jobs"


def _section(record: dict, path: Path, page_dir: Path) -> list[str]:
    verdicts = worker_verdicts(record) if record["kind"] == "worker" else cycle_verdicts(record)
    image = os.path.relpath(path.with_suffix(".png"), page_dir)
    return [f"## {TITLES[record['kind']]} ({record['device'].upper()})", "",
            f"Started {record['date']} at commit {record['commit']} on {record['host']}; {_done(record)} of "
            f"{record['planned']} in {record['seconds']:,.0f} s.",
            "", f"![{TITLES[record['kind']]}]({image})", "", "| target | measured | verdict |", "|---|---|---|",
            *[f"| {v.target} | {v.measured} | {v.status} |" for v in verdicts], ""]


PAGE_HEAD = """# Memory over a long session

Written by `python -m paraflux.app.soak` (`make soak`), never by hand: each section below is one run's record
in [soak/](soak/) (JSON beside its curve). The mixed cycle (engine/soak.py's `ROUND`) runs every study at a
small size with a study switch before each job: magnetostatics (open-slot, 1,500 elements), elasticity
(cantilever), truncation (sphere-in-box, S of 300 triangles), a Compare of two magnetostatic methods, the BEM
bar (200 elements), scattering (pec-sphere at 150 MHz, Nedelec order 1), a magnetostatic solve cancelled at its first
iterations, and a two-point sweep in the Sweep panel. Memory is sampled after each job, after a full garbage
collection in the window's thread. The worker's curve is a one-process Dask cluster solving open-slot sweep
points one after another, its memory measured inside the worker after each point.

Targets: 500 mixed jobs, resident memory at most 100 MiB above its value after the first round; on a GPU,
device memory after each job within 64 MiB of its value after the first round (the CUDA context, libraries
and kernels are loaded by then); a Dask worker after 200 points at most 100 MiB above its value after the
first 10. [window.md](window.md#memory-over-a-long-session) says how to run it.

"""
