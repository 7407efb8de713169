"""Truncation-operator problem definition (FE-IIIEE): the TOML schema as frozen dataclasses.

Surfaces come from two mesh files (all their triangles) or a built-in case; sources are electric
Hertzian dipoles, listed one by one ([[sources]]) and/or generated at random inside S' ([random_sources]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ProblemError
from ..variants import LOOP, QUADRATURE
from .schema import REQUIRED, Key, Schema, Section, axis_key
from .toml_input import Table, array_tables, problem_head, table

LENGTH_UNITS = {"m": 1.0, "cm": 1e-2, "mm": 1e-3}
MAX_RANDOM_SOURCES = 100_000
MIN_PRECISION, MAX_PRECISION = 1e-14, 1e-2  # [solver] precision (loop fmm)
MAX_SURFACE_ELEMENTS = 200_000
_VECTOR = "3 finite numbers"


@cache
def schema() -> Schema:
    """The truncation problem file's tables and keys, as parse_truncation reads them."""
    from ..truncation.cases import CASES  # noqa: PLC0415

    surface = "a closed triangle surface file (every triangle of the mesh), relative to the problem file"
    return Schema("truncation", (
        Section("problem", (
            Key("kind", str, REQUIRED, "", ("truncation",), "the study"),
            Key("inner_surface", str, None, "", "a file path", f"S': {surface}; with outer_surface, or case"),
            Key("outer_surface", str, None, "", "a file path", f"S, enclosing S': {surface}"),
            Key("case", str, None, "", ", ".join(CASES), "a built-in pair of surfaces (`paraflux cases`)"),
            Key("length_unit", str, None, "", tuple(LENGTH_UNITS), "unit of the surfaces and the source "
                "positions; left out: m (the cases are drawn in m)"),
            Key("frequency", float, REQUIRED, "Hz", "positive", "the sources' frequency"),
            Key("quadrature", int, int(QUADRATURE.default), "", ", ".join(QUADRATURE.names),
                "points per triangle of the rule on S' and S (Dunavant, degree 1 to 6)"))),
        Section("case", (
            Key("inner_elements", int, None, "", f"20 to {MAX_SURFACE_ELEMENTS:,}", "triangles of S' (left out: "
                "the case's nominal mesh)"),
            Key("outer_elements", int, None, "", f"20 to {MAX_SURFACE_ELEMENTS:,}", "triangles of S (the command "
                "line's --size; left out: the case's nominal mesh)")), "with case = \"...\" only"),
        Section("sources", (
            Key("position", list, REQUIRED, "length_unit", _VECTOR, "inside S'", "[x, y, z]"),
            Key("moment", list, REQUIRED, "A m", _VECTOR, "current moment I l, real part", "[x, y, z]"),
            Key("moment_imag", list, (0.0, 0.0, 0.0), "A m", _VECTOR, "its imaginary part", "[x, y, z]")),
            "electric Hertzian dipoles, one right-hand side each", array=True),
        Section("random_sources", (
            Key("count", int, REQUIRED, "", f"1 to {MAX_RANDOM_SOURCES:,}", "dipoles at random points inside S' "
                "(half-way to its centroid), unit moments in random directions"),
            Key("seed", int, 0, "", "0 or more", "makes them reproducible")),
            "more right-hand sides; [[sources]], [random_sources] or both"),
        Section("solver", (
            axis_key(LOOP, "the loop strategy (the variants below)"),
            Key("devices", int, 0, "", "0 or more", "loop multi-gpu-tiled: how many GPUs; 0: every visible one"),
            Key("precision", float, 1e-10, "", f"{MIN_PRECISION:g} to {MAX_PRECISION:g}",
                "loop fmm: FMM3D's requested relative precision"))),
    ))


@dataclass(frozen=True)
class DipoleSource:
    """An electric Hertzian dipole: position in the problem's length unit, current moment I l in A m."""

    position: tuple[float, float, float]
    moment: tuple[complex, complex, complex]


@dataclass(frozen=True)
class RandomSources:
    """count dipoles at random points inside S' (half-way to its centroid), unit moments in random
    directions, reproducible from seed."""

    count: int
    seed: int = 0


@dataclass(frozen=True)
class TruncationSolverSettings:
    loop: str = LOOP.default
    devices: int = 0  # multi-gpu-tiled: how many GPUs (0: every visible one)
    precision: float = 1e-10  # fmm: requested relative precision


@dataclass(frozen=True)
class TruncationProblem:
    length_unit: str
    frequency: float  # Hz
    quadrature: int  # points per triangle, on S' and S
    sources: tuple[DipoleSource, ...] = ()
    random_sources: RandomSources | None = None
    solver: TruncationSolverSettings = TruncationSolverSettings()
    inner_path: Path | None = None  # S' and S from mesh files, or
    outer_path: Path | None = None
    case: str | None = None  # a built-in case
    inner_elements: int | None = None  # the case's triangle counts (None: its nominal mesh)
    case_elements: int | None = None  # triangles on S (the command line's --size)

    kind = "truncation"

    @property
    def length_scale(self) -> float:
        """Metres per length unit."""
        return LENGTH_UNITS[self.length_unit]

    @property
    def n_rhs(self) -> int:
        return len(self.sources) + (self.random_sources.count if self.random_sources else 0)

    def with_solver(self, **changes: Any) -> "TruncationProblem":
        """A copy with solver settings replaced; None values are ignored, and a setting of another
        study (e.g. rtol: nothing is solved iteratively here) is an error."""
        changes = {k: v for k, v in changes.items() if v is not None}
        known = {f.name for f in fields(TruncationSolverSettings)}
        for key in changes:
            if key not in known:
                raise ProblemError(f"--{key.replace('_', '-')} does not apply to truncation problems "
                                   "(the operator is applied, not solved iteratively)")
        if "loop" in changes:
            LOOP.choice(changes["loop"])
        if "devices" in changes and changes["devices"] < 0:
            raise ProblemError(f"devices must be 0 (every GPU) or more, got {changes['devices']}")
        return replace(self, solver=replace(self.solver, **changes))

    def with_quadrature(self, points: int | str) -> "TruncationProblem":
        return replace(self, quadrature=int(QUADRATURE.choice(str(points)).name))


def _case_sizes(top, case, inner, outer, length_unit):
    """(length unit, inner and outer triangle counts of a built-in case or None): a case or two surface
    files, not both; a case's [case] sizes in range."""
    from ..truncation.cases import CASES  # noqa: PLC0415

    files = (inner is not None, outer is not None)
    if case is not None and any(files):
        raise ProblemError("[problem] give either case = \"...\" or inner_surface and outer_surface, not both")
    if case is None and not all(files):
        raise ProblemError("[problem] needs inner_surface and outer_surface (mesh files), or case = \"...\"")
    case_table = table(top, "case")
    inner_elements = outer_elements = None
    if case is not None and length_unit not in (None, "m"):
        raise ProblemError(f"case '{case}' is drawn in m, but [problem] length_unit = {length_unit!r}")
    length_unit = length_unit or "m"
    if case is not None:
        if case not in CASES:
            raise ProblemError(f"[problem] case = {case!r} is not a built-in truncation case; choose one of: "
                               f"{', '.join(CASES)}")
        inner_elements = case_table.read("inner_elements")
        outer_elements = case_table.read("outer_elements")
        for key, n in (("inner_elements", inner_elements), ("outer_elements", outer_elements)):
            if n is not None and not 20 <= n <= MAX_SURFACE_ELEMENTS:
                raise ProblemError(f"[case] {key} must be from 20 to {MAX_SURFACE_ELEMENTS:,}, got {n}")
    case_table.done()
    return length_unit, inner_elements, outer_elements


def _sources(top) -> tuple[list[DipoleSource], RandomSources | None]:
    """The [[sources]] dipoles and the [random_sources] table; at least one of them."""
    sources = []
    for i, t in enumerate(array_tables(top, "sources")):
        position, real, imag = _vector(t, "position"), _vector(t, "moment"), _vector(t, "moment_imag")
        t.done()
        moment = tuple(complex(a, b) for a, b in zip(real, imag))
        if not any(moment):
            raise ProblemError(f"[[sources]] #{i + 1}: the moment is zero")
        sources.append(DipoleSource(position, moment))
    random_sources = None
    if "random_sources" in top.data:
        t = table(top, "random_sources")
        count, seed = t.read("count"), t.read("seed")
        t.done()
        if not 1 <= count <= MAX_RANDOM_SOURCES:
            raise ProblemError(f"[random_sources] count must be from 1 to {MAX_RANDOM_SOURCES:,}, got {count}")
        if seed < 0:
            raise ProblemError(f"[random_sources] seed must be zero or positive, got {seed}")
        random_sources = RandomSources(count, seed)
    if not sources and random_sources is None:
        raise ProblemError("the problem has no sources: add [[sources]] tables or [random_sources] count = N")
    return sources, random_sources


def _solver(top) -> tuple[str, int, float]:
    """(loop, devices, precision) of the [solver] table."""
    s = table(top, "solver")
    loop = s.read("loop")
    devices = s.read("devices")
    if devices < 0:
        raise ProblemError(f"[solver] devices must be 0 (every GPU) or more, got {devices}")
    precision = s.read("precision")
    if not MIN_PRECISION <= precision <= MAX_PRECISION:
        raise ProblemError(f"[solver] precision must be from {MIN_PRECISION:g} to {MAX_PRECISION:g}, got {precision:g}")
    s.done()
    return loop, devices, precision


def parse_truncation(data: dict[str, Any], base_dir: Path) -> TruncationProblem:
    """Build a TruncationProblem from parsed TOML; paths are relative to base_dir."""
    top, head = problem_head(data, schema(), "a truncation problem")
    inner, outer, case = head.read("inner_surface"), head.read("outer_surface"), head.read("case")
    length_unit = head.read("length_unit")
    frequency = head.read("frequency")
    if not frequency > 0:
        raise ProblemError(f"[problem] frequency must be positive (Hz), got {frequency:g}")
    quadrature = head.read("quadrature")
    if str(quadrature) not in QUADRATURE.names:
        raise ProblemError(f"[problem] quadrature must be one of {', '.join(QUADRATURE.names)} points per "
                           f"triangle, got {quadrature}")
    head.done()
    length_unit, inner_elements, outer_elements = _case_sizes(top, case, inner, outer, length_unit)
    sources, random_sources = _sources(top)
    loop, devices, precision = _solver(top)
    top.done()
    return TruncationProblem(length_unit, frequency, quadrature, tuple(sources), random_sources,
                             TruncationSolverSettings(loop, devices, precision),
                             (base_dir / inner).resolve() if inner else None,
                             (base_dir / outer).resolve() if outer else None,
                             case, inner_elements, outer_elements)


def _vector(t: Table, key: str) -> tuple[float, float, float]:
    """The declared key `key` of t as 3 finite numbers (its default where it is left out)."""
    if key not in t.data:
        return t.raw(key)
    raw = t.raw(key)
    ok = isinstance(raw, list) and len(raw) == 3 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in raw)
    if not ok:
        raise ProblemError(f"[{t.where}] {key} must be a list of 3 finite numbers")
    return tuple(float(v) for v in raw)


def truncation_to_dict(problem: TruncationProblem) -> dict[str, Any]:
    """The problem in the problem-file schema (paths absolute): parse_truncation(result, any folder)
    gives the problem back."""
    head: dict[str, Any] = {"kind": "truncation", "length_unit": problem.length_unit,
                            "frequency": problem.frequency, "quadrature": problem.quadrature}
    data: dict[str, Any] = {"problem": head}
    if problem.case is not None:
        head["case"] = problem.case
        case = {k: v for k, v in (("inner_elements", problem.inner_elements),
                                  ("outer_elements", problem.case_elements)) if v is not None}
        if case:
            data["case"] = case
    else:
        head["inner_surface"], head["outer_surface"] = str(problem.inner_path), str(problem.outer_path)
    data["sources"] = [{"position": list(s.position), "moment": [m.real for m in s.moment],
                        "moment_imag": [m.imag for m in s.moment]} for s in problem.sources]
    if problem.random_sources is not None:
        data["random_sources"] = {"count": problem.random_sources.count, "seed": problem.random_sources.seed}
    data["solver"] = {"loop": problem.solver.loop, "devices": problem.solver.devices,
                      "precision": problem.solver.precision}
    return data
