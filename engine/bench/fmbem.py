"""`paraflux bench fmbem`: the FMBEM on the bracket (the paper's chassis part), paper 001's Tables 1-4.

Tables 1-3: at the paper's smallest model (about 19,314 DOFs), every M2L scheme at p = 6, 8, 10 on the GPU:
epsilon (eq. 3, the right-hand side b against the dense BEM's), time and memory. Table 4: at about 19,314,
37,698, 100,029 DOFs and 1M, p = 6, GMRES to 1e-3, on the GPU and (up to cpu_up_to DOFs) on the CPU with
all host cores. Results: docs/benchmarks/fmbem.json (raw) and fmbem.md (rendered from the JSON)."""

from __future__ import annotations

import functools
import os
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable

import numpy as np

from ..bem.assembly import traction_load
from ..bem.cases import BRACKET_GROUPS, bracket
from ..bem.direct import BoundaryData, solve_direct
from ..bem.fmm_operator import CORRECTION_RATIO, far_points_for
from ..bem.fmm_solve import FmmSettings, coarse_dtype, separation_of, solve_fmm
from ..fmm.fmm import LEAF_SIZE_GPU, LEAF_SIZE_HOST, M2L_SCHEMES
from . import environment
from .environment import gpu_facts, host_threads, run_facts
from .options import add_merge, listed, tuple_of, whole

LOAD = (2.0e6, 0.0, -1.0e6)  # Pa on the web's top face, as resources/problems/bracket.toml


@dataclass(frozen=True)
class FmbemBenchConfig:
    tables_dofs: int = 19_314  # Tables 1-3: the paper's model
    orders: tuple[int, ...] = (6, 8, 10)  # Tables 1-3, every scheme; () skips them
    dofs: tuple[int, ...] = (19_314, 37_698, 100_029, 1_000_000)  # Table 4; () skips it
    order: int = 6  # Table 4: the paper's p
    m2l: str = "standard"  # Table 4's scheme
    rtol: float = 1e-3  # GMRES, as the paper
    leaf_size: int = 32  # as the paper
    young: float = 260e9  # Pa, as the paper
    poisson: float = 0.3
    cpu_up_to: int = 40_000  # Table 4 on the CPU (all host cores) up to this many DOFs
    epsilon_up_to: int = 150_000  # the dense BEM's b (nodes x loaded elements integrals) up to this many DOFs
    direct_up_to: int = 20_000  # Table 4 beside the dense BEM solve (assembly and LU on the host's cores) up to
    # this many DOFs: it holds H, G, the system matrix and its LU, 4 (3N)^2 doubles (12 GB at 19k DOFs)
    warm_up_dofs: int = 2_000  # a small bracket solved once, untimed, per (backend, order, scheme)
    near_ratios: tuple[float, ...] = (CORRECTION_RATIO, 6.0)  # Table 4 on the GPU: the preconditioner's matrix
    # out to each many element sizes (the near field's reach), up to wide_near_up_to DOFs; CPU rows: the first
    wide_near_up_to: int = 150_000
    ilu_fp64_up_to: int = 150_000  # Table 4 on the GPU: also with the ILU(0) factors in FP64 (the solve's
    # default is FP32; at the solve's own GPU leaf size), up to this many DOFs
    default_leaf_up_to: int = 150_000  # Table 4 on the GPU: also at the solve's own GPU leaf size (leaf_size
    # above is the paper's), up to this many DOFs
    lean_ratio: float = 2.0  # Table 4 on the GPU up to ilu_fp64_up_to DOFs: also the preconditioner out to this
    # many element sizes only (less memory, more iterations), its factors in FP32 and in FP64
    lean_far_passes: int = 7  # the defaults and the FP64 lean setting again with the far field in this many FMM
    # passes (less memory, more time)


def bracket_model(dofs: int):
    """(surface, BoundaryData) of the bracket meshed for about dofs (3 per node; a closed surface has about
    twice as many triangles as nodes), within 2 % where a second meshing gets there: base fixed, LOAD on the
    web's top."""
    target = 2 * dofs / 3
    surface, group = bracket(int(round(target)))
    if abs(3 * surface.n_nodes / dofs - 1) > 0.02:  # gmsh lands 3-6 % short on large meshes: mesh once more
        surface, group = bracket(int(round(target * dofs / (3 * surface.n_nodes))))
    m = len(surface.triangles)
    fixed = np.zeros((m, 3), dtype=bool)
    fixed[group == BRACKET_GROUPS.index("base")] = True
    traction = np.zeros((m, 3, 3))
    traction[group == BRACKET_GROUPS.index("load")] = np.asarray(LOAD)
    return surface, BoundaryData(fixed, np.zeros_like(surface.points), traction)


def _run(surface, data, config: FmbemBenchConfig, backend: str, order: int, scheme: str, reference, log,
         ratio: float = CORRECTION_RATIO, fp32: bool = True, leaf_size: int | None = 32,
         coarse: int | None = None, passes: int = 1, direct_u=None) -> dict:
    settings = FmmSettings(order=order, leaf_size=leaf_size, m2l=scheme, backend=backend, rtol=config.rtol,
                           precondition_ratio=ratio, preconditioner_fp32=fp32, coarse_clusters=coarse,
                           far_passes=passes)
    if backend == "cupy":
        import cupy as cp  # noqa: PLC0415

        cp.get_default_memory_pool().free_all_blocks()
    t0 = time.perf_counter()
    solution, report = solve_fmm(surface.points, surface.triangles, data, config.young, config.poisson, settings)
    total = time.perf_counter() - t0
    run = {"backend": backend, "order": order, "scheme": scheme, "separation": separation_of(settings),
           "far_points": far_points_for(order), "near_field": ratio, "far_passes": passes,
           "ilu": "SuperLU FP64" if backend == "numpy" else "FP32" if fp32 else "FP64",
           "coarse_lu": "FP32" if coarse_dtype(settings) == np.float32 else "FP64",
           "leaf_size": leaf_size or (LEAF_SIZE_GPU if backend == "cupy" else LEAF_SIZE_HOST),
           "coarse_unknowns": report.coarse_size, "iterations": report.iterations,
           "relative_residual": report.relative_residual, "total_seconds": total, "timings": report.timings,
           "memory": report.memory, "near_pairs": report.near_pairs,
           "max_displacement": float(np.linalg.norm(solution.displacement, axis=1).max())}
    if reference is not None:
        run["epsilon"] = float(np.linalg.norm(report.right_hand_side - reference) / np.linalg.norm(reference))
    if direct_u is not None:  # the solve's displacements against the dense BEM's, relative 2-norm
        run["direct_difference"] = float(np.linalg.norm(solution.displacement - direct_u) / np.linalg.norm(direct_u))
    log(f"  {backend} p={order} {scheme}, near field {ratio:g}, ILU {run['ilu']}, leaf {run['leaf_size']}, coarse "
        f"{report.coarse_size}, {passes} FMM pass(es): "
        f"{report.iterations} iterations, {total:.2f} s "
        f"({', '.join(f'{k} {v:.2f}' for k, v in report.timings.items())}), eps {run.get('epsilon', 'n/a')}, "
        f"host {report.memory['host_bytes'] / 2**20:.0f} MiB, device {report.memory['device_bytes'] / 2**20:.0f} MiB "
        f"({', '.join(f'{k} {v / 2**20:.0f}' for k, v in report.memory.get('device_phase_bytes', {}).items())})")
    return run


@functools.lru_cache(maxsize=1)
def _small_model(dofs: int):
    """The warm-up bracket, meshed once per run."""
    return bracket_model(dofs)


def _warm_up(config: FmbemBenchConfig, backend: str, order: int, scheme: str, warmed: set,
             leaf_size: int | None = 32) -> None:
    """One untimed solve of a small bracket per (backend, order, scheme, leaf size): kernel compilation and
    the operator tables stay out of the measured runs."""
    if (backend, order, scheme, leaf_size) in warmed:
        return
    _untimed_solve(_small_model(config.warm_up_dofs), config, backend, order, scheme, leaf_size)
    warmed.add((backend, order, scheme, leaf_size))


def _untimed_solve(model, config: FmbemBenchConfig, backend: str, order: int, scheme: str,
                   leaf_size: int | None) -> None:
    """One FMBEM solve of model (surface, data) with the solve's defaults otherwise, its result dropped."""
    surface, data = model
    solve_fmm(surface.points, surface.triangles, data, config.young, config.poisson,
              FmmSettings(order=order, leaf_size=leaf_size, m2l=scheme, backend=backend, rtol=config.rtol))


def bench_model(dofs: int, config: FmbemBenchConfig, table: str, log, warmed: set | None = None) -> dict:
    t0 = time.perf_counter()
    surface, data = bracket_model(dofs)
    case = {"table": table, "target_dofs": dofs, "dofs": 3 * surface.n_nodes, "nodes": surface.n_nodes,
            "elements": surface.n_elements, "mesh_seconds": time.perf_counter() - t0, "runs": []}
    reference = None
    if case["dofs"] <= config.epsilon_up_to:
        t0 = time.perf_counter()
        mu = config.young / (2 * (1 + config.poisson))
        reference = traction_load(surface.points, surface.triangles, data.traction, mu, config.poisson)
        case["reference_seconds"] = time.perf_counter() - t0
    log(f"bracket, {case['dofs']:,} DOFs ({case['elements']:,} triangles), table {table}")
    direct_u = None
    if table == "4" and case["dofs"] <= config.direct_up_to:
        case["direct"], direct_u = _dense(surface, data, config)
        log(f"  dense BEM: {case['direct']['seconds']:.1f} s, threads {case['direct']['host_threads']}")
    if table == "1-3":
        case["model_warm_up"] = True
        for p in config.orders:
            for scheme in M2L_SCHEMES:
                _warm_up(config, "cupy", p, scheme, warmed if warmed is not None else set(), config.leaf_size)
                if p == config.orders[0]:  # a scheme's one-time costs that the small bracket does not reach
                    _untimed_solve((surface, data), config, "cupy", p, scheme, config.leaf_size)
                case["runs"].append(_run(surface, data, config, "cupy", p, scheme, reference, log,
                                         leaf_size=config.leaf_size))
    else:
        ratios = config.near_ratios if case["dofs"] <= config.wide_near_up_to else config.near_ratios[:1]
        dofs, leaf = case["dofs"], config.leaf_size
        small = dofs <= config.default_leaf_up_to  # also at the solve's GPU leaf size, and without the coarse level
        lean = dofs <= config.ilu_fp64_up_to  # also the preconditioner in FP64, a shorter reach, more FMM passes
        work = ([("cupy", r, True, leaf, None, 1) for r in ratios]
                + ([("cupy", ratios[0], True, None, None, 1), ("cupy", ratios[0], True, None, 0, 1)] if small else [])
                + ([("cupy", ratios[0], False, None, None, 1), ("cupy", config.lean_ratio, True, None, None, 1),
                    ("cupy", config.lean_ratio, False, None, None, 1)] if lean else [])
                + ([("cupy", ratios[0], True, None, None, config.lean_far_passes),
                    ("cupy", config.lean_ratio, False, None, None, config.lean_far_passes)]
                   if lean and config.lean_far_passes > 1 else [])
                + ([("numpy", ratios[0], True, leaf, None, 1)] if dofs <= config.cpu_up_to else []))
        for backend, ratio, fp32, leaf_size, coarse, passes in work:
            _warm_up(config, backend, config.order, config.m2l, warmed if warmed is not None else set(), leaf_size)
            case["runs"].append(_run(surface, data, config, backend, config.order, config.m2l, reference, log,
                                     ratio, fp32, leaf_size, coarse, passes, direct_u=direct_u))
    return case


def _dense(surface, data, config: FmbemBenchConfig) -> tuple[dict, np.ndarray]:
    """The dense BEM solve (engine/bem/direct.py: assembly by Numba and LU by SciPy on the host's cores): its
    record and its displacements (N, 3)."""
    t0 = time.perf_counter()
    solution = solve_direct(surface.points, surface.triangles, data, config.young, config.poisson)
    seconds = time.perf_counter() - t0
    n3 = 3 * (surface.n_nodes + solution.double_nodes)
    return ({"seconds": seconds, "host_threads": host_threads(), "matrix_bytes": 4 * n3 * n3 * 8,
             "max_displacement": float(np.linalg.norm(solution.displacement, axis=1).max())},
            solution.displacement)


def run_fmbem_benchmark(config: FmbemBenchConfig, command: list[str] | None = None,
                        log: Callable[[str], None] = print, checkpoint: Callable[[dict], None] | None = None) -> dict:
    import cupy as cp  # noqa: PLC0415

    data = {"benchmark": "fmbem", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(config),
            "host_threads": os.cpu_count(), "cases": []}
    work = ([(config.tables_dofs, "1-3")] if config.orders else []) + [(d, "4") for d in config.dofs]
    warmed: set = set()
    for dofs, table in work:
        data["cases"].append(bench_model(dofs, config, table, log, warmed))
        if checkpoint is not None:
            checkpoint(data)
    return data


def merge(data: dict, earlier: dict) -> dict:
    """Add the cases of an earlier run on the same device that this run did not measure."""
    key = lambda c: (c["table"], c["target_dofs"])  # noqa: E731
    return environment.merge_cases(data, earlier, key, key)


def add_arguments(parser) -> None:
    """`paraflux bench fmbem`'s own options."""
    parser.add_argument("--dofs", type=whole(1), nargs="+", metavar="N",
                        help="Table 4 alone, the bracket at about these DOFs (default: Tables 1-3, then Table 4 at "
                             f"{listed(FmbemBenchConfig.dofs)}); with --orders, Tables 1-3 too")
    parser.add_argument("--orders", type=whole(1), nargs="+", metavar="P",
                        help=f"Tables 1-3 alone at these expansion orders (default {listed(FmbemBenchConfig.orders)})")
    add_merge(parser, "the tables and sizes")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench fmbem` asks for it."""
    dofs, orders = tuple_of(args.dofs), tuple_of(args.orders)
    config = FmbemBenchConfig()
    if dofs:  # Table 4 at these sizes only, unless orders asks for Tables 1-3 too
        config = replace(config, dofs=dofs, orders=orders)
    elif orders:  # Tables 1-3 at these orders only
        config = replace(config, orders=orders, dofs=())
    return run_fmbem_benchmark(config, command, log, checkpoint)
