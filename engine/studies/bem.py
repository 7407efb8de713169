"""Registry entry of the elastostatic boundary element study (FMBEM)."""

from __future__ import annotations

from typing import Mapping

from ..bem.run import run_problem
from ..bem.cases import BEM_CASES
from ..bem.run import bem_summary
from ..output import write_bem
from ..problems.bem import BemProblem, bem_to_dict, parse_bem
from ..study import Case
from ..variants import (BACKEND, BEM_METHOD, BEM_PRECISION, COARSE_LEVEL, EXPONENTIAL_NODES, FAR_PASSES,
                        FAR_TABLES, LEAF_SIZE, M2L, MULTIPOLE_ORDER, NEAR_FIELD, RTOL)
from .registry import Study, register
from .sweep_plots import bem_plots


def _apply(problem: BemProblem, variants: Mapping) -> BemProblem:
    keys = ("method", "m2l", "exponential_nodes", "backend", "precision", "order", "leaf_size", "far_passes",
            "near_field", "coarse", "far_tables", "rtol")
    return problem.with_solver(**{k: v for k, v in variants.items() if k in keys})


def describe(result) -> list[str]:
    """What the command line prints after a run."""
    p, s = result.problem, result.mesh
    m2l = p.solver.m2l + (f" ({p.solver.exponential_nodes} nodes)" if p.solver.m2l == "exponential" else "")
    solver = (f"GMRES {result.iterations} iterations to {result.relative_residual:.2e}, m2l {m2l}, "
              f"p = {p.solver.order}" + ("" if p.solver.precision == "order" else f" (for {p.solver.precision})")
              + f", near field {p.solver.near_field} element sizes, coarse level {p.solver.coarse}"
              + (f", far field in {p.solver.far_passes} FMM passes" if p.solver.far_passes > 1 else "")
              + (", FP32 M2L table" if p.solver.far_tables == "fp32" else "")
              if p.solver.method == "fmm" else "dense LU")
    lines = [f"{len(s.triangles):,} triangles, {3 * len(s.points):,} DOFs; {p.solver.method}: {solver} on "
             f"{result.backend} ({result.device})",
             f"max |u| {max(map(abs, result.displacement.ravel())):.4g} m, max von Mises "
             f"{result.nodal_von_mises.max():.4g} Pa"]
    lines += [f"probe {q.name} ({q.where}): u = ({', '.join(f'{c:.5g}' for c in q.displacement)}) m, von Mises "
              f"{q.von_mises:.5g} Pa" for q in result.probes]
    return lines + [", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())]


BEM = register(Study(
    name="elastostatic-bem",
    title="Elastostatics (FMBEM)",
    problem_kind="elastostatic-bem",
    mesh_kind="surface-triangles",
    field_dtype="real",
    max_devices=1,
    axes=(BEM_METHOD, M2L, EXPONENTIAL_NODES, BEM_PRECISION, NEAR_FIELD, COARSE_LEVEL, FAR_TABLES, BACKEND),
    parameters=(MULTIPOLE_ORDER, LEAF_SIZE, FAR_PASSES, RTOL),
    apply_variants=_apply,
    run=run_problem,
    writer=write_bem,
    parse=parse_bem,
    to_dict=bem_to_dict,
    cases=tuple(Case(c.name, c.title, c.description, "3D BEM", c.groups) for c in BEM_CASES.values()),
    summary=bem_summary,
    describe=describe,
    sweep_plots=bem_plots,
))
