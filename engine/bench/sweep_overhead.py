"""The Dask scheduler's overhead per sweep task, measured with empty tasks on local clusters of 1, 2, ...
worker processes; writes docs/benchmarks/sweep-overhead.{json,md}.

Run: python -m paraflux.engine.bench.sweep_overhead [--workers 1 2 4] [--tasks 2000] [--out docs/benchmarks]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from .environment import run_facts, write_results


def empty_task(i: int) -> int:
    """A task that does nothing: its wall time is all scheduling, transfer and bookkeeping."""
    return i


def batch_seconds_per_task(client, n_tasks: int, repeats: int = 3) -> float:
    """Median over repeats of (wall seconds to submit n_tasks empty tasks at once and gather them) / n_tasks:
    the throughput cost of one task when a sweep keeps every worker busy."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        client.gather(client.map(empty_task, range(n_tasks), pure=False))
        times.append((time.perf_counter() - start) / n_tasks)
    return statistics.median(times)


def round_trip_seconds(client, n_tasks: int = 50) -> float:
    """Median wall seconds of one empty task submitted and awaited alone: the latency a task adds."""
    times = []
    for i in range(n_tasks):
        start = time.perf_counter()
        client.submit(empty_task, i, pure=False).result()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_overhead_benchmark(worker_counts: list[int], n_tasks: int, log=print) -> dict:
    """Per worker count: a LocalCluster of that many single-threaded processes, its per-task batch cost
    and round-trip latency (seconds)."""
    from distributed import Client, LocalCluster  # noqa: PLC0415

    rows = []
    for workers in worker_counts:
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            client.gather(client.map(empty_task, range(10 * workers), pure=False))  # warm the workers
            row = {"workers": workers, "tasks": n_tasks, "batch_s_per_task": batch_seconds_per_task(client, n_tasks),
                   "round_trip_s": round_trip_seconds(client)}
        log(f"{workers} workers: {1e3 * row['batch_s_per_task']:.3f} ms per task in a batch of {n_tasks}, "
            f"{1e3 * row['round_trip_s']:.2f} ms round trip")
        rows.append(row)
    import distributed  # noqa: PLC0415

    return {"benchmark": "sweep-overhead", **run_facts(["python", "-m", "paraflux.engine.bench.sweep_overhead",
                                                         *sys.argv[1:]]),
            "host_threads": os.cpu_count(), "distributed": distributed.__version__, "rows": rows}


def render(data: dict) -> str:
    """The Markdown report of run_overhead_benchmark's data."""
    lines = ["# Sweep scheduler overhead (empty tasks)", "",
             f"- Host: {data['host_threads']} threads ({data['host_cpu']}); distributed {data['distributed']}",
             f"- Date: {data['date']}; command: `{data['command']}`; code: commit {data.get('commit') or 'not recorded'}",
             "", "Batch: every task submitted at once and gathered, wall time / tasks. Round trip: one task "
             "submitted and awaited alone (median of 50).", "",
             "| workers | tasks | batch, ms per task | round trip, ms |", "|---:|---:|---:|---:|"]
    lines += [f"| {r['workers']} | {r['tasks']} | {1e3 * r['batch_s_per_task']:.3f} | {1e3 * r['round_trip_s']:.2f} |"
              for r in data["rows"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paraflux.engine.bench.sweep_overhead", description=__doc__)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker process counts")
    parser.add_argument("--tasks", type=int, default=2000, help="empty tasks per batch")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"), help="output folder")
    args = parser.parse_args(argv)
    for path in write_results(run_overhead_benchmark(args.workers, args.tasks), args.out, "sweep-overhead", render):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
