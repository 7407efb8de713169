"""`paraflux bench fmm`: the Laplace FMM engine on the GPU, every M2L scheme, N = 1e4 .. 1e7 points
uniform in a cube and on a sphere, against FMM3D (built from source with OpenMP by scripts/build-fmm3d.sh, at
1 thread and all threads) and the direct sum on the GPU (all N^2 pairs). Results: docs/benchmarks/fmm.json
(raw) and fmm.md (rendered from the JSON)."""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable

import numpy as np

from ..fmm.gpu_m2l import product_units
from ..fmm.fmm import FP32_TABLES_UP_TO, M2L_SCHEMES, LaplaceFMM, order_for_precision, translations_per_box
from ..fmm.tree import SEPARATIONS
from ..fmm.operators import direct
from ..fmm.tree import build_octree
from . import environment, keops_peer
from .environment import gpu_facts, run_facts
from .options import add_merge, add_repeats, given, listed, tuple_of, whole


@dataclass(frozen=True)
class FmmBenchConfig:
    sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000, 10_000_000)
    distributions: tuple[str, ...] = ("uniform", "sphere")
    orders: tuple[int, ...] = (6, 8, 10)  # empty: the comparison with the peers alone
    all_schemes_up_to: int = 1_000_000  # above: standard and batched-gemm at the first order only
    leaf_size: int = 32
    repeats: int = 3
    sample: int = 1000  # targets checked against the direct sum
    precision: float = 1e-6  # for the FMM3D comparison ("6 digits")
    exponential_nodes: tuple[int, ...] = (8, 17)  # the paper's g
    direct_up_to: int = 1_000_000  # the exact direct sum over all N^2 pairs timed up to this N (1e7: minutes)
    scratch_precisions: tuple[float, ...] = (1e-6, 1e-3)  # ours from scratch at each, separation 1 and 2
    scratch_leaf_sizes: tuple[int, ...] = (64, 128, 256)  # and at each of these leaf sizes
    fmm3d_precisions: tuple[float, ...] = (1e-3, 1e-4, 1e-5, 1e-6)  # FMM3D on all threads at each (equal achieved error)
    one_thread_up_to: int = 1_000_000  # FMM3D on one thread too up to this N (1e7: about 5 minutes)


def points(name: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "uniform":
        return rng.uniform(0, 1, (n, 3))
    x = rng.standard_normal((n, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _direct_chunked(cp, pts, q, targets):
    """The direct sum on the GPU in target chunks of at most 2e7 pairs (bounded scratch memory)."""
    src, qq = cp.asarray(pts), cp.asarray(q[None])
    step = max(1, 20_000_000 // len(pts))
    parts = [direct(src, cp.asarray(targets[i:i + step]), qq, None, True, cp) for i in range(0, len(targets), step)]
    return cp.concatenate([a for a, _ in parts], axis=1), cp.concatenate([g for _, g in parts], axis=1)


def _direct_seconds(cp, pts, q) -> float:
    """The exact direct sum on the GPU (the tiled FP64 kernel, engine/fmm/gpu_direct.py), potential and
    gradient at all N points, from points in host memory to results in host memory."""
    from ..fmm.gpu_direct import direct_sum_gpu  # noqa: PLC0415

    direct_sum_gpu(pts[:1000], q[:1000], pts[:1000])  # warm-up: the kernel's compilation
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    phi, grad = direct_sum_gpu(pts, q, pts)
    phi.get(), grad.get()
    return time.perf_counter() - t0


def _fmm3d(pts, q, eps, sample, ref_phi, ref_grad, one_thread: bool = True) -> list[dict] | None:
    """FMM3D built from source with OpenMP (scripts/build-fmm3d.sh) at all the threads its OpenMP runtime offers
    and (one_thread) at 1, each run labelled with the thread count the library reported; None if not built."""
    from .fmm3d_peer import load  # noqa: PLC0415

    library = load()
    if library is None:
        return None
    every = library.all_threads()
    return [_fmm3d_run(library, pts, q, eps, threads, sample, ref_phi, ref_grad)
            for threads in sorted({1 if one_thread else every, every}, reverse=True)]


def _fmm3d_run(library, pts, q, eps: float, threads: int, sample, ref_phi, ref_grad) -> dict:
    """One FMM3D run after a warm-up, as the report reads it: seconds, the threads the library reported, its
    build, its errors on the sampled targets."""
    library.charges(pts[:1000], q[:1000], eps, threads)  # warm-up
    run = library.charges(pts, q, eps, threads)
    return {"seconds": run.seconds, "threads": run.threads, "build": "source, OpenMP",
            **_errors(run.potential[sample], run.gradient[sample], ref_phi, ref_grad)}


def _errors(phi, grad, ref_phi, ref_grad) -> dict:
    """Relative L2 errors of potential and gradient (host arrays) against the direct sum's."""
    return {"error": float(np.linalg.norm(phi - ref_phi) / np.linalg.norm(ref_phi)),
            "error_gradient": float(np.linalg.norm(grad - ref_grad) / np.linalg.norm(ref_grad))}


def _fmm3d_rows(pts, q, eps, sample, ref_phi, ref_grad, one_thread: bool = True) -> dict:
    """The report's FMM3D entries: fmm3d (all threads) and fmm3d_one_thread, each None if not built (or, for
    the one-thread entry, not run)."""
    runs = _fmm3d(pts, q, eps, sample, ref_phi, ref_grad, one_thread)
    return {"fmm3d": runs[0] if runs else None,
            "fmm3d_one_thread": runs[-1] if runs and len(runs) > 1 else None}


def bench_case(cp, dist: str, n: int, config: FmmBenchConfig, log) -> dict:
    pts = points(dist, n)
    q = np.random.default_rng(1).standard_normal(n)
    sample = np.random.default_rng(2).choice(n, min(config.sample, n), replace=False)
    reference = tuple(a[0].get() for a in _direct_chunked(cp, pts, q, pts[sample]))  # potential, gradient
    t0 = time.perf_counter()
    tree = build_octree(pts, pts, config.leaf_size)
    row = {"distribution": dist, "n": n, "tree_seconds": time.perf_counter() - t0, "tree": tree.stats(), "runs": []}
    log(f"{dist} N={n}: tree {row['tree_seconds']:.2f} s, {row['tree']}")
    orders = config.orders if n <= config.all_schemes_up_to else config.orders[:1]
    schemes = M2L_SCHEMES if n <= config.all_schemes_up_to else ("standard", "batched-gemm")
    pool = cp.get_default_memory_pool()
    variants = [(s, g) for s in schemes for g in (config.exponential_nodes if s == "exponential" else (None,))]
    for p in orders:
        for scheme, nodes in variants:
            pool.free_all_blocks()
            t0 = time.perf_counter()
            fmm = LaplaceFMM(pts, pts, p, config.leaf_size, scheme, "cupy", tree=tree,
                             exponential_nodes=nodes or 17)
            setup = time.perf_counter() - t0
            fmm.apply(q, gradient=True)  # warm-up: kernel compilation, near-field lists
            phases, totals = [], []
            for _ in range(config.repeats):
                timings: dict = {}
                t0 = time.perf_counter()
                phi, grad = fmm.apply(q, gradient=True, timings=timings)
                cp.cuda.Device().synchronize()
                totals.append(time.perf_counter() - t0)
                phases.append(timings)
            held = int(pool.total_bytes())  # what the run holds
            errors = _errors(phi[sample].get(), grad[sample].get(), *reference)
            k = int(np.argsort(totals)[len(totals) // 2])
            run = {"order": p, "scheme": scheme if nodes is None else f"{scheme}-{nodes}", "setup_seconds": setup, "apply_seconds": totals[k],
                   "phases": phases[k], **errors,
                   "translations_per_box": translations_per_box(tree, scheme),
                   "device_memory_bytes": held}
            row["runs"].append(run)
            log(f"  p={p} {run['scheme']}: {totals[k]:.3f} s, error {run['error']:.1e} / "
                f"{run['error_gradient']:.1e}, "
                f"{run['device_memory_bytes'] / 2**20:.0f} MiB")
            del fmm
            pool.free_all_blocks()
    row["direct_gpu_seconds"] = _direct_seconds(cp, pts, q) if n <= config.direct_up_to else None
    if n <= config.direct_up_to:  # the second brute-force peer on the GPU, where pykeops runs
        row["keops"] = keops_peer.timed(pts, q, sample, *reference)
    row["direct_all_n"] = True  # every target, not a scaled sample (the report labels older runs' estimates)
    row["at_precision"] = _at_precision(cp, pts, q, sample, reference, config)
    log(f"  at {config.precision:g}: ours p={row['at_precision']['order']} "
        f"{row['at_precision']['apply_seconds']:.3f} s; fmm3d {row['at_precision']['fmm3d']}")
    return row


def _at_precision(cp, pts, q, sample, reference: tuple, config: FmmBenchConfig) -> dict:
    """Ours from scratch (the default GPU scheme, standard, its tree and lists built on the GPU) at each of
    config.scratch_precisions, separations 1 and 2 and config.scratch_leaf_sizes (and FP32 M2L tables where the
    precision is FP32_TABLES_UP_TO or coarser), and FMM3D: at config.precision
    on 1 and all threads, and on all threads at each of config.fmm3d_precisions (to compare at equal achieved
    error); every run checked against the direct sum on the sampled targets (reference: its potential and
    gradient there, on the host). The entry at config.precision is the fastest separation and leaf size."""
    ref, ref_grad = reference
    scratch = [_from_scratch(cp, pts, q, eps, sep, sample, reference, (leaf, fp32))
               for eps in config.scratch_precisions for sep in SEPARATIONS for leaf in config.scratch_leaf_sizes
               for fp32 in ((False, True) if eps >= FP32_TABLES_UP_TO else (False,))]
    fitted = [r for r in scratch if not r.get("out_of_memory")]
    mine = [r for r in fitted if r["precision"] == config.precision] or [_from_scratch(
        cp, pts, q, config.precision, 1, sample, reference, (config.scratch_leaf_sizes[0], False))]
    best = min(mine, key=lambda r: r["scratch_seconds"])
    sweep = _fmm3d_sweep(pts, q, config.fmm3d_precisions, sample, ref, ref_grad)
    return {**best, "scheme": "standard", "tree_on": "device", "scratch": scratch, "fmm3d_sweep": sweep,
            **_fmm3d_rows(pts, q, config.precision, sample, ref, ref_grad, len(pts) <= config.one_thread_up_to)}


def _from_scratch(cp, pts, q, eps: float, separation: int, sample, reference, leaf: tuple) -> dict:
    """One evaluation from points in host memory to potential and gradient in host memory (tree, lists and
    operators built on the GPU, tables from the cache), after a warm-up evaluation that compiles the kernels;
    then a second apply on the same plan (as GMRES reuses it). A plan that does not fit the GPU's memory is
    recorded as such (small leaves at 1e7 points: over 1e9 translation pairs). leaf: (leaf size, FP32 M2L
    tables)."""
    p = order_for_precision(eps, separation)
    try:
        return _timed_from_scratch(cp, pts, q, (eps, p), separation, sample, reference, leaf)
    except cp.cuda.memory.OutOfMemoryError:
        cp.get_default_memory_pool().free_all_blocks()
        return {"precision": eps, "separation": separation, "leaf_size": leaf[0], "fp32_tables": leaf[1],
                "order": p, "out_of_memory": True}


def _timed_from_scratch(cp, pts, q, asked: tuple, separation: int, sample, reference, leaf: tuple) -> dict:
    """_from_scratch's timing; asked: (precision, order)."""
    (eps, p), (leaf_size, fp32) = asked, leaf
    make = lambda: LaplaceFMM(pts, pts, p, leaf_size, "standard", "cupy", separation=separation,  # noqa: E731
                              fp32_tables=fp32)
    make().apply(q, gradient=True)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    fmm = make()
    cp.cuda.Device().synchronize()
    built = time.perf_counter()
    phi, grad = (a.get() for a in fmm.apply(q, gradient=True))
    done = time.perf_counter()
    phases: dict = {}
    fmm.apply(q, gradient=True, timings=phases)
    cp.cuda.Device().synchronize()
    apply_seconds = time.perf_counter() - done
    return {"precision": eps, "separation": separation, "leaf_size": leaf_size, "fp32_tables": fp32, "order": p,
            "setup_seconds": built - t0, "scratch_seconds": done - t0, "apply_seconds": apply_seconds,
            "phases": phases, "m2l_pairs": fmm.plan.tree.stats()["m2l_pairs"], "m2l_units": product_units(),
            "m2l_segments": sum(len(w.segment_table) for w in fmm.plan.m2l_work.work),
            **_errors(phi[sample], grad[sample], *reference)}


def _fmm3d_sweep(pts, q, precisions, sample, ref_phi, ref_grad) -> list[dict] | None:
    """FMM3D on all threads at each requested precision, with the errors it achieved; None if not built."""
    from .fmm3d_peer import load  # noqa: PLC0415

    library = load()
    if library is None:
        return None
    return [{"eps": eps, **_fmm3d_run(library, pts, q, eps, library.all_threads(), sample, ref_phi, ref_grad)}
            for eps in precisions]


def run_fmm_benchmark(config: FmmBenchConfig, command: list[str] | None = None,
                      log: Callable[[str], None] = print) -> dict:
    import cupy as cp  # noqa: PLC0415

    data = {"benchmark": "fmm", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(config),
            "host_threads": os.cpu_count()}
    from .hex import dgemm_rate  # noqa: PLC0415

    data["dgemm_flops"], data["copy_bandwidth"] = dgemm_rate(cp), environment.copy_bandwidth(cp)
    log(f"FP64 GEMM {data['dgemm_flops'] / 1e12:.1f} TFLOP/s, copy {data['copy_bandwidth'] / 1e9:.0f} GB/s")
    data["cases"] = [bench_case(cp, dist, n, config, log) for n in config.sizes for dist in config.distributions]
    return _with_ceilings(data)


def _with_ceilings(data: dict) -> dict:
    """Each case given its run's measured ceilings (FP64 GEMM rate, copy bandwidth) where it has none, so that
    a case merged into a later record keeps the ceilings measured in its own run."""
    own = {k: data[k] for k in ("dgemm_flops", "copy_bandwidth") if k in data}
    return dict(data, cases=[c if "ceilings" in c or not own else {**c, "ceilings": own} for c in data["cases"]])


def merge(data: dict, earlier: dict) -> dict:
    """Add the cases of an earlier run on the same device that this run did not measure. A case this run
    measured for the peers alone (no orders: --orders 0) keeps the earlier run's scheme runs of that case,
    each marked with the run that measured it. Every case keeps the ceilings measured in its own run."""
    data, earlier = _with_ceilings(data), _with_ceilings(earlier)
    before = {(c["distribution"], c["n"]): c for c in earlier["cases"]}
    for case in data["cases"]:
        old = before.get((case["distribution"], case["n"]))
        if not case["runs"] and old:
            made_by = old.get("run") or {k: earlier[k] for k in ("date", "command", "commit")}
            case["runs"] = [{**r, "run": r.get("run", made_by)} for r in old["runs"]]
    return environment.merge_cases(data, earlier, lambda c: (c["distribution"], c["n"]),
                                   lambda c: (c["n"], c["distribution"]))


def add_arguments(parser) -> None:
    """`paraflux bench fmm`'s own options."""
    parser.add_argument("--points", type=whole(1), nargs="+", metavar="N",
                        help="point counts, each on uniform and sphere points (default "
                             f"{listed(FmmBenchConfig.sizes)})")
    parser.add_argument("--orders", type=whole(0), nargs="+", metavar="P",
                        help=f"expansion orders of the M2L schemes (default {listed(FmmBenchConfig.orders)}); "
                             "0: the peers alone (the scheme runs kept from --merge)")
    add_repeats(parser, FmmBenchConfig.repeats)
    add_merge(parser, "the cases and scheme runs")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench fmm` asks for it."""
    config = given(FmmBenchConfig(), sizes=tuple_of(args.points), orders=tuple_of(args.orders), repeats=args.repeats)
    if config.orders == (0,):  # the peers at 1e-6 alone (the scheme runs kept from --merge)
        config = replace(config, orders=())
    return run_fmm_benchmark(config, command, log)
