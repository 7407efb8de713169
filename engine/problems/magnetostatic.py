"""Magnetostatic problem definition: the TOML schema as frozen dataclasses, with validation against the mesh."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ProblemError
from ..variants import ACCUMULATE, BACKEND, COLORING, METHOD, REDUCTION, RTOL
from ..mesh.trimesh import TriMesh
from .schema import REQUIRED, Key, Schema, Section, axis_key, case_elements_section
from .toml_input import (MAX_ITERATIONS, array_tables, check_iterations, mesh_source_keys, named_tables,
                         problem_head, read_mesh_source, table, write_mesh_source)

FORMULATIONS = ("planar", "axisymmetric")
POTENTIALS = ("vector", "scalar")
LENGTH_UNITS = {"m": 1.0, "mm": 1e-3}
BOUNDARY_TYPES = ("dirichlet", "neumann")
MAX_CASE_ELEMENTS = 20_000_000  # triangles of a built-in case (the benchmark's largest is 4,001,344)
MU_R_RANGE = (1e-6, 1e8)  # relative permeabilities outside this overflow or underflow the CG's products
CASE_ELEMENTS = (50, MAX_CASE_ELEMENTS)


@cache
def schema() -> Schema:
    """The magnetostatic problem file's tables and keys, as parse_magnetostatic reads them."""
    from ..mesh.cases import CASES  # noqa: PLC0415

    return Schema("magnetostatic", (
        Section("problem", (
            Key("kind", str, REQUIRED, "", ("magnetostatic",), "the study"),
            Key("formulation", str, "planar", "", FORMULATIONS, "planar (x, y) or axisymmetric (x = r >= 0, y = z)"),
            Key("potential", str, "vector", "", POTENTIALS, "vector potential A_z / A_phi, or the magnetic scalar "
                "potential (no current regions)"),
            *mesh_source_keys({name: spec.length_unit for name, spec in CASES.items()}, "2D case",
                              units=tuple(LENGTH_UNITS)))),
        case_elements_section(*CASE_ELEMENTS, "triangles"),
        Section("regions.NAME", (
            Key("mu_r", float, 1.0, "", f"{MU_R_RANGE[0]:g} to {MU_R_RANGE[1]:g}", "relative permeability"),
            Key("current_density", float, 0.0, "A/m^2", "any; 0 with potential = \"scalar\"",
                "current density, out of plane (planar) or azimuthal (axisymmetric)")),
            "the material of the mesh's 2D physical group NAME; every region of the mesh needs one"),
        Section("boundaries.NAME", (
            Key("type", str, "dirichlet", "", BOUNDARY_TYPES, "neumann is homogeneous only"),
            Key("value", float, 0.0, "Wb/m or A", "any; 0 for neumann", "A_z (planar) or A_phi (axisymmetric) in "
                "Wb/m, or the scalar potential in A")),
            "a condition on the mesh's 1D physical group NAME; edges not named are natural (homogeneous Neumann)"),
        Section("solver", (
            axis_key(METHOD, "ebe-jpcg: matrix-free element-by-element Jacobi-preconditioned CG; sparse-direct: "
                     "SciPy's SuperLU on the assembled matrix (the reference)"),
            Key("rtol", float, RTOL.default, "", f"{RTOL.minimum:g} to {RTOL.maximum:g}, exclusive",
                "relative residual ||b - Ax|| / ||b|| to reach"),
            Key("max_iterations", int, None, "", f"1 to {MAX_ITERATIONS:,}", "iteration limit; left out: "
                "1000 + 50 sqrt(free nodes)"),
            axis_key(BACKEND, "where it runs: numpy, cupy (a CUDA GPU) or auto (the GPU when one is usable)"),
            axis_key(REDUCTION, "inner products of EBE-J-PCG; auto: library on NumPy, fused on the GPU"),
            Key("check_every", int, None, "", "an even number, at least 2", "GPU: iterations between "
                "convergence checks (one CUDA graph replay); left out: the solver's default"),
            axis_key(ACCUMULATE, "atomic, or colored: one conflict-free pass per colour group, bitwise identical "
                     "from run to run"),
            axis_key(COLORING, "the colouring method, with accumulate = \"colored\""),
            Key("balance", bool, True, "", "true, false", "even the colour groups' sizes without adding colours"))),
        Section("probes", (
            Key("name", str, None, "", "any", "left out: probe1, probe2, ..."),
            Key("point", list, REQUIRED, "length_unit", "2 finite numbers", "where A and B are reported",
                "[x, y]")),
            "points where the summary reports A and B", array=True),
    ))



@dataclass(frozen=True)
class Region:
    """Material of a 2D physical group: relative permeability and out-of-plane / azimuthal J (A/m^2)."""

    name: str
    mu_r: float = 1.0
    current_density: float = 0.0


@dataclass(frozen=True)
class Boundary:
    """Condition on a 1D physical group; value in Wb/m (A_z, A_phi) or A (scalar potential)."""

    name: str
    type: str = "dirichlet"
    value: float = 0.0


@dataclass(frozen=True)
class SolverSettings:
    method: str = "ebe-jpcg"
    rtol: float = 1e-8
    max_iterations: int | None = None  # None: a size-based default
    backend: str = "auto"
    reduction: str = "auto"  # inner products of EBE-J-PCG; auto: library on NumPy, fused on the GPU
    check_every: int | None = None  # GPU: iterations between convergence checks (None: default)
    accumulate: str = "atomic"  # EBE: "atomic" or "colored" (conflict-free groups, bitwise reproducible)
    coloring: str = "ofcm"  # colouring method for accumulate = "colored"
    balance: bool = True  # even the colour groups


@dataclass(frozen=True)
class Probe:
    name: str
    point: tuple[float, float]  # in the problem's length_unit


@dataclass(frozen=True)
class MagnetostaticProblem:
    formulation: str
    potential: str
    length_unit: str
    regions: tuple[Region, ...]
    boundaries: tuple[Boundary, ...] = ()
    solver: SolverSettings = SolverSettings()
    probes: tuple[Probe, ...] = ()
    mesh_path: Path | None = None  # a mesh file, or
    case: str | None = None  # a built-in case
    case_elements: int | None = None  # target element count for the case (None: its nominal mesh)

    kind = "magnetostatic"

    @property
    def length_scale(self) -> float:
        """Metres per length unit."""
        return LENGTH_UNITS[self.length_unit]

    def with_solver(self, **changes: Any) -> "MagnetostaticProblem":
        """A copy with solver settings replaced (None values are ignored)."""
        changes = {k: v for k, v in changes.items() if v is not None}
        return replace(self, solver=replace(self.solver, **changes))


def _regions(top, potential: str) -> list[Region]:
    """The [regions.NAME] tables: mu_r in range, no current in a scalar-potential problem, at least one."""
    regions = []
    for name, t in named_tables(top, "regions"):
        region = Region(name, t.positive("mu_r"), t.read("current_density"))
        t.done()
        if not MU_R_RANGE[0] <= region.mu_r <= MU_R_RANGE[1]:
            raise ProblemError(f"[regions.{name}] mu_r must lie from {MU_R_RANGE[0]:g} to {MU_R_RANGE[1]:g}, "
                               f"got {region.mu_r:g}")
        if potential == "scalar" and region.current_density != 0.0:
            raise ProblemError(f"[regions.{name}] carries current, but a scalar-potential problem "
                               "has no current regions")
        regions.append(region)
    if not regions:
        raise ProblemError("the problem file has no [regions.NAME] tables")
    return regions


def _boundaries(top) -> list[Boundary]:
    """The [boundaries.NAME] tables (Neumann only homogeneous)."""
    boundaries = []
    for name, t in named_tables(top, "boundaries"):
        btype = t.read("type")
        value = t.read("value")
        t.done()
        if btype == "neumann" and value != 0.0:
            raise ProblemError(f"[boundaries.{name}] only homogeneous Neumann (value = 0) is supported")
        boundaries.append(Boundary(name, btype, value))
    return boundaries


def _solver(top) -> SolverSettings:
    """The [solver] table, every setting checked against its range and the registry's choices."""
    s = table(top, "solver")
    max_it = check_iterations(s.read("max_iterations"), "[solver] max_iterations")
    solver = SolverSettings(method=s.read("method"), rtol=s.read("rtol"), max_iterations=max_it,
                            backend=s.read("backend"), reduction=s.read("reduction"),
                            check_every=s.read("check_every"), accumulate=s.read("accumulate"),
                            coloring=s.read("coloring"), balance=s.read("balance"))
    s.done()
    if not RTOL.minimum < solver.rtol < RTOL.maximum:
        raise ProblemError(f"[solver] rtol must lie strictly between {RTOL.minimum:g} and {RTOL.maximum:g}, "
                           f"got {solver.rtol}")
    if solver.check_every is not None and (solver.check_every < 2 or solver.check_every % 2):
        raise ProblemError(f"[solver] check_every must be an even number of at least 2, got {solver.check_every}")
    return solver


def _probes(top) -> list[Probe]:
    """The [[probes]] array: a name and a finite point [x, y] each."""
    probes = []
    for i, t in enumerate(array_tables(top, "probes")):
        name = t.read("name")
        name = f"probe{i + 1}" if name is None else name
        point = t.read("point")
        t.done()
        if len(point) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                      and math.isfinite(v) for v in point):
            raise ProblemError(f"[[probes]] '{name}': point must be two finite numbers [x, y]")
        probes.append(Probe(name, (float(point[0]), float(point[1]))))
    return probes


def parse_magnetostatic(data: dict[str, Any], base_dir: Path) -> MagnetostaticProblem:
    """Build a MagnetostaticProblem from parsed TOML; paths are relative to base_dir."""
    from ..mesh.cases import CASES  # noqa: PLC0415

    top, head = problem_head(data, schema(), "a magnetostatic problem")
    formulation, potential = head.read("formulation"), head.read("potential")
    mesh, case, length_unit = head.read("mesh"), head.read("case"), head.read("length_unit")
    head.done()
    mesh_path, case_elements, length_unit = read_mesh_source(
        top, mesh, case, length_unit, base_dir, {name: spec.length_unit for name, spec in CASES.items()},
        "case", CASE_ELEMENTS)
    if case is not None and formulation != CASES[case].formulation:
        raise ProblemError(f"case '{case}' is {CASES[case].formulation}, but [problem] formulation = "
                           f"{formulation!r}")

    regions = _regions(top, potential)
    boundaries = _boundaries(top)
    solver = _solver(top)
    probes = _probes(top)
    top.done()
    return MagnetostaticProblem(formulation, potential, length_unit, tuple(regions), tuple(boundaries),
                                solver, tuple(probes), mesh_path, case, case_elements)


def check_against_mesh(problem: MagnetostaticProblem, mesh: TriMesh) -> None:
    """Every mesh region needs a material; every region and boundary named must exist in the mesh."""
    mesh_regions, named = set(mesh.region_names), {r.name for r in problem.regions}
    for name in sorted(named - mesh_regions):
        raise ProblemError(f"unknown region '{name}' in [regions]; the mesh has: "
                           f"{', '.join(mesh.region_names)}")
    for name in mesh.region_names:
        if name not in named:
            raise ProblemError(f"mesh region '{name}' has no material: add [regions.{name}]")
    for b in problem.boundaries:
        if b.name not in mesh.boundary_names:
            known = ", ".join(mesh.boundary_names) or "none"
            raise ProblemError(f"unknown boundary '{b.name}' in [boundaries]; the mesh has: {known}")
    if problem.formulation == "axisymmetric" and mesh.points[:, 0].min() < -1e-12 * max(
            1.0, float(abs(mesh.points).max())):
        raise ProblemError("axisymmetric mesh must lie in x = r >= 0")


def problem_to_dict(problem: MagnetostaticProblem) -> dict[str, Any]:
    """The problem in the problem-file schema (mesh paths absolute): parse_magnetostatic(result, any
    folder) gives the problem back. Editors change this dictionary and parse it again, so their
    input is validated exactly like a file's."""
    head: dict[str, Any] = {"kind": "magnetostatic", "formulation": problem.formulation,
                            "potential": problem.potential, "length_unit": problem.length_unit}
    data: dict[str, Any] = {"problem": head}
    write_mesh_source(problem, head, data)
    data["regions"] = {r.name: {"mu_r": r.mu_r, "current_density": r.current_density} for r in problem.regions}
    if problem.potential == "scalar":
        for table in data["regions"].values():
            del table["current_density"]
    data["boundaries"] = {b.name: {"type": b.type, "value": b.value} for b in problem.boundaries}
    solver = {k: v for k, v in asdict(problem.solver).items() if v is not None}
    data["solver"] = solver
    data["probes"] = [{"name": p.name, "point": list(p.point)} for p in problem.probes]
    return data
