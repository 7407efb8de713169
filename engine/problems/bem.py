"""Elastostatic boundary element problem files (kind "elastostatic-bem"): the TOML schema as frozen
dataclasses. Boundaries use the elasticity study's syntax (fixed, displacement with "free" components,
traction, pressure) on 2D physical groups of a closed triangulated surface."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ProblemError
from ..variants import (BACKEND, BEM_METHOD, BEM_PRECISION, COARSE_LEVEL, EXPONENTIAL_NODES, FAR_PASSES,
                        FAR_TABLES, LEAF_SIZE, M2L, MULTIPOLE_ORDER, NEAR_FIELD, RTOL)
from .elasticity import (BOUNDARY_SECTION, MATERIAL_KEYS, PROBE_SECTION, ElasticBoundary, Probe3, _parse_boundary,
                         parse_material, parse_probes3)
from .schema import REQUIRED, Key, Schema, Section, case_elements_section
from .toml_input import (MAX_ITERATIONS, check_iterations, mesh_source_keys, named_tables, problem_head,
                         read_mesh_source, table, write_mesh_source)

LENGTH_UNITS = {"m": 1.0, "mm": 1e-3}
MAX_CASE_ELEMENTS = 2_000_000
FP32_TABLES_MAX_ORDER = 10  # far_tables = fp32 with an order given: up to this one (the bar's FMM solve is
# within 4e-6 of the direct one at p = 10, 40x the FP32 table's rounding; docs/studies/fmbem.md)
_AXES = {"method": BEM_METHOD, "m2l": M2L, "backend": BACKEND, "exponential_nodes": EXPONENTIAL_NODES,
         "precision": BEM_PRECISION, "near_field": NEAR_FIELD, "coarse": COARSE_LEVEL, "far_tables": FAR_TABLES}
_PARAMETERS = {"order": MULTIPOLE_ORDER, "leaf_size": LEAF_SIZE, "far_passes": FAR_PASSES}
CASE_ELEMENTS = (20, MAX_CASE_ELEMENTS)
_AXIS_DOCS = {
    "method": "fmm: GMRES through the fast multipole engine; direct: the dense collocation matrix by LU (the "
              "reference, small meshes)",
    "m2l": "the FMM's multipole-to-local scheme (the variants below); auto: batched-gemm on NumPy, standard on "
           "the GPU",
    "backend": "where it runs: numpy, cupy (a CUDA GPU) or auto (the GPU when one is usable)",
    "exponential_nodes": "the plane-wave rule of m2l = \"exponential\" (used with that scheme only); a number "
                         "or a string",
    "precision": "order: run `order`; else the lowest order whose solve was within that of the direct solve "
                 "(engine/bem/precision.py)",
    "near_field": "element sizes out to which element pairs enter GMRES's ILU preconditioner (beyond 3 by the "
                  "plain rule); auto: 6 on NumPy, 3 on the GPU; a number or a string",
    "coarse": "the preconditioner's coarse level beside the ILU (engine/bem/coarse.py)",
    "far_tables": "the FMM's same-level M2L table in FP64 or FP32 (fp32: with a precision asked or an order up "
                  f"to {FP32_TABLES_MAX_ORDER}, not with the exponential scheme)"}


def _parameter_key(parameter) -> Key:
    return Key(parameter.name, int, int(parameter.default), "",
               f"{parameter.minimum:g} to {parameter.maximum:g}", parameter.description)


@cache
def schema() -> Schema:
    """The elastostatic-bem problem file's tables and keys, as parse_bem reads them."""
    from ..bem.cases import BEM_CASES  # noqa: PLC0415

    return Schema("elastostatic-bem", (
        Section("problem", (
            Key("kind", str, REQUIRED, "", ("elastostatic-bem",), "the study"),
            *mesh_source_keys(dict.fromkeys(BEM_CASES, "m"), "boundary element case", units=tuple(LENGTH_UNITS)),
            *MATERIAL_KEYS), "the surface mesh: a closed triangle surface whose 2D physical groups are boundaries"),
        case_elements_section(*CASE_ELEMENTS, "triangles"),
        BOUNDARY_SECTION,
        Section("solver", (
            *(Key(key, (str, int, float), axis.default, "", axis.names, _AXIS_DOCS[key])
              for key, axis in _AXES.items()),
            *(_parameter_key(p) for p in _PARAMETERS.values()),
            Key("rtol", float, BemSolverSettings.rtol, "", f"{RTOL.minimum:g} to {RTOL.maximum:g}, exclusive",
                "GMRES's relative residual ||b - Ax|| / ||b|| (fmm); the FMM's order, not rtol, sets the accuracy"),
            Key("max_iterations", int, BemSolverSettings.max_iterations, "", f"1 to {MAX_ITERATIONS:,}",
                "GMRES's iteration limit"))),
        PROBE_SECTION,
    ))


@dataclass(frozen=True)
class BemSolverSettings:
    method: str = BEM_METHOD.default
    m2l: str = M2L.default
    exponential_nodes: str = EXPONENTIAL_NODES.default  # the m2l = "exponential" plane-wave rule
    order: int = int(MULTIPOLE_ORDER.default)  # multipole order p, as a problem file without one gets
    leaf_size: int = LEAF_SIZE.default  # 0: by backend (run.py)
    far_passes: int = int(FAR_PASSES.default)  # FMM applications per far-field product (less memory, more time)
    near_field: str = NEAR_FIELD.default  # element sizes the preconditioner reaches (auto: by backend)
    coarse: str = COARSE_LEVEL.default  # the preconditioner's coarse level, on or off (bem/coarse.py)
    far_tables: str = FAR_TABLES.default  # the FMM's M2L table in fp64 or fp32 (with a precision asked only)
    backend: str = "auto"
    precision: str = BEM_PRECISION.default  # "order": run `order`; else the order for it (bem/precision.py)
    rtol: float = 1e-8
    max_iterations: int = 1000

    def __post_init__(self):
        """A precision the named M2L scheme reaches at no measured order is refused here, before meshing (auto
        resolves to a scheme that reaches them all)."""
        from ..bem.precision import order_for  # noqa: PLC0415

        if self.method == "fmm" and self.m2l != "auto":
            order_for(self.precision, self.m2l, self.order)
        if self.method == "fmm" and self.far_tables == "fp32":
            if self.precision == "order" and self.order > FP32_TABLES_MAX_ORDER:
                raise ProblemError(f"far_tables = fp32 takes orders up to {FP32_TABLES_MAX_ORDER} or a precision "
                                   f"asked (1e-3 to 1e-5), not order {self.order}: there the FMM's own error may "
                                   "fall to the FP32 table's rounding, about 1e-7")
            if self.m2l == "exponential":
                raise ProblemError("far_tables = fp32 is for the schemes with a same-level M2L table, not the "
                                   "exponential one")


@dataclass(frozen=True)
class BemProblem:
    length_unit: str
    young: float  # Pa
    poisson: float
    boundaries: tuple[ElasticBoundary, ...]
    solver: BemSolverSettings = BemSolverSettings()
    probes: tuple[Probe3, ...] = ()
    mesh_path: Path | None = None  # a mesh file with 2D physical groups, or
    case: str | None = None  # a built-in surface
    case_elements: int | None = None  # its triangle count (None: nominal)

    kind = "elastostatic-bem"

    @property
    def length_scale(self) -> float:
        """Metres per length unit."""
        return LENGTH_UNITS[self.length_unit]

    def with_solver(self, **changes: Any) -> "BemProblem":
        """A copy with solver settings replaced; None values and settings of other studies are ignored."""
        known = {f.name for f in fields(BemSolverSettings)}
        changes = {k: v for k, v in changes.items() if v is not None and k in known}
        for key, value in changes.items():
            if key in _AXES:
                _AXES[key].choice(value)
            elif key in _PARAMETERS:
                changes[key] = _PARAMETERS[key].check(value)
        if "rtol" in changes:
            RTOL.check(changes["rtol"])
        check_iterations(changes.get("max_iterations"), "max_iterations")
        return replace(self, solver=replace(self.solver, **changes))


def parse_bem(data: dict[str, Any], base_dir: Path) -> BemProblem:
    """Build a BemProblem from parsed TOML; paths are relative to base_dir."""
    from ..bem.cases import BEM_CASES  # noqa: PLC0415

    top, head = problem_head(data, schema(), "an elastostatic-bem problem")
    mesh, case, length_unit = head.read("mesh"), head.read("case"), head.read("length_unit")
    young, poisson = parse_material(head)
    head.done()
    mesh_path, case_elements, length_unit = read_mesh_source(
        top, mesh, case, length_unit, base_dir, dict.fromkeys(BEM_CASES, "m"), "boundary element case",
        CASE_ELEMENTS)

    boundaries = tuple(_parse_boundary(name, t) for name, t in named_tables(top, "boundaries"))
    if not any(b.type in ("fixed", "displacement") for b in boundaries):
        raise ProblemError("[boundaries] needs at least one 'fixed' or 'displacement' boundary; "
                           "without one the body is free to move as a rigid body")

    s = table(top, "solver")
    axes = {}
    for key, axis in _AXES.items():  # a node count or a near field may be written as a number
        value = s.take(key, s.section[key].type, s.section[key].default)
        value = value if isinstance(value, str) else f"{value:g}"
        if value not in axis.names:
            raise ProblemError(f"[solver] {key} = {value!r} is not one of: {', '.join(axis.names)}")
        axes[key] = value
    params = {}
    for key, parameter in _PARAMETERS.items():
        try:
            params[key] = parameter.check(s.read(key))
        except ProblemError as exc:
            raise ProblemError(f"[solver] {exc}") from None
    rtol = s.read("rtol")
    if not RTOL.minimum < rtol < RTOL.maximum:
        raise ProblemError(f"[solver] rtol must lie strictly between {RTOL.minimum:g} and {RTOL.maximum:g}, "
                           f"got {rtol}")
    max_it = check_iterations(s.read("max_iterations"), "[solver] max_iterations")
    s.done()
    probes = parse_probes3(top)
    top.done()
    return BemProblem(length_unit, young, poisson, boundaries,
                      BemSolverSettings(**axes, **params, rtol=rtol, max_iterations=max_it), probes,
                      mesh_path, case, case_elements)


def bem_to_dict(problem: BemProblem) -> dict[str, Any]:
    """The problem in the problem-file schema: parse_bem(result, any folder) gives it back."""
    head: dict[str, Any] = {"kind": "elastostatic-bem", "length_unit": problem.length_unit,
                            "young": problem.young, "poisson": problem.poisson}
    data: dict[str, Any] = {"problem": head}
    write_mesh_source(problem, head, data)
    boundaries: dict[str, Any] = {}
    for b in problem.boundaries:
        entry: dict[str, Any] = {"type": b.type}
        if b.type in ("traction", "pressure"):
            entry["value"] = list(b.value) if b.type == "traction" else b.value
        elif b.type == "displacement":
            entry["value"] = ["free" if v is None else v for v in b.value]
        boundaries[b.name] = entry
    data["boundaries"] = boundaries
    data["solver"] = {f.name: getattr(problem.solver, f.name) for f in fields(BemSolverSettings)}
    if problem.probes:
        data["probes"] = [{"name": p.name, "point": list(p.point)} for p in problem.probes]
    return data
