"""The study seam: a study declared in one place (tests/toy_study.py) and registered here is found by the
command line (cases, studies, solve with its variants and parameters), Compare and the writers, with no
other file naming it."""

import json

import numpy as np
import pytest

from paraflux.engine import cli
from paraflux.engine.problems import case_problem_path, load_case_problem, parse_problem, problem_as_dict
from paraflux.engine.studies import STUDIES, register, unregister
from paraflux.engine.studies.compare import compare_variants

from .toy_study import toy_study


@pytest.fixture
def toy(tmp_path):
    problem_file = tmp_path / "toy-bar.toml"
    problem_file.write_text('[problem]\nkind = "toy-poisson-1d"\ncase = "toy-bar"\nlength = 2.0\nsource = 1.0\n')
    study = register(toy_study(problem_file))
    yield study
    unregister(study.name)


def exact(x, length=2.0, source=1.0):
    return source * x * (length - x) / 2


def test_toy_cases_and_studies_listed(toy, capsys):
    assert cli.main(["cases"]) == 0
    assert "toy-bar       toy 1D        Toy bar" in capsys.readouterr().out
    assert cli.main(["studies"]) == 0
    listed = capsys.readouterr().out
    assert "toy: Toy 1D Poisson (problem kind 'toy-poisson-1d')" in listed and "--toy-elements" in listed


def test_toy_solved_from_the_command_line_with_its_variants(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["solve", "--case", "toy-bar", "--method", "sparse", "--toy-elements", "10", "--out",
                     str(out), "--quiet"]) == 0
    assert "10 elements, sparse" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["far_field.csv", "fields.npz", "solution.vtu", "summary.json"]
    arrays = np.load(out / "fields.npz")
    x = arrays["mesh_points"][:, 0]
    assert np.allclose(arrays["u"], exact(x), atol=1e-12)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_elements"] == 10
    assert summary["fields"]["u"] == {"unit": "m", "location": "points", "shape": [11], "dtype": "float64"}
    rows = (out / "far_field.csv").read_text().splitlines()
    secant = (2.0 - 0.2) / 2  # the end element's slope: (u(h) - u(0)) / h with h = 0.2
    assert rows[0] == "theta_deg,end_flux" and rows[1].startswith("180,") and rows[2].startswith("0,")
    assert np.allclose([float(r.split(",")[1]) for r in rows[1:]], [-secant, -secant])


def test_toy_vtu_holds_its_point_and_cell_fields(toy, tmp_path):
    import meshio

    study = STUDIES["toy"]
    study.write(study.run(load_case_problem("toy-bar", elements=8)), tmp_path)
    mesh = meshio.read(tmp_path / "solution.vtu")
    assert np.allclose(mesh.point_data["u"], exact(mesh.points[:, 0]), atol=1e-12)
    assert mesh.cells[0].type == "line" and len(mesh.cell_data["du_dx"][0]) == 8


def test_toy_problem_round_trips_and_bad_input_is_named(toy, tmp_path):
    problem = load_case_problem("toy-bar")
    assert parse_problem(problem_as_dict(problem), tmp_path) == problem
    assert case_problem_path("toy-bar") == tmp_path / "toy-bar.toml"
    bad = tmp_path / "bad.toml"
    bad.write_text('[problem]\nkind = "toy-poisson-1d"\nlength = -1.0\n')
    assert cli.main(["solve", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


def test_toy_compared_over_its_axis_and_its_parameter(toy):
    study = STUDIES["toy"]
    problem = load_case_problem("toy-bar")
    rows, _ = compare_variants(study, problem, study.compare_sets("method", ["banded", "sparse"]))
    assert [r.label for r in rows] == ["method=banded", "method=sparse"]
    assert rows[1].relative_difference < 1e-13
    rows, results = compare_variants(study, problem, study.compare_sets("toy_elements", ["8", "16"]))
    assert [len(r.x) - 1 for r in results] == [8, 16] and np.isnan(rows[1].relative_difference)


def test_every_registered_study_declares_the_protocol():
    for study in STUDIES.values():
        assert study.cases and all(c.example_problem().is_file() for c in study.cases), study.name
        assert (study.writer is not None) or (study.fields is not None), study.name
        for case in study.cases:
            problem = load_case_problem(case.name)
            assert problem.kind == study.problem_kind
            assert study.parse(study.to_dict(problem), case.example_problem().parent) == problem, case.name


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_study_refuses_an_unknown_key_by_name(name, tmp_path):
    from paraflux.engine.errors import ProblemError

    study = STUDIES[name]
    data = study.to_dict(load_case_problem(study.cases[0].name))
    data["problem"]["no_such_setting"] = 1
    with pytest.raises(ProblemError, match="no_such_setting"):
        parse_problem(data, tmp_path)
