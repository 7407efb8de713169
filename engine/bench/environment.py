"""What a benchmark ran on (device, versions, date and command, the measured copy bandwidth), how its results
are written, and how an earlier run's cases join a new run's (the reports say so through report.py)."""

from __future__ import annotations

import datetime
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def versions() -> dict[str, str]:
    """Versions of the numerical stack that is importable now."""
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for name in ("scipy", "numba", "cupy", "gmsh"):
        try:
            module = __import__(name)
            out[name] = getattr(module, "__version__", "?")
        except Exception:  # noqa: BLE001 (a missing or broken optional package is just not listed)
            continue
    return out


def distribution_versions(*names: str) -> dict[str, str]:
    """Installed versions of these distributions (PyPI names), "not installed" for the missing ones."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def _git_commit() -> str | None:
    """The checkout's commit; PARAFLUX_COMMIT overrides it where the tree was copied without its history."""
    import os  # noqa: PLC0415

    if os.environ.get("PARAFLUX_COMMIT"):
        return os.environ["PARAFLUX_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).parent, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def run_facts(command: list[str] | None = None) -> dict:
    """Date, host, command line, code commit and versions for a benchmark's JSON."""
    return {
        "commit": _git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host_cpu": platform.processor() or platform.machine(),
        "command": " ".join(command if command is not None else ["paraflux", *sys.argv[1:]]),
        "versions": versions(),
    }


def host_threads() -> dict:
    """The thread counts host code runs on: Numba's, and the BLAS / OpenMP pools threadpoolctl sees (where
    installed), each named by its library and the folder it was loaded from (NumPy and SciPy may each load
    their own OpenBLAS)."""
    import numba  # noqa: PLC0415

    out = {"numba": numba.get_num_threads()}
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415
    except ImportError:
        return out
    for pool in threadpool_info():
        out[f"{pool['internal_api']} ({Path(pool['filepath']).parent.name})"] = pool["num_threads"]
    return out


def gpu_facts(cp) -> dict:
    """Device name, memory, CUDA versions and CuPy's reduction accelerators."""
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return {
        "device": name,
        "multiprocessors": int(props["multiProcessorCount"]),
        "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
        "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
        "cuda_driver": cp.cuda.runtime.driverGetVersion(),
        "cupy_reduction_accelerators": [str(a) for a in cp._core.get_reduction_accelerators()],
    }


def copy_bandwidth(cp, gib: float = 1.0, repeats: int = 20) -> float:
    """Device-to-device copy bandwidth in bytes/s (bytes read + written), median of repeats."""
    n = int(gib * 2**30) // 8
    a, b = cp.random.standard_normal(n), cp.empty(n)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for i in range(repeats + 2):
        start.record()
        b[...] = a
        end.record()
        end.synchronize()
        if i >= 2:  # warm-up
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return 2 * 8 * n / float(np.median(times))


def write_results(data: dict, out_dir: Path, name: str, render) -> list[Path]:
    """out_dir/<name>.json (raw) and <name>.md (render(data)); the Markdown is rendered before anything
    is written, and each file goes through a temporary name, so a failure leaves the old pair intact."""
    from ..output import made_folder, write_json  # noqa: PLC0415

    markdown = render(data)
    with made_folder(out_dir) as out_dir:
        json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
        write_json(json_path, data)
        tmp = md_path.with_name(f".{name}.md.partial")
        try:
            tmp.write_text(markdown)
            tmp.replace(md_path)
        finally:
            tmp.unlink(missing_ok=True)
    return [json_path, md_path]


def median_seconds(fn, repeats: int):
    """(median wall seconds of `repeats` calls of fn(), the last call's result)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def merge_cases(data: dict, earlier: dict, key, order) -> dict:
    """data plus the cases of an earlier run of the same benchmark on the same device that data did not
    measure (same key(case)), sorted by order(case). Each case records the run that measured it ("run":
    date, command, commit), and merged_runs lists the earlier runs that measured a case still there. A file
    joined before cases recorded their run keeps all its merged runs, marked as not known to hold a case."""
    name = data["benchmark"]
    if earlier.get("benchmark") != name or earlier["gpu"]["device"] != data["gpu"]["device"]:
        raise ValueError(f"only {name} results from the same device can be merged")
    have = {key(c) for c in data["cases"]}
    kept = [c for c in earlier["cases"] if key(c) not in have]
    unknown = bool(earlier.get("merged_runs")) and any("run" not in c for c in kept)  # whose run is not known
    before = _run_of(earlier)
    kept = [c if "run" in c or unknown else {**c, "run": before} for c in kept]
    runs = {}
    for r in [*earlier.get("merged_runs", []), before] if unknown else []:
        runs[tuple(r[k] for k in _RUN_KEYS)] = _run_of(r)
    for c in kept:
        if "run" in c:
            runs[tuple(c["run"][k] for k in _RUN_KEYS)] = dict(_run_of(c["run"]), known=True)
    for r in (r for c in kept + data["cases"] for r in c.get("runs", ()) if "run" in r):  # runs carried over
        runs[tuple(r["run"][k] for k in _RUN_KEYS)] = dict(_run_of(r["run"]), known=True)
    for c in data["cases"]:  # data itself a merge: its cases from other runs keep them
        if "run" in c and c["run"] != _run_of(data):
            runs[tuple(c["run"][k] for k in _RUN_KEYS)] = dict(_run_of(c["run"]), known=True)
    mine = [c if "run" in c else {**c, "run": _run_of(data)} for c in data["cases"]]
    merged = dict(data, cases=sorted(kept + mine, key=order))
    merged["merged_runs"] = sorted(runs.values(), key=lambda r: r["date"])
    return merged


_RUN_KEYS = ("date", "command", "commit")


def _run_of(record: dict) -> dict:
    return {k: record[k] for k in _RUN_KEYS}


def cut_short(data: dict) -> dict:
    """A run's results as saved while it runs: marked so that a report made from them says it was cut short."""
    return {**data, "cut_short": True}
