"""Registry entry of the scattering study (FE-IIIEE: Nedelec FEM truncated by the iterated integral
operator, radar cross-sections)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..problems.scattering import ScatteringProblem, parse_scattering, scattering_to_dict
from ..scattering.run import run_problem
from ..scattering.waves import dbsm
from ..scattering.write import rcs_rows, scattering_fields, scattering_summary, write_scattering
from ..study import Case
from ..truncation.fields import C0
from ..variants import ACCELERATION, ITERATION_TOL, LINEAR_SOLVER, NEDELEC_ORDER, SCATTERING_LOOP
from .registry import Study, register
from .scattering_sweep import sweep_plots



def _apply(problem: ScatteringProblem, variants: Mapping) -> ScatteringProblem:
    names = ("acceleration", "linear_solver", "loop", "order", "rtol")
    return problem.with_solver(**{n: variants.get(n) for n in names})


def describe(result) -> list[str]:
    """What the command line prints after a run."""
    p = result.problem
    converged = int(np.sum(result.converged))
    peak = max(dbsm(result.sigma_theta).max(), dbsm(result.sigma_phi).max())
    return [f"{result.mesh.n_elements:,} tetrahedra, {result.n_dofs:,} unknowns (Nedelec order {p.solver.order}) at "
            f"{p.frequency:g} Hz; {len(p.incidences)} incidences as {result.columns} columns, {converged} converged by "
            f"{p.solver.acceleration} "
            f"in at most {result.iterations} iterations (operator on {result.devices['operator']}, loop {p.solver.loop})",
            target_line(result.mesh, p.frequency),
            f"largest RCS {peak:.2f} dBsm over {result.theta.shape[1]} directions per incidence",
            ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())]


def target_line(mesh, frequency: float) -> str:
    """The scatterer's extent in metres and its widest in wavelengths (a unit mistake shows here)."""
    extent = np.ptp(mesh.points[np.unique(mesh.surfaces["scatterer"])], axis=0)
    at = f"{frequency / 1e9:g} GHz" if frequency >= 1e9 else f"{frequency / 1e6:g} MHz"
    return (f"target: {' x '.join(f'{e:#.3g}' for e in extent)} m, {extent.max() * frequency / C0:#.3g} wavelengths "
            f"across at {at}")


def sweep_rows(result) -> list[dict]:
    """One row per incidence and far-field direction: the angles, both RCS in dBsm, convergence."""
    keys = ("incidence", "inc_theta_deg", "inc_phi_deg", "polarization", "theta_deg", "phi_deg")
    return [{**dict(zip(keys, row[:6])), "sigma_theta_dbsm": row[8], "sigma_phi_dbsm": row[9],
             "converged": bool(result.converged[row[0]]), "iterations": int(result.iteration_counts[row[0]])}
            for row in rcs_rows(result)]


def shortfall(result) -> str | None:
    """The sentence for incidences whose iteration did not reach the tolerance (the result is still written)."""
    missed = np.flatnonzero(~result.converged)
    if not len(missed):
        return None
    s = result.problem.solver
    last = max(float(result.history[-1][i]) for i in missed) if result.history else float("nan")
    return (f"the {s.acceleration} iteration did not reach tolerance {s.tolerance:g} in {s.max_iterations} iterations "
            f"for {len(missed)} of {len(result.converged)} incidences (largest residual {last:.2e}); the result is "
            "written with converged = false")


SCATTERING = register(Study(
    name="scattering",
    title="Scattering (FE-IIIEE)",
    problem_kind="scattering",
    mesh_kind="tetrahedra",
    field_dtype="complex",
    max_devices=0,  # the operator on every visible GPU (loop auto or multi-gpu-tiled)
    axes=(ACCELERATION, LINEAR_SOLVER, SCATTERING_LOOP),
    parameters=(NEDELEC_ORDER, ITERATION_TOL),
    apply_variants=_apply,
    run=run_problem,
    writer=write_scattering,
    fields=scattering_fields,
    parse=parse_scattering,
    to_dict=scattering_to_dict,
    cases=(Case("pec-sphere", "PEC sphere", "a perfectly conducting sphere (radius in [geometry]) inside spheres S' "
                "and S; the reference is the Mie series", "3D scattering"),
           Case("nasa-almond", "NASA almond", "the EMCC benchmark almond (9.936 in, tip toward +x) inside ellipsoids "
                "S' and S; 1.19, 7 and 9.92 GHz in the benchmark", "3D scattering"),
           Case("ogive", "EMCC ogive", "the EMCC ogive (10 in long, 1 in in radius, tips of half-angle 22.62 deg "
                "along x) inside S' and S built around it", "3D scattering"),
           Case("double-ogive", "EMCC double ogive", "the EMCC double ogive (7.5 in long, 1 in in radius, tips of "
                "half-angle 46.6 and 22.62 deg) inside S' and S built around it", "3D scattering"),
           Case("cone-sphere", "EMCC cone-sphere", "the EMCC cone-sphere (a 7 deg cone tangent to a 2.947 in sphere, "
                "27.13 in long, tip toward +x) inside S' and S built around it", "3D scattering"),
           Case("cone-sphere-gap", "EMCC cone-sphere with gap", "the EMCC cone-sphere with a 0.359 in wide, 0.25 in "
                "deep gap where the cone meets the sphere, inside S' and S built around it", "3D scattering"),
           Case("aircraft", "Faceted aircraft", "a faceted low-observable aircraft (20.1 m long, 13.2 m span: "
                "swept arrowhead planform, sharp chines, twin tails canted 40 deg; nose toward +x) inside S' and S "
                "built around it; 85 MHz, 5.7 wavelengths long, in its example", "3D scattering")),
    summary=scattering_summary,
    describe=describe,
    shortfall=shortfall,
    sweep_rows=sweep_rows,
    sweep_plots=sweep_plots,
))
