"""The one list of studies, read by the command line, the GUI, Compare and the benchmarks. A study module
builds its `Study` (engine/study.py) and calls `register`; `studies/__init__.py` imports each module once."""

from __future__ import annotations

from dataclasses import replace

from ..backend import with_cpu_fallback
from ..errors import ProblemError
from ..study import Case, Study  # noqa: F401  (re-exported: the registry's vocabulary)
from ..variants import Choice, VariantAxis  # noqa: F401

STUDIES: dict[str, Study] = {}


def register(study: Study) -> Study:
    if study.name in STUDIES:
        raise ValueError(f"study '{study.name}' registered twice")
    if any(s.problem_kind == study.problem_kind for s in STUDIES.values()):
        raise ValueError(f"problem kind '{study.problem_kind}' registered twice")
    if any(axis.name == "backend" for axis in study.axes):  # "auto" falls back to the CPU when the GPU is full
        study = replace(study, run=with_cpu_fallback(study.run, study.apply_variants))
    STUDIES[study.name] = study
    return study


def unregister(name: str) -> None:
    """Take a study out of the registry (a test's own study, when the test ends)."""
    STUDIES.pop(name, None)


def study_for_kind(kind: str) -> Study:
    for study in STUDIES.values():
        if study.problem_kind == kind:
            return study
    raise ProblemError(f"no study solves problems of kind '{kind}'")


def all_cases() -> list[tuple[Study, Case]]:
    """Every built-in case with its study, in registry order."""
    return [(study, case) for study in STUDIES.values() for case in study.cases]


def find_case(name: str) -> tuple[Study, Case]:
    """The study and case of a built-in case name (ProblemError listing them otherwise)."""
    for study, case in all_cases():
        if case.name == name:
            return study, case
    raise ProblemError(f"unknown case '{name}'; built-in cases: {', '.join(c.name for _, c in all_cases())}")
