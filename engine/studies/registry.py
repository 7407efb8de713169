"""The one registry of studies and their variant axes, read by the command line, the GUI and the benchmarks.

A study declares what it solves (problem kind, mesh kind, field type, devices it can use), its
variant axes with their choices, and how to run a problem with chosen variants.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from ..backend import with_cpu_fallback
from ..errors import ProblemError
from ..variants import Choice, VariantAxis  # noqa: F401  (re-exported: the registry's vocabulary)


@dataclass(frozen=True)
class Study:
    """A study: load a problem, apply variants, run with progress and cancel, write the result.

    mesh_kind: "triangles-2d", "surface-triangles" or "hexahedra"; field_dtype: "real" or "complex";
    max_devices: how many GPUs one run can use (0: every visible one).
    """

    name: str
    title: str
    problem_kind: str
    mesh_kind: str
    field_dtype: str
    max_devices: int
    axes: tuple[VariantAxis, ...]
    parameters: tuple  # numeric settings (variants.Parameter), e.g. the solver tolerance
    apply_variants: Callable[[Any, Mapping[str, str]], Any]  # (problem, {axis: choice}) -> problem
    run: Callable[..., Any]  # run(problem, control) -> result
    writer: Callable[[Any, Any], list]  # writer(result, folder) -> written paths (write() puts them in place)
    describe: Callable[[Any], list]  # describe(result) -> lines the command line prints

    def write(self, result, out_dir) -> list:
        """The result's files in out_dir, all of them or none (output.write_all)."""
        from ..output import write_all  # noqa: PLC0415

        return write_all(Path(out_dir), lambda folder: self.writer(result, folder))

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


STUDIES: dict[str, Study] = {}


def register(study: Study) -> Study:
    if study.name in STUDIES:
        raise ValueError(f"study '{study.name}' registered twice")
    if any(axis.name == "backend" for axis in study.axes):  # "auto" falls back to the CPU when the GPU is full
        study = replace(study, run=with_cpu_fallback(study.run, study.apply_variants))
    STUDIES[study.name] = study
    return study


def study_for_kind(kind: str) -> Study:
    for study in STUDIES.values():
        if study.problem_kind == kind:
            return study
    raise ProblemError(f"no study solves problems of kind '{kind}'")
