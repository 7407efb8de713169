"""The window: variants from the registry, a background solve with progress, the result view, cancel,
errors in a dialog, and a non-blank screenshot."""

import time

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from paraflux.app.main import MainWindow  # noqa: E402
from paraflux.engine.studies import STUDIES  # noqa: E402


@pytest.fixture
def window(qtbot, monkeypatch, tmp_path):
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))  # not ~/.config
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    w = MainWindow()
    w.dialogs = shown
    qtbot.addWidget(w)
    w.show()
    yield w
    w.jobs.cancel()  # a test that failed mid-run: let the job stop before the window and its thread go away
    if w.jobs.thread is not None:
        w.jobs.thread.wait(120_000)
    w.close()


def QtGui_image_std(path) -> float:  # noqa: N802
    """Standard deviation of the grey levels of a PNG."""
    image = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format_Grayscale8)
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    return float(data.std())


def solve(window, qtbot, timeout=120_000):
    window.solve_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=timeout)


def test_variant_controls_come_from_the_registry(window):
    for axis in STUDIES["magnetostatic"].axes:
        box = window.axis_boxes[axis.name]
        assert [box.itemText(i) for i in range(box.count())] == [c.name for c in axis.choices]


def test_transformer_solve_shows_field_flux_lines_and_summary(window, qtbot, tmp_path):
    window.case_box.setCurrentText("transformer")
    window.size_box.setValue(20000)
    window.axis_boxes["backend"].setCurrentText("numpy")
    ticks = [time.monotonic()]
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    idle = window._idle

    def job_reported():  # the run ends here; drawing the result, in the window's thread, comes after
        ticks.append(time.monotonic())
        timer.stop()
        idle()

    window._idle = job_reported
    timer.start(20)
    solve(window, qtbot)
    assert max(np.diff(ticks)) < 1.5  # the event loop never stalled during the run
    assert "elements" in window.summary.text() and window.progress_bar.value() == 100
    grid = window.view.grid
    assert grid is not None and "B_magnitude" in grid.cell_data and grid.n_cells > 15000
    assert window.view.flux_lines is not None and window.view.flux_lines.n_lines > 10
    image = window.view.screenshot(str(tmp_path / "view.png"), return_img=True)
    assert image.std() > 10  # not blank
    shot = tmp_path / "window.png"
    assert window.grab().save(str(shot))
    assert QtGui_image_std(shot) > 10  # the whole window after a solve is not blank
    bars = window.charts.timing_bars  # one bar per phase of the run
    assert len(bars) == len(window.view.result.timings) == 4
    assert window.charts.residual_line is not None and len(window.charts.residual_line.get_xdata()) > 50
    window.view._on_pick((-0.85, 0.0, 0.0))  # probing a point in the left limb
    assert "|B| =" in window.statusBar().currentMessage()


def test_cancel_stops_a_long_run_within_two_seconds(window, qtbot):
    window.case_box.setCurrentText("transformer")
    window.size_box.setValue(20000)
    window.axis_boxes["backend"].setCurrentText("numpy")
    window.axis_boxes["reduction"].setCurrentText("adjacent")  # slow on purpose
    window.solve_button.click()
    qtbot.waitUntil(lambda: "iteration" in window.status.text(), timeout=60_000)
    start = time.monotonic()
    window.cancel_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=5_000)
    assert time.monotonic() - start < 2.0
    assert window.status.text() == "cancelled" and not window.dialogs


def test_cancel_stops_the_meshing_of_a_large_case_within_two_seconds(window, qtbot):
    window.case_box.setCurrentText("transformer")
    window.size_box.setValue(300_000)  # several seconds inside one gmsh call
    window.axis_boxes["backend"].setCurrentText("numpy")
    window.solve_button.click()
    qtbot.waitUntil(lambda: "meshing" in window.status.text(), timeout=10_000)
    qtbot.wait(300)
    start = time.monotonic()
    window.cancel_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=5_000)
    assert time.monotonic() - start < 2.0
    assert window.status.text() == "cancelled" and not window.dialogs


def test_broken_mesh_gives_a_dialog_and_window_stays_usable(window, qtbot, tmp_path):
    (tmp_path / "broken.msh").write_text("$MeshFormat\nnonsense\n")
    problem = tmp_path / "broken.toml"
    problem.write_text('[problem]\nkind = "magnetostatic"\nmesh = "broken.msh"\n[regions.air]\n')
    window.set_problem_path(problem)
    solve(window, qtbot)
    assert window.dialogs and "broken.msh" in window.dialogs[0]
    window.case_box.textActivated.emit("open-slot")  # the user picks a built-in case again
    window.size_box.setValue(800)
    window.axis_boxes["backend"].setCurrentText("numpy")
    solve(window, qtbot)
    assert window.view.grid is not None and len(window.dialogs) == 1


def test_malformed_problem_file_dialog(window, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[problem\n")
    window.set_problem_path(bad)
    assert window.dialogs == [window.dialogs[0]] and "cannot use bad.toml: malformed TOML" in window.dialogs[0]
    window.solve_button.click()  # said again: the file may have been fixed since
    assert len(window.dialogs) == 2 and "malformed TOML" in window.dialogs[1]
    assert window.solve_button.isEnabled()


def test_problem_file_settings_become_the_selected_variants(window, tmp_path):
    from paraflux.engine.problems import case_problem_path

    text = case_problem_path("open-slot").read_text().replace('method = "ebe-jpcg"', 'method = "sparse-direct"')
    problem = tmp_path / "slot.toml"
    problem.write_text(text.replace('rtol = 1e-10', 'rtol = 1e-10\naccumulate = "colored"'))
    window.set_problem_path(problem)
    assert window.axis_boxes["method"].currentText() == "sparse-direct"
    assert window.axis_boxes["accumulate"].currentText() == "colored"


def test_compare_two_reductions_fills_the_table_and_exports_csv(window, qtbot, tmp_path, monkeypatch):
    window.case_box.setCurrentText("open-slot")
    window.size_box.setValue(1000)
    window.axis_boxes["backend"].setCurrentText("numpy")
    window.compare_axis.setCurrentText("reduction")
    for i in range(window.compare_choices.count()):
        item = window.compare_choices.item(i)
        if item.text() in ("library", "sequential"):
            item.setCheckState(QtCore.Qt.Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=60_000)
    assert window.compare_table.rowCount() == 2
    assert window.compare_table.item(1, 0).text() == "reduction=library"
    bars = window.charts.comparison_bars  # stacked: a bar container per phase, a segment of it per variant
    table = window.compare_table
    phases = [table.horizontalHeaderItem(c).text().removesuffix(" (s)") for c in range(1, table.columnCount() - 2)]
    assert [b.get_label() for b in bars] == [p.replace("_", " ") for p in phases] and len(phases) >= 3
    assert all(len(b) == 2 for b in bars)
    assert window.progress_bar.value() == 100 and window.status.text().startswith("compared 2 variants")
    header = table.horizontalHeader()  # whole headers: every column at least as wide as its header text
    assert all(header.sectionSize(c) >= header.fontMetrics().horizontalAdvance(table.horizontalHeaderItem(c).text())
               for c in range(table.columnCount()))
    table.selectRow(1)  # the second variant's |B| minus the first's, on the mesh
    field = window.view.actors["field"].mapper
    assert field.array_name == "difference" and field.dataset.n_cells > 500
    assert np.max(np.abs(field.dataset.cell_data["difference"])) < 1e-6 * np.max(field.dataset.cell_data["B_magnitude"])
    out = tmp_path / "table.csv"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    window.export_button.click()
    assert len(out.read_text().splitlines()) == 3


def test_second_run_replaces_the_charts(window, qtbot):
    window.case_box.setCurrentText("open-slot")
    window.size_box.setValue(800)
    window.axis_boxes["backend"].setCurrentText("numpy")
    solve(window, qtbot)
    window.axis_boxes["method"].setCurrentText("sparse-direct")
    solve(window, qtbot)
    assert window.charts.count() == 2 and window.charts.residual_line is None


def test_each_job_starts_once_the_last_ones_thread_has_ended_and_deletes_it(window, qtbot):
    class Chain(QtCore.QObject):  # a QObject of the window's thread, so its slot runs there
        finished = []

        def again(self, _):
            window._idle()
            self.finished.append(window.thread)
            if len(self.finished) < 50:  # started from the last job's own report, as a quick click would be
                window._start(lambda control: 0, self.again)

    chain = Chain()
    window._start(lambda control: 0, chain.again)
    qtbot.waitUntil(lambda: len(chain.finished) == 50, timeout=30_000)
    assert not window.dialogs and len(set(chain.finished)) == 50
    qtbot.wait(100)  # the retired threads' deferred deletes
    assert window.findChildren(QtCore.QThread) == [window.thread]


def test_exports_after_a_solve_and_recent_problems(window, qtbot, tmp_path, monkeypatch):
    import meshio

    window.case_box.setCurrentText("open-slot")
    window.size_box.setValue(800)
    window.axis_boxes["backend"].setCurrentText("numpy")
    solve(window, qtbot)
    folder = tmp_path / "export"
    folder.mkdir()
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    window.export_vtu_action.trigger()
    assert "B_magnitude" in meshio.read(folder / "solution.vtu").cell_data
    png, log = tmp_path / "view.png", tmp_path / "run.log"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(png), ""))
    window.export_png_action.trigger()
    assert png.stat().st_size > 1000
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(log), ""))
    window.export_log_action.trigger()
    assert "solved:" in log.read_text()
    problem = tmp_path / "p.toml"
    problem.write_text("[problem]\nkind = 'magnetostatic'\n")
    window.set_problem_path(problem)
    assert window.recent_problems()[0] == str(problem)


def test_mesh_preview_shows_regions_and_element_count(window, qtbot):
    window.case_box.setCurrentText("transformer")
    window.size_box.setValue(5000)
    window.preview_button.click()
    qtbot.waitUntil(lambda: window.preview_button.isEnabled(), timeout=60_000)
    grid = window.view.grid
    assert "region" in grid.cell_data and len(set(grid.cell_data["region"])) == 6
    assert window.mesh_label.text() == f"{grid.n_cells:,} elements, {grid.n_points:,} nodes"


def test_open_mesh_edit_materials_in_the_table_and_solve(window, qtbot, monkeypatch):
    from paraflux.engine.problems import case_problem_path

    mesh = case_problem_path("open-slot").parent.parent / "meshes" / "open-slot.msh"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(mesh), ""))
    window.potential_box.setCurrentText("scalar")
    window.unit_box.setCurrentText("mm")
    window.open_mesh()
    table = window.materials
    rows = {table.item(r, 1).text(): r for r in range(table.rowCount())}
    assert set(rows) == {"air", "AB", "BC", "CDE", "EA"}
    table.cellWidget(rows["AB"], 2).setCurrentText("dirichlet")
    table.item(rows["AB"], 3).setText("700")
    table.cellWidget(rows["CDE"], 2).setCurrentText("dirichlet")
    window.axis_boxes["backend"].setCurrentText("numpy")
    solve(window, qtbot)
    assert not window.dialogs
    assert window.view.result.potential.max() == pytest.approx(700.0)
    table.item(rows["air"], 2).setText("-3")  # a bad value is named by the engine
    window.solve_button.click()
    assert window.dialogs and "mu_r must be positive" in window.dialogs[0]


def test_switching_cases_rebuilds_the_table(window):
    window.case_box.setCurrentText("transformer")
    table = window.materials
    kinds = {table.item(r, 1).text(): (table.item(r, 0).text(), table.cellWidget(r, 2) is not None)
             for r in range(table.rowCount())}
    assert kinds["core"] == ("region", False) and kinds["outer"] == ("boundary", True)
    assert all(has_box == (kind == "boundary") for kind, has_box in kinds.values())


def test_every_boundary_of_a_built_in_case_is_listed_and_can_be_set(window, qtbot):
    from paraflux.engine.problems import case_problem_path

    window.case_box.setCurrentText("open-slot")
    table = window.materials
    rows = {table.item(r, 1).text(): r for r in range(table.rowCount()) if table.item(r, 0).text() == "boundary"}
    assert set(rows) == {"AB", "BC", "EA", "CDE"}  # BC and EA are not in the example problem
    assert table.cellWidget(rows["BC"], 2).currentText() == "natural"
    table.cellWidget(rows["EA"], 2).setCurrentText("dirichlet")
    table.item(rows["EA"], 3).setText("350")
    boundaries = {b.name: b for b in window.current_problem().boundaries}
    assert boundaries["EA"].type == "dirichlet" and boundaries["EA"].value == 350.0
    window.set_problem_path(case_problem_path("open-slot"))  # the case's file: the same four
    assert {table.item(r, 1).text() for r in range(table.rowCount())
            if table.item(r, 0).text() == "boundary"} == {"AB", "BC", "EA", "CDE"}


def test_session_saves_and_restores_problem_variants_and_view(window, qtbot, tmp_path, monkeypatch, qapp):
    window.case_box.setCurrentText("transformer")
    window.size_box.setValue(4000)
    table = window.materials
    core = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == "core")
    table.item(core, 2).setText("500")
    window.axis_boxes["reduction"].setCurrentText("sequential")
    path = tmp_path / "s.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    window.save_session()
    other = MainWindow()
    qtbot.addWidget(other)
    other.restore_session(path)
    assert other.case_box.currentText() == "transformer" and other.size_box.value() == 4000
    assert other.axis_boxes["reduction"].currentText() == "sequential"
    problem = other.current_problem()
    assert next(r.mu_r for r in problem.regions if r.name == "core") == 500.0
    other.close()
    path.write_text("{not json")
    window.restore_session(path)
    assert window.dialogs and "cannot open session" in window.dialogs[-1]


def test_gpu_variants_are_disabled_with_the_reason_when_no_gpu(window):
    from paraflux.engine.backend import gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if not reason:
        pytest.skip("a GPU is present")
    box = window.axis_boxes["backend"]
    index = box.findText("cupy")
    assert not box.model().item(index).isEnabled()
    assert reason in box.itemData(index, QtCore.Qt.ToolTipRole)


def test_open_broken_mesh_file_names_it_in_a_dialog(window, tmp_path, monkeypatch):
    broken = tmp_path / "bad.msh"
    broken.write_text("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\nnope\n")
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(broken), ""))
    window.open_mesh()
    assert window.dialogs and "bad.msh" in window.dialogs[0]
    assert window.solve_button.isEnabled()


def test_tolerance_comes_from_the_registry_and_is_checked(window):
    edit = window.parameter_edits["rtol"]
    assert float(edit.text()) == STUDIES["magnetostatic"].parameters[0].default
    edit.setText("1e-6")
    assert window.current_problem().solver.rtol == 1e-6
    edit.setText("2")
    window.solve_button.click()
    assert window.dialogs and "tolerance must lie between 1e-15 and 1" in window.dialogs[0]


def test_self_test_solves_renders_and_writes_a_png(qapp, tmp_path, capsys):
    from paraflux.app.main import self_test

    png = tmp_path / "self.png"
    assert self_test(qapp, png) == 0
    assert png.stat().st_size > 10_000 and "self-test: ok" in capsys.readouterr().out


@pytest.mark.parametrize("screenshot, reason", [
    (lambda *a, **k: np.full((300, 400, 3), 200, np.uint8), "the rendered view is blank"),
    (lambda *a, **k: (_ for _ in ()).throw(RuntimeError("Render window is not current")), "cannot render here"),
])
def test_self_test_fails_when_the_view_rendered_nothing(qapp, tmp_path, capsys, monkeypatch, screenshot, reason):
    from paraflux.app.main import self_test
    from paraflux.app.result_view import ResultView

    monkeypatch.setattr(ResultView, "screenshot", screenshot)
    assert self_test(qapp, tmp_path / "self.png") == 1
    assert reason in capsys.readouterr().err
