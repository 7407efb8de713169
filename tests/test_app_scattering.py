"""The scattering study in the window: selected, a small PEC sphere solved in the background, |E| drawn on
the tetrahedra and the RCS cuts charted, its settings edited in the table."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtWidgets  # noqa: E402

from paraflux.app.main import MainWindow  # noqa: E402


@pytest.fixture
def window(qtbot, monkeypatch, tmp_path):
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    w = MainWindow()
    w.dialogs = shown
    qtbot.addWidget(w)
    w.show()
    yield w
    w.close()


def test_a_small_sphere_is_solved_drawn_and_charted(window, qtbot):
    box = window.study_box
    box.setCurrentIndex(box.findText("Scattering (FE-IIIEE)"))
    assert [window.case_box.itemText(i) for i in range(window.case_box.count())] == ["pec-sphere", "nasa-almond"]
    assert set(window.axis_boxes) == {"acceleration", "linear_solver", "loop"}
    table = window.materials
    settings = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    table.item(settings["problem.frequency"], 1).setText("150000000")  # ka = 0.79: a small mesh
    table.item(settings["far_field.phi_deg"], 1).setText("0.0")  # a list, one value
    window.axis_boxes["acceleration"].setCurrentText("gmres")
    window.solve_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled() and (window.last_result is not None
                                                                  or bool(window.dialogs)), timeout=120_000)
    assert window.dialogs == []
    result = window.last_result
    assert result.problem.frequency == 150e6 and result.problem.solver.acceleration == "gmres"
    assert result.converged.all()
    assert window.view.grid is not None
    assert [line.GetLabel() for line in window.charts.far_field_lines] == [
        "sigma_theta, phi_deg = 0", "sigma_phi, phi_deg = 0", "sigma_mie, phi_deg = 0"]  # Mie beside the FEM
