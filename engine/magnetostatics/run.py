"""The magnetostatic study pipeline: mesh, element system, solve, post-processing; returns a result as data."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..backend import get_backend
from ..coloring import color_elements
from ..errors import ProblemError
from ..finite import require_finite
from ..mesh.cases import mesh_case
from ..mesh.io import read_trimesh
from ..mesh.locate import PointLocator
from ..mesh.meshing_process import run_meshing
from ..mesh.trimesh import TriMesh
from ..problems.magnetostatic import MagnetostaticProblem, check_against_mesh
from ..run_control import RunControl
from ..variants import REDUCTION
from . import elements
from .direct import solve_sparse_direct
from .ebe_pcg import solve_ebe_jpcg
from .post import ProbeValue, element_flux_density, flux_function_from_b, magnetic_energy, probe_values
from .system import ElementSystem, check_not_singular


@dataclass(frozen=True, eq=False)
class MagnetostaticResult:
    """Fields on the mesh (metres), scalars and per-phase timings (seconds).

    potential: (n_nodes,) A_z or A_phi (Wb/m), or phi (A); flux_function: (n_nodes,) A_z or r*A_phi
    (Wb/m, Wb/rad) whose contours are flux lines (for the scalar potential fitted to B, post.flux_function_from_b);
    flux_density: (n_elements, 2) B at centroids (T).
    """

    problem: MagnetostaticProblem
    mesh: TriMesh
    potential: np.ndarray
    flux_function: np.ndarray
    flux_density: np.ndarray
    energy: float
    iterations: int
    relative_residual: float
    residual_history: np.ndarray
    probes: tuple[ProbeValue, ...]
    timings: dict[str, float]
    backend: str
    device: str
    unknown: np.ndarray  # (n_nodes,) the solved unknown (A_z, A_phi / r, or phi)
    permeability: np.ndarray  # (n_elements,) mu, H/m
    reduction: str  # how EBE-J-PCG summed its inner products ("none" for the direct solve)
    n_colors: int  # colour groups used for coloured accumulation (0: atomic, or the direct solve)

    @property
    def solution(self) -> np.ndarray:
        """The solution vector that variant comparisons measure differences in."""
        return self.potential

    @property
    def flux_density_magnitude(self) -> np.ndarray:
        return np.hypot(self.flux_density[:, 0], self.flux_density[:, 1])


def load_mesh(problem: MagnetostaticProblem, control: RunControl | None = None) -> TriMesh:
    """The problem's mesh in metres, checked against the problem's regions and boundaries; a case is
    meshed where control can cancel it (run_meshing)."""
    if problem.case is not None:
        mesh = run_meshing(mesh_case, problem.case, problem.case_elements, control=control)
    else:
        mesh = read_trimesh(problem.mesh_path)
    check_against_mesh(problem, mesh)
    mesh = mesh.scaled(problem.length_scale)
    if problem.probes:  # say so before a long solve, not after it
        points = np.array([p.point for p in problem.probes]) * problem.length_scale
        element, _ = PointLocator(mesh).locate(points)
        for probe, e in zip(problem.probes, element):
            if e < 0:
                raise ProblemError(f"probe '{probe.name}' at {list(probe.point)} lies outside the mesh")
    return mesh


def element_properties(problem: MagnetostaticProblem, mesh: TriMesh) -> tuple[np.ndarray, np.ndarray]:
    """Per-element permeability mu (H/m) and current density J (A/m^2), (n_elements,) each."""
    by_name = {r.name: r for r in problem.regions}
    mu_r = np.array([by_name[n].mu_r for n in mesh.region_names])[mesh.region_index]
    j = np.array([by_name[n].current_density for n in mesh.region_names])[mesh.region_index]
    return elements.MU0 * mu_r, j


def build_system(problem: MagnetostaticProblem, mesh: TriMesh, mu: np.ndarray, j: np.ndarray) -> ElementSystem:
    """Element matrices and vectors of the problem's formulation and its Dirichlet data."""
    coords = mesh.element_coords()
    axisymmetric = problem.formulation == "axisymmetric"
    if problem.potential == "scalar":
        ke = (elements.axisymmetric_scalar_stiffness(coords, mu) if axisymmetric
              else elements.planar_stiffness(coords, mu))
        fe = np.zeros((mesh.n_elements, 3))
    elif axisymmetric:
        ke, fe = elements.axisymmetric_stiffness(coords, 1.0 / mu), elements.axisymmetric_load(coords, j)
    else:
        ke, fe = elements.planar_stiffness(coords, 1.0 / mu), elements.planar_load(coords, j)

    values = np.full(mesh.n_nodes, np.nan)
    for boundary in problem.boundaries:
        if boundary.type == "dirichlet":
            values[mesh.boundary_nodes(boundary.name)] = boundary.value
    fixed = np.flatnonzero(~np.isnan(values))
    fixed_values = values[fixed]
    if axisymmetric and problem.potential == "vector":
        # On the axis A_phi = r u vanishes whatever u is, and u = B_z / 2 is unknown: axis nodes stay
        # free (natural), and A_phi = value on them is only consistent for value 0.
        r = mesh.points[fixed, 0]
        on_axis = r <= 1e-12 * np.abs(mesh.points).max()
        if np.any(on_axis & (fixed_values != 0.0)):
            raise ProblemError("a Dirichlet boundary with A_phi != 0 touches the axis r = 0, "
                               "where A_phi must vanish")
        fixed, fixed_values = fixed[~on_axis], fixed_values[~on_axis] / r[~on_axis]
    require_finite(fe, "the loads", "a current density is too large")
    require_finite(ke, "the element matrices", "a permeability or the mesh's scale is out of range")
    return ElementSystem(ke, fe, mesh.triangles, mesh.n_nodes, fixed, fixed_values)


def _solve(settings, system, groups, backend, control: RunControl):
    """(solution, device, backend name, reduction that ran) by the solver settings' method and backend."""
    if settings.method == "sparse-direct":
        return solve_sparse_direct(system), "CPU (SciPy SuperLU)", "numpy", "none"
    inner = RunControl(lambda f, m: control.progress(0.1 + 0.8 * f, m), control.cancel)
    if backend.is_gpu:
        from .gpu_ebe_pcg import solve_ebe_jpcg_gpu  # noqa: PLC0415 (imports CuPy)

        reduction = REDUCTION.resolve(settings.reduction, on_gpu=True)
        solution = solve_ebe_jpcg_gpu(system, settings.rtol, settings.max_iterations, reduction,
                                      settings.check_every, inner, groups)
    else:
        reduction = REDUCTION.resolve(settings.reduction, on_gpu=False)
        solution = solve_ebe_jpcg(system, settings.rtol, settings.max_iterations, reduction, inner, groups)
    return solution, backend.device, backend.name, reduction


def _post_process(problem: MagnetostaticProblem, mesh, system, unknown, mu):
    """(potential, flux function, B per element, energy, probes) from the nodal unknowns."""
    b = element_flux_density(problem.formulation, problem.potential, mesh, unknown, mu)
    if problem.potential == "scalar":
        potential, flux = unknown, flux_function_from_b(problem.formulation, mesh, b)
    elif problem.formulation == "axisymmetric":
        r = mesh.points[:, 0]
        potential, flux = r * unknown, r * r * unknown
    else:
        potential, flux = unknown, unknown
    energy = magnetic_energy(system.element_matrices, system.connectivity, unknown)
    probes = probe_values(problem.probes, problem.length_scale, problem.formulation, problem.potential,
                          mesh, unknown, mu, potential)
    return potential, flux, b, energy, probes


def run_magnetostatic(problem: MagnetostaticProblem, control: RunControl | None = None) -> MagnetostaticResult:
    """Solve a magnetostatic problem end to end with the method and backend in problem.solver."""
    control = control or RunControl()
    timings: dict[str, float] = {}
    backend = get_backend(problem.solver.backend)

    control.report(0.0, "meshing" if problem.case else "reading mesh")
    t0 = time.perf_counter()
    mesh = load_mesh(problem, control)
    timings["mesh"] = time.perf_counter() - t0

    control.report(0.05, f"element matrices for {mesh.n_elements} triangles")
    t0 = time.perf_counter()
    mu, j = element_properties(problem, mesh)
    system = build_system(problem, mesh, mu, j)
    check_not_singular(system)
    timings["assemble"] = time.perf_counter() - t0
    groups = None
    if problem.solver.method == "ebe-jpcg" and problem.solver.accumulate == "colored":
        control.report(0.08, f"colouring ({problem.solver.coloring})")
        groups = color_elements(mesh.triangles, mesh.n_nodes, problem.solver.coloring,
                                problem.solver.balance, backend.name)
        timings["color"] = groups.seconds

    control.report(0.1, f"solving ({problem.solver.method})")
    t0 = time.perf_counter()
    solution, device, backend_name, reduction = _solve(problem.solver, system, groups, backend, control)
    timings["solve"] = time.perf_counter() - t0

    control.report(0.92, "post-processing")
    t0 = time.perf_counter()
    unknown = solution.x
    potential, flux, b, energy, probes = _post_process(problem, mesh, system, unknown, mu)
    timings["post"] = time.perf_counter() - t0
    control.report(1.0, "done")
    return MagnetostaticResult(problem, mesh, potential, flux, b, energy, solution.iterations,
                               solution.relative_residual, solution.residual_history, probes, timings,
                               backend_name, device, unknown, mu, reduction,
                               groups.n_colors if groups else 0)
