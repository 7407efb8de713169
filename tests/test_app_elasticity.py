"""The window with the elasticity study: controls from the registry, the cantilever solved and drawn
warped and coloured by von Mises stress, a comparison, problem and mesh files, sessions, bad input in a
dialog, and the way back to magnetostatics."""

import json

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from paraflux.app.main import MainWindow  # noqa: E402
from paraflux.engine.mesh.cases import CASES  # noqa: E402
from paraflux.engine.mesh.hex_cases import HEX_CASES  # noqa: E402
from paraflux.engine.studies import STUDIES  # noqa: E402

from . import test_app  # noqa: E402

window, solve = test_app.window, test_app.solve  # the same window fixture and solve helper

ELASTICITY = STUDIES["elasticity"]


def select_elasticity(window, order=2):
    window.study_box.setCurrentIndex(window.study_box.findText(ELASTICITY.title))
    window.parameter_edits["order"].setValue(order)
    window.axis_boxes["backend"].setCurrentText("numpy")


def table_rows(window) -> dict:
    """name -> (kind, first column, second column) as the table shows them."""
    table = window.materials
    rows = {}
    for r in range(table.rowCount()):
        box = table.cellWidget(r, 2)
        first = box.currentText() if box is not None else table.item(r, 2).text()
        rows[table.item(r, 1).text()] = (table.item(r, 0).text(), first, table.item(r, 3).text())
    return rows


def test_study_selector_lists_every_registered_study(window):
    box = window.study_box
    assert [box.itemText(i) for i in range(box.count())] == [s.title for s in STUDIES.values()]
    assert box.currentText() == STUDIES["magnetostatic"].title


def test_elasticity_controls_cases_and_table_come_from_the_registry(window):
    from paraflux.engine.backend import gpu_unavailable_reason

    select_elasticity(window)
    for axis in ELASTICITY.axes:
        box = window.axis_boxes[axis.name]
        assert [box.itemText(i) for i in range(box.count())] == [c.name for c in axis.choices]
    order = window.parameter_edits["order"]
    assert isinstance(order, QtWidgets.QSpinBox) and (order.minimum(), order.maximum()) == (1, 10)
    assert [window.case_box.itemText(i) for i in range(window.case_box.count())] == list(HEX_CASES)
    reason = gpu_unavailable_reason()
    if reason:
        box = window.axis_boxes["integration"]
        for name in ("ai", "aii", "mma"):
            assert not box.model().item(box.findText(name)).isEnabled()
            assert reason in box.itemData(box.findText(name), QtCore.Qt.ToolTipRole)
    rows = table_rows(window)
    assert rows["steel"] == ("region", "2.1e+11", "0.3")
    assert rows["clamp"][:2] == ("boundary", "fixed")
    assert rows["tip"] == ("boundary", "traction", "0, 0, -1e+06")


def test_hex_mesh_preview_shows_regions_and_element_count(window, qtbot):
    select_elasticity(window)
    window.size_box.setValue(40)
    window.preview_button.click()
    qtbot.waitUntil(lambda: window.preview_button.isEnabled(), timeout=60_000)
    grid = window.view.grid
    assert not window.dialogs and "region" in grid.cell_data and grid.n_cells == 40
    assert window.mesh_label.text() == f"{grid.n_cells:,} elements, {grid.n_points:,} nodes"


def test_cantilever_solve_shows_warped_solid_stress_summary_and_charts(window, qtbot, tmp_path, monkeypatch):
    import meshio

    select_elasticity(window, order=2)
    solve(window, qtbot, timeout=60_000)
    assert not window.dialogs
    view = window.view
    field = view.actors["field"].mapper.dataset
    assert field is view.grid and "von_mises" in field.point_data and field.n_cells == view.solid.n_cells
    assert "von Mises (Pa)" in view.scalar_bars and "undeformed" in view.actors
    result = view.result
    drawn = np.linalg.norm(field.points - view.solid.points, axis=1).max()
    assert drawn == pytest.approx(0.1 * view.solid.length, rel=0.06)  # a round scale near 10 %
    assert window.view_bar.isVisible() and window.warp_box.value() == pytest.approx(view.warp_scale)
    window.warp_box.setValue(0.0)
    assert np.allclose(field.points, view.solid.points)  # scale 0: the undeformed body
    assert ("strain energy", f"{result.strain_energy:.4g}", "J") in window.summary.rows()
    assert len(window.charts.timing_bars) == len(result.timings) and "element_matrices" in result.timings
    assert window.charts.residual_line is not None and len(window.charts.residual_line.get_xdata()) == result.iterations
    view._on_pick((1.0, 0.05, 0.05))
    assert "von Mises =" in window.statusBar().currentMessage()
    folder = tmp_path / "export"
    folder.mkdir()
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    window.export_vtu_action.trigger()
    assert "von_mises" in meshio.read(folder / "solution.vtu").point_data
    assert json.loads((folder / "summary.json").read_text())["study"] == "elasticity"
    png = tmp_path / "view.png"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(png), ""))
    window.export_png_action.trigger()
    assert png.stat().st_size > 1000


def test_compare_integrations_fills_two_rows(window, qtbot):
    select_elasticity(window, order=2)
    window.compare_axis.setCurrentText("integration")
    for i in range(window.compare_choices.count()):
        item = window.compare_choices.item(i)
        if item.text() in ("numpy", "gemm"):
            item.setCheckState(QtCore.Qt.Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=60_000)
    assert not window.dialogs
    assert window.compare_table.rowCount() == 2
    assert window.compare_table.item(1, 0).text() == "integration=gemm"
    assert all(len(b) == 2 for b in window.charts.comparison_bars) and window.view.solid is not None


def test_switching_back_to_magnetostatics_restores_its_controls(window):
    select_elasticity(window)
    assert "order" in window.parameter_edits and not window.formulation_box.isVisible()
    window.study_box.setCurrentIndex(window.study_box.findText(STUDIES["magnetostatic"].title))
    for axis in STUDIES["magnetostatic"].axes:
        box = window.axis_boxes[axis.name]
        assert box.isVisible() and [box.itemText(i) for i in range(box.count())] == [c.name for c in axis.choices]
    assert list(window.parameter_edits) == ["rtol"] and window.formulation_box.isVisible()
    assert [window.case_box.itemText(i) for i in range(window.case_box.count())] == list(CASES)
    assert [window.compare_axis.itemText(i) for i in range(window.compare_axis.count())] == \
        [axis.name for axis in STUDIES["magnetostatic"].axes]
    assert all(kind != "region" or first != "2.1e+11" for kind, first, _ in table_rows(window).values())


def test_bad_poisson_ratio_gives_a_dialog_and_no_run(window):
    select_elasticity(window)
    table = window.materials
    steel = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == "steel")
    table.item(steel, 3).setText("0.7")
    window.solve_button.click()
    assert window.dialogs and "poisson must lie strictly between -1 and 0.5" in window.dialogs[0]
    assert window.thread is None and window.solve_button.isEnabled() and window.view.result is None


def test_bad_boundary_value_is_named_by_the_engine(window):
    select_elasticity(window)
    table = window.materials
    tip = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == "tip")
    table.item(tip, 3).setText("0, -1e6")
    window.solve_button.click()
    assert window.dialogs and "[boundaries.tip] value must be a list of 3 numbers" in window.dialogs[0]


def test_open_elasticity_problem_switches_study_and_takes_its_settings(window, tmp_path):
    from paraflux.engine.problems import case_problem_path

    text = case_problem_path("cantilever").read_text()
    problem = tmp_path / "beam.toml"
    problem.write_text(text.replace("order = 3", "order = 4").replace('integration = "numpy"', 'integration = "gemm"'))
    window.set_problem_path(problem)
    assert window.study_box.currentText() == ELASTICITY.title
    assert window.parameter_edits["order"].value() == 4
    assert window.axis_boxes["integration"].currentText() == "gemm"
    assert window.problem_label.text() == "beam.toml" and window.current_problem().order == 4


def test_open_hex_mesh_set_boundaries_in_the_table_and_solve(window, qtbot, tmp_path, monkeypatch):
    from paraflux.engine.mesh.gmsh_build import gmsh_session

    path = tmp_path / "beam.msh"
    with gmsh_session("cantilever") as gmsh:
        case = HEX_CASES["cantilever"]
        case.build(gmsh, case.divisions(None))
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    select_elasticity(window, order=2)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.open_mesh()
    rows = table_rows(window)
    assert set(rows) == {"steel", "clamp", "tip", "top", "bottom"}
    assert all(first == "free" for kind, first, _ in rows.values() if kind == "boundary")
    table = window.materials
    index = {table.item(r, 1).text(): r for r in range(table.rowCount())}
    table.cellWidget(index["clamp"], 2).setCurrentText("fixed")
    table.cellWidget(index["top"], 2).setCurrentText("pressure")
    table.item(index["top"], 3).setText("1e6")
    solve(window, qtbot, timeout=60_000)
    assert not window.dialogs
    assert window.view.result.problem.mesh_path == path and window.view.result.max_displacement > 1e-4


def test_elasticity_session_restores_study_problem_and_order(window, qtbot, tmp_path, monkeypatch):
    select_elasticity(window, order=5)
    table = window.materials
    steel = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == "steel")
    table.item(steel, 2).setText("7e10")
    window.axis_boxes["integration"].setCurrentText("sumfact")
    path = tmp_path / "s.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    window.save_session()
    assert json.loads(path.read_text())["study"] == "elasticity"
    other = MainWindow()
    qtbot.addWidget(other)
    other.restore_session(path)
    assert other.study_box.currentText() == ELASTICITY.title
    assert other.parameter_edits["order"].value() == 5
    assert other.axis_boxes["integration"].currentText() == "sumfact"
    problem = other.current_problem()
    assert problem.order == 5 and problem.regions[0].young == 7e10
    other.close()
