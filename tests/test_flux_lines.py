"""The flux function fitted to B (engine/magnetostatics/post.flux_function_from_b): for a vector potential
B = curl A holds exactly per element, so the fit must give back A_z (planar) or r A_phi (axisymmetric) up to a
constant; for the scalar potential the flux lines it gives must be tangent to B."""

from dataclasses import replace

import numpy as np
import pytest

from paraflux.engine.magnetostatics.elements import shape_gradients
from paraflux.engine.magnetostatics.post import flux_function_from_b
from paraflux.engine.magnetostatics.run import run_magnetostatic
from paraflux.engine.problems import load_case_problem


def _cpu(case: str, elements: int):
    problem = load_case_problem(case, elements)
    return replace(problem, solver=replace(problem.solver, backend="numpy", method="sparse-direct"))


@pytest.mark.parametrize("case, tolerance", [("transformer", 1e-8), ("solenoid", 0.05)])
def test_fit_returns_the_vector_potentials_flux_function(case, tolerance):
    """Planar: A_z is P1, so B is its exact per-element gradient and the fit is A_z to round-off.
    Axisymmetric: r A_phi = r^2 u is not P1 in u's space, so the fit is only within discretisation (5 %)."""
    result = run_magnetostatic(_cpu(case, 1500))
    fitted = flux_function_from_b(result.problem.formulation, result.mesh, result.flux_density)
    exact = result.flux_function - result.flux_function[0]
    assert np.max(np.abs(fitted - exact)) <= tolerance * np.ptp(exact)


def test_scalar_potential_flux_lines_follow_b():
    result = run_magnetostatic(_cpu("open-slot", 1500))
    psi = result.flux_function
    assert psi.shape == (result.mesh.n_nodes,) and np.ptp(psi) > 0
    tri = result.mesh.triangles
    coords = result.mesh.element_coords()
    # grad psi per element is perpendicular to B (psi constant along B): |grad psi . B| << |grad psi| |B|
    _, grads = shape_gradients(coords)
    grad_psi = np.einsum("eik,ei->ek", grads, psi[tri])
    b = result.flux_density
    cosine = np.abs(np.sum(grad_psi * b, axis=1)) / (np.linalg.norm(grad_psi, axis=1) * np.linalg.norm(b, axis=1))
    strong = np.linalg.norm(b, axis=1) > 0.1 * np.max(np.linalg.norm(b, axis=1))
    assert np.median(cosine[strong]) < 0.05

