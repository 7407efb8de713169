"""`paraflux bench hex`: element stiffness matrices of hierarchical hexahedra, m = 10,000 distorted
elements, p = 1..10, every integration variant (paper 004, Table 3 and beyond), against the measured
FP64 GEMM rate of the same GPU.

Results: docs/benchmarks/hex.json (raw) and hex.md (rendered from the JSON).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..hexfem.basis import hex_basis, quadrature_points_1d, reference_tables, slides_points_1d
from ..hexfem.element_matrices import INTEGRATIONS, element_matrix_chunks, lame, textbook_flops
from ..hexfem.gpu_element_matrices import mma_flops
from . import environment
from .environment import gpu_facts, run_facts
from .options import add_merge, add_repeats, given, tuple_of, whole

# paper 004, Table 3: m = 10,000; one-core -O3 seconds (E5-2609) and speed-ups t_CPU / t_GPU (GTX680)
PAPER_TABLE_3 = {1: (0.14, 0.74, 0.67), 2: (0.58, 1.08, 1.05), 3: (10.52, 1.48, 6.41), 4: (47.52, 1.41, 6.75),
                 5: (293.00, 1.50, 5.01)}
GPU_VARIANTS = ("ai", "aii", "gemm", "mma", "sumfact")
CPU_VARIANTS = ("serial", "numpy")


@dataclass(frozen=True)
class HexBenchConfig:
    elements: int = 10_000
    orders: tuple[int, ...] = tuple(range(1, 11))
    repeats: int = 3  # GPU timings: median of these after a warm-up
    cpu_seconds: float = 2.0  # CPU variants run on as many elements as fit in about this time, then scale
    gpu_budget_gib: float = 4.0  # scratch memory per chunk of element matrices
    check_elements: int = 16  # elements on which every variant is compared with gemm on the CPU
    ai_max_order: int = 6  # AI's cost per thread grows as n_G N_e^2 (about 7 s at p = 5): not run above


def distorted_elements(m: int, seed: int = 0) -> np.ndarray:
    """(m, 8, 3) corner coordinates (m) of unit-ish hexahedra with corners moved by up to 15 %."""
    rng = np.random.default_rng(seed)
    from ..hexfem.basis import HEX_VERTICES  # noqa: PLC0415

    return 0.5 * HEX_VERTICES[None] + rng.uniform(-0.075, 0.075, (m, 8, 3)) + rng.uniform(0, 10, (m, 1, 3))


def actual_flops(p: int, variant: str) -> int:
    """Flops per element that a variant performs (multiply and add counted apart)."""
    t = reference_tables(p)
    n_g, n_s, n_q, n_1 = len(t.weights), t.basis.n_functions, t.n_q, t.values.shape[0]
    if variant == "numpy":
        return textbook_flops(p)
    if variant == "gemm":
        return 2 * n_g * (3 * n_s) ** 2
    if variant == "mma":
        return mma_flops(n_s, n_g)
    if variant == "aii":
        return n_g * n_s * n_s * 21  # 9 multiply-adds and 3 scalings per block and point, full matrix
    if variant in ("ai", "serial"):
        return n_g * n_s * (n_s + 1) // 2 * 62  # upper block triangle: dot product and 9 entries of 6 flops
    if variant == "sumfact":
        per_field = 2 * (n_q ** 3 * n_1 ** 2 + n_q ** 2 * n_1 ** 4 + n_q * n_s * n_s)
        return 54 * per_field
    raise ValueError(variant)


def dgemm_rate(cp, n: int = 8192, repeats: int = 5) -> float:
    """Measured FP64 GEMM rate (flop/s) of cuBLAS on n x n matrices, median after a warm-up."""
    a, b = cp.random.standard_normal((n, n)), cp.random.standard_normal((n, n))
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for i in range(repeats + 1):
        start.record()
        cp.matmul(a, b)
        end.record()
        end.synchronize()
        if i:
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return 2 * n ** 3 / float(np.median(times))


def _gpu_pass(cp, coords, lam, mu, p, variant, budget):
    for _, _, k in element_matrix_chunks(coords, lam, mu, p, variant, cp, budget):
        del k


def _time_gpu(cp, coords, lam, mu, p, variant, config) -> float:
    budget = int(config.gpu_budget_gib * 2**30)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    start.record()
    _gpu_pass(cp, coords, lam, mu, p, variant, budget)  # warm-up (compilation, cuBLAS handles)
    end.record()
    end.synchronize()
    repeats = config.repeats if cp.cuda.get_elapsed_time(start, end) < 2e3 else 1  # slow passes: one timing
    for _ in range(repeats):
        start.record()
        _gpu_pass(cp, coords, lam, mu, p, variant, budget)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times))


def _time_cpu(coords, lam, mu, p, variant, config) -> tuple[float, int]:
    """(seconds for all elements, elements actually run): timed on a prefix, scaled linearly."""
    function, _ = INTEGRATIONS[variant]
    function(coords[:1], lam[:1], mu[:1], p, np)  # warm-up (Numba compilation)
    t0 = time.perf_counter()
    function(coords[:1], lam[:1], mu[:1], p, np)
    one = time.perf_counter() - t0
    k = int(min(len(coords), max(1, config.cpu_seconds / max(one, 1e-9))))
    t0 = time.perf_counter()
    function(coords[:k], lam[:k], mu[:k], p, np)
    return (time.perf_counter() - t0) * len(coords) / k, k


def _check(cp, coords, lam, mu, p, config) -> dict:
    """Largest difference of each variant from gemm on the CPU, relative to the largest entry."""
    n = config.check_elements if p <= 6 else 2  # the textbook CPU variant costs 30 GFLOP per element at p = 10
    reference = INTEGRATIONS["gemm"][0](coords[:n], lam[:n], mu[:n], p, np)
    scale = np.abs(reference).max()
    out = {}
    for variant in (*CPU_VARIANTS, *GPU_VARIANTS):
        k = INTEGRATIONS[variant][0](coords[:n], lam[:n], mu[:n], p, cp if variant in GPU_VARIANTS else np)
        k = k if isinstance(k, np.ndarray) else k.get()
        out[variant] = float(np.abs(k - reference).max() / scale)
    return out


def bench_order(cp, p: int, coords, lam, mu, config: HexBenchConfig, log) -> dict:
    basis = hex_basis(p)
    row = {"order": p, "dofs_per_element": basis.n_dofs, "gauss_points": quadrature_points_1d(p) ** 3,
           "slides_gauss_points": slides_points_1d(p) ** 3, "textbook_flops_per_element": textbook_flops(p),
           "variants": {}}
    row["max_relative_difference_from_gemm"] = _check(cp, coords, lam, mu, p, config)
    m = len(coords)
    for variant in CPU_VARIANTS:
        seconds, ran = _time_cpu(coords, lam, mu, p, variant, config)
        row["variants"][variant] = {"seconds": seconds, "elements_run": ran, "device": "cpu-1-core"
                                    if variant == "serial" else "cpu-numpy"}
        log(f"  p={p} {variant}: {seconds:.3g} s (run on {ran} elements, scaled to {m})")
    d_coords, d_lam, d_mu = cp.asarray(coords), cp.asarray(lam), cp.asarray(mu)
    for variant in GPU_VARIANTS:
        entry = {"device": "gpu", "elements_run": m}
        if variant == "ai" and p > config.ai_max_order:
            entry["seconds"] = None
            row["variants"][variant] = entry
            log(f"  p={p} ai: not run (above order {config.ai_max_order})")
            continue
        entry["seconds"] = _time_gpu(cp, d_coords, d_lam, d_mu, p, variant, config)
        row["variants"][variant] = entry
        log(f"  p={p} {variant}: {entry['seconds']:.4g} s")
    for variant, entry in row["variants"].items():
        entry["actual_flops_per_element"] = actual_flops(p, variant)
    row["variants"]["gemm"]["gram_gemm_seconds"] = _time_gram_gemm(cp, p, m, config)
    return row


def _time_gram_gemm(cp, p: int, m: int, config: HexBenchConfig) -> float:
    """The batched cuBLAS DGEMM of the gemm variant alone, for m elements in the same chunks (s)."""
    from ..hexfem.element_matrices import working_bytes  # noqa: PLC0415

    t = reference_tables(p)
    chunk = min(m, max(1, int(config.gpu_budget_gib * 2**30) // working_bytes(p, "gemm")))
    x = cp.random.standard_normal((chunk, len(t.weights), t.basis.n_dofs))
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for i in range(4):
        start.record()
        cp.matmul(x.transpose(0, 2, 1), x)
        end.record()
        end.synchronize()
        if i:
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times)) * m / chunk


def run_hex_benchmark(config: HexBenchConfig, command: list[str] | None = None,
                      log: Callable[[str], None] = print) -> dict:
    import cupy as cp  # noqa: PLC0415

    data = {"benchmark": "hex", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(config)}
    data["dgemm_flops"] = dgemm_rate(cp)
    data["copy_bandwidth"] = environment.copy_bandwidth(cp)
    log(f"FP64 GEMM {data['dgemm_flops'] / 1e12:.1f} TFLOP/s, copy {data['copy_bandwidth'] / 1e9:.0f} GB/s")
    coords = distorted_elements(config.elements)
    lam, mu = lame(np.full(config.elements, 210e9), np.full(config.elements, 0.3))
    data["orders"] = [bench_order(cp, p, coords, lam, mu, config, log) for p in config.orders]
    for row in data["orders"]:  # each order keeps the ceiling of the run that measured it (see merge)
        row["dgemm_flops"] = data["dgemm_flops"]
        row["date"] = data["date"]
    return data


def merge(data: dict, earlier: dict) -> dict:
    """Add the orders of an earlier run on the same device that this run did not measure."""
    if earlier.get("benchmark") != "hex" or earlier["gpu"]["device"] != data["gpu"]["device"]:
        raise ValueError("only hex results from the same device can be merged")
    have = {row["order"] for row in data["orders"]}
    rows = [row for row in earlier["orders"] if row["order"] not in have] + data["orders"]
    merged = dict(data, orders=sorted(rows, key=lambda r: r["order"]))
    merged["merged_runs"] = [*earlier.get("merged_runs", []),
                             {k: earlier[k] for k in ("date", "command", "commit")}]
    return merged


def add_arguments(parser) -> None:
    """`paraflux bench hex`'s own options."""
    parser.add_argument("--orders", type=whole(1), nargs="+", metavar="P",
                        help="element orders p (default 1 to 10)")
    parser.add_argument("--elements", type=whole(1), metavar="M",
                        help="distorted hexahedra m whose element matrices are timed (default "
                             f"{HexBenchConfig.elements})")
    add_repeats(parser, HexBenchConfig.repeats)
    add_merge(parser, "the orders")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench hex` asks for it."""
    config = given(HexBenchConfig(), orders=tuple_of(args.orders), elements=args.elements, repeats=args.repeats)
    return run_hex_benchmark(config, command, log)
