"""Problem files (TOML) to frozen problem dataclasses, dispatched on [problem] kind through the study
registry (each study declares its parser and its problem-file writer)."""

from __future__ import annotations

from pathlib import Path

from .toml_input import check_values, read_toml


def _studies():
    from ..studies import STUDIES  # noqa: PLC0415  (the studies import the problem modules)

    return STUDIES


def problem_kind(data: dict) -> str:
    from ..study import checked_kind  # noqa: PLC0415

    return checked_kind(data, [s.problem_kind for s in _studies().values()])


def parse_problem(data: dict, base_dir: Path):
    """Validate a problem-file dictionary of any kind; paths are relative to base_dir."""
    from ..studies import study_for_kind  # noqa: PLC0415

    check_values(data)
    return study_for_kind(problem_kind(data)).parse(data, Path(base_dir))


def problem_as_dict(problem) -> dict:
    """The problem in its problem-file schema: parse_problem(result, any folder) gives it back."""
    from ..studies import study_for_kind  # noqa: PLC0415

    return study_for_kind(problem.kind).to_dict(problem)


def load_problem(path: str | Path):
    """Read and validate a problem file."""
    path = Path(path)
    return parse_problem(read_toml(path), path.parent)


def case_problem_path(case: str) -> Path:
    """The example problem file of a built-in case of any study."""
    from ..studies import find_case  # noqa: PLC0415

    return find_case(case)[1].example_problem()


def case_boundaries(case: str) -> tuple[str, ...]:
    """The named boundaries (2D edges, 3D faces, BEM surface groups) of a built-in case, meshed or not;
    () for a case without any, or an unknown name."""
    from ..studies.registry import all_cases  # noqa: PLC0415

    return next((c.boundaries for _, c in all_cases() if c.name == case), ())


def load_case_problem(case: str, elements: int | None = None):
    """The example problem of a built-in case, optionally with a target element count."""
    from dataclasses import replace  # noqa: PLC0415

    problem = load_problem(case_problem_path(case))
    return replace(problem, case_elements=elements) if elements is not None else problem
