"""The scattering study's files: rcs.csv, summary.json, solution.vtu (|E| on the volume mesh) and
currents.vtu (J and M on S'), and its summary and typed fields."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..output import write_json
from ..study import FieldMesh, ResultField, ResultFields
from ..truncation.fields import C0
from .mie import amplitudes
from .polarisations import POLARISED_HEADER, both_polarisations, polarised_rows
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
    """summary.json: convergence per incidence, sizes, the linear solver and its factor's figures (cuDSS: its
    memory estimates in bytes), time per phase and where each ran, and how many columns the incidences iterated
    as with the seconds of the iteration's parts."""
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
            "factor": dict(result.factor_details), "phase_devices": dict(result.devices),
            "backend": result.backend, "incidences": len(p.incidences),
            "abc_largest_difference_db": abc, "timings_s": dict(result.timings),
            "columns_iterated": result.columns, "iteration_phases_s": dict(result.iteration_timings),
            "assembly_phases_s": dict(result.assembly_timings)}


def write_scattering(result, out_dir) -> list[Path]:
    """rcs.csv, summary.json, solution.vtu and currents.vtu into out_dir; rcs_polarisations.csv (VV, HH, HV and
    VH side by side) where some direction has incidences of both polarisations."""
    import meshio  # noqa: PLC0415

    out_dir = Path(out_dir)
    paths = [out_dir / n for n in ("rcs.csv", "summary.json", "solution.vtu", "currents.vtu")]
    _write_csv(paths[0], RCS_HEADER, rcs_rows(result))
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
    if both_polarisations(result.problem):
        paths.append(out_dir / "rcs_polarisations.csv")
        _write_csv(paths[-1], POLARISED_HEADER, polarised_rows(result))
    return paths


def _write_csv(path: Path, header, rows) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def mie_overlay(result) -> np.ndarray | None:
    """The Mie series' RCS (dBsm, theta^ plus phi^ parts) at the first incidence's far-field directions,
    for a pec-sphere lit from theta = 0 with theta polarisation (its reference in charts); None otherwise."""
    p = result.problem
    first = p.incidences[0]
    if p.case != "pec-sphere" or p.monostatic or first.theta_deg != 0.0 or first.polarization != "theta":
        return None
    k = 2 * np.pi * p.frequency / C0
    s1, s2 = amplitudes(k * p.radius * p.length_scale, np.pi - np.radians(result.theta[0]))
    phi = np.radians(result.phi[0] - first.phi_deg)  # the wave's E lies along phi = phi_i
    return dbsm(4 * np.pi / k ** 2 * (np.abs(s2) ** 2 * np.cos(phi) ** 2 + np.abs(s1) ** 2 * np.sin(phi) ** 2))


def scattering_fields(result) -> ResultFields:
    """|E| total and scattered on the cells (first incidence), |J| and |M| on S', RCS in dBsm of the first incidence
    (and the Mie series beside it for a sphere lit along its axis)."""
    m = result.mesh
    mie = mie_overlay(result)
    reference = () if mie is None else (ResultField("sigma_mie", "dBsm", "far-field", mie),)
    mesh = FieldMesh(m.points, {"tetra": m.tets})
    return ResultFields(mesh, (
        ResultField("E_total", "V/m", "cells", np.linalg.norm(result.e_scattered + result.e_incident, axis=1)),
        ResultField("E_scattered", "V/m", "cells", np.linalg.norm(result.e_scattered, axis=1)),
        ResultField("J", "A/m", "surface", np.linalg.norm(result.currents_j, axis=1)),
        ResultField("M", "V/m", "surface", np.linalg.norm(result.currents_m, axis=1)),
        ResultField("sigma_theta", "dBsm", "far-field", dbsm(result.sigma_theta[0])),
        ResultField("sigma_phi", "dBsm", "far-field", dbsm(result.sigma_phi[0])), *reference),
        surface_points=result.sprime_points,
        far_field_angles={"theta_deg": result.theta[0], "phi_deg": result.phi[0]})
