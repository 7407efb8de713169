"""Sweep files (TOML) to a frozen SweepSpec, and its grid of points: one problem-file dictionary and
variant set per point, each named by a hash of what it solves."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ProblemError
from ..problems.toml_input import check_values, read_toml

MAX_VALUES = 100_000  # values (or blocks) of one axis
MAX_POINTS = 1_000_000  # points of the whole grid


@dataclass(frozen=True)
class Axis:
    """One axis of the grid: a dotted key of the problem file (kind "key", numeric values), a variant
    axis of the study (kind "variant", choice names), or a list of the problem file split into contiguous
    blocks, one per point (kind "blocks", values the block numbers 0, 1, ...; e.g. incidences spread over
    machines)."""

    kind: str
    name: str
    values: tuple


@dataclass(frozen=True)
class SweepSpec:
    """A sweep: the base problem-file dictionary (paths in it relative to base_dir), the axes, whether the
    grid pairs them (zip) or takes their product, task retries after a worker dies, and the output
    columns to plot (empty: the study's hint, else every output that varies)."""

    base: dict
    base_dir: Path
    axes: tuple[Axis, ...]
    zip: bool = False
    retries: int = 2
    plots: tuple[str, ...] = ()


@dataclass(frozen=True)
class SweepPoint:
    """One grid point: the axes' values by axis name, its problem file, its variants and its hash
    (16 hex digits of SHA-256 over the problem, the variants and the base folder)."""

    values: dict
    problem: dict
    variants: dict
    base_dir: str
    key: str


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file; a [sweep] problem path is relative to the sweep file."""
    path = Path(path)
    return parse_sweep(read_toml(path), path.parent)


def parse_sweep(data: dict, base_dir: Path) -> SweepSpec:
    """Validate a sweep-file dictionary: [sweep] (problem = "FILE" or an inline [base] problem, zip,
    retries, plots) and [[axes]] (key = "dotted.path" or variant = "name"; values = [...] or start,
    stop, step)."""
    check_values(data)  # every number in range, named by its key; nesting and keys printable
    head = data.get("sweep")
    if not isinstance(head, dict):
        raise ProblemError("the sweep file needs a [sweep] table")
    unknown = set(head) - {"problem", "zip", "retries", "plots"}
    if unknown:
        raise ProblemError(f"[sweep] has unknown keys: {', '.join(sorted(unknown))}")
    if ("problem" in head) == ("base" in data):
        raise ProblemError("give the base problem either as [sweep] problem = \"FILE\" or inline as [base]")
    if "problem" in head:
        if not isinstance(head["problem"], str) or "\0" in head["problem"]:
            raise ProblemError(f"[sweep] problem must be the name of a problem file, got {head['problem']!r}")
        problem_path = Path(base_dir) / head["problem"]
        if not _is_file(problem_path):
            raise ProblemError(f"[sweep] problem: no file {problem_path}")
        problem_path = problem_path.resolve()
        base, problem_dir = read_toml(problem_path), problem_path.parent
    else:
        base, problem_dir = data["base"], Path(base_dir).resolve()
        if not isinstance(base, dict):
            raise ProblemError("[base] must be a table: the base problem, as in a problem file")
    retries = head.get("retries", 2)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ProblemError(f"[sweep] retries must be a whole number of at least 0, got {retries!r}")
    plots = head.get("plots", [])
    if not isinstance(plots, list) or not all(isinstance(p, str) for p in plots):
        raise ProblemError("[sweep] plots must be a list of output names")
    raw_axes = data.get("axes")
    if not isinstance(raw_axes, list) or not raw_axes:
        raise ProblemError("the sweep file needs at least one [[axes]] table")
    axes = tuple(_parse_axis(a, i) for i, a in enumerate(raw_axes))
    if len({a.name for a in axes}) != len(axes):
        raise ProblemError("two [[axes]] sweep the same key or variant")
    _check_variants(base, axes)
    zipped = head.get("zip", False)
    if not isinstance(zipped, bool):
        raise ProblemError(f"[sweep] zip must be true or false, got {zipped!r}")
    if zipped and len({len(a.values) for a in axes}) > 1:
        raise ProblemError("zip = true pairs the axes' values, so every axis needs the same number of values; "
                           f"got {', '.join(f'{a.name}: {len(a.values)}' for a in axes)}")
    points = len(axes[0].values) if zipped else math.prod(len(a.values) for a in axes)
    if points > MAX_POINTS:
        raise ProblemError(f"the sweep has {points:,} points; a sweep takes at most {MAX_POINTS:,}")
    spec = SweepSpec(base, problem_dir, axes, zipped, retries, tuple(plots))
    _check_first_point(spec)
    return spec


def _is_file(path: Path) -> bool:
    """Whether path is a file; False for a name the system refuses (too long, say)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _parse_axis(raw: Any, index: int) -> Axis:
    where = f"[[axes]] number {index + 1}"
    if not isinstance(raw, dict) or ("key" in raw) == ("variant" in raw):
        raise ProblemError(f"{where} needs exactly one of key = \"dotted.path\" or variant = \"axis name\"")
    if "blocks" in raw:
        return _blocks_axis(raw, where)
    kind = "key" if "key" in raw else "variant"
    name = raw[kind]
    unknown = set(raw) - {kind, "values", "start", "stop", "step"}
    if unknown:
        raise ProblemError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    if "values" in raw:
        values = raw["values"]
        if not isinstance(values, list) or not values:
            raise ProblemError(f"{where} ({name}): values must be a non-empty list")
        if len(values) > MAX_VALUES:
            raise ProblemError(f"{where} ({name}): {len(values):,} values; a sweep axis takes at most {MAX_VALUES:,}")
    else:
        values = _range_values(raw, f"{where} ({name})")
    wanted = str if kind == "variant" else (int, float)
    if any(isinstance(v, bool) or not isinstance(v, wanted) for v in values):
        raise ProblemError(f"{where} ({name}): values must be " + ("choice names" if kind == "variant" else "numbers"))
    return Axis(kind, str(name), tuple(values))


def _blocks_axis(raw: dict, where: str) -> Axis:
    """key = "dotted.list", blocks = N: the list's items in N contiguous blocks, one per point."""
    unknown = set(raw) - {"key", "blocks"}
    blocks = raw["blocks"]
    if "key" not in raw or unknown:
        raise ProblemError(f"{where}: a blocks axis takes key = \"dotted.path\" of a list and blocks = N only")
    if isinstance(blocks, bool) or not isinstance(blocks, int) or not 1 <= blocks <= MAX_VALUES:
        raise ProblemError(f"{where} ({raw['key']}): blocks must be a whole number from 1 to {MAX_VALUES:,}, "
                           f"got {blocks!r}")
    return Axis("blocks", str(raw["key"]), tuple(range(blocks)))


def _list_at(data: dict, key: str) -> list:
    node = data
    for part in key.split("."):
        node = node[int(part)] if isinstance(node, list) and part.isdigit() and int(part) < len(node) else \
            node.get(part) if isinstance(node, dict) else None
        if node is None:
            raise ProblemError(f"sweep key {key}: the problem has no {key}")
    return node


def apply_axis(problem: dict, axis: Axis, value) -> dict:
    """The problem-file dictionary with one axis at one of its values (variant axes leave it as is)."""
    if axis.kind == "key":
        return set_dotted(problem, axis.name, value)
    if axis.kind == "variant":
        return problem
    items = _list_at(problem, axis.name)
    if not isinstance(items, list) or len(items) < len(axis.values):
        raise ProblemError(f"sweep key {axis.name}: {len(axis.values)} blocks need a list of at least as many "
                           f"items in the problem")
    size, extra = divmod(len(items), len(axis.values))
    start = value * size + min(value, extra)  # the first `extra` blocks hold one item more
    block = items[start:start + size + (value < extra)]
    out = copy.deepcopy(problem)
    parts = axis.name.rsplit(".", 1)
    parent = _list_at(out, parts[0]) if len(parts) == 2 else out
    parent[int(parts[-1]) if isinstance(parent, list) else parts[-1]] = copy.deepcopy(block)
    return out


def first_point_problem(spec: SweepSpec) -> dict:
    """The base problem-file dictionary with every axis at its first value."""
    problem = spec.base
    for axis in spec.axes:
        problem = apply_axis(problem, axis, axis.values[0])
    return problem


def _check_first_point(spec: SweepSpec) -> None:
    """The base problem with every axis at its first value must be a valid problem: a misspelt key is an
    error of the sweep file (later points with values out of range fail alone, when they run)."""
    from ..problems import parse_problem  # noqa: PLC0415

    try:
        problem = parse_problem(first_point_problem(spec), spec.base_dir)
    except ProblemError as exc:
        raise ProblemError(f"the sweep's first point is not a valid problem: {exc}") from None
    _check_named_entries(spec, problem)


def _check_named_entries(spec: SweepSpec, problem) -> None:
    """A key into [regions.NAME] or [boundaries.NAME] names what the problem's mesh has, before any point
    runs: a region the base problem gives a material (every mesh region needs one), a boundary the base
    problem sets or the mesh declares (a built-in case's named boundaries, a mesh file's named groups)."""
    for axis in (a for a in spec.axes if a.kind != "variant"):
        table, _, rest = axis.name.partition(".")
        name = rest.split(".")[0]
        if table not in ("regions", "boundaries") or not name:
            continue
        given = _names(spec.base, table)
        if name in given:
            continue
        known = given if table == "regions" else [  # a mesh file names its regions too
            n for n in dict.fromkeys([*given, *_mesh_boundaries(problem)]) if n not in _names(spec.base, "regions")]
        if name not in known:
            what = "region" if table == "regions" else "boundary"
            raise ProblemError(f"sweep key {axis.name}: the problem's mesh has no {what} '{name}'; it has: "
                               f"{', '.join(known) or 'none'}")


def _names(data: dict, table: str) -> list[str]:
    """The entry names of a [table.NAME] table of a problem-file dictionary."""
    return list(data[table]) if isinstance(data.get(table), dict) else []


def _mesh_boundaries(problem) -> list[str]:
    """The named boundaries of a problem's mesh without meshing it: a built-in case's declared names, or
    the named groups of its mesh file (read once, not meshed)."""
    from ..problems import case_boundaries  # noqa: PLC0415

    if getattr(problem, "case", None):
        return list(case_boundaries(problem.case))
    path = getattr(problem, "mesh_path", None)
    if path is None:
        return []
    from ..mesh.meshio_read import read_meshio  # noqa: PLC0415

    mesh = read_meshio(path)
    return [*(mesh.field_data or {}), *(n for n in (mesh.cell_sets or {}) if not n.startswith("gmsh:"))]


def _check_variants(base: dict, axes: tuple[Axis, ...]) -> None:
    """Each variant axis is one of the base problem's study, and each value one of its choices (a numeric
    parameter such as rtol is swept by its key in the problem instead)."""
    from ..problems import problem_kind  # noqa: PLC0415
    from ..studies import study_for_kind  # noqa: PLC0415

    study = study_for_kind(problem_kind(base))
    for axis in (a for a in axes if a.kind == "variant"):
        if axis.name not in {a.name for a in study.axes}:
            raise ProblemError(f"[[axes]] variant = {axis.name!r}: {study.title} has the variant axes "
                               f"{', '.join(a.name for a in study.axes)}")
        for value in axis.values:
            study.axis(axis.name).choice(value)


def _range_values(raw: dict, where: str) -> list:
    """start, start + step, ... up to stop inclusive (within a millionth of a step)."""
    try:
        start, stop, step = raw["start"], raw["stop"], raw["step"]
    except KeyError as missing:
        raise ProblemError(f"{where}: give values = [...] or all of start, stop, step (missing {missing})") from None
    numbers = (start, stop, step)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers) or not step > 0 or stop < start:
        raise ProblemError(f"{where}: start, stop, step must be numbers with step > 0 and stop >= start")
    count = (stop - start) / step + 1  # a float: inf where a tiny step overflows, refused below
    if not count <= MAX_VALUES:
        raise ProblemError(f"{where}: {count:,.0f} values; a sweep axis takes at most {MAX_VALUES:,}")
    count = int(math.floor((stop - start) / step + 1e-6)) + 1
    integer = all(isinstance(v, int) for v in numbers)
    return [start + i * step if integer else float(start + i * step) for i in range(count)]


def set_dotted(data: dict, key: str, value) -> dict:
    """A deep copy of data with the numeric leaf at key ("boundaries.AB.value", "probes.0.point.1")
    set to value; missing tables on the way are made (the problem's parser then judges the key), list
    items must exist."""
    out = copy.deepcopy(data)
    parts = key.split(".")
    node = out
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ProblemError(f"sweep key {key}: {'.'.join(parts[:depth]) or 'the problem'} has no item {part}")
            part = int(part)
        elif not isinstance(node, dict):
            raise ProblemError(f"sweep key {key}: {'.'.join(parts[:depth])} in the problem is not a table")
        elif part not in node and not last:
            node[part] = {}  # e.g. case.elements where the file has no [case] table yet
        if last:
            old = node[part] if isinstance(node, list) or part in node else None
            if old is not None and (isinstance(old, bool) or not isinstance(old, (int, float))):
                raise ProblemError(f"sweep key {key} is not a number in the problem (it is {old!r})")
            node[part] = value
        else:
            node = node[part]
    return out


def numeric_keys(data: dict, prefix: str = "") -> list[tuple[str, float]]:
    """Every numeric leaf of a problem-file dictionary as (dotted key, value), list items by index: the keys
    a sweep can vary."""
    items = data.items() if isinstance(data, dict) else enumerate(data)
    found = []
    for name, value in items:
        key = f"{prefix}{name}"
        if isinstance(value, (dict, list)):
            found += numeric_keys(value, key + ".")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            found.append((key, value))
    return found


def point_key(problem: dict, variants: dict, base_dir: str) -> str:
    """16 hex digits of SHA-256 over the point's problem file, variants and base folder (canonical JSON)."""
    text = json.dumps({"problem": problem, "variants": variants, "base_dir": base_dir}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def grid_points(spec: SweepSpec) -> list[SweepPoint]:
    """The sweep's points in grid order (the last axis varying fastest, or paired with zip = true)."""
    combos = zip(*(a.values for a in spec.axes)) if spec.zip else itertools.product(*(a.values for a in spec.axes))
    points, seen = [], {}
    for combo in combos:
        problem, variants = spec.base, {}
        for axis, value in zip(spec.axes, combo):
            problem = apply_axis(problem, axis, value)
            if axis.kind == "variant":
                variants[axis.name] = value
        values = {a.name: v for a, v in zip(spec.axes, combo)}
        key = point_key(problem, variants, str(spec.base_dir))
        if key in seen:
            raise ProblemError(f"the sweep's points {seen[key]} and {values} solve the same problem")
        seen[key] = values
        points.append(SweepPoint(values, problem, variants, str(spec.base_dir), key))
    return points
