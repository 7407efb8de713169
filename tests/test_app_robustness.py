"""The window under misuse: one job at a time (every control that starts one or changes the problem is
off while one runs), closing during a step that cannot be interrupted, damaged session files, and
fields that are not numbers when a session is saved or a bare mesh is opened."""

import json
import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtWidgets  # noqa: E402

from paraflux.app.main import MainWindow  # noqa: E402

from . import test_app  # noqa: E402
from .test_app_truncation import select_truncation  # noqa: E402

window = test_app.window


def test_controls_that_start_a_job_or_change_the_problem_are_off_while_one_runs(window, qtbot):
    release = threading.Event()
    window._start(lambda control: release.wait(30), lambda _: window._idle())
    busy = [window.solve_button, window.compare_button, window.preview_button, window.study_box, window.open_button,
            window.open_mesh_button, window.panels["truncation"].scaling_button,
            window.panels["elastostatic-bem"].fem_check_button]
    assert all(not w.isEnabled() for w in busy) and window.cancel_button.isEnabled()
    window.open_problem()  # the File menu's entry
    window.open_session()
    assert window.dialogs[-2:] == ["a run is in progress: wait for it or cancel it first"] * 2
    release.set()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=10_000)
    assert all(w.isEnabled() for w in busy[:-1]) and not window.cancel_button.isEnabled()
    assert not busy[-1].isEnabled()  # the p-FEM check: no boundary element result is shown


def test_closing_during_a_step_that_ignores_cancel_hides_the_window_until_it_ends(qtbot, monkeypatch, tmp_path):
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    release = threading.Event()
    w._start(lambda control: release.wait(30), lambda _: w._idle())  # like a dense factorisation: never checks cancel
    assert not w.close()  # refused for now: the thread must not be destroyed while it runs
    assert not w.isVisible() and w.thread.isRunning()
    release.set()
    qtbot.waitUntil(lambda: not w.thread.isRunning(), timeout=10_000)
    qtbot.wait(50)
    assert not w.isVisible()


@pytest.mark.parametrize("content, needle", [
    ("[1, 2]", "not a ParaFlux session file"),
    ('{"paraflux_session": 1, "study": "magnetostatic", "problem": "hello"}', "'problem' must be"),
    ('{"paraflux_session": 1, "study": "magnetostatic", "problem": null, "elements": "abc"}', "'elements' must"),
    ('{"paraflux_session": 1, "study": "elasticity", "problem": null, "parameters": {"order": "abc"}}',
     "parameter 'order'"),
    ('{"paraflux_session": 1, "study": "magnetostatic", "problem": null, "camera": [[1, 2], "x"]}',
     "'camera' must be"),
    ('{"paraflux_session": 1, "study": "magnetostatic", "problem": null, "variants": []}', "'variants' must"),
])
def test_damaged_sessions_are_refused_whole_with_a_dialog(window, tmp_path, content, needle):
    path = tmp_path / "s.json"
    path.write_text(content)
    window.size_box.setValue(1234)
    window.restore_session(path)
    assert window.dialogs and "cannot open session" in window.dialogs[-1] and needle in window.dialogs[-1]
    assert window.study.name == "magnetostatic" and window.size_box.value() == 1234  # nothing applied


def test_a_session_saved_with_a_broken_problem_file_reads_that_file_again(window, tmp_path, monkeypatch):
    broken = tmp_path / "broken.toml"
    broken.write_text("[problem\n")
    window.set_problem_path(broken)
    path = tmp_path / "s.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    window.save_session()
    assert json.loads(path.read_text())["problem"] is None
    window.case_box.setCurrentText("transformer")
    window.restore_session(path)
    assert window.problem_label.text() == "broken.toml" and window.problem_data is None
    window.solve_button.click()  # solves nothing else: the file's own error
    assert window.dialogs and "malformed TOML" in window.dialogs[-1]


def test_save_session_with_a_frequency_that_is_not_a_number(window, tmp_path, monkeypatch):
    select_truncation(window)
    window.panel.frequency_edit.setText("abc")
    path = tmp_path / "s.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    window.save_session()
    assert window.dialogs and "frequency must be a number in Hz, got 'abc'" in window.dialogs[-1]
    assert not path.exists()


def test_bare_surfaces_with_a_frequency_that_is_not_a_number(window, tmp_path):
    select_truncation(window)
    window.panel.frequency_edit.setText("600 MHz")
    window.set_mesh_path(tmp_path / "inner.vtu")
    assert window.dialogs and "frequency must be a number in Hz, got '600 MHz'" in window.dialogs[-1]


def test_closing_during_a_job_that_honours_cancel_closes_at_once(qtbot, tmp_path):
    import time  # noqa: PLC0415

    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()

    def job(control):
        while True:
            control.check()
            time.sleep(0.01)

    w._start(job, lambda _: w._idle())
    assert w.thread.isRunning()
    t0 = time.perf_counter()
    assert w.close() and not w.thread.isRunning()
    assert time.perf_counter() - t0 < 1.5  # ended by the cancel the close set, not by the 2 s wait


def test_exporting_the_view_without_a_render_window_gives_a_dialog(window, tmp_path, monkeypatch):
    from paraflux.app.result_view import ResultView

    def no_render_window(*args, **kwargs):
        raise RuntimeError("Render window is not current")

    monkeypatch.setattr(ResultView, "screenshot", no_render_window)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "v.png"), ""))
    window.export_png()
    assert window.dialogs and "Render window is not current" in window.dialogs[-1]
