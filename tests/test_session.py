"""The window's session model (app/session.py) without Qt: a study, a built-in case or a problem file, the
problem to run with the size and variants chosen, what runs, the last result, and the session file's data
read back by check_session."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from paraflux.app.session import Session, check_session
from paraflux.engine.errors import ProblemError
from paraflux.engine.problems import case_problem_path, load_case_problem, problem_as_dict


def test_a_case_edited_becomes_the_problem_with_its_size_and_variants():
    session = Session("magnetostatic")
    data = problem_as_dict(load_case_problem("open-slot"))
    session.show_problem(data, None)
    problem = session.problem(data, "elements", 1500, {"backend": "numpy"})
    assert problem.kind == "magnetostatic" and problem.case == "open-slot"
    assert problem.case_elements == 1500 and problem.solver.backend == "numpy"
    assert session.problem(data, "elements", 0, {}).case_elements is None  # 0: the case's nominal size


def test_a_problem_of_another_study_and_an_unknown_study_are_refused():
    session = Session("elasticity")
    data = problem_as_dict(load_case_problem("open-slot"))
    with pytest.raises(ProblemError, match="not one of the study"):
        session.problem(data, "elements", 0, {})
    with pytest.raises(ProblemError, match="unknown study 'nope'"):
        session.select_study("nope")
    assert session.study == "elasticity"


def test_a_file_that_does_not_load_is_read_again_to_say_why(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[problem]\nkind = 'magnetostatic'\nnonsense = 1\n")
    session = Session()
    session.show_problem(None, bad)
    with pytest.raises(ProblemError, match="nonsense"):
        session.problem(None, "elements", 0, {})


def test_jobs_results_and_the_p_fem_check_target():
    session = Session("elastostatic-bem")
    bar = SimpleNamespace(problem=SimpleNamespace(kind="elastostatic-bem", case="bar"))
    session.start("solve")
    assert session.running == "solve"
    session.finished(bar)
    assert session.running is None and session.last_result is bar and session.can_check
    session.show(None)  # a mesh preview is drawn: nothing to check, the last result stays exportable
    assert not session.can_check and session.last_result is bar
    session.show(bar)
    session.show_problem({"problem": {}}, None)  # another problem: its result is not checked
    assert not session.can_check
    session.select_study("magnetostatic")
    assert session.last_result is None


def test_the_saved_session_is_read_back_by_check_session(tmp_path):
    session = Session("magnetostatic")
    data = problem_as_dict(load_case_problem("open-slot"))
    session.show_problem(data, case_problem_path("open-slot"))
    saved = session.saved(data, "open-slot", 1500, {"backend": "numpy"}, {}, [(1, 2, 3), (0, 0, 0), (0, 0, 1)])
    assert saved["problem_path"] == str(case_problem_path("open-slot")) and Path(saved["problem_path"]).exists()
    assert check_session(saved, 10**6, lambda study, name, value: True) == "magnetostatic"
