"""Markdown for the scattering-linear benchmark (engine/bench/scattering_linear.py): every installed sparse
direct solver on the scattering study's FEM matrix, and their ranking (the order `auto` follows) decided from
the rows (no number typed by hand)."""

from __future__ import annotations

from .report import header, on_host, page, row, section, table


def cost_s(row: dict) -> float:
    """What one solver costs the study per order: the factorisation plus one back-substitution of the most
    right-hand sides measured (s)."""
    largest = max(row["back_substitution_s"], key=int)
    return row["factorisation_s"] + row["back_substitution_s"][largest]


def ranking(data: dict) -> list[str]:
    """The solvers, fastest first, by their cost summed over the orders (solvers measured at every order)."""
    per_order = [{r["solver"]: cost_s(r) for r in o["rows"]} for o in data["orders"]]
    everywhere = set.intersection(*(set(p) for p in per_order)) if per_order else set()
    return sorted(everywhere, key=lambda s: sum(p[s] for p in per_order))


def _memory(row: dict) -> str:
    return f"{row['factor_memory_bytes'] / 2**20:,.0f}" if row["factor_memory_bytes"] is not None else "not reported"


def _table(data: dict, rhs: list[str]) -> list[str]:
    lines = table(["order", "DOFs (free)", "assembly s", "solver", "threads", "load at start", "factorisation s",
                   *(f"back-substitution {r} RHS s" for r in rhs), "factor nonzeros", "factor memory MiB",
                   "largest residual"], "rrrlrrr" + "r" * len(rhs) + "rrr")
    for o in data["orders"]:
        for r in o["rows"]:
            nonzeros = f"{r['factor_nonzeros']:,}" if r["factor_nonzeros"] is not None else "not reported"
            threads = r["threads"] if r["threads"] is not None else "not known"
            lines.append(row([o["order"], f"{o['free_dofs']:,}", f"{o['assembly_s']:.2f}", r["solver"], threads,
                              f"{r['load_before']:.1f}", f"{r['factorisation_s']:.2f}",
                              *(f"{r['back_substitution_s'][n]:.3f}" for n in rhs), nonzeros, _memory(r),
                              f"{r['residual']:.1e}"]))
    return lines


def _assembly_lines(data: dict) -> list[str]:
    """Per order: the assembly against the fastest factorisation."""
    lines = []
    for o in data["orders"]:
        best = min(o["rows"], key=lambda r: r["factorisation_s"])
        larger = "assembly" if o["assembly_s"] > best["factorisation_s"] else "factorisation"
        lines.append(f"- Order {o['order']}: assembly {o['assembly_s']:.2f} s, the fastest factorisation "
                     f"({best['solver']}) {best['factorisation_s']:.2f} s: the {larger} is the larger cost.")
    return lines


def render_markdown(data: dict) -> str:
    cfg = data["config"]
    rhs = [str(r) for r in cfg["rhs"]]
    order = ranking(data)
    skipped = [f"{n} ({why})" for n, why in data["not_installed"].items()]
    lines = [
        *header("Scattering: the sparse direct solvers on the FEM matrix", on_host(data), data),
        f"- Matrix: the free block (unknowns off the scatterer) of A = K - k^2 M + jk B_S, complex symmetric, for "
        f"the PEC sphere of {cfg['diameter']:g} wavelength(s) diameter at 300 MHz, each Nedelec order at its default "
        "elements per wavelength. Assembly: element matrices to the CSR matrix (discretise and fem_matrix).",
        f"- Each time is the fastest of {cfg['repeats']} runs. Back-substitution: one call with a block of random "
        "complex right-hand sides; residual: the largest ||A X - B|| / ||B|| of those blocks. Threads: PARDISO's "
        "own statistics (OpenMP); UMFPACK's and SuperLU's BLAS pool (threadpoolctl), their only threaded part. "
        "Factor nonzeros: L of PARDISO's L D L^T (one triangle), L and U of SuperLU's LU; UMFPACK through CVXOPT "
        "reports none.",
        "- PARDISO settings (iparm index: value): "
        + ", ".join(f"{k}: {v}" for k, v in data["pardiso_settings"].items()),
        "- Not installed, not measured: " + (", ".join(skipped) if skipped else "none"),
        "", *_table(data, rhs), *section("The choice of `auto`", [
            f"Cost per order: the factorisation plus one back-substitution of {rhs[-1]} right-hand sides. Fastest "
            f"first, summed over the orders: **{', '.join(order)}**; `auto` takes the first of these that is "
            "installed (variants.LINEAR_SOLVER_SPEED)."]),
        *section("Assembly against factorisation", _assembly_lines(data))]
    return page(lines)
