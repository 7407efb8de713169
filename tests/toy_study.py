"""A toy study declared entirely here: -u'' = f on (0, L), u(0) = u(L) = 0, linear elements. The seam tests
register it and find it in the command line, the window, Compare and the writers without any other file
knowing it. With a constant f the nodal values are exact: u(x) = f x (L - x) / 2."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from paraflux.engine.errors import ProblemError
from paraflux.engine.study import Case, FieldMesh, ResultField, ResultFields, Study
from paraflux.engine.variants import Choice, Parameter, VariantAxis

KIND = "toy-poisson-1d"
METHOD = VariantAxis("method", "Solver", (Choice("banded", "tridiagonal LAPACK solve"),
                                          Choice("sparse", "SciPy sparse direct solve")), "banded")
ELEMENTS = Parameter("toy_elements", "Elements", 16, 2, 100_000, "number of line elements", integer=True,
                     compare_values=(8, 16))


@dataclass(frozen=True)
class ToySolver:
    method: str = "banded"
    toy_elements: int = 16


@dataclass(frozen=True)
class ToyProblem:
    length: float
    source: float
    solver: ToySolver = field(default_factory=ToySolver)
    case: str | None = None
    case_elements: int | None = None
    kind: str = KIND

    def with_solver(self, **changes) -> "ToyProblem":
        known = {k: v for k, v in changes.items() if v is not None and k in ("method", "toy_elements")}
        return replace(self, solver=replace(self.solver, **known))


@dataclass(frozen=True, eq=False)
class ToyResult:
    problem: ToyProblem
    x: np.ndarray
    solution: np.ndarray
    timings: dict
    iterations: int = 0
    residual_history: tuple = ()


def parse(data: dict, base_dir: Path) -> ToyProblem:
    head = data["problem"]
    unknown = set(head) - {"kind", "length", "source", "case", "elements", "method"}
    if unknown:
        raise ProblemError(f"[problem] has unknown keys: {', '.join(sorted(unknown))}")
    length = float(head.get("length", 1.0))
    if not length > 0:
        raise ProblemError(f"[problem] length must be positive, got {length}")
    return ToyProblem(length, float(head.get("source", 1.0)),
                      ToySolver(head.get("method", "banded"), int(head.get("elements", 16))),
                      head.get("case"))


def to_dict(p: ToyProblem) -> dict:
    head = {"kind": KIND, "length": p.length, "source": p.source, "method": p.solver.method,
            "elements": p.solver.toy_elements}
    return {"problem": {**head, **({"case": p.case} if p.case else {})}}


def run(problem: ToyProblem, control=None) -> ToyResult:
    start = time.perf_counter()
    n = problem.case_elements or problem.solver.toy_elements
    h = problem.length / n
    x = np.linspace(0.0, problem.length, n + 1)
    b = np.full(n - 1, problem.source * h)
    if problem.solver.method == "banded":
        bands = np.array([np.full(n - 1, -1.0 / h), np.full(n - 1, 2.0 / h), np.full(n - 1, -1.0 / h)])
        inner = scipy.linalg.solve_banded((1, 1), bands, b)
    else:
        k = scipy.sparse.diags([-1.0 / h, 2.0 / h, -1.0 / h], [-1, 0, 1], shape=(n - 1, n - 1), format="csc")
        inner = scipy.sparse.linalg.spsolve(k, b)
    u = np.concatenate([[0.0], inner, [0.0]])
    return ToyResult(problem, x, u, {"solve": time.perf_counter() - start})


def fields(result: ToyResult) -> ResultFields:
    n = len(result.x) - 1
    mesh = FieldMesh(np.column_stack([result.x, np.zeros((n + 1, 2))]),
                     {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])})
    gradient = np.diff(result.solution) / np.diff(result.x)
    ends = np.array([-gradient[0], gradient[-1]])  # outward flux -u' . n at x = 0 and x = L
    return ResultFields(mesh, (ResultField("u", "m", "points", result.solution),
                               ResultField("du_dx", "", "cells", gradient),
                               ResultField("end_flux", "m", "far-field", ends)),
                        far_field_angles={"theta_deg": np.array([180.0, 0.0])})  # the ends at -x and +x


def summary(result: ToyResult) -> dict:
    return {"study": "toy", "n_elements": len(result.x) - 1, "max_u": float(result.solution.max()),
            "timings": result.timings}


def describe(result: ToyResult) -> list[str]:
    return [f"{len(result.x) - 1} elements, {result.problem.solver.method}: max u {result.solution.max():.6g} m"]


def toy_study(problem_file: Path) -> Study:
    """The toy study, its one case's example problem in problem_file."""
    return Study(name="toy", title="Toy 1D Poisson", problem_kind=KIND, mesh_kind="line", field_dtype="real",
                 max_devices=0, axes=(METHOD,), parameters=(ELEMENTS,), parse=parse, to_dict=to_dict,
                 cases=(Case("toy-bar", "Toy bar", "a bar of length 2 under a unit load", "toy 1D", (),
                             problem_file),),
                 apply_variants=lambda p, v: p.with_solver(**v), run=run, describe=describe, summary=summary,
                 fields=fields)
