"""Session files (File > Save / Open session): what a saved session must hold before the window uses any
of it. Qt-free: the window passes what only it knows (its element limit, which parameter values its
fields can show)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Callable

from paraflux.engine.problems import parse_problem, problem_kind
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
