"""The window with the truncation study: controls from the registry, the sphere-in-box case applied
and drawn (|E| and its error on S, S' inside), a comparison of loop strategies, a scaling run, two
surface files opened as a bare problem, and bad input in a dialog."""

import meshio
import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from paraflux.engine.studies import STUDIES  # noqa: E402
from paraflux.engine.truncation.surfaces import uv_sphere  # noqa: E402

from . import test_app  # noqa: E402

window, solve = test_app.window, test_app.solve

TRUNCATION = STUDIES["truncation"]


def select_truncation(window, outer=300):
    window.study_box.setCurrentIndex(window.study_box.findText(TRUNCATION.title))
    window.case_box.setCurrentText("sphere-in-box")
    window.size_box.setValue(outer)
    window.axis_boxes["quadrature"].setCurrentText("3")


def test_controls_come_from_the_registry_and_the_case_loads(window):
    select_truncation(window)
    for axis in TRUNCATION.axes:
        box = window.axis_boxes[axis.name]
        assert [box.itemText(i) for i in range(box.count())] == [c.name for c in axis.choices]
    assert window.panel.frequency_edit.text() == "6e+08"
    assert window.materials.rowCount() == 2  # the case's two dipoles


def test_apply_draws_E_and_its_error_on_S(window, qtbot):
    select_truncation(window)
    solve(window, qtbot)
    assert not window.dialogs, window.dialogs
    result = window.last_result
    assert result.n_rhs == 2 and result.relative_error < 1e-4
    assert window.view.grid.n_cells == result.setup.outer.n_elements
    assert "E_magnitude" in window.view.grid.cell_data
    window.panel.field_box.setCurrentIndex(1)  # colour by the error: redrawn from the same result
    assert window.view.grid.cell_data["E_error"].max() < 1e-3
    assert "relative error" in window.summary.text()


def test_random_dipoles_and_a_bad_frequency(window, qtbot):
    select_truncation(window)
    window.panel.random_box.setValue(3)
    solve(window, qtbot)
    assert window.last_result.n_rhs == 5
    window.panel.frequency_edit.setText("-5")
    window.solve_button.click()
    assert window.dialogs and "frequency must be positive" in window.dialogs[-1]


def test_compare_loops_and_scaling_chart(window, qtbot):
    select_truncation(window)
    window.compare_axis.setCurrentText("loop")
    for i in range(window.compare_choices.count()):
        item = window.compare_choices.item(i)
        if item.text() in ("serial", "cpu-s", "zgemm"):
            item.setCheckState(QtCore.Qt.Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=120_000)
    assert not window.dialogs, window.dialogs
    assert window.compare_table.rowCount() == 3
    assert float(window.compare_table.item(2, window.compare_table.columnCount() - 1).text()) < 1e-12
    panel = window.panel
    panel.scaling_sizes.setText("200, 400")
    panel.scaling_rhs.setText("1, 2")
    panel.scaling_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled(), timeout=120_000)
    assert not window.dialogs, window.dialogs
    assert window.compare_table.rowCount() == 2 * 2 * 2  # sizes x right-hand sides x (serial, cpu-s)
    assert len(window.charts.scaling_lines) == 4  # (loop, right-hand sides) pairs
    panel.scaling_rhs.setText("one")
    panel.scaling_button.click()
    assert "whole numbers" in window.dialogs[-1]


def test_two_surface_files_as_a_bare_problem(window, qtbot, tmp_path, monkeypatch):
    for name, radius, n in (("inner.vtu", 0.3, 8), ("outer.vtu", 0.6, 5)):
        pts, tri = uv_sphere(n, radius)
        meshio.write(tmp_path / name, meshio.Mesh(pts, [("triangle", tri)]))
    select_truncation(window)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName",
                        lambda *a, **k: (str(tmp_path / "outer.vtu"), ""))
    window.set_mesh_path(tmp_path / "inner.vtu")
    window.preview_button.click()
    qtbot.waitUntil(lambda: window.preview_button.isEnabled(), timeout=60_000)
    assert not window.dialogs, window.dialogs
    solve(window, qtbot)
    assert not window.dialogs, window.dialogs
    assert np.isfinite(window.last_result.relative_error) and window.last_result.relative_error < 1e-2
