"""Markdown tables of `paraflux bench ebe` results, rendered from the JSON record (no number typed by hand)."""

from __future__ import annotations

from .ebe import PAPER_TABLE_1, gpu_reductions
from .report import header, page, row, section, table, target, verdict

TARGET_BANDWIDTH = 0.60
TARGET_SPEEDUP = 50.0
TARGET_VS_CSR = 1.5
PAPER_SIZE = 171338
NOISE = 1.05  # ratios closer to 1 than this are within the spread of repeated runs


def _per_iteration(entry: dict) -> float:
    if "seconds_per_iteration" in entry:
        return entry["seconds_per_iteration"]
    return entry.get("loop_seconds", entry["seconds"]) / max(entry["iterations"], 1)


def _total(entry: dict, iterations: int) -> tuple[float, bool]:
    """Solve seconds; a capped CPU run is extrapolated to the GPU's iteration count (flag True):
    its measured set-up plus its measured time per iteration times that count."""
    if entry.get("capped"):
        return entry["setup_seconds"] + entry["seconds_per_iteration"] * iterations, True
    return entry["seconds"], False


def _fmt(seconds: float, extrapolated: bool = False) -> str:
    text = f"{seconds:.3g}" if seconds >= 0.01 else f"{seconds:.2e}"
    return f"~{text}" if extrapolated else text


def _best(size: dict) -> str:
    return min(gpu_reductions(), key=lambda v: size["gpu"][v]["loop_seconds"] / size["gpu"][v]["iterations"])


def _header_and_solve_times(data: dict) -> list[str]:
    """Run facts, then the solve time per mesh and solver."""
    variants = gpu_reductions()
    copy_bw = data["copy_bandwidth_bytes_per_s"]
    gpu = data["gpu"]
    device = (f"- Device: {gpu['device']} ({gpu['multiprocessors']} SMs, {gpu['memory_gib']} GiB), CUDA runtime "
              f"{gpu['cuda_runtime']}, driver {gpu['cuda_driver']}; host CPU {data['host_cpu']}")
    lines = [
        *header("EBE-J-PCG benchmark: transformer case, paper 000 Table 1 and beyond", device, data),
        f"- Measured device-to-device copy bandwidth (read + write): {copy_bw / 1e12:.2f} TB/s: the ceiling "
        "every bandwidth fraction below refers to.",
        f"- Tolerance ||b - Ax|| <= {data['config']['rtol']:g} ||b|| for every solver; GPU times are medians of "
        f"{data['config']['repeats']} runs after a warm-up. Raw numbers: `ebe.json`.",
        "- serial = the same EBE-J-PCG on one CPU core (Numba), the paper's serial baseline; NumPy = ParaFlux's "
        "CPU solver; SciPy / CuPy CSR CG = assembled matrix, Jacobi-preconditioned CG, what a user would "
        "otherwise pick. GPU columns are ParaFlux's CUDA solver with each reduction variant.",
        f"- `~` marks a CPU time extrapolated to the GPU's iteration count, for meshes above "
        f"{data['config']['cpu_full_up_to']:,} elements: measured set-up (a one-iteration run) plus the time per "
        f"iteration of a capped run ({data['config']['cpu_capped_iterations']} iterations; NumPy "
        f"{data['config']['numpy_capped_iterations']}), set-up excluded.",
        "",
        "## Solve time (s)",
        "",
        *table(["elements", "nodes", "iterations", "serial", "NumPy", "SciPy CSR CG", *(f"GPU {v}" for v in variants),
                "CuPy CSR CG"], "r" * (7 + len(variants))),
    ]
    for size in data["sizes"]:
        its = size["gpu"]["fused"]["iterations"]
        cells = [f"{size['elements']:,}", f"{size['nodes']:,}", str(its)]
        for key in ("serial", "numpy", "scipy_csr_cg"):
            cells.append(_fmt(*_total(size[key], its)))
        cells += [_fmt(size["gpu"][v]["seconds"]) for v in variants]
        cells.append(_fmt(size["cupy_csr_cg"]["seconds"]))
        lines.append(row(cells))
    return lines


def _per_iteration_table(data: dict) -> list[str]:
    """Time per iteration and its bandwidth fraction."""
    variants = gpu_reductions()
    copy_bw = data["copy_bandwidth_bytes_per_s"]
    lines = section("Time per iteration (microseconds) and bandwidth", [
              "GPU cells: time per iteration of the iteration loop (CUDA events, convergence checks included) "
              "and, in brackets, the bytes an iteration must move (element data once, node vectors once per "
              "kernel of the fused scheme) per that time as a fraction of the copy bandwidth.", "",
              *table(["elements", "MB/iteration", "serial", "NumPy", "SciPy CSR CG", *(f"GPU {v}" for v in variants),
                      "CuPy CSR CG"], "r" * (6 + len(variants)))])
    for size in data["sizes"]:
        cells = [f"{size['elements']:,}", f"{size['bytes_per_iteration'] / 1e6:.1f}"]
        cells += [f"{1e6 * _per_iteration(size[k]):.1f}" for k in ("serial", "numpy", "scipy_csr_cg")]
        for v in variants:
            t = _per_iteration(size["gpu"][v])
            cells.append(f"{1e6 * t:.1f} ({size['bytes_per_iteration'] / t / copy_bw:.0%})")
        cells.append(f"{1e6 * _per_iteration(size['cupy_csr_cg']):.1f}")
        lines.append(row(cells))
    return lines


def _speed_up_table(data: dict) -> list[str]:
    """Speed-up over the serial baseline, beside paper 000's."""
    variants = gpu_reductions()
    lines = section("Speed-up over the serial baseline (total solve time)", [
              *table(["elements", *(f"GPU {v}" for v in variants), "CuPy CSR CG", "paper: unoptimised",
                      "paper: optimised"], "r" * (4 + len(variants)))])
    for size in data["sizes"]:
        its = size["gpu"]["fused"]["iterations"]
        serial, extrapolated = _total(size["serial"], its)
        mark = "~" if extrapolated else ""
        cells = [f"{size['elements']:,}"] + [f"{mark}{serial / size['gpu'][v]['seconds']:.1f}" for v in variants]
        cells.append(f"{mark}{serial / size['cupy_csr_cg']['seconds']:.1f}")
        paper = PAPER_TABLE_1.get(size["target_elements"])
        cells += [f"{paper[0] / paper[1]:.1f}", f"{paper[0] / paper[2]:.1f}"] if paper else ["", ""]
        lines.append(row(cells))
    lines += ["", "Paper 000's own times (minutes, Quadro K2000): " + "; ".join(
        f"{n:,} elements: serial {s}, unoptimised {u}, optimised {o}" for n, (s, u, o) in PAPER_TABLE_1.items())
        + ". ParaFlux's serial baseline is compiled and cache-friendly, so its speed-ups are measured against "
        "a far stronger baseline than the paper's.", ""]
    return lines


def _reductions_table(data: dict) -> list[str]:
    """The reductions alone, per inner product."""
    copy_bw = data["copy_bandwidth_bytes_per_s"]
    lines = ["## Reductions alone (microseconds per inner product of two float64 vectors)", "",
              "In brackets: 16 bytes per entry over the time, as a fraction of the copy bandwidth.", "",
              *table(["n", "adjacent", "sequential", "warp-shuffle", "library"], "rrrrr")]
    for r in data["reductions"]:
        cells = [f"2^{r['n'].bit_length() - 1}"]
        for v in ("adjacent", "sequential", "warp-shuffle", "library"):
            cells.append(f"{1e6 * r[v]:.1f} ({16 * r['n'] / r[v] / copy_bw:.0%})")
        lines.append(row(cells))
    return lines


def _check_every_table(data: dict) -> list[str]:
    """Iterations between convergence checks (fused variant)."""
    return section("Convergence-check interval (fused variant)", table(
        ["check every k iterations", "elements", "iterations", "microseconds per iteration"], "rrrr",
        [(r["check_every"], f"{r['elements']:,}", r["iterations"], f"{1e6 * r['seconds_per_iteration']:.1f}")
         for r in data["check_every"]]))


def render_markdown(data: dict) -> str:
    return page(_header_and_solve_times(data) + _per_iteration_table(data) + _speed_up_table(data)
                + _reductions_table(data) + _check_every_table(data) + section("Targets", _targets(data))
                + section("Analysis", _analysis(data)))


def _targets(data: dict) -> list[str]:
    copy_bw = data["copy_bandwidth_bytes_per_s"]
    rows = data["sizes"]
    out = []
    paper_row = next((r for r in rows if r["target_elements"] == PAPER_SIZE), None)
    if paper_row:
        adj, seq = (_per_iteration(paper_row["gpu"][v]) for v in ("adjacent", "sequential"))
        micro = data["reductions"][-1]
        out.append(f"- sequential faster than adjacent, the paper's 2x (8.8 / 4.4) as the bar: "
                   f"{adj / seq:.2f}x per solver iteration at {paper_row['elements']:,} elements "
                   f"({'beyond' if adj / seq >= NOISE else 'within'} the {NOISE - 1:.0%} run-to-run noise), "
                   f"{micro['adjacent'] / micro['sequential']:.2f}x for the reduction alone at "
                   f"2^{micro['n'].bit_length() - 1}: {verdict(adj / seq >= 2.0)} (see Analysis).")
        its = paper_row["gpu"]["fused"]["iterations"]
        serial, _ = _total(paper_row["serial"], its)
        best = _best(paper_row)
        speedup = serial / paper_row["gpu"][best]["seconds"]
        out.append(target(f"GPU speed-up over the serial baseline at {paper_row['elements']:,} elements: "
                          f"{speedup:.1f}x ({best}; paper 8.8x, aim 50x)", speedup >= TARGET_SPEEDUP))
    for size in rows:
        if size["elements"] < 900_000:
            continue
        best = _best(size)
        fraction = size["bytes_per_iteration"] / _per_iteration(size["gpu"][best]) / copy_bw
        out.append(target(f"bandwidth at {size['elements']:,} elements: {fraction:.0%} of the copy bandwidth "
                          f"({best}; target 60%)", fraction >= TARGET_BANDWIDTH))
    for size in rows:
        best = _best(size)
        ratio = _per_iteration(size["gpu"][best]) / _per_iteration(size["cupy_csr_cg"])
        out.append(target(f"time per iteration against CuPy CSR CG at {size['elements']:,} elements: "
                          f"{ratio:.2f}x ({best}; target within {TARGET_VS_CSR}x)", ratio <= TARGET_VS_CSR))
    return out


def _analysis(data: dict) -> list[str]:
    """Why the numbers come out as they do, with the figures taken from this run."""
    rows, copy_bw = data["sizes"], data["copy_bandwidth_bytes_per_s"]
    large, small = rows[-1], rows[0]
    micro = data["reductions"][-1]
    per_it = {v: _per_iteration(large["gpu"][v]) for v in gpu_reductions()}
    csr_large = _per_iteration(large["cupy_csr_cg"])
    csr_small = _per_iteration(small["cupy_csr_cg"])
    share = 1.0 - per_it["fused"] / per_it["warp-shuffle"]
    paper_row = next((r for r in rows if r["target_elements"] == PAPER_SIZE), large)
    ratio = _per_iteration(paper_row["gpu"]["adjacent"]) / _per_iteration(paper_row["gpu"]["sequential"])
    return [
        f"- Reductions (the sequential-vs-adjacent target is {'met' if ratio >= 2.0 else 'missed'}): alone, "
        "sequential addressing beats "
        f"adjacent addressing by "
        f"{micro['adjacent'] / micro['sequential']:.2f}x at n = 2^{micro['n'].bit_length() - 1} and warp shuffles "
        f"reach {16 * micro['n'] / micro['warp-shuffle'] / copy_bw:.0%} of the copy bandwidth (they only read). "
        f"Inside a solve the gap nearly vanishes ({per_it['adjacent'] / per_it['sequential']:.2f}x at {large['elements']:,} elements, "
        "within run-to-run noise at the paper's sizes): on this GPU the divergent `tid % (2s)` test costs a few "
        "cycles per level, the inner products are a small share of an iteration next to the element product "
        "and its atomics, and the paper's 2x came from a Kepler card where the reduction dominated. Nothing "
        "short of making the reductions the bottleneck again would restore a 2x gap, so the paper's ratio is "
        "not reproduced; it is reported as missed rather than staged.",
        f"- Fusing the inner products into the product and update kernels (block partials plus a one-block "
        f"second pass) saves {share:.0%} of the warp-shuffle iteration at {large['elements']:,} elements: two "
        "passes over r and z and two over p and q disappear, and an iteration is five kernel launches instead of "
        "nine. A last-block-finishes variant (one kernel, __threadfence and an atomic counter) was measured "
        "30-40 % slower than the plain product, because the fence waits for the block's scattered atomics.",
        f"- Against CuPy's CSR CG: {csr_small / _per_iteration(small['gpu']['fused']):.0f}x faster per "
        f"iteration at {small['elements']:,} elements and {csr_large / per_it['fused']:.1f}x at "
        f"{large['elements']:,}. At small sizes CuPy's cg is bound by launch latency and a host round trip per "
        "iteration (its convergence test); ParaFlux replays a CUDA graph of 32 iterations and reads the residual "
        "history once per graph. At large sizes both are bound by memory traffic, and the matrix-free EBE product "
        "is not cheaper in bytes than CSR for linear triangles (6 matrix words per element, about 12 per node, "
        "against about 7 values and 7 column indices per CSR row): EBE wins there through fusion and fewer "
        "launches, not through the product itself.",
        "- The library variant (CuPy's CUB sum) cannot be captured in a CUDA graph because it allocates its "
        "temporary storage, so every one of its iterations pays host launch overhead: that is what a user calling "
        "cupy.sum in a loop gets.",
        "- CPU baselines: the serial column is the same EBE-J-PCG compiled with Numba on one core, on Morton-"
        "numbered meshes (ParaFlux numbers every mesh for locality), far faster than the paper's serial code; the "
        "NumPy solver pays for temporaries and np.bincount on every product.",
    ]
