"""The window finds a study declared only in tests/toy_study.py: the study selector, its panel (variant
boxes, parameters, a table of the problem's settings), a solve drawn from its declared fields, and Compare."""

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtCore  # noqa: E402

from paraflux.engine.studies import register, unregister  # noqa: E402

from . import test_app  # noqa: E402
from .toy_study import toy_study  # noqa: E402


@pytest.fixture(autouse=True)
def toy(tmp_path):
    """The toy study registered (before the window is made: autouse fixtures come first) and removed."""
    problem_file = tmp_path / "toy-bar.toml"
    problem_file.write_text('[problem]\nkind = "toy-poisson-1d"\ncase = "toy-bar"\nlength = 2.0\nsource = 1.0\n')
    register(toy_study(problem_file))
    yield
    unregister("toy")


window = test_app.window


def test_toy_study_selected_solved_drawn_and_compared(window, qtbot):
    box = window.study_box
    assert "Toy 1D Poisson" in [box.itemText(i) for i in range(box.count())]
    box.setCurrentIndex(box.findText("Toy 1D Poisson"))
    assert [window.case_box.itemText(i) for i in range(window.case_box.count())] == ["toy-bar"]
    assert list(window.axis_boxes) == ["method"] and "toy_elements" in window.parameter_edits
    table = window.materials
    settings = {table.item(r, 0).data(QtCore.Qt.UserRole): table.item(r, 1).text() for r in range(table.rowCount())}
    assert settings["problem.length"] == "2" and settings["problem.source"] == "1"
    row = list(settings).index("problem.source")
    table.item(row, 1).setText("3")
    window.axis_boxes["method"].setCurrentText("sparse")
    window.solve_button.click()
    qtbot.waitUntil(lambda: window.solve_button.isEnabled() and window.last_result is not None, timeout=60_000)
    assert window.dialogs == []
    result = window.last_result
    assert result.problem.source == 3.0 and result.problem.solver.method == "sparse"
    assert window.view.grid is not None and "|u| (m)" in window.view.grid.point_data.keys()
    assert "sparse" in window.summary.text()
    assert [line.get_label() for line in window.charts.far_field_lines] == ["end_flux"]

    window.compare_axis.setCurrentText("method")
    for i in range(window.compare_choices.count()):
        window.compare_choices.item(i).setCheckState(window.compare_choices.item(i).checkState().Checked)
    window.compare_button.click()
    qtbot.waitUntil(lambda: window.compare_button.isEnabled() and window.compare_table.rowCount() == 2,
                    timeout=60_000)
    assert window.dialogs == []
