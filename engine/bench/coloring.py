"""`paraflux bench coloring`: CCM, FCM, OFCM and the parallel colouring on paper 002's mesh sizes and
beyond, against NetworkX's greedy colouring, and EBE-J-PCG with coloured vs atomic accumulation.

Results: docs/benchmarks/coloring.json (raw) and coloring.md (rendered from the JSON).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..coloring.adjacency import element_adjacency, max_node_degree
from ..coloring.groups import groups_from_colors, is_valid_coloring
from ..coloring.parallel import color_parallel_gpu, color_parallel_numpy
from ..coloring.sequential import _compiled, balance_colors, color_sequential
from .systems import case_system
from .environment import gpu_facts, median_seconds, run_facts
from .options import add_repeats, given, whole

# paper 002: Table 1 (24,106 elements; ms, colours) and Table 3 (transformer; OFCM / FCM colouring ms)
PAPER_TABLE_1 = {"ofcm": (7634, 7), "fcm": (19028, 7), "ccm": (41358, 8)}
PAPER_TABLE_3 = {11443: (1862, 4269), 19328: (5971, 12267), 40816: (24642, 55691),
                 61390: (56019, 122850), 171338: (275698, 702756)}


@dataclass(frozen=True)
class ColoringBenchConfig:
    meshes: tuple[tuple[str, int], ...] = (
        ("solenoid", 24106), ("transformer", 11443), ("transformer", 19328), ("transformer", 40816),
        ("transformer", 61390), ("transformer", 171338), ("transformer", 1_000_000), ("transformer", 4_000_000))
    repeats: int = 3
    networkx_up_to: int = 200_000  # elements; NetworkX takes minutes and gigabytes beyond
    solve_repeats: int = 3
    rtol: float = 1e-8


def _group_stats(colors: np.ndarray) -> dict:
    g = groups_from_colors(colors)
    return {"colors": g.n_colors, "smallest": int(g.sizes.min()), "largest": int(g.sizes.max()),
            "ratio": g.balance_ratio}


def _networkx(triangles, n_nodes) -> dict:
    import networkx as nx  # noqa: PLC0415

    offsets, neighbours = element_adjacency(triangles, n_nodes)
    rows = np.repeat(np.arange(len(triangles)), np.diff(offsets))
    t0 = time.perf_counter()
    graph = nx.Graph()
    graph.add_nodes_from(range(len(triangles)))
    graph.add_edges_from(zip(rows[rows < neighbours].tolist(), neighbours[rows < neighbours].tolist()))
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    coloring = nx.greedy_color(graph, strategy="largest_first")
    seconds = time.perf_counter() - t0
    colors = np.array([coloring[e] for e in range(len(triangles))], dtype=np.int32)
    assert is_valid_coloring(triangles, colors)
    return {"seconds": seconds, "graph_seconds": build, **_group_stats(colors)}


def bench_mesh(cp, case: str, elements: int, config: ColoringBenchConfig, log) -> dict:
    _, mesh, system = case_system(case, elements)
    tri, n = mesh.triangles, mesh.n_nodes
    row = {"case": case, "target_elements": elements, "elements": mesh.n_elements, "nodes": n,
           "lower_bound": max_node_degree(tri, n), "methods": {}}
    log(f"{case}: {mesh.n_elements} elements, lower bound {row['lower_bound']}")
    runs = {m: (lambda m=m: color_sequential(m, tri, n)) for m in ("ccm", "fcm", "ofcm")}
    runs["parallel-gpu"] = lambda: color_parallel_gpu(tri, n)[0]
    runs["parallel-numpy"] = lambda: color_parallel_numpy(tri, n)[0]
    colorings = {}  # method -> (colours, balanced colours), for the coloured solves
    for name, fn in runs.items():
        fn()  # warm-up (kernel compilation)
        seconds, colors = median_seconds(fn, config.repeats)
        assert is_valid_coloring(tri, colors)
        balance_seconds, balanced = median_seconds(lambda: balance_colors(tri, n, colors), config.repeats)
        assert is_valid_coloring(tri, balanced)
        colorings[name] = (colors, balanced)
        row["methods"][name] = {"seconds": seconds, **_group_stats(colors),
                                "balance_seconds": balance_seconds, "balanced": _group_stats(balanced)}
        log(f"  {name}: {1e3 * seconds:.2f} ms, {row['methods'][name]['colors']} colours, "
            f"ratio {row['methods'][name]['ratio']:.1f} -> {row['methods'][name]['balanced']['ratio']:.2f}")
    if mesh.n_elements <= config.networkx_up_to:
        row["networkx"] = _networkx(tri, n)
        log(f"  networkx: {row['networkx']['seconds']:.2f} s, {row['networkx']['colors']} colours")
    if case == "transformer":
        row["solve"] = _solves(cp, system, mesh, colorings, config)
        log(f"  solve: atomic {1e6 * row['solve']['atomic']['seconds_per_iteration']:.1f} us/it, colored "
            f"{1e6 * row['solve']['colored']['seconds_per_iteration']:.1f} us/it")
    return row


def _solves(cp, system, mesh, colorings: dict, config) -> dict:
    """GPU EBE-J-PCG (fused reduction) with atomic and with coloured accumulation: "colored" with OFCM's
    balanced groups, "per_method" with every method's groups as it made them and after balancing."""
    from ..magnetostatics.gpu_ebe_pcg import solve_ebe_jpcg_gpu  # noqa: PLC0415

    def timed(groups) -> dict:
        results = []
        for _ in range(config.solve_repeats):
            t0 = time.perf_counter()
            result = solve_ebe_jpcg_gpu(system, config.rtol, None, "fused", None, None, groups)
            cp.cuda.Device().synchronize()
            results.append((time.perf_counter() - t0, result))
        return {"seconds": float(np.median([t for t, _ in results])), "iterations": results[0][1].iterations,
                "seconds_per_iteration": float(np.median([r.loop_seconds / r.iterations for _, r in results]))}

    groups = groups_from_colors(colorings["ofcm"][1])  # OFCM, balanced
    out = {"n_colors": groups.n_colors}
    for name, g in (("atomic", None), ("colored", groups)):
        solve_ebe_jpcg_gpu(system, config.rtol, None, "fused", None, None, g)  # warm-up
        out[name] = timed(g)
    out["per_method"] = {
        method: {"as_made": timed(groups_from_colors(colors)), "balanced": timed(groups_from_colors(balanced))}
        for method, (colors, balanced) in colorings.items()}
    return out


def run_coloring_benchmark(config: ColoringBenchConfig, command: list[str] | None = None,
                           log: Callable[[str], None] = print) -> dict:
    import cupy as cp  # noqa: PLC0415

    _compiled()  # compile the Numba colourings before anything is timed
    data = {"benchmark": "coloring", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(config)}
    data["meshes"] = [bench_mesh(cp, case, n, config, log) for case, n in config.meshes]
    return data


def add_arguments(parser) -> None:
    """`paraflux bench coloring`'s own options."""
    default = ", ".join(f"{case} {n}" for case, n in ColoringBenchConfig.meshes)
    parser.add_argument("--elements", type=whole(1), nargs="+", metavar="N",
                        help=f"transformer case element counts, in place of the default meshes ({default})")
    add_repeats(parser, ColoringBenchConfig.repeats, "timed repeats per colouring")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench coloring` asks for it."""
    meshes = tuple(("transformer", n) for n in args.elements or ())
    return run_coloring_benchmark(given(ColoringBenchConfig(), meshes=meshes, repeats=args.repeats), command, log)
