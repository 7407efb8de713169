"""Strategy scaling runs (paper 003's Figs. 2-5 from real runs): the operator time of each loop strategy
as the S mesh (numS) and the number of right-hand sides grow, and the acceleration over `serial`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ProblemError
from ..mesh.meshing_process import run_meshing
from ..run_control import RunControl
from ..problems.truncation import MAX_RANDOM_SOURCES
from .cases import MAX_SURFACE_ELEMENTS, mesh_surface_case
from .fields import dipole_fields, wavenumber
from .operator import currents
from .run import random_dipoles
from .strategies import apply_operator
from .surfaces import quadrature


@dataclass(frozen=True)
class ScalingRow:
    loop: str
    n_outer: int  # S triangles (numS)
    n_rhs: int
    seconds: float  # operator only
    acceleration: float  # serial's seconds over this row's (nan when serial was not run)


def scaling_sweep(problem, loops: Sequence[str], outer_sizes: Sequence[int], rhs_counts: Sequence[int],
                  control: RunControl | None = None) -> list[ScalingRow]:
    """Time the operator (after a warm-up on a few S points) for every (S size, right-hand sides, loop) on
    the problem's built-in case, its frequency and quadrature; random dipoles inside S' are the
    right-hand sides."""
    control = control or RunControl()
    if problem.case is None:
        raise ProblemError("scaling runs remesh S: pick a built-in case")
    if not loops or not outer_sizes or not rhs_counts:
        raise ProblemError("give at least one loop, one S size and one right-hand-side count")
    if not all(20 <= n <= MAX_SURFACE_ELEMENTS for n in outer_sizes):
        raise ProblemError(f"S triangle counts must be from 20 to {MAX_SURFACE_ELEMENTS:,}, got "
                           f"{', '.join(map(str, outer_sizes))}")
    if not all(1 <= n <= MAX_RANDOM_SOURCES for n in rhs_counts):
        raise ProblemError(f"right-hand-side counts must be from 1 to {MAX_RANDOM_SOURCES:,}, got "
                           f"{', '.join(map(str, rhs_counts))}")
    k, q = wavenumber(problem.frequency), problem.quadrature
    rows, total, done = [], len(loops) * len(outer_sizes) * len(rhs_counts), 0
    for n_outer in outer_sizes:
        inner, outer = run_meshing(mesh_surface_case, problem.case, problem.inner_elements, n_outer,
                                   control=control)
        qi, qo = quadrature(inner, q), quadrature(outer, q)
        for n_rhs in rhs_counts:
            dipoles = random_dipoles(inner, n_rhs, 0)
            fields = [dipole_fields(qi.points, d.position, d.moment, k) for d in dipoles]
            cur = currents(qi.normals, qi.weights, np.stack([e for e, _ in fields]), np.stack([f for _, f in fields]))
            times = {}
            for loop in loops:  # warm-up: compilation and module loading stay out of the timings
                apply_operator(loop, qo.points[:8 * q], qi.points, cur, k, q, problem.solver.devices)
            for loop in loops:
                control.report(done / total, f"{loop}: S {outer.n_elements:,} triangles, {n_rhs} right-hand sides")
                t0 = time.perf_counter()
                apply_operator(loop, qo.points, qi.points, cur, k, q, problem.solver.devices)
                times[loop] = time.perf_counter() - t0
                done += 1
            for loop in loops:
                base = times.get("serial", float("nan"))
                rows.append(ScalingRow(loop, outer.n_elements, n_rhs, times[loop], base / times[loop]))
    control.report(1.0, "done")
    return rows
