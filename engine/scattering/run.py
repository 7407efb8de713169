"""The scattering study's pipeline: surfaces and volume mesh, the factorised FEM system, the FE-IIIEE
iteration for every incidence at once, and the RCS from the equivalent currents on S'."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..backend import get_backend, to_host
from ..run_control import RunControl
from ..truncation.fields import C0
from ..truncation.operator import Currents
from .cases import surfaces_of, volume_sizes
from .fem import discretise
from .incidences import Solutions, combine, compress, solutions
from .iteration import RobinMap, far_patterns, fixed_point, gmres, map_currents, sprime_currents
from .mesh import ScatteringMesh, volume_mesh
from .system import build_system, gamma_load, traces
from .waves import dbsm, far_field, incident_field, plane_waves, rcs, unit_vectors

PATTERN_STEP_DEG = 5.0  # the 3D far-field pattern's grid (first incidence), for the window's view
PATTERN_CHUNK_ENTRIES = 1 << 22  # complex phase entries per chunk of directions (64 MiB)

ETA0 = 376.730313668  # ohm


@dataclass(frozen=True, eq=False)
class ScatteringResult:
    """RCS (n_inc, n_dir) m^2 at far-field angles (n_inc, n_dir) degrees (every incidence the same grid,
    or its own back-scatter direction), per incidence: converged, iterations, residual history; the
    first-order ABC's RCS (iteration 0); the fields for the files and views."""

    problem: object
    mesh: ScatteringMesh
    n_dofs: int
    n_edges: int
    theta: np.ndarray
    phi: np.ndarray
    sigma_theta: np.ndarray
    sigma_phi: np.ndarray
    sigma_abc: tuple  # (sigma_theta, sigma_phi) with U = 0
    converged: np.ndarray
    iteration_counts: np.ndarray
    history: list
    e_scattered: np.ndarray  # (n_tets, 3) complex at cell centroids, first incidence
    e_incident: np.ndarray  # (n_tets, 3)
    sprime_points: np.ndarray  # (p', 3) S' quadrature points
    currents_j: np.ndarray  # (p', 3) complex A/m, first incidence
    currents_m: np.ndarray  # (p', 3) complex V/m
    pattern_theta: np.ndarray  # (n_t,) degrees: the 3D pattern's grid, first incidence
    pattern_phi: np.ndarray  # (n_p,) degrees
    pattern_sigma: np.ndarray  # (n_t, n_p) m^2, sigma_theta + sigma_phi
    factor_nonzeros: int | None  # None where the solver does not report them
    backend: str
    linear_solver: str
    timings: dict = field(default_factory=dict)
    iteration_timings: dict = field(default_factory=dict)  # seconds inside "iterations" per iteration.PHASES
    columns: int = 0  # columns iterated: the rank of the incidences' loads (fixed-point), the incidences (GMRES)
    devices: dict = field(default_factory=dict)  # where "assembly", "factorisation" and "back-substitution" ran
    factor_details: dict = field(default_factory=dict)  # the linear solver's own figures (linear.Factorised)
    assembly_timings: dict = field(default_factory=dict)  # seconds inside "assembly": numbering, traces, ...

    @property
    def iterations(self) -> int:
        return int(self.iteration_counts.max())

    @property
    def solution(self) -> np.ndarray:
        """RCS in dBsm, both polarisations, every incidence and direction (what Compare differences)."""
        return np.concatenate([dbsm(self.sigma_theta).ravel(), dbsm(self.sigma_phi).ravel()])


def _directions(problem) -> tuple[np.ndarray, np.ndarray]:
    """Far-field angles (n_inc, n_dir) degrees: the theta x phi grid for every incidence, or each
    incidence's own back-scatter direction."""
    n_inc = len(problem.incidences)
    if problem.monostatic:
        return (np.array([[i.theta_deg] for i in problem.incidences]),
                np.array([[i.phi_deg] for i in problem.incidences]))
    t, p = np.meshgrid(problem.far_theta, problem.far_phi, indexing="ij")
    return np.tile(t.ravel(), (n_inc, 1)), np.tile(p.ravel(), (n_inc, 1))


def _rcs(system, u: Solutions, theta, phi, xp=np) -> tuple[np.ndarray, np.ndarray]:
    """sigma_theta, sigma_phi (n_inc, n_dir) of the solutions of every incidence: one grid of directions for
    all, or each incidence its own (monostatic: one each); the far field by the array module xp."""
    if (theta == theta[:1]).all() and (phi == phi[:1]).all():
        theta, phi = theta[0], phi[0]
    return rcs(far_patterns(system, u, unit_vectors(theta, phi)[0], xp), theta, phi)


def pattern_3d(system, cur: Currents, step_deg: float = PATTERN_STEP_DEG, xp=np):
    """The total RCS sigma_theta + sigma_phi (n_t, n_p) m^2 of one incidence's currents on S' on a theta x phi
    grid every step_deg (theta 0..180, phi 0..360 - step); directions in chunks so the phase matrix
    (chunk, n') stays under PATTERN_CHUNK_ENTRIES whatever the grid and S'; the far field by xp."""
    theta = np.arange(0.0, 180.0 + step_deg / 2, step_deg)
    phi = np.arange(0.0, 360.0 - step_deg / 2, step_deg)
    t, p = (a.ravel() for a in np.meshgrid(theta, phi, indexing="ij"))
    chunk = max(1, PATTERN_CHUNK_ENTRIES // len(system.inner.points))
    sigma = np.empty(len(t))
    sources = xp.asarray(system.inner.points)  # on the device once for every chunk, with the currents
    cur = map_currents(cur, xp.asarray)
    for start in range(0, len(t), chunk):
        sl = slice(start, start + chunk)
        pattern = far_field(unit_vectors(t[sl], p[sl])[0], sources, cur, system.k, xp)
        sigma[sl] = sum(rcs(pattern, t[sl], p[sl]))[0]
    return theta, phi, sigma.reshape(len(theta), len(phi))


def _centroid_fields(system, u, problem) -> tuple[np.ndarray, np.ndarray]:
    """E scattered and incident (n_tets, 3) at the cell centroids for the first incidence's solution u
    (n_dofs, 1)."""
    from .nedelec import basis  # noqa: PLC0415

    d = system.disc
    values, _ = basis(d.order, np.full((1, 4), 0.25), d.geom.grads)
    e_s = np.einsum("mfk,mf->mk", values[:, 0], u[d.dofs.cell_dofs, 0])
    centroids = d.mesh.points[d.mesh.tets].mean(axis=1)
    first = problem.incidences[0]
    e_i = incident_field(centroids, system.k, [first.theta_deg], [first.phi_deg], np.array([first.polarization]))[0]
    return e_s, e_i


def _iterate(system, problem, control: RunControl):
    """The FE-IIIEE iteration for every incidence: (Iterated, the solutions of iteration 0 (Solutions), the
    number of columns iterated (fixed-point: the rank of the incidences' data; GMRES: one per incidence),
    the seconds of each of the iteration's phases, where the operator ran)."""
    inc = problem.incidences
    xp = system.xp  # the loads and their rank on the factor's device
    waves = plane_waves(xp.asarray(system.gamma.points), system.k, [i.theta_deg for i in inc],
                        [i.phi_deg for i in inc], np.array([i.polarization for i in inc]))
    data = compress(gamma_load(system, *waves))
    u_gamma = system.project(data.basis)  # (n_gamma, m)
    step = RobinMap(system, problem.solver.loop)
    s = problem.solver

    def progress(it, residual):
        control.report(0.5 + 0.4 * it / max(s.max_iterations, 1),
                       f"iteration {it}: largest residual {residual.max():.2e} (tolerance {s.tolerance:g})")

    abc, first = step(np.zeros((data.rank,) + system.outer.points.shape, dtype=complex), u_gamma)  # U_1 = f
    if s.acceleration == "fixed-point":
        done = fixed_point(step, u_gamma, data.coefficients, first, s.tolerance, s.max_iterations, progress)
        columns = data.rank
    else:
        done = gmres(step, u_gamma @ data.coefficients, combine(to_host(first), data.coefficients), s.tolerance,
                     s.max_iterations, progress)
        columns = len(inc)
    return done, solutions(abc, data.coefficients), columns, dict(step.seconds), step.device


def run_problem(problem, control: RunControl | None = None) -> ScatteringResult:
    """Mesh, assemble and factorise, iterate every incidence, far field; SolverError when the iteration
    does not reach the tolerance is left to the caller (the result says converged = False)."""
    control = control or RunControl()
    timings = {}
    t0 = time.perf_counter()
    wavelength = C0 / problem.frequency
    control.report(0.0, "meshing the surfaces and the volume")
    body, inner, outer = surfaces_of(problem, wavelength, control)
    size = wavelength / problem.density
    mesh = volume_mesh(body, inner, outer, size, control.check, volume_sizes(problem, body, size))
    timings["mesh"] = time.perf_counter() - t0
    control.report(0.2, f"{mesh.n_elements:,} tetrahedra: assembling and factorising")
    t0 = time.perf_counter()
    disc = discretise(mesh, problem.solver.order)
    numbering_s = time.perf_counter() - t0
    system = build_system(disc, 2 * np.pi / wavelength, problem.solver.linear_solver, control.check)
    timings["assembly"] = time.perf_counter() - t0 - system.seconds["factorisation"]
    timings["factorisation"] = system.seconds["factorisation"]
    control.report(0.5, f"{system.n_dofs:,} unknowns: iterating")
    t0 = time.perf_counter()
    done, abc, columns, phases, operator_device = _iterate(system, problem, control)
    timings["iterations"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    theta, phi = _directions(problem)
    xp = get_backend(done.backend).xp  # the far field where the iteration ran (CuPy: on its GPU)
    sigma = _rcs(system, done.u, theta, phi, xp)
    sigma_abc = _rcs(system, abc, theta, phi, xp)
    first = done.u.column(0)
    e, _ = traces(system.inner, first)
    pattern = pattern_3d(system, sprime_currents(system, first), xp=xp)
    timings["far field"] = time.perf_counter() - t0
    e_s, e_i = _centroid_fields(system, first, problem)
    n = system.inner.normals
    n_x_h = 1j * system.flux(first)[0] / (system.k * ETA0)  # H = -curl E / (j w mu0)
    return ScatteringResult(problem, mesh, system.n_dofs, len(disc.dofs.edges), theta, phi, *sigma, sigma_abc,
                            done.converged, done.iterations, done.history, e_s, e_i, system.inner.points,
                            n_x_h, np.cross(e[0], n), *pattern, system.factor.nonzeros, done.backend,
                            system.factor.name, timings, phases, columns, _devices(system, operator_device, xp),
                            system.factor.details, {"numbering": numbering_s, **system.seconds["assembly phases"]})


def _devices(system, operator: str, xp) -> dict:
    """Where the phases ran: the volume matrices' assembly, the factorisation and its back-substitutions, the
    truncation operator (with its loop), the far field."""
    return {"assembly": system.assembly_device, "factorisation": system.factor.device,
            "back-substitution": system.factor.device, "operator": operator,
            "far field": "host" if xp is np else "GPU"}
