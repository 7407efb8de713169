"""The elasticity study pipeline: hexahedral mesh, element matrices by the chosen variant, assembly,
loads and constraints, CG or direct solve, sampled fields and probes; returns a result as data."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..backend import get_backend, out_of_memory, to_host
from ..errors import ProblemError
from ..finite import require_finite
from ..mesh.hex_cases import mesh_hex_case
from ..mesh.hex_io import read_hexmesh
from ..mesh.hexmesh import HexMesh
from ..mesh.meshing_process import run_meshing
from ..problems.elasticity import ElasticityProblem
from ..run_control import RunControl
from .dofs import DofMap, build_dof_map
from .element_matrices import INTEGRATIONS, lame
from .post import ProbeValue, SampledField, probe_values, sample
from .solve import constrained_system, solve_cg, solve_direct
from .system import (assemble_stiffness, boundary_faces, check_rigid_body_held, face_constraints,
                     surface_load)


@dataclass(frozen=True, eq=False)
class ElasticityResult:
    """Displacement coefficients, sampled fields (metres, Pa), scalars and per-phase timings (s)."""

    problem: ElasticityProblem
    mesh: HexMesh  # in metres
    dofmap: DofMap
    coefficients: np.ndarray  # (n_dofs,) m
    field: SampledField
    strain_energy: float  # J
    iterations: int
    relative_residual: float
    residual_history: np.ndarray
    probes: tuple[ProbeValue, ...]
    timings: dict[str, float]
    backend: str
    device: str

    @property
    def solution(self) -> np.ndarray:
        """The solution vector that variant comparisons measure differences in."""
        return self.coefficients

    @property
    def max_displacement(self) -> float:
        return float(np.linalg.norm(self.field.displacement, axis=1).max())


def load_hex_mesh(problem: ElasticityProblem, control: RunControl | None = None) -> HexMesh:
    """The problem's mesh in metres, checked against its regions and boundaries; a case is meshed where
    control can cancel it (run_meshing)."""
    if problem.case is not None:
        mesh = run_meshing(mesh_hex_case, problem.case, problem.case_elements, control=control)
    else:
        mesh = read_hexmesh(problem.mesh_path)
    problem.validate_against_mesh(mesh)
    return mesh.scaled(problem.length_scale)


def material_arrays(problem: ElasticityProblem, mesh: HexMesh) -> tuple[np.ndarray, np.ndarray]:
    """Per-element Lame parameters (lambda, mu), (n_elements,) Pa each."""
    by_name = {r.name: r for r in problem.regions}
    young = np.array([by_name[n].young for n in mesh.region_names])[mesh.region_index]
    poisson = np.array([by_name[n].poisson for n in mesh.region_names])[mesh.region_index]
    return lame(young, poisson)


def boundary_data(problem: ElasticityProblem, mesh: HexMesh, dofmap: DofMap):
    """Consistent surface forces (n_dofs,) N and prescribed DOFs with their values (m)."""
    coords = mesh.element_coords()
    force = np.zeros(dofmap.n_dofs)
    dofs, values = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    for b in problem.boundaries:
        faces = boundary_faces(mesh, b.name)
        if b.type == "traction":
            force += surface_load(coords, dofmap, faces, traction=b.value)
        elif b.type == "pressure":
            force += surface_load(coords, dofmap, faces, pressure=b.value)
        else:
            value = (0.0, 0.0, 0.0) if b.type == "fixed" else tuple(
                None if v is None else v * problem.length_scale for v in b.value)
            d, v = face_constraints(mesh.points, dofmap, faces, value)
            dofs.append(d)
            values.append(v)
    dofs, values = np.concatenate(dofs), np.concatenate(values)
    require_finite(force, "the surface loads", "a traction or pressure is too large")
    require_finite(values, "the prescribed displacements", "a displacement is too large")
    dofs, last = np.unique(dofs[::-1], return_index=True)  # a DOF on two boundaries: the later one wins
    return force, dofs, values[::-1][last]


def default_max_iterations(n_dofs: int) -> int:
    return max(1000, 4 * n_dofs)


def _assemble(coords, lam, mu, dofmap, integration: str, xp, backend, control: RunControl, what: str):
    """(K on xp's device, seconds of the element matrices); out of memory (`what`: what was assembled) is
    backend.out_of_memory's OutOfMemory naming it."""
    try:
        k, seconds = assemble_stiffness(coords, lam, mu, dofmap, integration, xp,
                                        progress=lambda f: control.report(0.05 + 0.25 * f,
                                                                          "element matrices and assembly"))
        backend.synchronize()
        return k, seconds
    except MemoryError as exc:
        raise out_of_memory(exc, f"assembling {what}",
                            "use a lower order, a coarser mesh or the numpy backend") from None


def run_elasticity(problem: ElasticityProblem, control: RunControl | None = None) -> ElasticityResult:
    control = control or RunControl()
    timings: dict[str, float] = {}
    s = problem.solver
    _, where = INTEGRATIONS[s.integration]
    backend = get_backend("cupy" if where == "gpu" and s.backend == "auto" else s.backend)
    if where == "gpu" and not backend.is_gpu:
        raise ProblemError(f"integration '{s.integration}' runs on the GPU; choose backend cupy or auto")
    xp = backend.xp if s.method == "cg" else np

    t0 = time.perf_counter()
    control.report(0.0, "meshing" if problem.case else "reading the mesh")
    mesh = load_hex_mesh(problem, control)
    timings["mesh"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    dofmap = build_dof_map(mesh.hexes, problem.order)
    force, dofs, values = boundary_data(problem, mesh, dofmap)
    check_rigid_body_held(mesh.points, mesh.hexes, dofmap, dofs)
    lam, mu = material_arrays(problem, mesh)
    coords = mesh.element_coords()
    timings["dofs_and_loads"] = time.perf_counter() - t0

    control.report(0.05, f"element matrices ({s.integration}), {mesh.n_elements} elements, p = {problem.order}")
    t0 = time.perf_counter()
    k, timings["element_matrices"] = _assemble(coords, lam, mu, dofmap, s.integration, xp, backend, control,
                                               f"{mesh.n_elements:,} elements of order {problem.order}")
    timings["assembly"] = time.perf_counter() - t0 - timings["element_matrices"]

    control.report(0.3, f"solving {dofmap.n_dofs} DOFs ({s.method})")
    t0 = time.perf_counter()
    k_tilde, b_tilde = constrained_system(k, force, dofs, values, xp)
    if s.method == "sparse-direct":
        solution = solve_direct(k_tilde, b_tilde)
    else:
        solution = solve_cg(k_tilde, b_tilde, s.preconditioner, s.rtol,
                            s.max_iterations or default_max_iterations(dofmap.n_dofs), xp, control)
    backend.synchronize()
    timings["solve"] = time.perf_counter() - t0

    control.report(0.92, "sampling displacement and stress")
    t0 = time.perf_counter()
    u_dev = solution.u
    energy = 0.5 * float(u_dev @ (k @ u_dev))
    u = to_host(u_dev)
    field = sample(coords, u, dofmap, lam, mu)
    probes = probe_values(problem.probes, problem.length_scale, coords, u, dofmap, lam, mu)
    timings["post"] = time.perf_counter() - t0
    control.report(1.0, "done")
    return ElasticityResult(problem, mesh, dofmap, u, field, energy, solution.iterations,
                            solution.relative_residual, solution.history, probes, timings,
                            backend.name, backend.device)
