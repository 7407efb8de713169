"""The study protocol: all that the command line, the GUI, Compare, the writers and the benchmarks know of a
study. A study is one module in `studies/` that builds a `Study` and registers it (`studies/registry.py`).

Data flows one way: problem file or GUI form -> `Study.parse` -> problem -> `Study.run` -> result ->
`Study.write` (files) or the window's views. A problem is a frozen dataclass with `kind` (the study's
`problem_kind`), `case` and `case_elements` (the built-in case it meshes, if any, and its target element
count) and `with_solver(**changes)` (None values leave a setting as it is). A result has `problem`,
`timings` (phase -> s), `iterations` (int, or None for a study that iterates nothing), `solution` (1-D
array that Compare differences between variants), and, through `Study.fields`, typed fields on a mesh.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from .errors import ProblemError
from .variants import Parameter, VariantAxis

LOCATIONS = ("points", "cells", "surface", "far-field")


@dataclass(frozen=True)
class Case:
    """A built-in case: label is the short kind `paraflux cases` prints (e.g. "planar", "3D BEM");
    boundaries the named boundaries its mesh has; problem_file its example problem (default: the shipped
    resources/problems/<name>.toml)."""

    name: str
    title: str
    description: str
    label: str
    boundaries: tuple[str, ...] = ()
    problem_file: Path | None = None

    def example_problem(self) -> Path:
        if self.problem_file is not None:
            return Path(self.problem_file)
        return Path(str(resources.files("paraflux.resources") / "problems" / f"{self.name}.toml"))


@dataclass(frozen=True, eq=False)
class ResultField:
    """One output quantity: values (n, ...) on the result mesh's points or cells, on the points of a
    surface, or per far-field direction; unit in SI ("" for dimensionless)."""

    name: str
    unit: str
    location: str
    values: np.ndarray

    def __post_init__(self):
        if self.location not in LOCATIONS:
            raise ValueError(f"field {self.name}: location must be one of {LOCATIONS}, got {self.location!r}")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype


@dataclass(frozen=True, eq=False)
class FieldMesh:
    """Where point and cell fields live: points (n, 3) in m, cells {meshio cell type: (n_cells, k) int}."""

    points: np.ndarray
    cells: Mapping[str, np.ndarray]

    @property
    def n_elements(self) -> int:
        return sum(len(c) for c in self.cells.values())

    @property
    def n_nodes(self) -> int:
        return len(self.points)


@dataclass(frozen=True, eq=False)
class ResultFields:
    """A result's fields: the mesh of its point and cell fields (None when it has none), the fields, the
    points of its surface fields (None when it has none), and the angles of its far-field directions
    ({"theta_deg": (n,), "phi_deg": (n,)}, the first one the abscissa of charts; None when it has none)."""

    mesh: FieldMesh | None
    fields: tuple[ResultField, ...]
    surface_points: np.ndarray | None = None
    far_field_angles: Mapping[str, np.ndarray] | None = None

    def at(self, location: str) -> tuple[ResultField, ...]:
        return tuple(f for f in self.fields if f.location == location)


class Result(Protocol):
    """What every study's result offers (Compare and the benchmarks read only these)."""

    problem: Any
    timings: dict
    iterations: int | None
    solution: np.ndarray


@dataclass(frozen=True)
class Study:
    """A study: parse a problem, apply variants, run with progress and cancel, describe and write the result.

    mesh_kind: "triangles-2d", "surface-triangles", "tetrahedra", "hexahedra" or "line"; field_dtype: "real"
    or "complex"; max_devices: GPUs one run can use (0: every visible one). writer(result, folder) writes the
    study's files into folder (None: the generic writer over `fields` and `summary`, output.write_fields).
    """

    name: str
    title: str
    problem_kind: str
    mesh_kind: str
    field_dtype: str
    max_devices: int
    axes: tuple[VariantAxis, ...]
    parameters: tuple[Parameter, ...]
    parse: Callable[[dict, Path], Any]  # (problem-file dict, folder its paths are relative to) -> problem
    to_dict: Callable[[Any], dict]  # problem -> problem-file dict; parse(to_dict(p), any folder) == p
    cases: tuple[Case, ...]
    apply_variants: Callable[[Any, Mapping[str, str]], Any]  # (problem, {axis: choice}) -> problem
    run: Callable[..., Any]  # run(problem, control) -> result
    describe: Callable[[Any], list]  # describe(result) -> lines the command line prints
    summary: Callable[[Any], dict]  # summary(result) -> JSON-ready numbers (summary.json)
    fields: Callable[[Any], ResultFields] | None = None
    writer: Callable[[Any, Path], list] | None = None
    actions: Mapping[str, Callable] = field(default_factory=dict)  # extra runs: check, scaling, ...
    # sweeps (engine/sweep): rows of output numbers per point (None: the summary's scalar numbers), and what
    # a sweep of a problem plots: sweep_plots(problem) -> engine.sweep.SweepPlots (its figures, its labels
    # and units; None: every output that varies against the first swept key)
    sweep_rows: Callable[[Any], list] | None = None
    sweep_plots: Callable[[Any], Any] | None = None
    # a result that is written but fell short (e.g. an iteration that did not reach its tolerance): the
    # sentence saying so, or None; the command line then exits 3 after writing
    shortfall: Callable[[Any], str | None] | None = None

    def write(self, result, out_dir) -> list:
        """The result's files in out_dir, all of them or none (output.write_all)."""
        from .output import write_all, write_fields  # noqa: PLC0415

        if self.writer is not None:
            return write_all(Path(out_dir), lambda folder: self.writer(result, folder))
        return write_all(Path(out_dir), lambda folder: write_fields(self.fields(result), self.summary(result),
                                                                    folder))

    def case(self, name: str) -> Case | None:
        return next((c for c in self.cases if c.name == name), None)

    def axis(self, name: str) -> VariantAxis:
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    def comparable(self) -> list[str]:
        """What Compare can vary: every axis, then the parameters that offer compare_values."""
        return [a.name for a in self.axes] + [p.name for p in self.parameters if p.compare_values]

    def compare_sets(self, name: str, choices) -> list[dict]:
        """Compare's variant sets, {name: choice} each; a parameter's choices (text) become checked numbers."""
        for p in self.parameters:
            if p.name == name:
                return [{name: p.check(int(c) if p.integer else float(c))} for c in choices]
        axis = self.axis(name)
        needed = dict([axis.applies_when]) if axis.applies_when else {}  # e.g. nodes compare exponential runs
        return [{**needed, name: axis.choice(c).name} for c in choices]

    def with_variants(self, problem, variants: Mapping[str, str]):
        """Validate each chosen variant by name and return the problem with them applied."""
        parameters = {p.name for p in self.parameters}
        for axis_name, choice in variants.items():
            if axis_name not in parameters:
                self.axis(axis_name).choice(choice)
        return self.apply_variants(problem, variants)


def checked_kind(data: dict, kinds) -> str:
    """The [problem] kind of a problem-file dict, one of kinds (ProblemError otherwise)."""
    head = data.get("problem")
    if not isinstance(head, dict) or not isinstance(head.get("kind"), str):
        raise ProblemError("the problem file needs a [problem] table with kind = \"...\"")
    kind = head["kind"]
    if kind not in kinds:
        raise ProblemError(f"[problem] kind = {kind!r} is not supported; known kinds: {', '.join(kinds)}")
    return kind
