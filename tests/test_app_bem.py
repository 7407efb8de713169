"""The window with the boundary element study: controls from the registry, the bar case solved and drawn
warped by von Mises stress with the GMRES history, direct against fmm in Compare, bad input in a dialog."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore  # noqa: E402

from paraflux.engine.studies import STUDIES  # noqa: E402

from . import test_app  # noqa: E402

window, solve = test_app.window, test_app.solve

BEM = STUDIES["elastostatic-bem"]


def select_bem(window, case="bar", size=300):
    window.study_box.setCurrentIndex(window.study_box.findText(BEM.title))
    window.case_box.setCurrentText(case)
    window.size_box.setValue(size)


def test_bar_solves_and_draws_the_warped_surface(window, qtbot):
    select_bem(window)
    for axis in BEM.axes:
        box = window.axis_boxes[axis.name]
        assert [box.itemText(i) for i in range(box.count())] == [c.name for c in axis.choices]
    assert window.materials.rowCount() == 1 + 6  # the body and the six faces: four loaded or held, two free
    window.axis_boxes["method"].setCurrentText("fmm")
    solve(window, qtbot)
    assert not window.dialogs, window.dialogs
    result = window.last_result
    assert window.view.solid is not None and window.view.grid.n_points == result.mesh.n_nodes
    assert abs(window.view.grid.point_data["von_mises"].mean() / 100e6 - 1) < 0.05
    assert window.charts.residual_line is not None and result.iterations > 0
    assert "unknowns" in window.summary.text()


def test_compare_direct_and_fmm(window, qtbot):
    select_bem(window, size=200)
    window.compare_axis.setCurrentText("method")
    for i in range(window.compare_choices.count()):
        window.compare_choices.item(i).setCheckState(QtCore.Qt.Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=120_000)
    assert not window.dialogs, window.dialogs
    assert window.compare_table.rowCount() == 2
    assert float(window.compare_table.item(1, window.compare_table.columnCount() - 1).text()) < 1e-2


def test_a_body_free_to_move_is_refused_in_a_dialog(window, qtbot):
    select_bem(window)
    table = window.materials
    for row in range(table.rowCount()):
        if table.item(row, 0).text() == "boundary" and table.cellWidget(row, 2).currentText() == "displacement":
            table.cellWidget(row, 2).setCurrentText("free")
    window.solve_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=60_000)
    assert window.dialogs and "rigid body" in window.dialogs[-1]


def test_compare_across_multipole_orders(window, qtbot):
    select_bem(window, size=200)
    window.axis_boxes["method"].setCurrentText("fmm")
    window.compare_axis.setCurrentText("order")
    values = [window.compare_choices.item(i).text() for i in range(window.compare_choices.count())]
    assert values == [f"{v:g}" for v in BEM.parameters[0].compare_values]
    for i in range(window.compare_choices.count()):
        if values[i] in ("4", "10"):
            window.compare_choices.item(i).setCheckState(QtCore.Qt.Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=120_000)
    assert not window.dialogs, window.dialogs
    assert [r.variants for r in window.comparison_rows] == [{"order": 4}, {"order": 10}]
    assert 0 < window.comparison_rows[1].relative_difference < 1e-2  # the orders differ, slightly


def test_the_bar_is_checked_against_hexahedral_p_fem_from_the_window(window, qtbot):
    check = window.panels["elastostatic-bem"].fem_check_button
    select_bem(window)
    window.axis_boxes["method"].setCurrentText("direct")
    assert not check.isEnabled()  # nothing solved yet
    solve(window, qtbot)
    assert check.isEnabled()
    check.click()
    assert not check.isEnabled() and not window.solve_button.isEnabled()  # one job at a time
    qtbot.waitUntil(lambda: window.solve_button.isEnabled(), timeout=60_000)
    line = window.summary.rows()[-1][1]
    assert line.startswith("hexahedral p-FEM check (bar-hex, p = 3") and not window.dialogs, window.dialogs
    assert float(line.rsplit("difference ", 1)[1].split()[0]) < 1e-6  # both exact for uniform stress
    select_bem(window, "hollow-sphere", 400)  # the shown bar is no longer the problem's part
    assert not check.isEnabled()
    solve(window, qtbot)
    assert not check.isEnabled()  # no hexahedral mesh of this part


def test_exponential_nodes_are_greyed_out_unless_the_m2l_is_exponential(window):
    select_bem(window)
    nodes, m2l = window.axis_boxes["exponential_nodes"], window.axis_boxes["m2l"]
    assert m2l.currentText() == "auto" and not nodes.isEnabled()
    assert nodes.toolTip() == "used only with m2l = exponential"
    m2l.setCurrentText("exponential")
    assert nodes.isEnabled() and not nodes.toolTip()
    m2l.setCurrentText("standard")
    assert not nodes.isEnabled()


def test_comparing_exponential_nodes_runs_the_exponential_scheme(window, qtbot):
    select_bem(window, size=200)
    window.axis_boxes["method"].setCurrentText("fmm")
    window.axis_boxes["backend"].setCurrentText("numpy")
    window.compare_axis.setCurrentText("exponential_nodes")
    for i in range(window.compare_choices.count()):
        if window.compare_choices.item(i).text() in ("8", "26"):
            window.compare_choices.item(i).setCheckState(QtCore.Qt.Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=120_000)
    assert not window.dialogs, window.dialogs
    assert [window.compare_table.item(r, 0).text() for r in range(2)] == [
        "m2l=exponential, exponential_nodes=8", "m2l=exponential, exponential_nodes=26"]
    assert [t.get_text() for t in window.charts.compare_axes.get_yticklabels()] == ["8", "26"]  # the compared choice
    assert 0 < window.comparison_rows[1].relative_difference < 1e-2  # 8 nodes: about 2e-3 per translation
