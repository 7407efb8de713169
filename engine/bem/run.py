"""The elastostatic boundary element study: a BemProblem to boundary data, the direct or FMM solve, surface
and probe post-processing."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MeshError, ProblemError
from ..mesh.checks import check_not_self_intersecting
from ..fmm.fmm import LEAF_SIZE_GPU, LEAF_SIZE_HOST, resolve_m2l
from ..mesh.meshing_process import run_meshing
from ..run_control import RunControl
from ..variants import NEAR_FIELD
from ..truncation.surfaces import (INSIDE, TriSurface, compact_surface, nearest_on_surface, read_triangle_mesh,
                                   winding_number)
from .assembly import elements_of
from .direct import BemSolution, BoundaryData, solve_direct
from .fmm_solve import FmmSettings, solve_fmm
from .precision import order_for
from .post import element_stress, interior_fields, nodal_average, von_mises

SURFACE_TOLERANCE = 1e-6  # a probe this close to the surface (times the mesh size) reads the surface values


@dataclass(frozen=True, eq=False)
class GroupedSurface:
    """A closed outward surface (m) and each triangle's group index into names."""

    surface: TriSurface
    group: np.ndarray
    names: tuple[str, ...]

    @property
    def n_elements(self) -> int:
        return self.surface.n_elements

    @property
    def n_nodes(self) -> int:
        return self.surface.n_nodes


def read_grouped_surface(path: Path, scale: float) -> GroupedSurface:
    """Triangles of a meshio-readable file with 2D physical groups (gmsh), coordinates times scale."""
    mesh = read_triangle_mesh(path, "mesh")
    tags = mesh.cell_data.get("gmsh:physical")
    if tags is None:
        raise MeshError(f"mesh file {path} has no physical groups: name the boundary surfaces in gmsh")
    names = {int(v[0]): k for k, v in mesh.field_data.items() if len(v) > 1 and int(v[1]) == 2}
    pick = [i for i, cells in enumerate(mesh.cells) if cells.type == "triangle"]
    tag = np.concatenate([np.asarray(tags[i], dtype=np.int64) for i in pick])
    unique = sorted(set(tag.tolist()))
    surface = compact_surface(Path(path).name, scale * np.asarray(mesh.points, dtype=float),
                              np.concatenate([mesh.cells[i].data for i in pick]))
    check_not_self_intersecting(surface.points, surface.triangles, f"mesh {Path(path).name}")
    return GroupedSurface(surface, np.searchsorted(unique, tag), tuple(names.get(t, f"group{t}") for t in unique))


def surface_of(problem, control: RunControl | None = None) -> GroupedSurface:
    """The problem's surface: its mesh file or built-in case (meshed where control can cancel it)."""
    from .cases import BEM_CASES, mesh_bem_case  # noqa: PLC0415

    if problem.case is not None:
        surface, group = run_meshing(mesh_bem_case, problem.case, problem.case_elements, control=control)
        return GroupedSurface(surface, group, BEM_CASES[problem.case].groups)
    return read_grouped_surface(problem.mesh_path, problem.length_scale)


def boundary_data(grouped: GroupedSurface, problem) -> BoundaryData:
    """Per element and component: prescribed displacement or known traction, from the [boundaries]."""
    s = grouped.surface
    m = len(s.triangles)
    fixed = np.zeros((m, 3), dtype=bool)
    displacement = np.zeros((len(s.points), 3))
    traction = np.zeros((m, 3, 3))
    normals = elements_of(s.points, s.triangles).normals
    for b in problem.boundaries:
        if b.name not in grouped.names:
            raise ProblemError(f"unknown boundary '{b.name}' in [boundaries]; the surface has: "
                               f"{', '.join(grouped.names)}")
        on = grouped.group == grouped.names.index(b.name)
        if b.type == "fixed":
            fixed[on] = True
        elif b.type == "displacement":
            for k, v in enumerate(b.value):
                if v is not None:
                    fixed[on, k] = True
                    displacement[np.unique(s.triangles[on]), k] = v * problem.length_scale
        elif b.type == "traction":
            traction[on] = np.asarray(b.value, dtype=float)
        else:  # pressure pushes along -n, into the body
            traction[on] = (-b.value * normals[on])[:, None, :]
    return BoundaryData(fixed, displacement, traction)


@dataclass(frozen=True, eq=False)
class BemProbe:
    name: str
    point: tuple[float, float, float]  # m
    displacement: tuple[float, float, float]  # m
    von_mises: float  # Pa
    where: str  # "surface" or "interior"


@dataclass(frozen=True, eq=False)
class BemResult:
    problem: object
    grouped: GroupedSurface
    fields: BemSolution  # nodal displacement, element-node traction
    nodal_traction: np.ndarray  # (N, 3) Pa, element-node tractions averaged onto nodes
    nodal_von_mises: np.ndarray  # (N,) Pa
    iterations: int
    residuals: tuple[float, ...]
    relative_residual: float
    probes: tuple[BemProbe, ...]
    backend: str
    device: str
    memory: dict
    timings: dict = field(default_factory=dict)

    @property
    def mesh(self) -> TriSurface:
        return self.grouped.surface

    @property
    def displacement(self) -> np.ndarray:
        return self.fields.displacement

    @property
    def solution(self) -> np.ndarray:
        """The nodal displacements (N, 3) m: what Compare differences."""
        return self.fields.displacement

    @property
    def residual_history(self) -> tuple[float, ...]:
        return self.residuals

    @property
    def max_displacement(self) -> float:
        return float(np.linalg.norm(self.displacement, axis=1).max())


def run_problem(problem, control: RunControl | None = None) -> BemResult:
    """Solve a BemProblem by its method (direct or fmm) and post-process it."""
    from ..backend import get_backend  # noqa: PLC0415

    control = control or RunControl()
    timings = {}
    t0 = time.perf_counter()
    control.report(0.02, "surface")
    grouped = surface_of(problem, control)
    data = boundary_data(grouped, problem)
    s = grouped.surface
    timings["surface"] = time.perf_counter() - t0
    control.check()
    backend = get_backend(problem.solver.backend if problem.solver.method == "fmm" else "numpy")
    if problem.solver.method == "fmm":  # the scheme and order that run, for the summary too
        m2l = resolve_m2l(problem.solver.m2l, backend.is_gpu)
        problem = problem.with_solver(m2l=m2l, order=order_for(problem.solver.precision, m2l, problem.solver.order),
                                      near_field=NEAR_FIELD.resolve(problem.solver.near_field, backend.is_gpu),
                                      leaf_size=problem.solver.leaf_size or (LEAF_SIZE_GPU if backend.is_gpu
                                                                             else LEAF_SIZE_HOST))
    solver = problem.solver
    control.report(0.1, f"{solver.method}: {3 * len(s.points):,} DOFs")
    t0 = time.perf_counter()
    if solver.method == "direct":
        solution = solve_direct(s.points, s.triangles, data, problem.young, problem.poisson, control.check)
        iterations, residuals, relative = 0, (), 0.0
        memory = {"host_bytes": int((3 * len(s.points)) ** 2 * 8 * 3), "device_bytes": 0}
    else:
        settings = FmmSettings(solver.order, solver.leaf_size, solver.m2l, backend.name, solver.rtol,
                               max_iterations=solver.max_iterations, precondition_ratio=float(solver.near_field),
                               exponential_nodes=int(solver.exponential_nodes),
                               coarse_clusters=None if solver.coarse == "on" else 0, far_passes=solver.far_passes,
                               fp32_tables=solver.far_tables == "fp32")
        solution, report = solve_fmm(s.points, s.triangles, data, problem.young, problem.poisson, settings)
        iterations, residuals, relative = report.iterations, report.residuals, report.relative_residual
        timings.update({f"fmm_{k}": v for k, v in report.timings.items()})
        memory = {**report.memory, "near_pairs": report.near_pairs, "coarse_unknowns": report.coarse_size}
    timings["solve"] = time.perf_counter() - t0
    control.check()
    control.report(0.9, "stress and probes")
    t0 = time.perf_counter()
    el = elements_of(s.points, s.triangles)
    stress = element_stress(s.points, s.triangles, solution.displacement, solution.traction, problem.young,
                            problem.poisson)
    vm_element = von_mises(stress)
    vm = nodal_average(s.triangles, vm_element, el.areas, len(s.points))
    traction = nodal_average(s.triangles, solution.traction.mean(axis=1), el.areas, len(s.points))
    probes = tuple(_probe(pr, problem, s, solution, vm, vm_element) for pr in problem.probes)
    timings["post"] = time.perf_counter() - t0
    control.report(1.0, "done")
    return BemResult(problem, grouped, solution, traction, vm, iterations, residuals, relative, probes,
                     backend.name, backend.device, memory, timings)


def _probe(probe, problem, s: TriSurface, solution: BemSolution, vm: np.ndarray, vm_element: np.ndarray) -> BemProbe:
    """Surface values within SURFACE_TOLERANCE of the surface (a node's von Mises stress, the nodal average,
    at a node; its triangle's elsewhere; displacements interpolated linearly), else Somigliana's identity
    inside."""
    x = np.asarray(probe.point, dtype=float) * problem.length_scale
    size = np.ptp(s.points, axis=0).max()
    nearest = int(np.argmin(np.linalg.norm(s.points - x, axis=1)))
    if np.linalg.norm(s.points[nearest] - x) < SURFACE_TOLERANCE * size:
        return BemProbe(probe.name, tuple(x), tuple(solution.displacement[nearest]), float(vm[nearest]), "surface")
    triangle, weights, distance = nearest_on_surface(s, x)
    if distance < SURFACE_TOLERANCE * size:
        u = weights @ solution.displacement[s.triangles[triangle]]
        return BemProbe(probe.name, tuple(x), tuple(u), float(vm_element[triangle]), "surface")
    if winding_number(s, x[None])[0] < INSIDE:
        raise ProblemError(f"probe '{probe.name}' at {probe.point} {problem.length_unit} lies outside the body")
    u, sigma = interior_fields(s.points, s.triangles, solution.displacement, solution.traction, problem.young,
                               problem.poisson, x[None])
    return BemProbe(probe.name, tuple(x), tuple(u[0]), float(von_mises(sigma[0])), "interior")


def bem_summary(result: BemResult) -> dict:
    """The summary.json content (SI units)."""
    p, s = result.problem, result.mesh
    return {"study": "elastostatic-bem", "method": p.solver.method, "n_nodes": len(s.points),
            "n_elements": len(s.triangles), "n_dofs": 3 * len(s.points),
            "double_nodes": result.fields.double_nodes, "iterations": result.iterations,
            "relative_residual": result.relative_residual, "residual_history": list(result.residuals),
            "m2l": p.solver.m2l, "order": p.solver.order, "precision": p.solver.precision,
            "leaf_size": p.solver.leaf_size, "far_passes": p.solver.far_passes if p.solver.method == "fmm" else None,
            "near_field": float(p.solver.near_field) if p.solver.method == "fmm" else None,
            "coarse": p.solver.coarse if p.solver.method == "fmm" else None,
            "far_tables": p.solver.far_tables if p.solver.method == "fmm" else None,
            "exponential_nodes": int(p.solver.exponential_nodes) if p.solver.m2l == "exponential" else None,
            "max_displacement": result.max_displacement,
            "max_von_mises": float(result.nodal_von_mises.max()),
            "probes": [{"name": q.name, "point": list(q.point), "displacement": list(q.displacement),
                        "von_mises": q.von_mises, "where": q.where} for q in result.probes],
            "timings": result.timings, "memory": result.memory, "backend": result.backend,
            "device": result.device, "length_unit_of_points": "m"}
