"""Reading TOML problem files and checking tables key by key, so every mistake is reported by name."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ProblemError


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file; raise ProblemError naming the file and the syntax error."""
    path = Path(path)
    if not path.is_file():
        raise ProblemError(f"problem file not found: {path}")
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(f"malformed TOML in {path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"cannot read problem file {path}: {exc}") from None


class Table:
    """A TOML table with a dotted name for messages; take() pops keys, done() rejects leftovers."""

    def __init__(self, data: Any, where: str):
        if not isinstance(data, dict):
            raise ProblemError(f"[{where}] must be a table")
        self.data = dict(data)
        self.where = where

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
            raise ProblemError(f"[{self.where}] {key} must be a {names}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ProblemError(f"[{self.where}] {key} must be finite, got {value}")
        if choices is not None and value not in choices:
            raise ProblemError(f"[{self.where}] {key} = {value!r} is not one of: {', '.join(choices)}")
        return value

    def positive(self, key: str, default: Any = ...) -> float:
        value = self.take(key, float, default)
        if value is not None and not value > 0:
            raise ProblemError(f"[{self.where}] {key} must be positive, got {value}")
        return value

    def subtable(self, key: str) -> dict[str, Any]:
        value = self.data.pop(key, {})
        if not isinstance(value, dict):
            raise ProblemError(f"[{self.where}.{key}] must be a table")
        return value

    def done(self) -> None:
        if self.data:
            raise ProblemError(f"[{self.where}] unknown key(s): {', '.join(sorted(self.data))}")


def section(top: Table, key: str) -> dict[str, Any]:
    """A top-level table of the problem file ({} when absent), named [key] in messages."""
    value = top.data.pop(key, {})
    if not isinstance(value, dict):
        raise ProblemError(f"[{key}] must be a table")
    return value


def problem_head(data: dict[str, Any], kind: str, label: str) -> tuple[Table, Table]:
    """The file's top table and its [problem] table, whose kind must be `kind` (label: 'an elasticity
    problem', for the message)."""
    top = Table(data, "problem file")
    head = Table(section(top, "problem"), "problem")
    found = head.take("kind", str)
    if found != kind:
        raise ProblemError(f"[problem] kind = {found!r} is not {label}")
    return top, head


def write_mesh_source(problem, head: dict[str, Any], data: dict[str, Any]) -> None:
    """A one-mesh problem's source into the file dictionary: [problem] case (with [case] elements) or mesh."""
    if problem.case is not None:
        head["case"] = problem.case
        if problem.case_elements is not None:
            data["case"] = {"elements": problem.case_elements}
    else:
        head["mesh"] = str(problem.mesh_path)
