"""Registry entry of the truncation study (FE-IIIEE mesh-truncation operator)."""

from __future__ import annotations

from typing import Mapping

from ..output import truncation_summary, write_truncation
from ..problems.truncation import TruncationProblem, parse_truncation, truncation_to_dict
from ..study import Case
from ..truncation.cases import CASES
from ..truncation.run import run_problem
from ..variants import LOOP, QUADRATURE
from .registry import Study, register
from .sweep_plots import truncation_plots


def _apply(problem: TruncationProblem, variants: Mapping) -> TruncationProblem:
    if variants.get("loop") is not None:
        problem = problem.with_solver(loop=variants["loop"])
    if variants.get("quadrature") is not None:
        problem = problem.with_quadrature(variants["quadrature"])
    return problem


def describe(result) -> list[str]:
    """What the command line prints after a run."""
    s = result.setup
    lines = [f"S' {s.inner.n_elements:,} triangles, S {s.outer.n_elements:,} triangles, {s.quadrature} points each; "
             f"{result.n_rhs} right-hand sides at {s.frequency:g} Hz; loop {s.loop} on {result.backend} "
             f"({result.device})",
             f"relative error against the exact field: E {result.relative_error:.3e}, curl E "
             f"{result.relative_error_curl:.3e}; {result.flops / 1e9:.3g} GFLOP (stated count) at "
             f"{result.gflops:.3g} GFLOP/s",
             ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())]
    return lines


TRUNCATION = register(Study(
    name="truncation",
    title="Truncation (FE-IIIEE operator)",
    problem_kind="truncation",
    mesh_kind="surface-triangles",
    field_dtype="complex",
    max_devices=0,  # multi-gpu-tiled: every visible GPU
    axes=(LOOP, QUADRATURE),
    parameters=(),
    apply_variants=_apply,
    run=run_problem,
    writer=write_truncation,
    parse=parse_truncation,
    to_dict=truncation_to_dict,
    cases=tuple(Case(c.name, c.title, c.description, "truncation") for c in CASES.values()),
    summary=truncation_summary,
    describe=describe,
    sweep_plots=truncation_plots,
))
