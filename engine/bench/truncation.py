"""`paraflux bench truncation`: the FE-IIIEE operator by every loop strategy at paper 003's sizes (S' of
about 1,272 triangles, S of about 1,572 .. 32,576 triangles, 1 .. 1000 right-hand sides), against the
serial loop, with GFLOP/s by our count and the paper's, the measured FP64 GEMM rates, and the split
across GPUs. Results: docs/benchmarks/truncation.json (raw) and truncation.md (rendered from it)."""

from __future__ import annotations

import os
import time
from importlib.util import find_spec
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..truncation.cases import mesh_surface_case
from ..truncation.fields import dipole_fields, wavenumber
from ..truncation.fmm_loop import apply_fmm
from ..truncation.loops import apply_cpu
from ..truncation.operator import Currents, apply_reference, currents, operator_flops, paper_flops
from ..truncation.run import random_dipoles
from ..truncation.surfaces import quadrature
from ..truncation.zgemm import ZgemmOperator
from .environment import gpu_facts, run_facts
from .options import add_merge, add_repeats, given, listed, tuple_of, whole

PAPER_TABLE1 = {  # numS -> sequential seconds for n_rhs = 1, 10, 100, 1000 (paper 003, Table 1)
    1572: (7.28, 44.66, 416.68, 4150.27), 3432: (15.78, 97.30, 905.87, 9133.59),
    8012: (36.99, 228.90, 2135.05, 22124.53), 14696: (67.92, 422.14, 3890.59, 41198.88),
    32576: (149.89, 936.58, 8906.99, 91669.12)}
PAPER_TABLE3 = {"omp_S'": 27.94, "omp_S": 22.28, "cuda_S": 99.35, "multi-GPU (4 P100)": 254.30}
GPU_KERNELS = ("cuda-s", "cuda-rhs", "cuda-tiled")
CPU_STRATEGIES = ("serial", "cpu-sprime", "cpu-s", "cpu-rhs")
FMM_MAX_RHS = 1  # FMM3D takes about 45 s for one right-hand side at numS = 32,422 on the bench host (16 cores)
MULTI_GPU_REPEATS = 21  # per-call times of a few ms vary with host thread scheduling: a median of many
MULTI_GPU_MAX_RHS = 40  # several-GPU rows up to this many right-hand sides (the 360-incidence sweep's 37 columns)


@dataclass(frozen=True)
class TruncationBenchConfig:
    inner_elements: int = 1272
    outer_elements: tuple[int, ...] = (1572, 3432, 8012, 14696, 32576)
    rhs: tuple[int, ...] = (1, 10, 100, 1000)
    quadrature: int = 3
    frequency: float = 600e6
    repeats: int = 3
    cpu_pair_budget: int = 20_000_000  # serial: point pairs x right-hand sides per measurement (x16 parallel)
    fmm_precision: float = 1e-10  # the fmm loop's requested relative precision
    multi_gpu_only: bool = False  # the run on a several-GPU machine: cuda-tiled on one GPU and multi-gpu-tiled


def _events_seconds(cp, fn, repeats: int, warm_up: bool = True) -> float:
    """Median device seconds of fn() by CUDA events, after an optional warm-up call."""
    if warm_up:
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times))


def _wall_seconds(cp, fn, repeats: int, warm_up: bool = True):
    """(median wall seconds of fn() over repeats, after an optional warm-up call; the last result)."""
    if warm_up:
        fn()
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        if cp is not None:
            cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def _time_multi_gpu(fn, repeats: int):
    """(median wall seconds, median seconds of the slowest GPU's kernel, the last MultiGpuRun) of fn()
    after a warm-up call; MultiGpuOperator.apply returns only once every device's fields are on the host."""
    fn()
    walls, kernels, run = [], [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        run = fn()
        walls.append(time.perf_counter() - t0)
        kernels.append(max(run.kernel_seconds))
    return float(np.median(walls)), float(np.median(kernels)), run


def zgemm_rate(cp, n: int = 8192, repeats: int = 5) -> float:
    """Measured complex FP64 GEMM rate of cuBLAS (real flop/s, 8 per complex multiply-add)."""
    a = cp.random.standard_normal((n, n)) + 1j * cp.random.standard_normal((n, n))
    return 8 * n ** 3 / _events_seconds(cp, lambda: cp.matmul(a, a), repeats)


def _case_inputs(config, n_outer: int):
    inner, outer = mesh_surface_case("sphere-in-box", config.inner_elements, n_outer)
    k = wavenumber(config.frequency)
    qi, qo = quadrature(inner, config.quadrature), quadrature(outer, config.quadrature)
    return inner, outer, qi, qo, k


def _currents(inner, qi, k, n_rhs: int) -> Currents:
    dipoles = random_dipoles(inner, n_rhs, 0)
    fields = [dipole_fields(qi.points, d.position, d.moment, k) for d in dipoles]
    return currents(qi.normals, qi.weights, np.stack([e for e, _ in fields]), np.stack([f for _, f in fields]))


def _check(e, f, targets, sources, cur, k) -> float:
    """Largest relative difference of the first S points' E and F from the NumPy specification (as many
    points as keep its scratch near 200 MB)."""
    rows = max(1, min(64, 4_000_000 // (len(sources) * cur.dot_e.shape[0])))
    e_ref, f_ref = apply_reference(targets[:rows], sources, cur, k)
    return float(max(np.abs(e[:, :rows] - e_ref).max() / np.abs(e_ref).max(),
                     np.abs(f[:, :rows] - f_ref).max() / np.abs(f_ref).max()))


def _cpu_rows(config, inner, qi, qo, k, n_outer_actual, log, with_fmm: bool) -> list[dict]:
    """Every CPU strategy per right-hand-side count, on a subset of S elements sized to the pair budget,
    scaled to the whole of S (time is linear in the number of S points); fmm (not linear) on the whole
    of S, up to FMM_MAX_RHS right-hand sides, where with_fmm (FMM3D's Python package is installed)."""
    import numba  # noqa: PLC0415

    rows, q, compiled = [], config.quadrature, set()
    for n_rhs in config.rhs:
        cur = _currents(inner, qi, k, n_rhs)
        for loop in (*CPU_STRATEGIES, "zgemm-blas", "fmm"):
            if loop == "fmm" and (n_rhs > FMM_MAX_RHS or not with_fmm):
                continue
            budget = config.cpu_pair_budget * (1 if loop == "serial" else numba.get_num_threads())
            elements = int(min(n_outer_actual, max(1, budget // (q * len(qi.points) * n_rhs))))
            if loop == "cpu-s":
                elements = max(elements, min(n_outer_actual, 4 * numba.get_num_threads()))
            if loop == "fmm":
                elements = n_outer_actual
            targets = qo.points[:elements * q]
            if loop == "zgemm-blas":
                op = ZgemmOperator(targets, qi.points, k)
                fn = lambda: op.apply(cur)  # noqa: E731
            elif loop == "fmm":
                fn = lambda: apply_fmm(targets, qi.points, cur, k, config.fmm_precision)  # noqa: E731, B023
            else:
                fn = lambda: apply_cpu(loop, targets, qi.points, cur, k)  # noqa: E731, B023
            if loop not in compiled:  # compile (or load from Numba's cache) on one S element
                compiled.add(loop)
                if loop not in ("zgemm-blas", "fmm"):
                    apply_cpu(loop, targets[:q], qi.points, cur, k)
            seconds, (e, f) = _wall_seconds(None, fn, 1, warm_up=False)
            scale = n_outer_actual / elements
            rows.append({"loop": loop, "n_rhs": n_rhs, "measured_elements": elements, "seconds_measured": seconds,
                         "seconds_per_element": seconds / elements, "threads": numba.get_num_threads(),
                         "check": _check(e, f, targets, qi.points, cur, k),
                         "scaled": scale > 1})
            log(f"  {loop} rhs={n_rhs}: {seconds:.3f} s on {elements} S elements (x{scale:.0f} to S)")
    return rows


def _kernel_rows(cp, config, inputs, cur, n_rhs: int, log) -> list[dict]:
    """The GPU kernels' rows for one right-hand-side count: event time, wall time with transfers."""
    from ..truncation.gpu_loops import launch  # noqa: PLC0415

    inner, outer, qi, qo, k, src, tgt = inputs
    q = config.quadrature
    dev = [cp.asarray(a) for a in (cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)]
    flops = operator_flops(len(qi.points), len(qo.points), n_rhs)
    pflops = paper_flops(inner.n_elements, outer.n_elements, n_rhs)
    rows = []
    for loop in ("cuda-tiled",) if config.multi_gpu_only else GPU_KERNELS:
        out = {}

        def run(loop=loop, out=out):
            out["ef"] = launch(cp, loop, tgt, src, *dev, k, q)

        big = len(qi.points) * len(qo.points) * n_rhs > 1e10  # one timed run, compiled on a smaller size
        seconds = _events_seconds(cp, run, 1 if big else config.repeats, warm_up=not big)
        host = None
        if n_rhs <= 10:  # the end-to-end time: currents to the device, kernel, fields back
            host, _ = _wall_seconds(cp, lambda loop=loop: [a.get() for a in launch(
                cp, loop, cp.asarray(qo.points), cp.asarray(qi.points),
                *[cp.asarray(a) for a in (cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)], k, q)], 1, False)
        e, f = (a.get() for a in out.pop("ef"))
        rows.append({"loop": loop, "n_rhs": n_rhs, "seconds": seconds, "seconds_with_transfers": host,
                     "gflops": flops / seconds / 1e9, "paper_gflops": pflops / seconds / 1e9,
                     "check": _check(e, f, qo.points, qi.points, cur, k)})
        log(f"  {loop} rhs={n_rhs}: {seconds * 1e3:.2f} ms ({host or 0:.4f} s with transfers), "
            f"{flops / seconds / 1e9:.0f} GFLOP/s, check {rows[-1]['check']:.1e}")
        del e, f
    return rows


def _zgemm_row(cp, config, inputs, cur, n_rhs: int, log) -> dict:
    """The zgemm loop's row: the first application (tiles built) and the median of the repeats."""
    inner, outer, qi, qo, k, src, tgt = inputs
    flops = operator_flops(len(qi.points), len(qo.points), n_rhs)
    pflops = paper_flops(inner.n_elements, outer.n_elements, n_rhs)
    cp.get_default_memory_pool().free_all_blocks()
    op = ZgemmOperator(tgt, src, k, cp, cache_bytes=int(0.4 * cp.cuda.runtime.memGetInfo()[0]))
    t0 = time.perf_counter()
    op.apply(cur)
    cp.cuda.Device().synchronize()
    first = time.perf_counter() - t0
    res = {}
    seconds = _events_seconds(cp, lambda op=op: res.__setitem__("ef", op.apply(cur)), config.repeats, False)
    e, f = (a.get() for a in res.pop("ef"))
    gemm = op.gemm_flops(n_rhs)
    row = {"loop": "zgemm", "n_rhs": n_rhs, "seconds": seconds, "seconds_first": first,
           "gflops": flops / seconds / 1e9, "paper_gflops": pflops / seconds / 1e9,
           "gemm_gflops": gemm / seconds / 1e9, "cached_tiles": len(op.cache),
           "tiles": op.n_tiles, "check": _check(e, f, qo.points, qi.points, cur, k)}
    log(f"  zgemm rhs={n_rhs}: {seconds * 1e3:.2f} ms (first {first * 1e3:.1f} ms, {len(op.cache)}/"
        f"{op.n_tiles} tiles cached), GEMM {gemm / seconds / 1e9:.0f} GFLOP/s")
    del op, e, f
    cp.get_default_memory_pool().free_all_blocks()
    return row


def _multi_gpu_rows(cp, config, inputs, cur, n_rhs: int, log) -> list[dict]:
    """multi-gpu-tiled on 1, 2, ... every visible GPU, S split by points and (several right-hand sides) by
    incidences."""
    from ..truncation.multi_gpu import SPLITS, MultiGpuOperator  # noqa: PLC0415

    inner, outer, qi, qo, k, src, tgt = inputs
    flops = operator_flops(len(qi.points), len(qo.points), n_rhs)
    rows, loop = [], "multi-gpu-tiled"
    for split in SPLITS if n_rhs > 1 else SPLITS[:1]:
        for count in range(1, cp.cuda.runtime.getDeviceCount() + 1):
            t0 = time.perf_counter()
            with MultiGpuOperator(qo.points, qi.points, k, config.quadrature, count, split) as op:
                setup = time.perf_counter() - t0
                seconds, kernel_seconds, run = _time_multi_gpu(lambda op=op: op.apply(cur), MULTI_GPU_REPEATS)
            rows.append({"loop": loop, "split": split, "devices": run.devices, "n_rhs": n_rhs, "seconds": seconds,
                         "kernel_seconds": kernel_seconds, "setup_seconds": setup, "gflops": flops / seconds / 1e9,
                         "check": _check(run.e, run.f, qo.points, qi.points, cur, k)})
            log(f"  {loop} by {split} on {run.devices}: rhs={n_rhs}: {seconds * 1e3:.2f} ms, kernels "
                f"{kernel_seconds * 1e3:.2f} ms (set-up {setup * 1e3:.0f} ms)")
    return rows


def bench_size(cp, config, n_outer: int, log) -> dict:
    """Every GPU loop (and zgemm, and the several-GPU loops where there are several GPUs) at one S size."""
    inner, outer, qi, qo, k = _case_inputs(config, n_outer)
    case = {"n_inner": inner.n_elements, "n_outer": outer.n_elements, "inner_points": len(qi.points),
            "outer_points": len(qo.points), "gpu": [], "multi_gpu": []}
    log(f"S' {inner.n_elements} x S {outer.n_elements} triangles ({len(qi.points)} x {len(qo.points)} points)")
    inputs = (inner, outer, qi, qo, k, cp.asarray(qi.points), cp.asarray(qo.points))
    for n_rhs in config.rhs:
        cur = _currents(inner, qi, k, n_rhs)
        case["gpu"] += _kernel_rows(cp, config, inputs, cur, n_rhs, log)
        if not config.multi_gpu_only:
            case["gpu"].append(_zgemm_row(cp, config, inputs, cur, n_rhs, log))
        if cp.cuda.runtime.getDeviceCount() > 1 and n_rhs <= MULTI_GPU_MAX_RHS:
            case["multi_gpu"] += _multi_gpu_rows(cp, config, inputs, cur, n_rhs, log)
    return case


def run_truncation_benchmark(config: TruncationBenchConfig, command: list[str] | None = None,
                             log: Callable[[str], None] = print, checkpoint=None) -> dict:
    """All sizes (then the CPU strategies); checkpoint(data), if given, after each size, so a run cut
    short still leaves its finished sizes."""
    import cupy as cp  # noqa: PLC0415

    data = {"benchmark": "truncation", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(config),
            "host_threads": os.cpu_count(), "gpus": cp.cuda.runtime.getDeviceCount()}
    data["zgemm_flops"] = zgemm_rate(cp)
    from .hex import dgemm_rate  # noqa: PLC0415

    data["dgemm_flops"] = dgemm_rate(cp)
    log(f"measured ZGEMM {data['zgemm_flops'] / 1e12:.1f} TFLOP/s, DGEMM {data['dgemm_flops'] / 1e12:.1f} TFLOP/s")
    data["cases"] = []
    for n in config.outer_elements:
        data["cases"].append(bench_size(cp, config, n, log))
        if checkpoint is not None:
            checkpoint(data)
    if not config.multi_gpu_only:
        inner, outer, qi, qo, k = _case_inputs(config, config.outer_elements[-1])
        with_fmm = find_spec("fmm3dpy") is not None  # else loop fmm is not run, and the report says why
        data["cpu"] = {"n_outer": outer.n_elements, "fmm_missing": not with_fmm,
                       "rows": _cpu_rows(config, inner, qi, qo, k, outer.n_elements, log, with_fmm)}
    return data


def merge(data: dict, earlier: dict) -> dict:
    """Join a single-GPU run and a several-GPU run (multi_gpu_only) of the same configuration. earlier may
    also be an already joined file: a new single-GPU run then keeps its several-GPU rows and their facts."""
    if earlier.get("benchmark") != "truncation":
        raise ValueError("only truncation results can be merged")
    if data["config"]["multi_gpu_only"]:
        main, multi, facts = earlier, data, data
    else:
        main, multi = data, earlier
        facts = earlier.get("multi_gpu_run") or earlier
        if not (earlier["config"]["multi_gpu_only"] or "multi_gpu_run" in earlier):
            raise ValueError("it holds no several-GPU run")
    merged = dict(main)
    merged["multi_gpu_run"] = {k: facts[k] for k in ("date", "command", "commit", "gpu", "gpus", "versions")}
    by_size = {c["n_outer"]: c for c in multi["cases"]}
    merged["cases"] = [dict(c, multi_gpu=by_size.get(c["n_outer"], {}).get("multi_gpu", [])) for c in main["cases"]]
    return merged


def add_arguments(parser) -> None:
    """`paraflux bench truncation`'s own options."""
    parser.add_argument("--triangles", type=whole(1), nargs="+", metavar="N",
                        help="triangle counts of S, the outer surface (paper 003's numS; default "
                             f"{listed(TruncationBenchConfig.outer_elements)})")
    parser.add_argument("--rhs", type=whole(1), nargs="+", metavar="N",
                        help=f"right-hand-side counts (default {listed(TruncationBenchConfig.rhs)})")
    parser.add_argument("--multi-gpu-only", action="store_true",
                        help="only cuda-tiled and multi-gpu-tiled (on a several-GPU machine), written as "
                             "truncation-multi-gpu.json; join with --merge")
    add_repeats(parser, TruncationBenchConfig.repeats)
    add_merge(parser, "the sizes and the several-GPU part")


def raw_only(args) -> bool:
    """The several-GPU part alone is written as JSON, to be joined with --merge."""
    return args.multi_gpu_only


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench truncation` asks for it."""
    config = given(TruncationBenchConfig(multi_gpu_only=args.multi_gpu_only), outer_elements=tuple_of(args.triangles),
                   rhs=tuple_of(args.rhs), repeats=args.repeats)
    return run_truncation_benchmark(config, command, log, checkpoint)
