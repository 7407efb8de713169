"""The Sweep window: opened from the main window's Tools menu on the current problem, it runs a sweep on a
scheduler by address and shows every point in its task table, the combined table and a plot; Cancel stops
a sweep and says how many points finished."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from paraflux.app.main import MainWindow  # noqa: E402


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def panel(qtbot, monkeypatch, tmp_path):
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda parent, title, text: None)
    window = MainWindow()
    qtbot.addWidget(window)
    window.use_case("open-slot")
    window.size_box.setValue(200)
    window.sweep_action.trigger()
    sweep = window.sweep_panel
    sweep.out_edit.setText(str(tmp_path / "out"))
    yield sweep
    sweep.close()
    window.close()


def test_sweep_panel_runs_and_shows_table_and_plot(qtbot, panel, scheduler):
    panel.key_boxes[0].setCurrentText("boundaries.AB.value")
    panel.value_edits[0].setText("600:800:100")
    panel.variant_box.setCurrentText("method")
    for i in range(panel.variant_choices.count()):
        panel.variant_choices.item(i).setCheckState(QtCore.Qt.Checked)
    panel.scheduler_edit.setText(scheduler)
    panel.run_button.click()
    assert panel.task_table.rowCount() == 6  # 3 values x 2 methods
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=60_000)
    assert "6 done" in panel.status.text() and "0 failed" in panel.status.text()
    status = panel.task_table.columnCount() - 2
    assert [panel.task_table.item(r, status).text() for r in range(6)] == ["done"] * 6
    assert panel.result_table.rowCount() == 6
    plots = [panel.tabs.tabText(i) for i in range(2, panel.tabs.count())]
    assert "plot-energy-vs-boundaries.AB.value" in plots


def test_sweep_panel_reports_a_bad_range_and_cancels(qtbot, panel, scheduler):
    panel.key_boxes[0].setCurrentText("boundaries.AB.value")
    panel.value_edits[0].setText("1, two")
    panel.run_button.click()
    assert "give numbers" in panel.status.text() and panel.run_button.isEnabled()
    panel.key_boxes[0].setCurrentText("case.elements")
    panel.value_edits[0].setText("2000:40000:2000")
    panel.scheduler_edit.setText(scheduler)
    panel.run_button.click()
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=60_000)
    assert "sweep cancelled" in panel.status.text() and "of 20 points finished" in panel.status.text()
