"""Registry entry of the 2D magnetostatics study (EBE-J-PCG and its reference)."""

from __future__ import annotations

from typing import Mapping

from ..magnetostatics.run import run_magnetostatic
from ..mesh.cases import CASES
from ..output import magnetostatic_summary, write_magnetostatic
from ..problems.magnetostatic import MagnetostaticProblem, parse_magnetostatic, problem_to_dict
from ..study import Case
from ..variants import ACCUMULATE, BACKEND, COLORING, METHOD, REDUCTION, RTOL
from .registry import Study, register
from .sweep_plots import magnetostatic_plots

VARIANT_KEYS = ("method", "backend", "reduction", "accumulate", "coloring")


def _apply(problem: MagnetostaticProblem, variants: Mapping) -> MagnetostaticProblem:
    """Variant choices by name, and numeric parameters (rtol) checked against their range."""
    changes = {k: v for k, v in variants.items() if k in VARIANT_KEYS}
    if "rtol" in variants:
        changes["rtol"] = RTOL.check(float(variants["rtol"]))
    return problem.with_solver(**changes)


def describe(result) -> list[str]:
    """What the command line prints after a solve."""
    problem = result.problem
    lines = [f"{result.mesh.n_elements} elements, {result.mesh.n_nodes} nodes; {problem.solver.method} "
             f"(reduction {result.reduction}) on {result.backend} ({result.device}): {result.iterations} "
             f"iterations, relative residual {result.relative_residual:.2e}",
             f"energy {result.energy:.6g} {'J' if problem.formulation == 'axisymmetric' else 'J/m'}; "
             + ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())]
    for pr in result.probes:
        lines.append(f"probe {pr.name} {list(pr.point)}: A = {pr.potential:.6g}, "
                     f"B = ({pr.flux_density[0]:.6g}, {pr.flux_density[1]:.6g}) T")
    return lines


MAGNETOSTATIC = register(Study(
    name="magnetostatic",
    title="2D magnetostatics (EBE-J-PCG)",
    problem_kind="magnetostatic",
    mesh_kind="triangles-2d",
    field_dtype="real",
    max_devices=1,
    axes=(METHOD, BACKEND, REDUCTION, ACCUMULATE, COLORING),
    parameters=(RTOL,),
    apply_variants=_apply,
    run=run_magnetostatic,
    writer=write_magnetostatic,
    parse=parse_magnetostatic,
    to_dict=problem_to_dict,
    cases=tuple(Case(c.name, c.title, c.description, c.formulation, c.boundaries) for c in CASES.values()),
    summary=magnetostatic_summary,
    describe=describe,
    sweep_plots=magnetostatic_plots,
))
