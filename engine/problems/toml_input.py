"""Reading TOML problem files and checking tables key by key, so every mistake is reported by name."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ProblemError, shown
from .schema import REQUIRED, Key, Schema, Section

MAX_INTEGER = 2**63 - 1  # larger integers overflow every integer type below Python's (NumPy's int64 first)
MAX_DEPTH = 16  # tables and arrays nested deeper than any problem file needs
MAX_MAGNITUDE = 1e150  # beyond it, squares (energies, norms) overflow double precision
MAX_ITERATIONS = 1_000_000  # an iterative solver's limit: more would run for days on any mesh this takes


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file; raise ProblemError naming the file and the syntax error."""
    path = Path(path)
    if path.is_dir():
        raise ProblemError(f"{path} is a folder, not a problem file")
    if not path.is_file():
        raise ProblemError(f"problem file not found: {path}")
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(f"malformed TOML in {path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"cannot read problem file {path}: {exc}") from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits; arrays nested deeply
        reason = ("arrays or tables nested too deeply" if isinstance(exc, RecursionError)
                  else "an integer of more than 4,300 digits" if "digits" in str(exc) else exc)
        raise ProblemError(f"malformed TOML in {path}: {reason}") from None


def check_values(data: Any, where: str = "") -> None:
    """Every number of a problem dictionary representable where it is used, named by its key where it is not
    (e.g. 'boundaries.load.value[1]'): integers within int64, floats finite and at most MAX_MAGNITUDE in
    magnitude; nesting at most MAX_DEPTH deep; keys printable. Walked without recursion, so any depth is
    refused cleanly. (Each reader then checks its keys' own ranges.)"""
    stack = [(data, where, 0)]
    while stack:
        value, key, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ProblemError(f"{key} is nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for k in value:
                if not str(k).isprintable():  # a quoted key with a line break would break every message
                    raise ProblemError(f"{key or 'the problem file'}: the key {str(k)!r} holds characters that "
                                       "cannot be printed")
            stack.extend((v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((v, f"{key}[{i}]", depth + 1) for i, v in enumerate(value))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int) and abs(value) > MAX_INTEGER:
            raise ProblemError(f"{key} = {shown(value)} is too large (at most {MAX_INTEGER:,})")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ProblemError(f"{key} = {value} is not a finite number")
        elif isinstance(value, float) and abs(value) > MAX_MAGNITUDE:
            raise ProblemError(f"{key} = {value:g} is too large: magnitudes beyond {MAX_MAGNITUDE:g} overflow "
                               "double precision in the solve")


def check_iterations(value: int | None, where: str, most: int = MAX_ITERATIONS) -> int | None:
    """value as an iteration limit (None: the solver's default): ProblemError naming where unless it is
    from 1 to most."""
    if value is not None and not 1 <= value <= most:
        raise ProblemError(f"{where} must be from 1 to {most:,}, got {shown(value)}")
    return value


class Table:
    """A TOML table with a dotted name for messages and its declaration (schema.Section): read() and raw() pop
    declared keys, take() any key, done() rejects leftovers."""

    def __init__(self, data: Any, where: str, section: Section | None = None):
        if not isinstance(data, dict):
            raise ProblemError(f"[{where}] must be a table")
        self.data = dict(data)
        self.where = where
        self.section = section
        self.schema: Schema | None = None  # the whole file's declaration, on the file's top table

    def take(self, key: str, kind: type | tuple[type, ...], default: Any = ..., choices=None):
        if key not in self.data:
            if default is ...:
                raise ProblemError(f"[{self.where}] is missing the key '{key}'")
            return default
        value = self.data.pop(key)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise ProblemError(f"[{self.where}] {key} must be a {names}, got {shown(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ProblemError(f"[{self.where}] {key} must be finite, got {value}")
        if choices is not None and value not in choices:
            raise ProblemError(f"[{self.where}] {key} = {value!r} is not one of: {', '.join(choices)}")
        return value

    def read(self, name: str):
        """The declared key `name`: its type and choices checked, its default where it is left out."""
        key = self.section[name]
        return self.take(key.name, key.type, key.default, key.choices)

    def raw(self, name: str):
        """The declared key `name` as written (the caller checks it), its default where it is left out."""
        key = self.section[name]
        if key.name not in self.data:
            if key.default is REQUIRED:
                raise ProblemError(f"[{self.where}] is missing the key '{key.name}'")
            return key.default
        return self.data.pop(key.name)

    def positive(self, name: str) -> float:
        value = self.read(name)
        if value is not None and not value > 0:
            raise ProblemError(f"[{self.where}] {name} must be positive, got {value}")
        return value

    def done(self) -> None:
        if self.data:
            raise ProblemError(f"[{self.where}] unknown key(s): {', '.join(sorted(self.data))}")


def section(top: Table, key: str) -> dict[str, Any]:
    """A top-level table of the problem file ({} when absent), named [key] in messages."""
    top.section[key]  # declared by the study's schema
    value = top.data.pop(key, {})
    if not isinstance(value, dict):
        raise ProblemError(f"[{key}] must be a table")
    return value


def table(top: Table, name: str) -> Table:
    """The top-level table [name] ({} when absent) with its declaration."""
    return Table(section(top, name), name, top.schema[name])


def named_tables(top: Table, name: str) -> list[tuple[str, Table]]:
    """The tables [name.NAME] (regions, boundaries), each with the declaration of [name.NAME]."""
    declared = top.schema[f"{name}.NAME"]
    return [(key, Table(value, f"{name}.{key}", declared)) for key, value in section(top, name).items()]


def array_tables(top: Table, name: str) -> list[Table]:
    """The array of tables [[name]] ([] when absent), each named 'name #i' in messages."""
    top.section[name]
    raw = top.data.pop(name, [])
    if not isinstance(raw, list):
        raise ProblemError(f"[[{name}]] must be an array of tables")
    return [Table(item, f"{name} #{i + 1}", top.schema[name]) for i, item in enumerate(raw)]


def problem_head(data: dict[str, Any], schema: Schema, label: str) -> tuple[Table, Table]:
    """The file's top table and its [problem] table, whose kind must be the schema's (label: 'an elasticity
    problem', for the message)."""
    check_values(data)  # also where a parser is called without parse_problem
    top = Table(data, "problem file", Section("problem file", tuple(Key(t, (dict, list)) for t in schema.tables)))
    top.schema = schema
    head = table(top, "problem")
    found = head.take("kind", head.section["kind"].type)
    if found != schema.kind:
        raise ProblemError(f"[problem] kind = {found!r} is not {label}")
    return top, head


def mesh_source_keys(case_units: dict[str, str], label: str, default_unit: str = "m",
                     units: tuple[str, ...] = ("m", "mm")) -> tuple[Key, ...]:
    """[problem] mesh, case and length_unit of a one-mesh problem (case_units: each built-in case's unit)."""
    return (Key("mesh", str, None, "", "a file path", "the mesh file, relative to the problem file (meshio: gmsh "
                ".msh 2.2 / 4.1 and others, named physical groups); or case"),
            Key("case", str, None, "", ", ".join(case_units), f"a built-in {label} (`paraflux cases`); exactly "
                "one of mesh or case"),
            Key("length_unit", str, None, "", units, f"unit of the mesh coordinates and of the probes; left out: "
                f"the case's own ({', '.join(sorted(set(case_units.values())))}), {default_unit} for a mesh file"))


def read_mesh_source(top: Table, mesh: str | None, case: str | None, length_unit: str | None,
                     base_dir: Path, case_units: dict[str, str], label: str,
                     elements: tuple[int, int]) -> tuple[Path | None, int | None, str]:
    """A one-mesh problem's source: exactly one of [problem] mesh (a file, relative to base_dir) or case
    (a key of case_units, which gives the unit the case is drawn in; label names the kind of case) with
    its optional [case] elements in the range `elements` (mesh_source_keys declares them). Returns (mesh path
    or None, case elements or None, length unit); a mesh file's unit defaults to metres."""
    if (mesh is None) == (case is None):
        raise ProblemError("[problem] needs exactly one of 'mesh' (a file) or 'case' (a built-in case)")
    mesh_path, case_elements = None, None
    case_table = table(top, "case")
    if case is not None:
        if case not in case_units:
            raise ProblemError(f"[problem] case = {case!r} is not a built-in {label}; choose one of: "
                               f"{', '.join(case_units)}")
        if length_unit not in (None, case_units[case]):
            raise ProblemError(f"case '{case}' is drawn in {case_units[case]}, but [problem] "
                               f"length_unit = {length_unit!r}")
        length_unit = case_units[case]
        case_elements = case_table.read("elements")
        low, high = elements
        if case_elements is not None and not low <= case_elements <= high:
            raise ProblemError(f"[case] elements must be from {low} to {high:,}, got {case_elements}")
    else:
        mesh_path = (base_dir / mesh).resolve()
        length_unit = length_unit or "m"
    case_table.done()
    return mesh_path, case_elements, length_unit


def write_mesh_source(problem, head: dict[str, Any], data: dict[str, Any]) -> None:
    """A one-mesh problem's source into the file dictionary: [problem] case (with [case] elements) or mesh."""
    if problem.case is not None:
        head["case"] = problem.case
        if problem.case_elements is not None:
            data["case"] = {"elements": problem.case_elements}
    else:
        head["mesh"] = str(problem.mesh_path)
