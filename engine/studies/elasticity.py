"""Registry entry of the 3D elasticity study (hierarchical hexahedra, p-FEM)."""

from __future__ import annotations

from typing import Mapping

from ..hexfem.run import run_elasticity
from ..mesh.hex_cases import HEX_CASES
from ..output import elasticity_summary, write_elasticity
from ..problems.elasticity import ElasticityProblem, elasticity_to_dict, parse_elasticity
from ..study import Case
from ..variants import BACKEND, ELASTIC_METHOD, ELASTIC_RTOL, INTEGRATION, ORDER, PRECONDITIONER
from .registry import Study, register
from .sweep_plots import elasticity_plots

VARIANT_KEYS = ("method", "integration", "preconditioner", "backend")


def _apply(problem: ElasticityProblem, variants: Mapping) -> ElasticityProblem:
    changes = {k: v for k, v in variants.items() if k in VARIANT_KEYS}
    if "rtol" in variants:
        changes["rtol"] = ELASTIC_RTOL.check(float(variants["rtol"]))
    problem = problem.with_solver(**changes)
    if "order" in variants:
        problem = problem.with_order(ORDER.check(variants["order"]))
    return problem


def describe(result) -> list[str]:
    """What the command line prints after a solve."""
    p = result.problem
    lines = [f"{result.mesh.n_elements} hexahedra, p = {p.order}, {result.dofmap.n_dofs} DOFs; {p.solver.method}"
             f" (element matrices {p.solver.integration}) on {result.backend} ({result.device}): "
             f"{result.iterations} iterations, relative residual {result.relative_residual:.2e}",
             f"strain energy {result.strain_energy:.6g} J, max displacement {result.max_displacement:.6g} m; "
             + ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())]
    for pr in result.probes:
        u = ", ".join(f"{c:.6g}" for c in pr.displacement)
        lines.append(f"probe {pr.name} {list(pr.point)} m: u = ({u}) m, von Mises {pr.von_mises:.6g} Pa")
    return lines


ELASTICITY = register(Study(
    name="elasticity",
    title="Elasticity (hexahedral p-FEM)",
    problem_kind="elasticity",
    mesh_kind="hexahedra",
    field_dtype="real",
    max_devices=1,
    axes=(ELASTIC_METHOD, INTEGRATION, PRECONDITIONER, BACKEND),
    parameters=(ORDER, ELASTIC_RTOL),
    apply_variants=_apply,
    run=run_elasticity,
    writer=write_elasticity,
    parse=parse_elasticity,
    to_dict=elasticity_to_dict,
    cases=tuple(Case(c.name, c.title, c.description, "3D elasticity", c.boundaries) for c in HEX_CASES.values()),
    summary=elasticity_summary,
    describe=describe,
    sweep_plots=elasticity_plots,
))
