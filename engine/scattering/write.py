"""The scattering study's files: rcs.csv, summary.json, solution.vtu (|E| on the volume mesh) and
currents.vtu (J and M on S'), and its summary and typed fields."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..output import write_json
from ..study import FieldMesh, ResultField, ResultFields
from .waves import dbsm

RCS_HEADER = ("incidence", "inc_theta_deg", "inc_phi_deg", "polarization", "theta_deg", "phi_deg",
              "sigma_theta_m2", "sigma_phi_m2", "sigma_theta_dbsm", "sigma_phi_dbsm")


def rcs_rows(result) -> list[tuple]:
    """One row per incidence and far-field direction, in RCS_HEADER's order."""
    rows = []
    for i, inc in enumerate(result.problem.incidences):
        st, sp = result.sigma_theta[i], result.sigma_phi[i]
        for t, p, a, b, da, db in zip(result.theta[i], result.phi[i], st, sp, dbsm(st), dbsm(sp)):
            rows.append((i, inc.theta_deg, inc.phi_deg, inc.polarization, float(t), float(p), float(a), float(b),
                         float(da), float(db)))
    return rows


def scattering_summary(result) -> dict:
    """summary.json: convergence per incidence, sizes, the linear solver and time per phase."""
    p = result.problem
    converged = [bool(c) for c in result.converged]
    abc = max(float(np.abs(dbsm(a) - dbsm(b)).max()) for a, b in
              zip(result.sigma_abc, (result.sigma_theta, result.sigma_phi)))
    return {"study": "scattering", "case": p.case, "frequency_hz": p.frequency,
            "converged": converged[0] if len(converged) == 1 else converged,
            "iterations": [int(n) for n in result.iteration_counts],
            "residual_history": [[float(r) for r in step] for step in result.history],
            "elements": result.mesh.n_elements, "edges": result.n_edges, "dofs": result.n_dofs,
            "nedelec_order": p.solver.order, "acceleration": p.solver.acceleration, "loop": p.solver.loop,
            "linear_solver": result.linear_solver, "factor_nonzeros": result.factor_nonzeros,
            "backend": result.backend, "incidences": len(p.incidences),
            "abc_largest_difference_db": abc, "timings_s": dict(result.timings)}


def write_scattering(result, out_dir) -> list[Path]:
    """rcs.csv, summary.json, solution.vtu and currents.vtu into out_dir."""
    import meshio  # noqa: PLC0415

    out_dir = Path(out_dir)
    paths = [out_dir / n for n in ("rcs.csv", "summary.json", "solution.vtu", "currents.vtu")]
    with open(paths[0], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RCS_HEADER)
        writer.writerows(rcs_rows(result))
    write_json(paths[1], scattering_summary(result))
    m = result.mesh
    meshio.write(paths[2], meshio.Mesh(m.points, [("tetra", m.tets)], cell_data={
        "E_scattered_magnitude": [np.linalg.norm(result.e_scattered, axis=1)],
        "E_total_magnitude": [np.linalg.norm(result.e_scattered + result.e_incident, axis=1)],
        "region": [m.region.astype(np.int32)]}))
    pts = result.sprime_points
    meshio.write(paths[3], meshio.Mesh(pts, [("vertex", np.arange(len(pts))[:, None])], point_data={
        "J_real": result.currents_j.real, "J_imag": result.currents_j.imag,
        "M_real": result.currents_m.real, "M_imag": result.currents_m.imag}))
    return paths


def scattering_fields(result) -> ResultFields:
    """|E| total and scattered on the cells (first incidence), |J| on S', RCS in dBsm of the first incidence."""
    m = result.mesh
    mesh = FieldMesh(m.points, {"tetra": m.tets})
    return ResultFields(mesh, (
        ResultField("E_total", "V/m", "cells", np.linalg.norm(result.e_scattered + result.e_incident, axis=1)),
        ResultField("E_scattered", "V/m", "cells", np.linalg.norm(result.e_scattered, axis=1)),
        ResultField("J", "A/m", "surface", np.linalg.norm(result.currents_j, axis=1)),
        ResultField("sigma_theta", "dBsm", "far-field", dbsm(result.sigma_theta[0])),
        ResultField("sigma_phi", "dBsm", "far-field", dbsm(result.sigma_phi[0]))),
        surface_points=result.sprime_points,
        far_field_angles={"theta_deg": result.theta[0], "phi_deg": result.phi[0]})
