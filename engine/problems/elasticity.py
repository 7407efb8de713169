"""Linear elasticity problem definition (p-FEM on hexahedra): the TOML schema as frozen dataclasses, with
validation against the mesh."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ProblemError
from ..mesh.hexmesh import HexMesh
from ..variants import BACKEND, ELASTIC_METHOD, ELASTIC_RTOL, INTEGRATION, ORDER, PRECONDITIONER, RTOL
from .schema import REQUIRED, Key, Schema, Section, axis_key, case_elements_section
from .toml_input import (MAX_ITERATIONS, Table, array_tables, check_iterations, mesh_source_keys, named_tables,
                         problem_head, read_mesh_source, table, write_mesh_source)

LENGTH_UNITS = {"m": 1.0, "mm": 1e-3}
BOUNDARY_TYPES = ("fixed", "displacement", "traction", "pressure")
FREE = "free"  # a displacement component left unconstrained
MAX_CASE_ELEMENTS = 2_000_000
YOUNG_RANGE = (1e-6, 1e16)  # Pa; moduli outside it overflow or underflow the stiffness products
_SOLVER_AXES = {"method": ELASTIC_METHOD, "integration": INTEGRATION, "preconditioner": PRECONDITIONER,
                "backend": BACKEND}
CASE_ELEMENTS = (1, MAX_CASE_ELEMENTS)
MATERIAL_KEYS = (
    Key("young", float, REQUIRED, "Pa", f"{YOUNG_RANGE[0]:g} to {YOUNG_RANGE[1]:g}", "Young's modulus"),
    Key("poisson", float, REQUIRED, "", "-1 to 0.5, exclusive", "Poisson's ratio"))
BOUNDARY_SECTION = Section("boundaries.NAME", (
    Key("type", str, REQUIRED, "", BOUNDARY_TYPES, "fixed: every component zero; displacement: value prescribed, a "
        "component may be \"free\"; traction: value a surface force; pressure: value along the inward normal"),
    Key("value", (float, list), None, "length_unit or Pa", "3 finite numbers, or one number for pressure",
        "displacement [ux, uy, uz] in length_unit (a component may be \"free\"), traction [tx, ty, tz] in Pa, "
        "pressure p in Pa; none for fixed", "[x, y, z] or p")),
    "a condition on the mesh's physical group NAME of boundary faces; faces not named are traction-free")
PROBE_SECTION = Section("probes", (
    Key("name", str, None, "", "any", "left out: probe1, probe2, ..."),
    Key("point", list, REQUIRED, "length_unit", "3 finite numbers", "where the summary reports the fields",
        "[x, y, z]")),
    "points where the summary reports the displacement and the von Mises stress", array=True)


@cache
def schema() -> Schema:
    """The elasticity problem file's tables and keys, as parse_elasticity reads them."""
    from ..mesh.hex_cases import HEX_CASES  # noqa: PLC0415

    return Schema("elasticity", (
        Section("problem", (
            Key("kind", str, REQUIRED, "", ("elasticity",), "the study"),
            Key("order", int, ORDER.default, "", f"{ORDER.minimum:g} to {ORDER.maximum:g}",
                "polynomial order p of the hierarchical hexahedra"),
            *mesh_source_keys({name: spec.length_unit for name, spec in HEX_CASES.items()}, "3D case",
                              units=tuple(LENGTH_UNITS)))),
        case_elements_section(*CASE_ELEMENTS, "hexahedra"),
        Section("regions.NAME", MATERIAL_KEYS, "the isotropic material of the mesh's 3D physical group NAME; every "
                "region of the mesh needs one"),
        BOUNDARY_SECTION,
        Section("solver", (
            axis_key(ELASTIC_METHOD, "cg: preconditioned conjugate gradients on the assembled matrix; "
                     "sparse-direct: SciPy's direct solve (the reference)"),
            axis_key(INTEGRATION, "how the element matrices are computed (the variants below)"),
            axis_key(PRECONDITIONER, "of CG"),
            axis_key(BACKEND, "where it runs: numpy, cupy (a CUDA GPU) or auto (the GPU when one is usable)"),
            Key("rtol", float, ELASTIC_RTOL.default, "", f"{RTOL.minimum:g} to {RTOL.maximum:g}, exclusive",
                "relative residual ||b - Ax|| / ||b|| to reach"),
            Key("max_iterations", int, None, "", f"1 to {MAX_ITERATIONS:,}", "CG's iteration limit; left out: "
                "a size-based default"))),
        PROBE_SECTION,
    ))


@dataclass(frozen=True)
class ElasticRegion:
    """Isotropic material of a 3D physical group: Young's modulus (Pa) and Poisson's ratio."""

    name: str
    young: float
    poisson: float


@dataclass(frozen=True)
class ElasticBoundary:
    """Condition on a 2D physical group of quadrilateral faces.

    value: None for "fixed"; (ux, uy, uz) in the length unit for "displacement", a component None
    where it is free; (tx, ty, tz) in Pa for "traction"; p in Pa along the inward normal for "pressure".
    """

    name: str
    type: str
    value: tuple[float | None, float | None, float | None] | float | None = None


@dataclass(frozen=True)
class ElasticSolverSettings:
    method: str = "cg"
    integration: str = "numpy"
    preconditioner: str = "block-jacobi"
    backend: str = "auto"
    rtol: float = 1e-10
    max_iterations: int | None = None  # None: a size-based default


@dataclass(frozen=True)
class Probe3:
    name: str
    point: tuple[float, float, float]  # in the problem's length_unit


@dataclass(frozen=True)
class ElasticityProblem:
    order: int
    length_unit: str
    regions: tuple[ElasticRegion, ...]
    boundaries: tuple[ElasticBoundary, ...]
    solver: ElasticSolverSettings = ElasticSolverSettings()
    probes: tuple[Probe3, ...] = ()
    mesh_path: Path | None = None  # a mesh file, or
    case: str | None = None  # a built-in 3D case
    case_elements: int | None = None  # target element count for the case (None: its nominal mesh)

    kind = "elasticity"

    @property
    def length_scale(self) -> float:
        """Metres per length unit."""
        return LENGTH_UNITS[self.length_unit]

    def with_solver(self, **changes: Any) -> "ElasticityProblem":
        """A copy with solver settings replaced. None values, and keys that are no setting of this
        study (e.g. check_every of the magnetostatic solver), are ignored; the rest is validated."""
        known = {f.name for f in fields(ElasticSolverSettings)}
        changes = {k: v for k, v in changes.items() if v is not None and k in known}
        for key, value in changes.items():
            if key in _SOLVER_AXES:
                _SOLVER_AXES[key].choice(value)
        if "rtol" in changes:
            RTOL.check(changes["rtol"])
        check_iterations(changes.get("max_iterations"), "max_iterations")
        return replace(self, solver=replace(self.solver, **changes))

    def with_order(self, order: int) -> "ElasticityProblem":
        """A copy with the element order p replaced (a whole number from 1 to 10)."""
        return replace(self, order=ORDER.check(order))

    def validate_against_mesh(self, mesh: HexMesh) -> None:
        """Every region and boundary named must exist in the mesh; every mesh region needs a material."""
        named = {r.name for r in self.regions}
        for name in sorted(named - set(mesh.region_names)):
            raise ProblemError(f"unknown region '{name}' in [regions]; the mesh has: "
                               f"{', '.join(mesh.region_names)}")
        for name in mesh.region_names:
            if name not in named:
                raise ProblemError(f"mesh region '{name}' has no material: add [regions.{name}]")
        for b in self.boundaries:
            if b.name not in mesh.boundary_names:
                known = ", ".join(mesh.boundary_names) or "none"
                raise ProblemError(f"unknown boundary '{b.name}' in [boundaries]; the mesh has: {known}")


def parse_elasticity(data: dict[str, Any], base_dir: Path) -> ElasticityProblem:
    """Build an ElasticityProblem from parsed TOML; paths are relative to base_dir."""
    from ..mesh.hex_cases import HEX_CASES  # noqa: PLC0415

    top, head = problem_head(data, schema(), "an elasticity problem")
    try:
        order = ORDER.check(head.read("order"))
    except ProblemError as exc:
        raise ProblemError(f"[problem] {exc}") from None
    mesh, case, length_unit = head.read("mesh"), head.read("case"), head.read("length_unit")
    head.done()
    mesh_path, case_elements, length_unit = read_mesh_source(
        top, mesh, case, length_unit, base_dir, {name: spec.length_unit for name, spec in HEX_CASES.items()},
        "3D case", CASE_ELEMENTS)

    regions = []
    for name, t in named_tables(top, "regions"):
        young, poisson = parse_material(t)
        t.done()
        regions.append(ElasticRegion(name, young, poisson))
    if not regions:
        raise ProblemError("the problem file has no [regions.NAME] tables")

    boundaries = [_parse_boundary(name, t) for name, t in named_tables(top, "boundaries")]
    if not any(b.type in ("fixed", "displacement") for b in boundaries):
        raise ProblemError("[boundaries] needs at least one 'fixed' or 'displacement' boundary; "
                           "without one the body is free to move as a rigid body")

    s = table(top, "solver")
    axes = {key: s.read(key) for key in _SOLVER_AXES}
    rtol = s.read("rtol")
    if not RTOL.minimum < rtol < RTOL.maximum:
        raise ProblemError(f"[solver] rtol must lie strictly between {RTOL.minimum:g} and {RTOL.maximum:g}, "
                           f"got {rtol}")
    max_it = check_iterations(s.read("max_iterations"), "[solver] max_iterations")
    s.done()
    solver = ElasticSolverSettings(**axes, rtol=rtol, max_iterations=max_it)

    probes = parse_probes3(top)
    top.done()
    return ElasticityProblem(order, length_unit, tuple(regions), tuple(boundaries), solver, probes,
                             mesh_path, case, case_elements)


def parse_probes3(top: Table) -> tuple[Probe3, ...]:
    """The [[probes]] array of a 3D problem file: a name and a point [x, y, z] each."""
    probes = []
    for i, t in enumerate(array_tables(top, "probes")):
        name = t.read("name")
        name = f"probe{i + 1}" if name is None else name
        point = t.raw("point") if "point" in t.data else None
        t.done()
        if not _is_numbers(point):
            raise ProblemError(f"[[probes]] '{name}': point must be a list of 3 numbers [x, y, z]")
        probes.append(Probe3(name, tuple(float(v) for v in point)))
    return tuple(probes)


def parse_material(t: Table) -> tuple[float, float]:
    """Young's modulus (Pa) within YOUNG_RANGE and Poisson's ratio in (-1, 0.5), popped from a table."""
    young = t.positive("young")
    if not YOUNG_RANGE[0] <= young <= YOUNG_RANGE[1]:
        raise ProblemError(f"[{t.where}] young must lie from {YOUNG_RANGE[0]:g} to {YOUNG_RANGE[1]:g} Pa, "
                           f"got {young:g}")
    poisson = t.read("poisson")
    if not -1.0 < poisson < 0.5:
        raise ProblemError(f"[{t.where}] poisson must lie strictly between -1 and 0.5, got {poisson}")
    return young, poisson


def _parse_boundary(name: str, t: Table) -> ElasticBoundary:
    """A [boundaries.NAME] table (BOUNDARY_SECTION)."""
    where = t.where
    btype = t.read("type")
    if btype == "fixed":
        if "value" in t.data:
            raise ProblemError(f"[{where}] a fixed boundary takes no value (every component is zero)")
        value = None
    elif btype == "pressure":
        value = t.take("value", float)  # BOUNDARY_SECTION's value, a number for a pressure
    else:
        if "value" not in t.data:
            raise ProblemError(f"[{where}] is missing the key 'value'")
        raw = t.raw("value")
        if btype == "traction":
            if not _is_numbers(raw):
                raise ProblemError(f"[{where}] value must be a list of 3 numbers [tx, ty, tz] (Pa)")
            value = tuple(float(v) for v in raw)
        else:
            if not _is_numbers(raw, free=True):
                raise ProblemError(f"[{where}] value must be a list of 3 numbers or \"{FREE}\" [ux, uy, uz]")
            value = tuple(None if v == FREE else float(v) for v in raw)
            if all(v is None for v in value):
                raise ProblemError(f"[{where}] every displacement component is \"{FREE}\"; "
                                   "leave the boundary out instead")
    t.done()
    return ElasticBoundary(name, btype, value)


def _is_numbers(raw: Any, free: bool = False) -> bool:
    """Whether raw is a list of 3 finite numbers (or the string "free" where free is allowed)."""
    def ok(v):
        if free and v == FREE:
            return True
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    return isinstance(raw, list) and len(raw) == 3 and all(ok(v) for v in raw)


def elasticity_to_dict(problem: ElasticityProblem) -> dict[str, Any]:
    """The problem in the problem-file schema (mesh paths absolute): parse_elasticity(result, any folder)
    gives the problem back. Editors change this dictionary and parse it again, so their input is
    validated exactly like a file's."""
    head: dict[str, Any] = {"kind": "elasticity", "order": problem.order, "length_unit": problem.length_unit}
    data: dict[str, Any] = {"problem": head}
    write_mesh_source(problem, head, data)
    data["regions"] = {r.name: {"young": r.young, "poisson": r.poisson} for r in problem.regions}
    boundaries: dict[str, Any] = {}
    for b in problem.boundaries:
        table: dict[str, Any] = {"type": b.type}
        if b.type in ("displacement", "traction"):
            table["value"] = [FREE if v is None else v for v in b.value]
        elif b.type == "pressure":
            table["value"] = b.value
        boundaries[b.name] = table
    data["boundaries"] = boundaries
    data["solver"] = {k: v for k, v in asdict(problem.solver).items() if v is not None}
    data["probes"] = [{"name": p.name, "point": list(p.point)} for p in problem.probes]
    return data
