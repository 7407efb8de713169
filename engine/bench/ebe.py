"""`paraflux bench ebe`: EBE-J-PCG on the transformer case, every GPU reduction variant against the
serial, NumPy and sparse-CG baselines, and a micro-benchmark of the reductions alone.

Reproduces paper 000's Table 1 (8,732 to 171,338 elements) and goes to about 1M and 4M elements.
Results: docs/benchmarks/ebe.json (raw) and ebe.md (tables rendered from the JSON).
"""

from __future__ import annotations

import inspect
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..errors import SolverError
from ..magnetostatics.ebe_layout import bytes_per_iteration
from ..magnetostatics.ebe_pcg import EbeOperator, lifted_right_hand_side, solve_ebe_jpcg
from ..magnetostatics.ebe_serial import solve_ebe_jpcg_serial
from ..magnetostatics.reductions import TWINS
from ..magnetostatics.system import assemble_sparse
from ..studies import STUDIES
from .systems import case_system
from .environment import copy_bandwidth, gpu_facts, median_seconds, run_facts
from .options import add_repeats, given, listed, tuple_of, whole

PAPER_TABLE_1 = {  # paper 000, Table 1: minutes; serial, unoptimised GPU, optimised GPU
    8732: (1.5, 0.7, 0.4), 11443: (2.6, 1.2, 0.6), 40816: (45.2, 18.5, 10.2), 171338: (1541.3, 593.7, 174.5),
}


@dataclass(frozen=True)
class EbeBenchConfig:
    sizes: tuple[int, ...] = (8732, 11443, 40816, 171338, 1_000_000, 4_000_000)
    rtol: float = 1e-8
    repeats: int = 3
    cpu_full_up_to: int = 200_000  # elements; above, CPU baselines run capped and are extrapolated
    cpu_capped_iterations: int = 200
    numpy_capped_iterations: int = 40
    reduction_sizes: tuple[int, ...] = tuple(2**k for k in range(10, 27, 2))
    check_every_values: tuple[int, ...] = (2, 8, 32, 128)
    check_every_elements: int = 1_000_000


def gpu_reductions() -> list[str]:
    """The reduction variants of the registry that run on the GPU by name (all but 'auto')."""
    return list(STUDIES["magnetostatic"].axis("reduction").concrete)


def _timed(fn: Callable[[int | None], object], max_iterations: int | None) -> tuple[float, int | None]:
    """Seconds of fn(max_iterations) and its iterations (None when it stopped at the cap)."""
    t0 = time.perf_counter()
    try:
        iterations = fn(max_iterations).iterations
    except SolverError:
        if max_iterations is None:
            raise
        iterations = None
    return time.perf_counter() - t0, iterations


def _cpu_run(fn: Callable[[int | None], object], full: bool, cap: int) -> dict:
    """To convergence (full), or capped: then a one-iteration run measures the set-up, so that
    seconds_per_iteration = (t(cap) - t(1)) / (cap - 1) excludes it."""
    if full:
        seconds, iterations = _timed(fn, None)
        return {"seconds": seconds, "iterations": iterations, "capped": False}
    seconds, _ = _timed(fn, cap)
    setup, _ = _timed(fn, 1)
    return {"seconds": seconds, "iterations": cap, "capped": True, "setup_seconds": setup,
            "seconds_per_iteration": max(seconds - setup, 0.0) / (cap - 1)}


@dataclass(frozen=True)
class _Iterations:
    iterations: int


def _scipy_cg(system, rtol, max_iterations):
    """SciPy's CG with a Jacobi preconditioner on the assembled matrix (assembly included, as for a user)."""
    import scipy.sparse as sp  # noqa: PLC0415
    import scipy.sparse.linalg as spla  # noqa: PLC0415

    a, b, inv_diag = _reduced_csr(system)
    count = [0]
    _, info = spla.cg(a, b, rtol=rtol, atol=0.0, maxiter=max_iterations, M=sp.diags(inv_diag).tocsr(),
                      callback=lambda xk: count.__setitem__(0, count[0] + 1))
    if info != 0:
        raise SolverError(f"SciPy CG stopped after {count[0]} iterations unconverged")
    return _Iterations(count[0])


def _reduced_csr(system):
    """Free-node CSR matrix, right-hand side and inverse diagonal (what a user of sparse CG builds)."""
    op = EbeOperator(system)
    b, _ = lifted_right_hand_side(system, op)
    free = ~system.fixed_mask()
    a = assemble_sparse(system)[free][:, free].tocsr()
    return a, b[free], 1.0 / a.diagonal()


def _cupy_cg(cp, system, rtol, repeats):
    import cupyx.scipy.sparse as csp  # noqa: PLC0415
    import cupyx.scipy.sparse.linalg as cspla  # noqa: PLC0415

    a_host, b_host, inv_diag = _reduced_csr(system)
    a, b = csp.csr_matrix(a_host), cp.asarray(b_host)
    m = csp.diags(cp.asarray(inv_diag)).tocsr()
    count = [0]
    # CuPy renamed tol to rtol (following SciPy); pass the relative tolerance under the name it takes
    tolerance = "rtol" if "rtol" in inspect.signature(cspla.cg).parameters else "tol"

    def run():
        count[0] = 0
        x, info = cspla.cg(a, b, atol=0.0, maxiter=20 * len(b_host), M=m, **{tolerance: rtol},
                           callback=lambda xk: count.__setitem__(0, count[0] + 1))
        cp.cuda.Device().synchronize()
        return info

    run()  # warm-up: kernel compilation
    seconds, info = median_seconds(run, repeats)
    return seconds, count[0], info == 0


def _gpu_solve(cp, system, rtol, reduction, repeats, check_every=None):
    from ..magnetostatics.gpu_ebe_pcg import solve_ebe_jpcg_gpu  # noqa: PLC0415

    def run():
        result = solve_ebe_jpcg_gpu(system, rtol, None, reduction, check_every)
        cp.cuda.Device().synchronize()
        return result

    run()  # warm-up: compilation, graph capture, memory pool
    results = [None] * repeats
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        results[i] = run()
        times.append(time.perf_counter() - t0)
    loop = float(np.median([r.loop_seconds for r in results]))
    return float(np.median(times)), loop, results[0].iterations, results[0].relative_residual


def bench_size(cp, elements: int, config: EbeBenchConfig, log) -> dict:
    t0 = time.perf_counter()
    _, mesh, system = case_system("transformer", elements)
    mesh_seconds = time.perf_counter() - t0  # meshing and element matrices
    row = {"target_elements": elements, "elements": mesh.n_elements, "nodes": mesh.n_nodes,
           "mesh_seconds": mesh_seconds, "bytes_per_iteration": bytes_per_iteration(mesh.n_elements, mesh.n_nodes),
           "gpu": {}}
    log(f"{mesh.n_elements} elements, {mesh.n_nodes} nodes")
    for reduction in gpu_reductions():
        total, loop, iterations, residual = _gpu_solve(cp, system, config.rtol, reduction, config.repeats)
        row["gpu"][reduction] = {"seconds": total, "loop_seconds": loop, "iterations": iterations,
                                 "relative_residual": residual}
        log(f"  gpu {reduction}: {total:.4f} s, {iterations} iterations, {1e6 * loop / iterations:.1f} us/it")
    seconds, iterations, converged = _cupy_cg(cp, system, config.rtol, config.repeats)
    row["cupy_csr_cg"] = {"seconds": seconds, "iterations": iterations, "converged": converged}
    log(f"  cupy csr cg: {seconds:.4f} s, {iterations} iterations")

    full = mesh.n_elements <= config.cpu_full_up_to
    cap = config.cpu_capped_iterations
    for name, fn, cap_n in (
        ("serial", lambda m: solve_ebe_jpcg_serial(system, config.rtol, m), cap),
        ("numpy", lambda m: solve_ebe_jpcg(system, config.rtol, m), config.numpy_capped_iterations),
        ("scipy_csr_cg", lambda m: _scipy_cg(system, config.rtol, m), cap),
    ):
        row[name] = _cpu_run(fn, full, cap_n)
        log(f"  {name}: {row[name]['seconds']:.3f} s, {row[name]['iterations']} iterations"
            f"{'' if full else ' (capped)'}")
    return row


def bench_reductions(cp, sizes, repeats: int = 7, calls: int = 20) -> list[dict]:
    """Time each reduction kernel alone: median over repeats of the mean of `calls` back-to-back calls."""
    from ..magnetostatics.gpu_ebe_pcg import DeviceReducer  # noqa: PLC0415

    rows = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for n in sizes:
        a, b, out = cp.random.standard_normal(n), cp.random.standard_normal(n), cp.zeros(1)
        row = {"n": n}
        for variant in TWINS:  # the reductions that run alone (fused lives inside the solver's kernels)
            reducer = DeviceReducer(variant, n)
            reducer.dot(a, b, n, out)  # warm-up
            times = []
            for _ in range(repeats):
                start.record()
                for _ in range(calls):
                    reducer.dot(a, b, n, out)
                end.record()
                end.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, end) / 1e3 / calls)
            row[variant] = float(np.median(times))
        rows.append(row)
    return rows


def bench_check_every(cp, elements: int, values, rtol: float, repeats: int) -> list[dict]:
    _, mesh, system = case_system("transformer", elements)
    rows = []
    for k in values:
        _, loop, iterations, _ = _gpu_solve(cp, system, rtol, "fused", repeats, check_every=k)
        rows.append({"check_every": k, "elements": mesh.n_elements, "iterations": iterations,
                     "seconds_per_iteration": loop / iterations})
    return rows


def run_ebe_benchmark(config: EbeBenchConfig, command: list[str] | None = None,
                      log: Callable[[str], None] = print) -> dict:
    """Run everything on the current GPU; returns the JSON-ready record."""
    import cupy as cp  # noqa: PLC0415

    from ..magnetostatics.ebe_serial import _kernels  # noqa: PLC0415

    _kernels()  # compile the serial baseline before anything is timed
    data = {"benchmark": "ebe", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(config)}
    data["copy_bandwidth_bytes_per_s"] = copy_bandwidth(cp)
    log(f"copy bandwidth {data['copy_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s")
    data["sizes"] = [bench_size(cp, n, config, log) for n in config.sizes]
    data["reductions"] = bench_reductions(cp, config.reduction_sizes)
    data["check_every"] = bench_check_every(cp, config.check_every_elements, config.check_every_values,
                                            config.rtol, config.repeats)
    return data


def add_arguments(parser) -> None:
    """`paraflux bench ebe`'s own options."""
    parser.add_argument("--elements", type=whole(1), nargs="+", metavar="N",
                        help=f"transformer case element counts (default {listed(EbeBenchConfig.sizes)})")
    add_repeats(parser, EbeBenchConfig.repeats)


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench ebe` asks for it."""
    config = given(EbeBenchConfig(), sizes=tuple_of(args.elements), repeats=args.repeats)
    return run_ebe_benchmark(config, command, log)
