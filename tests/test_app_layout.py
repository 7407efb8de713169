"""The window at the screens the issue names (1366x768, 1920x1080): it fits, the result view and its charts
take most of it, no control is squeezed below its size hint, and every chart reads cleanly (tick labels apart
and inside the figure, legends off the data) with long phase and variant names."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from PySide6 import QtGui, QtWidgets  # noqa: E402

from . import test_app  # noqa: E402
from .chart_checks import legibility_problems  # noqa: E402

window = test_app.window
SIZES = [(1366, 768), (1920, 1080)]
CONTROLS = (QtWidgets.QAbstractButton, QtWidgets.QComboBox, QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox)


def _laid_out(window, qtbot, size):
    window.resize(*size)
    window.share_space()
    qtbot.wait(100)


def _area(widget) -> int:
    return widget.width() * widget.height() if widget.isVisible() else 0


@pytest.mark.parametrize("size", SIZES)
def test_window_fits_and_results_take_most_of_it(window, qtbot, size):
    _laid_out(window, qtbot, size)
    assert (window.width(), window.height()) == size
    view, charts = window.view.interactor, window.charts
    share = (_area(view) + _area(charts)) / (size[0] * size[1])
    assert share >= 0.6, f"the view and charts take {share:.0%} of the window"
    assert charts.height() >= 0.45 * size[1]  # charts no longer a strip of 250 px


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("study", ["magnetostatic", "elasticity", "truncation", "elastostatic-bem", "scattering"])
def test_no_control_is_squeezed_below_its_size_hint(window, qtbot, size, study):
    window.select_study(study)
    _laid_out(window, qtbot, size)
    squeezed = [f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}: {w.width()} < {w.minimumSizeHint().width()}"
                for w in window.controls_dock.findChildren(QtWidgets.QWidget)
                if isinstance(w, CONTROLS) and w.isVisible() and w.width() < w.minimumSizeHint().width()]
    assert not squeezed, squeezed


def _rows(labels, phases):
    return [SimpleNamespace(label=f"method={label}", timings={p: 0.1 * (i + 1) * (j + 1) for j, p in enumerate(phases)},
                            iterations=40 + i, relative_difference=1e-9 * i) for i, label in enumerate(labels)]


@pytest.mark.parametrize("size", SIZES)
def test_compare_and_result_charts_read_cleanly_with_long_names(window, qtbot, size):
    _laid_out(window, qtbot, size)
    phases = ["mesh", "element_matrices", "assembly_and_factorisation", "solve", "post_processing_of_the_fields"]
    window.charts.show_comparison(_rows(["ebe-jpcg", "sparse-direct", "ebe-jpcg-with-a-long-variant-name"], phases))
    for figure in window.charts.figures():
        assert not legibility_problems(figure), legibility_problems(figure)
    result = SimpleNamespace(timings={p: 1.5 * (k + 1) for k, p in enumerate(phases)},
                             residual_history=np.logspace(0, -8, 150))
    window.charts.show_result(result)
    for figure in window.charts.figures():
        window.charts.setCurrentWidget(window.charts.pages[next(t for t, p in window.charts.pages.items()
                                                                 if p.figure is figure)])
        qtbot.wait(20)
        assert not legibility_problems(figure), legibility_problems(figure)


def test_the_residual_chart_grows_while_the_solver_runs(window, qtbot):
    window.case_box.setCurrentText("transformer")
    window.size_box.setValue(20000)
    window.axis_boxes["backend"].setCurrentText("numpy")
    seen = []
    window.charts.add_iteration = (lambda original: lambda it, r: (seen.append((it, len(window.charts.residual_line
                                                                                        .get_xdata()))),
                                                                  original(it, r)))(window.charts.add_iteration)
    test_app.solve(window, qtbot)
    assert len(seen) >= 2 and seen[-1][1] > seen[0][1]  # points were added during the run, not only at its end
    assert window.progress_bar.value() == 100 and "finished" in window.status.text()


def test_colour_range_clips_peaks_and_keeps_a_uniform_field_uniform():
    from paraflux.app.result_view import colour_range

    spiky = np.concatenate([np.linspace(0.0, 1.0, 1000), [50.0]])
    assert colour_range(spiky) == (0.0, 50.0)
    low, high = colour_range(spiky, clip=True)
    assert low == 0.0 and 0.99 < high < 1.1  # the singular peak no longer flattens the rest
    uniform = 1e8 * (1 + 1e-7 * np.sin(np.arange(100)))  # uniform tension with round-off
    low, high = colour_range(uniform, clip=True)
    assert low < uniform.min() and high > uniform.max() and (high - low) / 1e8 == pytest.approx(0.02, rel=1e-3)


def test_open_slot_scalar_potential_draws_flux_lines_and_a_copyable_results_table(window, qtbot):
    window.case_box.setCurrentText("open-slot")
    window.size_box.setValue(1500)
    window.axis_boxes["backend"].setCurrentText("numpy")
    test_app.solve(window, qtbot)
    assert window.last_result.problem.potential == "scalar"
    assert window.view.flux_lines is not None and window.view.flux_lines.n_lines > 10
    text = window.summary.text().splitlines()
    assert text[0] == "quantity\tvalue\tunit" and "largest |B|" in "\n".join(text)
    assert not any("np.float64" in line or "{" in line for line in text)
    energy = next(line.split("\t") for line in text if line.startswith("energy\t"))
    assert energy[2] == "J/m" and len(energy[1].replace(".", "").replace("-", "").split("e")[0]) <= 4


def test_the_dock_layout_is_remembered(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from paraflux.app.main import MainWindow

    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    first = MainWindow()
    qtbot.addWidget(first)
    first.show()
    first.results_dock.setFloating(True)
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    assert second.results_dock.isFloating()
    second.reset_layout()
    assert not second.results_dock.isFloating()
    second.close()


def test_screenshots_command_writes_both_sizes(qtbot, tmp_path):
    from paraflux.app import screenshots
    from paraflux.app.main import MainWindow

    written = screenshots.take_screenshots(QtWidgets.QApplication.instance(), MainWindow, tmp_path, ["magnetostatic"])
    assert [p.name for p in written] == ["magnetostatic-1366x768.png", "magnetostatic-1920x1080.png"]
    for path, (width, height) in zip(written, screenshots.SIZES):
        image = QtGui.QImage(str(path))
        assert (image.width(), image.height()) == (width, height)
        assert test_app.QtGui_image_std(path) > 10
