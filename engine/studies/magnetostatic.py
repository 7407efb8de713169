"""Registry entry of the 2D magnetostatics study (EBE-J-PCG and its reference)."""

from __future__ import annotations

from typing import Mapping

from ..magnetostatics.run import run_magnetostatic
from ..output import write_magnetostatic
from ..problems.magnetostatic import MagnetostaticProblem
from ..variants import ACCUMULATE, BACKEND, COLORING, METHOD, REDUCTION, RTOL
from .registry import Study, register

VARIANT_KEYS = ("method", "backend", "reduction", "accumulate", "coloring")


def _apply(problem: MagnetostaticProblem, variants: Mapping) -> MagnetostaticProblem:
    """Variant choices by name, and numeric parameters (rtol) checked against their range."""
    changes = {k: v for k, v in variants.items() if k in VARIANT_KEYS}
    if "rtol" in variants:
        changes["rtol"] = RTOL.check(float(variants["rtol"]))
    return problem.with_solver(**changes)


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
    write=write_magnetostatic,
))
