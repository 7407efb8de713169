"""The Sweep window (opened from the main window's Tools menu on the current problem): it runs a sweep on a
scheduler by address and shows every point in its task table, the combined table and the sweep's plots (the
figures of the PNGs, on canvases); Cancel stops a sweep and says how many points finished."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # noqa: E402
from PySide6 import QtCore  # noqa: E402

from paraflux.app.sweep_panel import SweepPanel  # noqa: E402
from paraflux.engine.problems import load_case_problem  # noqa: E402
from paraflux.engine.studies import study_for_kind  # noqa: E402
from paraflux.engine.sweep import parse_sweep  # noqa: E402
from paraflux.engine.sweep.task import PointOutcome  # noqa: E402


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def panel(qtbot, tmp_path):
    sweep = SweepPanel(load_case_problem("open-slot", 200), study_for_kind("magnetostatic"))
    qtbot.addWidget(sweep)
    sweep.out_edit.setText(str(tmp_path / "out"))
    sweep.show()
    yield sweep
    sweep.close()


def plot_tabs(panel) -> dict:
    """{tab text: the figure on its canvas} for the panel's plot tabs."""
    return {panel.tabs.tabText(i): panel.tabs.widget(i).findChild(FigureCanvasQTAgg).figure
            for i in range(2, panel.tabs.count())}


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
    plots = plot_tabs(panel)
    assert list(plots)[:2] == ["stored energy against potential on AB", "largest |B| against potential on AB"]
    assert panel.tabs.tabToolTip(2) == "plot-energy-vs-boundaries.AB.value.png"
    (ax,) = plots["stored energy against potential on AB"].get_axes()
    assert ax.get_xlabel() == "potential on AB (A)" and ax.get_ylabel() == "stored energy (J/m)"
    assert [list(line.get_xdata()) for line in ax.get_lines()] == [[600.0, 700.0, 800.0]] * 2  # a line per method
    assert panel.tabs.currentIndex() == 2  # the finished sweep opens on its first picture
    canvas = panel.tabs.widget(2).findChild(FigureCanvasQTAgg)
    qtbot.waitUntil(lambda: canvas.isVisible() and canvas.height() > 200)


def test_sweep_panel_shows_the_scattering_plots(qtbot, tmp_path):
    """A scattering sweep's outcomes (two frequencies, the E- and H-plane cuts): the RCS against frequency
    with a line per direction and component, the RCS against theta with a panel per cut and a line per
    frequency and component, as the PNGs draw them."""
    problem = load_case_problem("pec-sphere")
    study = study_for_kind("scattering")
    panel = SweepPanel(problem, study)
    qtbot.addWidget(panel)
    spec = parse_sweep({"sweep": {}, "base": study.to_dict(problem),
                        "axes": [{"key": "problem.frequency", "values": [300e6, 400e6]}]}, tmp_path)
    directions = [(float(t), p) for t in range(0, 181, 45) for p in (0.0, 90.0)]
    outcomes = [PointOutcome(f"p{f}", {"problem.frequency": f}, "done", tuple(
        {"incidence": 0, "inc_theta_deg": 0.0, "inc_phi_deg": 0.0, "polarization": "theta", "theta_deg": t,
         "phi_deg": p, "sigma_theta_dbsm": f / 1e8 + t / 90 + p / 90, "sigma_phi_dbsm": f / 1e8 - t / 90 - p / 90}
        for t, p in directions)) for f in (300e6, 400e6)]
    panel.show_plots(spec, outcomes)
    plots = plot_tabs(panel)
    assert list(plots) == ["RCS against frequency", "RCS against θ"]
    curves = [line for line in plots["RCS against frequency"].get_axes()[0].get_lines() if line.get_linestyle() != ":"]
    assert len(curves) == 2 * 2
    panels = [ax for ax in plots["RCS against θ"].get_axes() if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["E-plane (φ 0°)", "H-plane (φ 90°)"]
    assert [len([line for line in ax.get_lines() if line.get_linestyle() != ":"]) for ax in panels] == [2 * 2] * 2
    legend = [t.get_text() for t in plots["RCS against θ"].legends[0].get_texts()]
    assert legend == ["300 MHz", "400 MHz", "σθ", "σφ", "Mie series"]
    panel.close()




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


def test_tools_menu_opens_the_sweep_panel_on_the_current_problem(qtbot, monkeypatch, tmp_path):
    from PySide6 import QtWidgets
    from PySide6.QtCore import QSettings

    from paraflux.app.main import MainWindow

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda parent, title, text: None)
    window = MainWindow()
    qtbot.addWidget(window)
    window.sweep_action.trigger()
    assert isinstance(window.sweep_panel, SweepPanel) and window.sweep_panel.isVisible()
    assert window.sweep_panel.base["problem"]["kind"] == window.study.problem_kind
    window.sweep_panel.close()
    window.close()
