"""Benchmark: a 64-frequency bistatic RCS sweep of the PEC sphere (engine/sweep on Dask) on 1, 2 and all host
workers and on 1 and 2 GPUs (LocalCUDACluster, one worker per GPU), with the speed-up and efficiency against
one worker, every point's RCS checked against the Mie series and against the one-worker run, and the
scheduler's overhead per task measured with empty tasks on the same clusters."""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib import import_module
from pathlib import Path

import numpy as np

from ..problems.toml_input import read_toml
from ..scattering.mie import pec_sphere_rcs
from ..scattering.waves import dbsm
from ..truncation.fields import C0
from ..sweep.runner import run_sweep
from ..sweep.spec import SweepSpec, parse_sweep
from .environment import run_facts
from .options import add_merge, given, listed, tuple_of, whole
from .sweep_overhead import batch_seconds_per_task, round_trip_seconds

SPHERE = Path(__file__).resolve().parents[2] / "resources" / "problems" / "pec-sphere.toml"


@dataclass(frozen=True)
class SweepsBenchConfig:
    """The sweep: `frequencies` points from f_start_mhz in steps of f_step_mhz, a sphere of radius_m metres,
    far field every theta_step_deg in the E- and H-plane. Where it runs: host worker counts (0: one per host
    core) and GPU counts (more than the machine has: recorded as not run). Empty tasks for the overhead."""

    frequencies: int = 64
    f_start_mhz: float = 300.0
    f_step_mhz: float = 5.0
    radius_m: float = 0.1
    theta_step_deg: float = 10.0
    host_workers: tuple[int, ...] = (1, 2, 0)
    gpus: tuple[int, ...] = (1, 2)
    overhead_tasks: int = 500


def sphere_sweep(cfg: SweepsBenchConfig) -> SweepSpec:
    """The PEC sphere example (resources/problems/pec-sphere.toml) at radius_m over the frequencies."""
    base = read_toml(SPHERE)
    base["geometry"]["radius"] = cfg.radius_m
    base["far_field"]["theta_deg"] = {"start": 0.0, "stop": 180.0, "step": cfg.theta_step_deg}
    freqs = [1e6 * (cfg.f_start_mhz + cfg.f_step_mhz * i) for i in range(cfg.frequencies)]
    return parse_sweep({"sweep": {"retries": 2}, "base": base,
                        "axes": [{"key": "problem.frequency", "values": freqs}]}, SPHERE.parent)


def _cluster(kind: str, n: int):
    """A local cluster of n single-threaded worker processes that see no GPU ("host") or one worker per GPU
    ("gpu")."""
    if kind == "gpu":
        from dask_cuda import LocalCUDACluster  # noqa: PLC0415

        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, range(n))), n_workers=n,
                                dashboard_address=":0")
    from distributed import LocalCluster  # noqa: PLC0415

    return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                        env={"CUDA_VISIBLE_DEVICES": ""})  # host rows are CPU-only on a GPU machine too


def _import_engine() -> None:
    """Run in every worker before the clock starts: the engine's imports are not a point's cost."""
    import_module("..studies.scattering", __package__)


def point_rows(outcomes) -> list[dict]:
    """Per point: frequency (Hz), theta (deg), phi (deg), the co-polarised RCS (dBsm; sigma_theta in the
    E-plane phi = 0, sigma_phi in the H-plane phi = 90)."""
    rows = []
    for o in outcomes:
        for r in o.rows:
            co = r["sigma_theta_dbsm"] if r["phi_deg"] == 0.0 else r["sigma_phi_dbsm"]
            rows.append({"frequency": o.values["problem.frequency"], "theta": r["theta_deg"], "phi": r["phi_deg"],
                         "co_dbsm": co})
    return rows


def mie_error_db(rows: list[dict], radius: float) -> float:
    """Largest |dB error| of the co-polarised RCS against Mie, per frequency and plane where Mie is within
    20 dB of that cut's peak."""
    worst = 0.0
    for f in sorted({r["frequency"] for r in rows}):
        for phi, which in ((0.0, 0), (90.0, 1)):
            cut = [r for r in rows if r["frequency"] == f and r["phi"] == phi]
            theta = np.array([r["theta"] for r in cut])
            ref = dbsm(pec_sphere_rcs(radius, 2 * math.pi * f / C0, theta)[which])
            near = ref > ref.max() - 20
            ours = np.array([r["co_dbsm"] for r in cut])
            worst = max(worst, float(np.abs(ours - ref)[near].max()))
    return worst


def timed_sweep(spec: SweepSpec, kind: str, n: int, overhead_tasks: int, log) -> dict:
    """One sweep on a fresh cluster (engine imported in every worker first): wall seconds, each point's
    seconds on its worker, the backend the points ran on, the RCS rows, and the empty-task overhead."""
    from distributed import Client  # noqa: PLC0415

    out = Path(tempfile.mkdtemp(prefix="paraflux-sweep-bench-"))
    try:
        with _cluster(kind, n) as cluster, Client(cluster) as client:
            client.run(_import_engine)
            load = os.getloadavg()[0]
            start = time.perf_counter()
            report = run_sweep(spec, out, client)
            wall = time.perf_counter() - start
            batch, trip = batch_seconds_per_task(client, overhead_tasks), round_trip_seconds(client)
        backends = sorted({json.loads((p / "summary.json").read_text()).get("backend", "?")
                           for p in (out / "points").iterdir() if (p / "summary.json").is_file()})
    finally:
        shutil.rmtree(out, ignore_errors=True)
    seconds = [o.seconds for o in report.outcomes]
    log(f"{n} {kind} worker(s): {wall:.1f} s for {len(seconds)} points ({len(report.failed)} failed), "
        f"median point {statistics.median(seconds):.2f} s on {', '.join(backends)}")
    return {"kind": kind, "workers": n, "wall_s": wall, "point_s": seconds, "failed": len(report.failed),
            "messages": [o.message for o in report.failed][:3], "backends": backends,
            "rows": point_rows(report.outcomes), "load_before": load,
            "overhead_batch_s": batch, "overhead_round_trip_s": trip}


def _gpu_count() -> int:
    try:
        import cupy as cp  # noqa: PLC0415

        return int(cp.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy or no driver: no GPU rows
        return 0


def run_sweeps_benchmark(cfg: SweepsBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    """Every configured cluster in turn (host worker counts, then GPU counts the machine has)."""
    import distributed  # noqa: PLC0415

    spec, gpus_present = sphere_sweep(cfg), _gpu_count()
    data = {"benchmark": "sweeps", **run_facts(command), "config": asdict(cfg), "host_threads": os.cpu_count(),
            "gpus_present": gpus_present, "distributed": distributed.__version__, "runs": [], "not_run": []}
    plan = list(dict.fromkeys([("host", n or os.cpu_count()) for n in cfg.host_workers]  # "all" may be 2
                              + [("gpu", n) for n in cfg.gpus if n]))
    for kind, n in plan:
        if kind == "gpu" and n > gpus_present:
            data["not_run"].append({"kind": kind, "workers": n, "why": f"this machine has {gpus_present} GPU(s)"})
            continue
        data["runs"].append(timed_sweep(spec, kind, n, cfg.overhead_tasks, log))
        checkpoint(data)
    return data


def merge(data: dict, earlier: dict) -> dict:
    """This run joined with an earlier one (--merge): the earlier run's clusters that this run did not time
    (kept with their own date and device), and its not-run notes for counts still not run."""
    out = dict(data)
    have = {(r["kind"], r["workers"]) for r in data["runs"]}
    extra = [{**r, "from_run": earlier.get("date")} for r in earlier.get("runs", [])
             if (r["kind"], r["workers"]) not in have]
    out["runs"] = data["runs"] + extra
    have |= {(r["kind"], r["workers"]) for r in extra}
    not_run = {(n["kind"], n["workers"]): n for n in earlier.get("not_run", []) + data["not_run"]}
    out["not_run"] = [n for key, n in not_run.items() if key not in have]
    out["earlier_run"] = {k: earlier.get(k) for k in ("date", "command", "commit", "host_threads", "gpus_present")}
    return out


def add_arguments(parser) -> None:
    """`paraflux bench sweeps`' own options."""
    parser.add_argument("--workers", type=whole(0), nargs="+", metavar="N",
                        help=f"host worker counts (default {listed(SweepsBenchConfig.host_workers)}); 0: one per core")
    parser.add_argument("--gpus", type=whole(0), nargs="+", metavar="N",
                        help=f"GPU counts, one worker each (default {listed(SweepsBenchConfig.gpus)}); 0: none; more "
                             "than the machine has: recorded as not run")
    parser.add_argument("--frequencies", type=whole(1), metavar="N",
                        help=f"frequencies of the sweep, one task each (default {SweepsBenchConfig.frequencies})")
    add_merge(parser, "the clusters")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench sweeps` asks for it."""
    config = given(SweepsBenchConfig(), host_workers=tuple_of(args.workers), gpus=tuple_of(args.gpus),
                   frequencies=args.frequencies)
    return run_sweeps_benchmark(config, command, log, checkpoint)
