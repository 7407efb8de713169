"""Problem files (TOML) to frozen problem dataclasses, dispatched on [problem] kind."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import ProblemError
from .magnetostatic import MagnetostaticProblem, parse_magnetostatic
from .toml_input import read_toml

PARSERS = {"magnetostatic": parse_magnetostatic}


def problem_kind(data: dict) -> str:
    head = data.get("problem")
    if not isinstance(head, dict) or not isinstance(head.get("kind"), str):
        raise ProblemError("the problem file needs a [problem] table with kind = \"...\"")
    kind = head["kind"]
    if kind not in PARSERS:
        raise ProblemError(f"[problem] kind = {kind!r} is not supported; known kinds: {', '.join(PARSERS)}")
    return kind


def load_problem(path: str | Path) -> MagnetostaticProblem:
    """Read and validate a problem file."""
    path = Path(path)
    data = read_toml(path)
    return PARSERS[problem_kind(data)](data, path.parent)


def case_problem_path(case: str) -> Path:
    """The shipped example problem file of a built-in case."""
    from ..mesh.cases import CASES  # noqa: PLC0415

    if case not in CASES:
        raise ProblemError(f"unknown case '{case}'; built-in cases: {', '.join(CASES)}")
    return Path(str(resources.files("paraflux.resources") / "problems" / f"{case}.toml"))


def load_case_problem(case: str, elements: int | None = None):
    """The example problem of a built-in case, optionally with a target element count."""
    from dataclasses import replace  # noqa: PLC0415

    problem = load_problem(case_problem_path(case))
    return replace(problem, case_elements=elements) if elements is not None else problem
