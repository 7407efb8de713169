"""The window's model, Qt-free: what the user works on (`Session`: the study, where the problem came from,
the problem as shown, the last result, what runs) and session files (File > Save / Open session: what a
saved session must hold before the window uses any of it). The window passes what only it knows (the
table's edits, its element limit, which parameter values its fields can show)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from paraflux.engine.bem.fem_check import HEX_TWINS
from paraflux.engine.errors import ProblemError
from paraflux.engine.problems import load_problem, parse_problem, problem_kind
from paraflux.engine.studies import STUDIES

SESSION_VERSION = 1


def _check_camera(camera) -> None:
    if camera and not (isinstance(camera, list) and len(camera) == 3 and all(
            isinstance(v, list) and len(v) == 3 and all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                       and math.isfinite(c) for c in v) for v in camera)):
        raise ValueError("'camera' must be three points of three finite numbers")


def _check_problem(data: dict, study: str) -> None:
    if "problem" not in data or not (data["problem"] is None or isinstance(data["problem"], dict)):
        raise ValueError("'problem' must be a problem table or null")
    if data["problem"] is not None:
        if problem_kind(data["problem"]) != STUDIES[study].problem_kind:
            raise ValueError(f"the problem is not one of study '{study}'")
        parse_problem(copy.deepcopy(data["problem"]), Path.cwd())


def check_session(data, max_elements: int, parameter_allowed: Callable[[str, str, object], bool]) -> str:
    """The session's study, once every entry has the type and range the window needs (ValueError, or the
    problem's own ProblemError, otherwise). Sessions saved before there was a choice of study are
    magnetostatic. parameter_allowed(study, name, value): whether the window can show that value."""
    if not isinstance(data, dict) or data.get("paraflux_session") != SESSION_VERSION:
        raise ValueError("not a ParaFlux session file")
    study = data.get("study", "magnetostatic")
    if study not in STUDIES:
        raise ValueError(f"unknown study '{study}'")
    _check_problem(data, study)
    for key in ("case", "problem_path"):
        if not isinstance(data.get(key), (str, type(None))):
            raise ValueError(f"'{key}' must be text")
    elements = data.get("elements") or 0
    if not isinstance(elements, int) or isinstance(elements, bool) or not 0 <= elements <= max_elements:
        raise ValueError(f"'elements' must be a whole number from 0 to {max_elements:,}")
    for key in ("variants", "parameters"):
        if not isinstance(data.get(key, {}), dict):
            raise ValueError(f"'{key}' must be a table")
    if not all(isinstance(v, str) for v in data.get("variants", {}).values()):
        raise ValueError("'variants' must name each choice as text")
    for name, value in data.get("parameters", {}).items():
        if not parameter_allowed(study, name, value):
            raise ValueError(f"parameter '{name}' = {value!r} is not allowed")
    _check_camera(data.get("camera"))
    return study


@dataclass
class Session:
    """What the window works on. study: a registry name; source: the problem or mesh file, None for a
    built-in case; problem_data: the problem as shown, in its problem-file schema (None while the file
    does not load); last_result: the last solved result (what File > Export writes); check_target: the
    BEM result the p-FEM check would check (the shown one, while the problem is unchanged); running: the
    job in hand ("solve", "preview", "compare", "scaling", "fem-check") or None."""

    study: str = "magnetostatic"
    source: Path | None = None
    problem_data: dict | None = None
    last_result: object = None
    check_target: object = None
    running: str | None = None

    def select_study(self, name: str) -> None:
        """Another study: its results are not this one's."""
        if name not in STUDIES:
            raise ProblemError(f"unknown study '{name}'; known studies: {', '.join(STUDIES)}")
        if name != self.study:
            self.study, self.last_result, self.check_target = name, None, None

    def show_problem(self, data: dict | None, source: Path | None) -> None:
        """A new problem (None: a file that does not load); a result of another problem is not checked."""
        self.problem_data, self.source, self.check_target = data, source, None

    def problem(self, edited: dict | None, size_key: str, size: int, variants: dict):
        """The problem to run: the edited problem-file data (the size, when not 0, sets the case's size_key,
        other sizes stay) with the chosen variants; a file that did not load is read again to say why."""
        study = STUDIES[self.study]
        if edited is None:
            problem = load_problem(self.source)
        else:
            data = copy.deepcopy(edited)
            if "case" in data["problem"]:
                case = {k: v for k, v in data.pop("case", {}).items() if k != size_key}
                if size:
                    case[size_key] = size
                if case:
                    data["case"] = case
            problem = parse_problem(data, Path.cwd())
        if problem.kind != study.problem_kind:
            raise ProblemError(f"the problem is of kind '{problem.kind}', not one of the study '{study.title}'")
        return study.with_variants(problem, variants)

    def start(self, job: str) -> None:
        self.running = job

    def finished(self, result=None) -> None:
        """The job ended; a solve's result becomes the last result and the shown one."""
        self.running = None
        if result is not None:
            self.last_result = self.check_target = result

    def show(self, result) -> None:
        """What the view draws now: a result, or None for a mesh."""
        self.check_target = result

    @property
    def can_check(self) -> bool:
        """Whether the p-FEM check applies: a shown BEM result of a part that has a hexahedral twin."""
        shown = self.check_target
        return shown is not None and shown.problem.kind == "elastostatic-bem" and shown.problem.case in HEX_TWINS

    def saved(self, edited: dict | None, case: str, elements: int, variants: dict, parameters: dict,
              camera) -> dict:
        """The session file's data (check_session reads it back)."""
        return {"paraflux_session": SESSION_VERSION, "study": self.study, "problem": edited, "case": case,
                "elements": elements, "problem_path": str(self.source) if self.source else None,
                "variants": variants, "parameters": parameters, "camera": [list(v) for v in camera]}
