"""A boundary element solution checked against the hexahedral p-FEM study on the same part, where a
hexahedral mesh of it exists: the FEM displacement at the BEM's surface nodes, from the same material
and boundary conditions."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ProblemError
from ..problems import load_case_problem
from ..problems.elasticity import ElasticRegion, Probe3
from ..run_control import RunControl

HEX_TWINS = {"bar": "bar-hex"}  # BEM case -> the hexahedral case of the same part, with the same face names
TWIN_CASES = f"built-in case{'s' if len(HEX_TWINS) > 1 else ''} {', '.join(HEX_TWINS)}"  # for messages
CHECK_ORDER = 3  # p of the hexahedra: a polynomial field of the bar is exact at any order, curved ones need more


@dataclass(frozen=True)
class FemCheck:
    """The two studies on one part: their sizes, times (s) and the largest difference of the BEM nodal
    displacements from the FEM's at the same points, relative to the FEM's largest displacement."""

    hex_case: str
    order: int
    bem_dofs: int
    fem_dofs: int
    bem_seconds: float
    fem_seconds: float
    max_difference: float

    def lines(self) -> list[str]:
        return [f"hexahedral p-FEM check ({self.hex_case}, p = {self.order}, {self.fem_dofs:,} DOFs, "
                f"{self.fem_seconds:.2f} s) against the BEM ({self.bem_dofs:,} DOFs, {self.bem_seconds:.2f} s): "
                f"largest displacement difference {self.max_difference:.2e} of the largest FEM displacement "
                "(both discretisations' errors)"]


def check_against_hex_fem(bem_result, order: int = CHECK_ORDER, control: RunControl | None = None) -> FemCheck:
    """Solve the BEM result's part with hexahedra of order p (its material, boundaries and surface nodes as
    probes) and compare the displacements; ProblemError for a part with no hexahedral mesh."""
    from ..hexfem.run import run_elasticity  # noqa: PLC0415

    problem = bem_result.problem
    twin = HEX_TWINS.get(problem.case)
    if twin is None:
        part = f"case '{problem.case}'" if problem.case else "a surface read from a file"
        raise ProblemError(f"no hexahedral mesh of this part ({part}); the p-FEM check runs on the {TWIN_CASES}")
    base = load_case_problem(twin)
    points = bem_result.mesh.points / base.length_scale
    fem_problem = replace(base, order=order, regions=(ElasticRegion(base.regions[0].name, problem.young,
                                                                    problem.poisson),),
                          boundaries=problem.boundaries,
                          probes=tuple(Probe3(f"node {i}", tuple(p)) for i, p in enumerate(points.tolist())))
    t0 = time.perf_counter()
    fem = run_elasticity(fem_problem, control)
    fem_seconds = time.perf_counter() - t0
    u_fem = np.array([p.displacement for p in fem.probes])
    difference = np.linalg.norm(bem_result.displacement - u_fem, axis=1).max()
    scale = max(np.linalg.norm(u_fem, axis=1).max(), np.linalg.norm(bem_result.displacement, axis=1).max())
    return FemCheck(twin, order, 3 * len(bem_result.mesh.points), len(fem.coefficients),
                    sum(bem_result.timings.get(k, 0.0) for k in ("surface", "solve", "post")), fem_seconds,
                    float(difference / scale) if scale > 0 else 0.0)
