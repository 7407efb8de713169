"""The declaration of a problem file's tables and keys: what each study's parser reads (toml_input.Table.read)
and what the problem-file reference of docs/studies renders (reference.py), so the two cannot differ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REQUIRED = ...  # the default of a key that must be given


@dataclass(frozen=True)
class Key:
    """One key of a table. type: the Python type(s) TOML gives it (str, int, float, bool, list, dict); default:
    REQUIRED where it must be given, None where leaving it out means what doc says; unit: SI or "" ;
    allowed: the choices (checked on reading) or a text of the admissible values (checked by the parser, which
    words its own message); form: how a value is written where the type alone does not say (e.g. "[x, y]")."""

    name: str
    type: type | tuple[type, ...]
    default: Any = REQUIRED
    unit: str = ""
    allowed: tuple[str, ...] | str = ()
    doc: str = ""
    form: str = ""

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The choices a reading checks (None: the parser checks the value itself)."""
        return self.allowed if isinstance(self.allowed, tuple) and self.allowed else None


@dataclass(frozen=True)
class Section:
    """A table of the problem file. name as written after the brackets ("solver", "regions.NAME": NAME stands
    for a name of the user's, a mesh group's); array: an array of tables ([[probes]]); doc: what it is."""

    name: str
    keys: tuple[Key, ...]
    doc: str = ""
    array: bool = False

    def __getitem__(self, name: str) -> Key:
        for key in self.keys:
            if key.name == name:
                return key
        raise KeyError(f"[{self.name}] declares no key '{name}'")  # a parser reading an undeclared key: a defect

    @property
    def header(self) -> str:
        return f"[[{self.name}]]" if self.array else f"[{self.name}]"

    @property
    def table(self) -> str:
        """The top-level table it lives in ("regions" for "regions.NAME")."""
        return self.name.split(".")[0]


@dataclass(frozen=True)
class Schema:
    """A study's problem file: its [problem] kind and its sections, in the order a file lists them."""

    kind: str
    sections: tuple[Section, ...]

    def __getitem__(self, name: str) -> Section:
        for section in self.sections:
            if section.name == name:
                return section
        raise KeyError(f"the {self.kind} problem file declares no table [{name}]")

    @property
    def tables(self) -> tuple[str, ...]:
        """The top-level tables a file of this kind may hold."""
        return tuple(dict.fromkeys(s.table for s in self.sections))


def axis_key(axis, doc: str = "") -> Key:
    """The key of a variant axis (engine/variants.py): its name, choices and default, doc its label."""
    return Key(axis.name, str, axis.default, "", axis.names, doc or axis.label)


def case_elements_section(low: int, high: int, what: str = "elements") -> Section:
    """[case] of a one-mesh problem with case = "...": the approximate element count, low to high."""
    return Section("case", (
        Key("elements", int, None, "", f"{low:,} to {high:,}",
            f"approximate number of {what} of the built-in case's mesh (the command line's --size); "
            "left out: the case's nominal mesh"),), "with case = \"...\" only")
