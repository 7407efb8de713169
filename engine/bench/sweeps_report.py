"""Markdown for the sweeps benchmark (engine/bench/sweeps.py): wall time, speed-up and efficiency per
cluster, the RCS checked against Mie and against one worker, and the scheduler's overhead per task."""

from __future__ import annotations

import math
import statistics

from ..truncation.fields import C0
from .report import header, page, row, table


def _reference(runs: list[dict], kind: str) -> dict | None:
    return next((r for r in runs if r["kind"] == kind and r["workers"] == 1), None)


def _largest_difference_db(run: dict, ref: dict | None) -> str:
    """Largest |dB| between this run's co-polarised RCS and the one-host-worker run's, point by point."""
    if ref is None:
        return "no reference run"
    table = {(r["frequency"], r["theta"], r["phi"]): r["co_dbsm"] for r in ref["rows"]}
    diffs = [abs(r["co_dbsm"] - table[k]) for r in run["rows"] if (k := (r["frequency"], r["theta"], r["phi"])) in table]
    return f"{max(diffs):.1e}" if diffs else "no common points"


def _where(kind: str, n: int) -> str:
    return f"{n} {'GPU' if kind == 'gpu' else 'host'} worker{'s' if n > 1 else ''}"


def _run_row(run: dict, runs: list[dict], mie_db: float) -> str:
    host1, same1 = _reference(runs, "host"), _reference(runs, run["kind"])
    points = len(run["point_s"])
    speedup = f"{host1['wall_s'] / run['wall_s']:.2f}" if host1 else "-"
    eff = f"{same1['wall_s'] / (run['workers'] * run['wall_s']):.0%}" if same1 else "-"
    where = _where(run["kind"], run["workers"])
    if run.get("from_run"):
        where += f" (run of {run['from_run']})"
    return row([where, ", ".join(run["backends"]), f"{run['wall_s']:.1f}", f"{points / run['wall_s']:.2f}",
                f"{statistics.median(run['point_s']):.2f}", speedup, eff, _largest_difference_db(run, host1),
                f"{mie_db:.2f}", run["failed"], f"{run['load_before']:.1f}"])


def render_markdown(data: dict) -> str:
    from .sweeps import mie_error_db  # noqa: PLC0415 (numbers, not rendering)

    cfg, runs = data["config"], data["runs"]
    f0, f1 = cfg["f_start_mhz"], cfg["f_start_mhz"] + cfg["f_step_mhz"] * (cfg["frequencies"] - 1)
    lines = [
        *header(f"Sweeps: a {cfg['frequencies']}-frequency RCS sweep of the PEC sphere on Dask",
                f"- Host: {data['host_threads']} threads ({data['host_cpu']}), {data['gpus_present']} GPU(s); "
                f"distributed {data['distributed']}", data),
        f"- Sweep: {cfg['frequencies']} frequencies {f0:g}-{f1:g} MHz, sphere radius {cfg['radius_m']} m "
        f"(ka {2 * math.pi * f0 * 1e6 * cfg['radius_m'] / C0:.2f}-"
        f"{2 * math.pi * f1 * 1e6 * cfg['radius_m'] / C0:.2f}), resources/problems/pec-sphere.toml's solver "
        f"settings, far field every {cfg['theta_step_deg']:g} deg in the E- and H-plane; one task per frequency "
        "(mesh, assemble, factorise, iterate, write).",
        "- Host workers are single-threaded processes (Dask sets OMP/OpenBLAS threads to 1 in each); a GPU "
        "worker is one process pinned to its GPU (dask-cuda's LocalCUDACluster), the study's backend `auto` "
        "putting the truncation operator on that GPU; meshing and the sparse factorisation stay on its one "
        "host thread.",
        "- Wall: from submitting the points to the combined table and plots written, on a cluster already "
        "started with the engine imported in every worker. Efficiency: against one worker of the same kind "
        "(the ceiling is perfect scaling, 100%). Speed-up: against one host worker. Host load before: the "
        "one-minute load average when the run started (other work on the host slows it).", "",
        *table(["where", "backend", "wall, s", "points/s", "median point, s", "speed-up", "efficiency",
                "largest RCS difference from 1 host worker, dB", "largest error vs Mie, dB", "failed",
                "host load before"], "ll" + "r" * 9)]
    lines += [_run_row(r, runs, mie_error_db(r["rows"], cfg["radius_m"])) for r in runs]
    lines += [row([_where(n["kind"], n["workers"]), f"not run: {n['why']}", *[""] * 9]) for n in data["not_run"]]
    lines += ["", "Scheduler overhead per task, empty tasks on the same clusters after the sweep (batch: all "
              "submitted at once and gathered, wall / tasks; round trip: one task alone, median of 50):", "",
              *table(["where", "batch, ms per task", "round trip, ms"], "lrr",
                     [(_where(r["kind"], r["workers"]), f"{1e3 * r['overhead_batch_s']:.2f}",
                       f"{1e3 * r['overhead_round_trip_s']:.2f}") for r in runs])]
    on_gpu = [_where(r["kind"], r["workers"]) for r in runs if r["kind"] == "host" and "cupy" in r["backends"]]
    if on_gpu:
        lines += ["", f"On this machine the host workers of this run ({', '.join(on_gpu)}) saw its GPUs, and the "
                  "study's backend `auto` put their truncation operator on GPU 0 (backend column): those rows are "
                  "not CPU-only, and the many host workers shared one GPU. Runs since hide the GPUs from host "
                  "workers (CUDA_VISIBLE_DEVICES empty), so their host rows run on the CPU alone."]
    failed = [m for r in runs for m in r["messages"]]
    if failed:
        lines += ["", "Failed points (first messages): " + "; ".join(failed)]
    return page(lines)
