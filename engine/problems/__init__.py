"""Problem files (TOML) to frozen problem dataclasses, dispatched on [problem] kind."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import ProblemError
from .bem import BemProblem, bem_to_dict, parse_bem
from .elasticity import ElasticityProblem, elasticity_to_dict, parse_elasticity
from .magnetostatic import MagnetostaticProblem, parse_magnetostatic, problem_to_dict
from .toml_input import read_toml
from .truncation import TruncationProblem, parse_truncation, truncation_to_dict

PARSERS = {"magnetostatic": parse_magnetostatic, "elasticity": parse_elasticity, "truncation": parse_truncation,
           "elastostatic-bem": parse_bem}
TO_DICT = {"magnetostatic": problem_to_dict, "elasticity": elasticity_to_dict, "truncation": truncation_to_dict,
           "elastostatic-bem": bem_to_dict}


def problem_kind(data: dict) -> str:
    head = data.get("problem")
    if not isinstance(head, dict) or not isinstance(head.get("kind"), str):
        raise ProblemError("the problem file needs a [problem] table with kind = \"...\"")
    kind = head["kind"]
    if kind not in PARSERS:
        raise ProblemError(f"[problem] kind = {kind!r} is not supported; known kinds: {', '.join(PARSERS)}")
    return kind


def parse_problem(data: dict, base_dir: Path) -> MagnetostaticProblem | ElasticityProblem | TruncationProblem | BemProblem:
    """Validate a problem-file dictionary of any kind; paths are relative to base_dir."""
    return PARSERS[problem_kind(data)](data, Path(base_dir))


def problem_as_dict(problem: MagnetostaticProblem | ElasticityProblem | TruncationProblem | BemProblem) -> dict:
    """The problem in its problem-file schema: parse_problem(result, any folder) gives it back."""
    return TO_DICT[problem.kind](problem)


def load_problem(path: str | Path) -> MagnetostaticProblem | ElasticityProblem | TruncationProblem | BemProblem:
    """Read and validate a problem file."""
    path = Path(path)
    return parse_problem(read_toml(path), path.parent)


def case_problem_path(case: str) -> Path:
    """The shipped example problem file of a built-in case (2D, 3D or surfaces)."""
    from ..mesh.cases import CASES  # noqa: PLC0415
    from ..mesh.hex_cases import HEX_CASES  # noqa: PLC0415
    from ..bem.cases import BEM_CASES  # noqa: PLC0415
    from ..truncation.cases import CASES as SURFACE_CASES  # noqa: PLC0415

    known = [*CASES, *HEX_CASES, *SURFACE_CASES, *BEM_CASES]
    if case not in known:
        raise ProblemError(f"unknown case '{case}'; built-in cases: {', '.join(known)}")
    return Path(str(resources.files("paraflux.resources") / "problems" / f"{case}.toml"))


def case_boundaries(case: str) -> tuple[str, ...]:
    """The named boundaries (2D edges, 3D faces, BEM surface groups) of a built-in case, meshed or not;
    () for a case without any (truncation's surfaces)."""
    from ..bem.cases import BEM_CASES  # noqa: PLC0415
    from ..mesh.cases import CASES  # noqa: PLC0415
    from ..mesh.hex_cases import HEX_CASES  # noqa: PLC0415

    for cases, field in ((CASES, "boundaries"), (HEX_CASES, "boundaries"), (BEM_CASES, "groups")):
        if case in cases:
            return getattr(cases[case], field)
    return ()


def load_case_problem(case: str, elements: int | None = None):
    """The example problem of a built-in case, optionally with a target element count."""
    from dataclasses import replace  # noqa: PLC0415

    problem = load_problem(case_problem_path(case))
    return replace(problem, case_elements=elements) if elements is not None else problem
