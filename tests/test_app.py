"""The minimal window: variants from the registry, a background solve with progress, errors in a dialog."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402

from paraflux.app.main import MainWindow  # noqa: E402
from paraflux.engine.studies import STUDIES  # noqa: E402


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    return w


def test_variant_controls_come_from_the_registry(window):
    for axis in STUDIES["magnetostatic"].axes:
        box = window.axis_boxes[axis.name]
        assert [box.itemText(i) for i in range(box.count())] == [c.name for c in axis.choices]


def test_solve_in_background_shows_summary(window, qtbot):
    window.case_box.setCurrentText("open-slot")
    window.size_box.setValue(1500)
    window.axis_boxes["backend"].setCurrentText("numpy")
    window.solve_button.click()
    assert not window.solve_button.isEnabled()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=60_000)
    text = window.summary.toPlainText()
    assert "n_elements" in text and "probe gap-under-slot" in text
    assert window.progress_bar.value() == 100


def test_error_goes_to_a_dialog_and_window_stays_usable(window, qtbot, monkeypatch, tmp_path):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    bad = tmp_path / "bad.toml"
    bad.write_text("[problem\n")
    window.problem_path = bad
    window.solve_button.click()
    assert shown and "malformed TOML" in shown[0]
    assert window.solve_button.isEnabled()
