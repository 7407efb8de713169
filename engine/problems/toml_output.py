"""A problem as a problem file: its problem-file dictionary (problem_as_dict) written as TOML, with the file
paths of [problem] relative to the file's folder where they can be, so that `paraflux solve` reads back the
same problem (and the folder can be moved with its files)."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from ..output import write_text_atomic
from . import problem_as_dict
from .reference import schemas

BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
PATH_KEYS = "a file path"  # how a schema declares a key that names a file


def _key(name) -> str:
    return name if BARE_KEY.fullmatch(str(name)) else json.dumps(str(name), ensure_ascii=False)


def _value(value: Any) -> str:
    """A TOML value: strings as basic strings, floats as Python writes them (inf and nan as TOML spells
    them), lists as arrays, tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML value for {type(value).__name__}")


def _table(lines: list[str], header: str, table: dict) -> None:
    """[header] with its values, then its sub-tables as [header.name] (a list of tables as [[header.name]])."""
    values = {k: v for k, v in table.items() if not _is_table(v)}
    if values or not table:
        lines += ["", f"[{header}]"] if header else []
        lines += [f"{_key(k)} = {_value(v)}" for k, v in values.items()]
    for k, v in table.items():
        name = f"{header}.{_key(k)}" if header else _key(k)
        if isinstance(v, dict):
            _table(lines, name, v)
        elif _is_table(v):
            for item in v:
                lines += ["", f"[[{name}]]"] + [f"{_key(a)} = {_value(b)}" for a, b in item.items()]


def _is_table(value) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and bool(value)
                                        and all(isinstance(v, dict) for v in value))


def toml_text(data: dict) -> str:
    """A problem-file dictionary (tables of values, tables, arrays of tables) as TOML text."""
    lines: list[str] = []
    _table(lines, "", data)
    return "\n".join(lines).lstrip("\n") + "\n"


def relative_paths(data: dict, folder: Path) -> dict:
    """A copy of data with the [problem] keys its schema declares as file paths relative to folder
    (absolute where no relative path leads there, e.g. another drive)."""
    declared = {k.name for k in schemas()[data["problem"]["kind"]]["problem"].keys if k.allowed == PATH_KEYS}
    head = dict(data["problem"])
    for name in declared & set(head):
        try:
            head[name] = Path(os.path.relpath(Path(head[name]).resolve(), Path(folder).resolve())).as_posix()
        except ValueError:
            pass
    return {**data, "problem": head}


def write_problem(problem, path: Path) -> Path:
    """The problem as the TOML file path (written whole or not at all): `paraflux solve path` solves it."""
    path = Path(path)
    write_text_atomic(path, toml_text(relative_paths(problem_as_dict(problem), path.parent)))
    return path
