"""Result files land all together or not at all (engine/output.py write_all), and are never non-finite."""

import json

import pytest

from paraflux.engine.errors import ProblemError, SolverError
from paraflux.engine.output import write_all, write_json


def two_files(summary):
    def writer(folder):
        (folder / "solution.vtu").write_text("mesh")
        write_json(folder / "summary.json", summary)
        return [folder / "solution.vtu", folder / "summary.json"]
    return writer


def test_files_move_in_together(tmp_path):
    out = tmp_path / "out"
    assert write_all(out, two_files({"energy": 1.5})) == [out / "solution.vtu", out / "summary.json"]
    assert sorted(p.name for p in out.iterdir()) == ["solution.vtu", "summary.json"]  # no staging folder left
    assert json.loads((out / "summary.json").read_text()) == {"energy": 1.5}


def test_a_non_finite_result_writes_nothing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(SolverError, match="not finite"):
        write_all(out, two_files({"energy": float("nan")}))
    assert not out.exists()
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SolverError, match="not finite"):
        write_all(out, two_files({"max": float("inf")}))
    assert [p.name for p in out.iterdir()] == ["notes.txt"]  # what was there stays, nothing is added


def test_a_folder_in_the_way_of_a_file_writes_nothing(tmp_path):
    out = tmp_path / "out"
    (out / "summary.json").mkdir(parents=True)
    with pytest.raises(ProblemError, match="folder of that name is in the way"):
        write_all(out, two_files({"energy": 1.0}))
    assert [p.name for p in out.iterdir()] == ["summary.json"] and (out / "summary.json").is_dir()
