"""The command line's errors behind a dialog: a problem, mesh, numerics or memory error raised while the
window runs a job shows one dialog with the sentence `paraflux solve` prints, leaves the window usable,
and a failed export leaves no file."""

import re

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from paraflux.engine.cli import main  # noqa: E402

from . import test_app  # noqa: E402
from .test_bad_input import GOOD_MESH_PROBLEM, square_mesh  # noqa: E402

window = test_app.window

NOT_CONVERGING = """
[problem]
kind = "magnetostatic"
formulation = "planar"
potential = "scalar"
case = "open-slot"
[case]
elements = 200
[regions.air]
[boundaries.AB]
value = 700.0
[boundaries.CDE]
value = 0.0
[solver]
max_iterations = 3
"""


def numbers_out(text: str) -> str:
    """The sentence with its numbers as '#' (the window meshes the case at its own size)."""
    return re.sub(r"\d[\d.e+-]*", "#", text)


def cli_sentence(problem, capsys) -> str:
    """The sentence `paraflux solve PROBLEM` prints after 'paraflux: error: '."""
    code = main(["solve", str(problem), "--out", str(problem.parent / "cli-out"), "--quiet"])
    line = capsys.readouterr().err.strip()
    assert code in (2, 3) and line.startswith("paraflux: error: "), line
    return line.removeprefix("paraflux: error: ")


def test_errors_raised_during_a_job_show_the_command_lines_sentence(window, qtbot, tmp_path, capsys):
    square_mesh(tmp_path / "square.msh", duplicate_triangles())
    (tmp_path / "mesh.toml").write_text(GOOD_MESH_PROBLEM)  # a mesh error: a duplicate triangle
    (tmp_path / "numerics.toml").write_text(NOT_CONVERGING)  # a numerics error: no convergence
    for name in ("mesh.toml", "numerics.toml"):
        expected = cli_sentence(tmp_path / name, capsys)
        window.set_problem_path(tmp_path / name)
        before = len(window.dialogs)
        test_app.solve(window, qtbot)
        assert [numbers_out(d) for d in window.dialogs[before:]] == [numbers_out(expected)]
        assert window.solve_button.isEnabled()


def test_a_problem_error_is_said_when_the_file_is_opened_and_again_at_solve(window, tmp_path, capsys):
    (tmp_path / "p.toml").write_text(GOOD_MESH_PROBLEM.replace("current_density = 1.0", "current_density = 1e300"))
    expected = cli_sentence(tmp_path / "p.toml", capsys)
    assert "regions.domain.current_density = 1e+300 is too large" in expected
    window.set_problem_path(tmp_path / "p.toml")
    window.solve_button.click()
    assert window.dialogs == [f"cannot use p.toml: {expected}", expected]
    assert window.solve_button.isEnabled()


def test_out_of_memory_during_a_job_is_one_dialog_and_the_next_run_works(window, qtbot, monkeypatch):
    from dataclasses import replace

    panel = window.panels["magnetostatic"]
    study = panel.study

    def out_of_memory(problem, control):
        raise MemoryError("Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type float64")
    monkeypatch.setattr(panel, "study", replace(study, run=out_of_memory))
    window.case_box.textActivated.emit("open-slot")
    window.size_box.setValue(300)
    window.axis_boxes["backend"].setCurrentText("numpy")
    test_app.solve(window, qtbot)
    assert len(window.dialogs) == 1
    assert window.dialogs[0].startswith("the host ran out of memory for this run: it needed 7.45 GiB with ")
    monkeypatch.setattr(panel, "study", study)
    test_app.solve(window, qtbot)
    assert len(window.dialogs) == 1 and window.view.grid is not None


def test_a_session_save_that_fails_half_way_leaves_no_file(window, tmp_path, monkeypatch):
    from pathlib import Path

    from PySide6 import QtWidgets

    target = tmp_path / "s.paraflux.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    original = Path.write_text

    def disk_full(self, text, *args, **kwargs):
        original(self, text[: len(text) // 2])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(Path, "write_text", disk_full)
    window.save_session()
    assert len(window.dialogs) == 1 and "No space left on device" in window.dialogs[0]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith((".s.", "s."))]


def duplicate_triangles():
    """The square of test_bad_input with its first triangle twice."""
    import numpy as np

    return np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4], [1, 4, 0]])


def test_a_view_export_that_fails_half_way_leaves_no_file(window, qtbot, tmp_path, monkeypatch):
    """The PNG is drawn into memory and written under a temporary name: a full disk leaves no image."""
    from pathlib import Path

    from PySide6 import QtWidgets

    window.case_box.textActivated.emit("open-slot")
    window.size_box.setValue(300)
    window.axis_boxes["backend"].setCurrentText("numpy")
    test_app.solve(window, qtbot)
    target = tmp_path / "view.png"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    original = Path.write_bytes

    def disk_full(self, data):
        original(self, data[: len(data) // 2])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(Path, "write_bytes", disk_full)
    window.export_png()
    assert len(window.dialogs) == 1 and "No space left on device" in window.dialogs[0]
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(Path, "write_bytes", original)
    window.export_png()
    assert target.read_bytes().startswith(b"\x89PNG") and len(window.dialogs) == 1


@pytest.mark.parametrize("problem", [
    ('[problem]\nkind = "scattering"\ncase = "pec-sphere"\nfrequency = 1e11\n', "triangles, more than 1,000,000"),
    ('[problem]\nkind = "scattering"\ncase = "pec-sphere"\nfrequency = 3e8\n[geometry]\nradius = 0.1\n'
     'elements_per_wavelength = 6\n[far_field]\ntheta_deg = [0.0]\nphi_deg = [0.0]\n[solver]\nmax_iterations = 1\n'
     'tolerance = 1e-12\n', "did not reach tolerance"),
], ids=["too fine to mesh", "short iteration"])
def test_scattering_errors_in_a_job_show_the_command_lines_sentence(window, qtbot, tmp_path, capsys, problem):
    """The scattering study's refusal before meshing (exit 2) and its iteration short of the tolerance
    (exit 3, result kept) in the window: one dialog with `paraflux solve`'s sentence, the window usable."""
    text, needle = problem
    (tmp_path / "p.toml").write_text(text)
    expected = cli_sentence(tmp_path / "p.toml", capsys)
    assert needle in expected
    window.set_problem_path(tmp_path / "p.toml")
    test_app.solve(window, qtbot)
    assert [numbers_out(d) for d in window.dialogs] == [numbers_out(expected)]
    assert window.solve_button.isEnabled() and window.study_box.isEnabled()
