"""The scattering study in the window: selected, a small PEC sphere solved in the background, |E| drawn on
the tetrahedra and the RCS cuts charted, its settings edited in the table."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore  # noqa: E402

from . import test_app  # noqa: E402
from .chart_checks import legibility_problems  # noqa: E402

window = test_app.window


def test_a_small_sphere_is_solved_drawn_and_charted(window, qtbot):
    box = window.study_box
    box.setCurrentIndex(box.findText("Scattering (FE-IIIEE)"))
    assert [window.case_box.itemText(i) for i in range(window.case_box.count())] == [
        "pec-sphere", "nasa-almond", "ogive", "double-ogive", "cone-sphere", "cone-sphere-gap", "aircraft"]
    assert set(window.axis_boxes) == {"acceleration", "linear_solver", "loop"}
    panel = window.panel
    settings = [window.materials.item(r, 0).data(QtCore.Qt.UserRole) for r in range(window.materials.rowCount())]
    assert "geometry.radius" in settings and not any(s.startswith(("incidence", "far_field")) for s in settings)
    panel.frequency_edit.setText("150")  # MHz; ka = 0.79: a small mesh
    panel.far_phi_edit.setText("0")
    window.axis_boxes["acceleration"].setCurrentText("gmres")
    window.solve_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled() and (window.last_result is not None
                                                                  or bool(window.dialogs)), timeout=120_000)
    assert window.dialogs == []
    result = window.last_result
    assert result.problem.frequency == 150e6 and result.problem.solver.acceleration == "gmres"
    assert result.converged.all()
    assert window.view.grid is not None
    assert [line.get_label() for line in window.charts.far_field_lines] == [
        "total", "theta^ part", "phi^ part", "Mie series (total)"]  # one cut, Mie beside the FEM
    assert len(window.charts.polar_axes) == 1 and len(window.charts.polar_axes[0].lines) == 2
    assert len(window.charts.convergence_lines) == 1
    for figure in window.charts.figures():  # cuts, polar cuts, iteration and time: every one legible
        assert not legibility_problems(figure), legibility_problems(figure)
    assert {"cut", "boundary"} <= set(window.view.actors)  # |E| on the cut plane inside the translucent mesh
    table = window.panel.rcs_table  # one theta-polarised incidence: VV and HV per far-field direction
    assert table.headers()[:4] == ["arrival theta (deg)", "arrival phi (deg)", "theta (deg)", "phi (deg)"]
    rows = [line.split("\t") for line in table.text().splitlines()[1:]]
    assert len(rows) == result.theta.shape[1] and all(r[4] and r[6] and not r[5] and not r[7] for r in rows)
    panel.view_box.setCurrentIndex(1)
    assert "RCS (dBsm)" in window.view.grid.point_data  # the 3D pattern
    assert window.view.grid.dimensions[:2] == (37, 73)
    panel.view_box.setCurrentIndex(2)  # the equivalent currents at S' quadrature points
    currents = window.view.grid.point_data
    assert window.view.grid.n_points == len(result.sprime_points)
    assert {"surface points", "boundary"} <= set(window.view.actors)
    assert currents["J (A/m)"].max() > 0 and currents["M (V/m)"].max() > 0
    window.view._on_pick(result.sprime_points[0])


def test_incidences_are_generated_and_edited_in_the_table(window, qtbot):
    box = window.study_box
    box.setCurrentIndex(box.findText("Scattering (FE-IIIEE)"))
    panel = window.panel
    for edit, text in zip(panel.sweep_edits, ("0", "90", "45", "30")):
        edit.setText(text)
    panel.sweep_polarization.setCurrentText("phi")
    panel.generate_button.click()
    data = panel.edited(window.problem_data)
    assert data["incidence"] == {"theta_deg": [0.0, 45.0, 90.0], "phi_deg": [30.0] * 3, "polarization": ["phi"] * 3}
    panel.sweep_edits[2].setText("-5")
    panel.generate_button.click()
    assert window.dialogs[-1].startswith("the incidence sweep needs step > 0") and panel.incidences.rowCount() == 3
    panel.monostatic_box.setChecked(True)
    panel.frequency_edit.setText("300")
    problem = window.current_problem()
    assert problem.monostatic and problem.frequency == 300e6 and len(problem.incidences) == 3
    panel.frequency_edit.setText("fast")
    with pytest.raises(Exception, match="the frequency \\(MHz\\) must be a number, got 'fast'"):
        window.current_problem()
