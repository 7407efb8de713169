"""Built-in cases: EBE-J-PCG against the sparse direct solve, the solenoid against its analytic
axial field, and the open slot against a 4x finer mesh."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import quad

from paraflux.engine.magnetostatics.elements import MU0
from paraflux.engine.magnetostatics.run import run_magnetostatic
from paraflux.engine.mesh import cases
from paraflux.engine.mesh.locate import PointLocator
from paraflux.engine.problems import load_case_problem
from paraflux.engine.problems.magnetostatic import Probe


@pytest.mark.parametrize("case", list(cases.CASES))
def test_ebe_jpcg_matches_sparse_direct(case):
    # The iterative tolerance is tightened so that the solution error (not only the residual)
    # is below 1e-8; both solvers then agree to that level.
    problem = load_case_problem(case).with_solver(backend="numpy", rtol=1e-13)
    ebe = run_magnetostatic(problem.with_solver(method="ebe-jpcg"))
    direct = run_magnetostatic(problem.with_solver(method="sparse-direct"))
    diff = np.linalg.norm(ebe.potential - direct.potential) / np.linalg.norm(direct.potential)
    assert diff < 1e-8
    assert ebe.energy == pytest.approx(direct.energy, rel=1e-8)
    assert ebe.iterations > 0 and ebe.relative_residual < 1e-8


def thick_solenoid_axial_field(z, j, r1, r2, z1, z2):
    """B_z on the axis (T) of a coil of rectangular cross-section [r1, r2] x [z1, z2] carrying j (A/m^2)."""
    def f(zeta):
        return zeta * np.log((r2 + np.hypot(r2, zeta)) / (r1 + np.hypot(r1, zeta)))
    return 0.5 * MU0 * j * (f(z2 - z) - f(z1 - z))


def test_analytic_formula_matches_loop_integration():
    """The closed form is itself checked by integrating the field of current loops numerically."""
    r1, r2, z1, z2, j = cases.COIL_R1, cases.COIL_R2, -cases.COIL_HALF_LENGTH, cases.COIL_HALF_LENGTH, 1e6
    for z in (0.0, 0.03, 0.08):
        loops = quad(lambda r: quad(lambda zz: MU0 * j * r**2 / (2 * (r**2 + (zz - z) ** 2) ** 1.5),
                                    z1, z2)[0], r1, r2)[0]
        assert thick_solenoid_axial_field(z, j, r1, r2, z1, z2) == pytest.approx(loops, rel=1e-9)


def test_solenoid_axis_field_within_one_percent():
    base = load_case_problem("solenoid")
    half = cases.COIL_HALF_LENGTH
    zs = np.linspace(-0.8 * half, 0.8 * half, 41)
    problem = replace(base, probes=tuple(Probe(f"z{i}", (0.0, float(z))) for i, z in enumerate(zs)))
    result = run_magnetostatic(problem.with_solver(backend="numpy", rtol=1e-10))
    j = next(r.current_density for r in problem.regions if r.name == "coil")
    exact = thick_solenoid_axial_field(zs, j, cases.COIL_R1, cases.COIL_R2, -half, half)
    b_axis = np.array([p.flux_density for p in result.probes])
    assert np.all(np.abs(b_axis[:, 0]) < 1e-12)  # B_r vanishes on the axis
    error = np.max(np.abs(b_axis[:, 1] - exact) / np.abs(exact))
    print(f"solenoid: max relative error of B_z on the axis over the central 80%: {100 * error:.3f} %")
    assert error < 0.01  # paper 002 reports 4.5 %


def test_open_slot_against_four_times_finer_mesh(monkeypatch):
    problem = load_case_problem("open-slot").with_solver(backend="numpy", rtol=1e-12)
    coarse = run_magnetostatic(problem)
    real_mesh_case = cases.mesh_case
    monkeypatch.setattr("paraflux.engine.magnetostatics.run.mesh_case",
                        lambda name, elements=None: real_mesh_case(name, mesh_size_factor=0.25))
    fine = run_magnetostatic(problem)
    assert fine.mesh.n_elements > 12 * coarse.mesh.n_elements  # h / 4
    at_coarse_nodes = PointLocator(fine.mesh).interpolate(fine.potential, coarse.mesh.points)
    assert not np.any(np.isnan(at_coarse_nodes))
    difference = np.max(np.abs(coarse.potential - at_coarse_nodes)) / np.max(np.abs(fine.potential))
    print(f"open-slot: max nodal difference to the 4x finer mesh: {100 * difference:.3f} % of 700 A")
    assert difference < 0.0083  # paper 000 reports 0.83 %
