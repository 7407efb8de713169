"""A target file opened in the window's scattering panel (a STEP sphere, an STL box): its name, unit and
extent in metres and wavelengths, Gamma, S' and S previewed, solved monostatic in both polarisations with VV,
HH and the cross-polarised parts side by side in the RCS table and the charts; a broken file in one dialog;
the problem saved as a TOML file that the command line reads back as the same problem."""

import re

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from paraflux.engine.problems import load_problem  # noqa: E402
from paraflux.engine.scattering.polarisations import polarised_rcs  # noqa: E402

from . import test_app  # noqa: E402
from .chart_checks import legibility_problems  # noqa: E402
from .test_scattering_polarisations import step_sphere  # noqa: E402
from .test_scattering_target import write_box  # noqa: E402

window = test_app.window


def scattering(window):
    window.study_box.setCurrentIndex(window.study_box.findText("Scattering (FE-IIIEE)"))
    return window.panel


def wait_idle(window, qtbot, timeout=120_000):
    qtbot.waitUntil(lambda: not window.jobs.running() and window.solve_button.isEnabled(), timeout=timeout)


def open_target(window, qtbot, path):
    """The panel's open path (what Open target... calls with the chosen file), then its preview."""
    window.set_mesh_path(path)
    wait_idle(window, qtbot)


def extent_of(label: str) -> list[float]:
    """The numbers of 'X x Y x Z m (x, y, z)' and, on the next line, 'N wavelengths across at F MHz'."""
    match = re.fullmatch(r"(\S+) x (\S+) x (\S+) m \(x, y, z\)\n(\S+) wavelengths across at (\S+) MHz", label)
    assert match, label
    return [float(v) for v in match.groups()]


def test_a_step_sphere_opens_solves_in_both_polarisations_and_saves(window, qtbot, tmp_path):
    panel = scattering(window)
    panel.frequency_edit.setText("300")
    panel.sweep_axis.setCurrentIndex(panel.sweep_axis.findData("phi"))
    for edit, text in zip(panel.sweep_edits, ("0", "270", "90", "90")):
        edit.setText(text)
    panel.sweep_polarization.setCurrentText("both")
    panel.generate_button.click()
    panel.monostatic_box.setChecked(True)
    open_target(window, qtbot, step_sphere(tmp_path / "sphere.step", 150.0))
    assert window.dialogs == []
    assert panel.target.name_label.text() == "sphere.step" and not panel.unit_box.isEnabled()
    assert window.case_box.currentIndex() == -1 and window.case_box.placeholderText() == "(from the file)"
    assert not panel.target.declared_label.isHidden()
    extent = extent_of(panel.target.extent_label.text())  # the facets' nodes: within 1 % of the 0.3 m diameter
    assert np.allclose(extent[:3], 0.3, rtol=0.01) and extent[3:] == [0.3, 300.0], extent
    assert {"scatterer", "inner", "outer"} <= set(window.view.actors)
    panel.frequency_edit.setText("600")
    assert panel.target.extent_label.text().endswith("\n0.6 wavelengths across at 600 MHz")
    panel.frequency_edit.setText("300")
    incidence = panel.edited(window.problem_data)["incidence"]
    assert incidence["phi_deg"] == [0.0, 0.0, 90.0, 90.0, 180.0, 180.0, 270.0, 270.0]
    assert incidence["polarization"] == ["theta", "phi"] * 4 and incidence["theta_deg"] == [90.0] * 8
    test_app.solve(window, qtbot)
    assert window.dialogs == []
    result = window.last_result
    assert result.problem.scatterer_path == (tmp_path / "sphere.step").resolve() and result.problem.monostatic
    assert "VV, HH, HV and VH in the charts" in window.status.text()

    table = panel.rcs_table
    assert table.headers() == ["theta (deg)", "phi (deg)", "VV (dBsm)", "HH (dBsm)", "HV (dBsm)", "VH (dBsm)"]
    rows = [line.split("\t") for line in table.text().splitlines()[1:]]
    assert [r[1] for r in rows] == ["0", "90", "180", "270"]
    vv, hh = (np.array([float(r[c]) for r in rows]) for c in (2, 3))
    assert np.abs(vv - hh).max() < 0.5  # a sphere: the same back-scatter in both polarisations
    np.testing.assert_allclose(vv, polarised_rcs(result).dbsm("VV")[:, 0], rtol=5e-4)  # 4 digits shown
    assert window.tables.isTabVisible(window.tables.indexOf(table))

    charts = window.charts
    assert {"Monostatic RCS", "Monostatic polar"} <= set(charts.pages)
    assert [line.get_label() for line in charts.far_field_lines] == ["VV", "HH", "HV (cross)", "VH (cross)"]
    polar = charts.polar_axes[0]
    assert polar.name == "polar" and [line.get_label() for line in polar.lines] == ["VV", "HH", "HV (cross)",
                                                                                 "VH (cross)"]
    assert len(polar.lines[0].get_xdata()) == 5  # a sweep all round: the curve closes
    for figure in charts.figures():
        assert not legibility_problems(figure), legibility_problems(figure)

    (tmp_path / "saved").mkdir()
    window.write_problem(tmp_path / "saved" / "sphere.toml")
    assert 'scatterer = "../sphere.step"' in (tmp_path / "saved" / "sphere.toml").read_text()
    assert load_problem(tmp_path / "saved" / "sphere.toml") == window.current_problem() == result.problem
    window.case_box.setCurrentText("ogive")  # picking a case leaves the file for it
    assert window.problem_label.text() == "(built-in case)" and window.problem_data["problem"]["case"] == "ogive"


def test_an_stl_box_takes_its_unit_from_the_panel(window, qtbot, tmp_path):
    panel = scattering(window)
    panel.frequency_edit.setText("300")
    panel.unit_box.setCurrentText("mm")
    open_target(window, qtbot, tmp_path / write_box(tmp_path / "box.stl", scale=1e-3))
    assert window.dialogs == []
    assert panel.target.name_label.text() == "box.stl" and panel.unit_box.isEnabled()
    assert panel.target.declared_label.isHidden()
    assert extent_of(panel.target.extent_label.text()) == [0.2, 0.1, 0.08, 0.2, 300.0]
    panel.unit_box.setCurrentText("cm")  # the file's numbers read as centimetres: ten times larger
    assert extent_of(panel.target.extent_label.text()) == [2.0, 1.0, 0.8, 2.0, 300.0]
    assert window.current_problem().length_unit == "cm"


def test_a_broken_target_is_one_dialog(window, qtbot, tmp_path):
    panel = scattering(window)
    panel.frequency_edit.setText("300")
    open_target(window, qtbot, tmp_path / write_box(tmp_path / "open.stl", drop=2))
    assert len(window.dialogs) == 1 and "not closed" in window.dialogs[0], window.dialogs
    assert "\n" not in window.dialogs[0] and window.solve_button.isEnabled()
    (tmp_path / "notes.txt").write_text("a box\n")
    window.set_mesh_path(tmp_path / "notes.txt")
    assert re.match(r"notes\.txt: the scattering study opens targets as STEP, STP, .*, VTU files$", window.dialogs[1])


def test_monostatic_charts_of_a_theta_sweep_and_of_scattered_directions():
    """A theta sweep from 0 to 90 degrees: drawn against theta, its polar curve left open; incidences that
    vary in both angles: drawn against the incidence number, with a note in place of a polar chart."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from paraflux.app import rcs_charts
    from paraflux.app.charts_view import DB_RANGE, legend_outside
    from paraflux.engine.problems.scattering import Incidence

    from .test_scattering_polarisations import fake_result

    sweep = [Incidence(t, 0.0, p) for t in (0.0, 45.0, 90.0) for p in ("theta", "phi")]
    result = fake_result(sweep, [1.0, 1e-4, 2.0, 2e-4, 3.0, 3e-4], [1e-4, 0.5, 2e-4, 0.6, 3e-4, 0.7])
    figure = Figure(layout="constrained")
    FigureCanvasAgg(figure)  # what legibility_problems draws on
    lines = rcs_charts.cartesian_chart(figure, result, legend_outside, DB_RANGE)
    assert figure.axes[0].get_xlabel() == "theta (deg)" and list(lines[0].get_xdata()) == [0.0, 45.0, 90.0]
    np.testing.assert_allclose(lines[1].get_ydata(), 10 * np.log10([0.5, 0.6, 0.7]))  # HH: phi incidence, sigma_phi
    polar = rcs_charts.polar_chart(Figure(layout="constrained"), result, legend_outside, DB_RANGE)
    assert len(polar.lines[0].get_xdata()) == 3 and not legibility_problems(figure)
    scattered = fake_result([Incidence(10.0, 20.0, "theta"), Incidence(30.0, 40.0, "theta")], [1.0, 2.0], [0.1, 0.2])
    figure = Figure(layout="constrained")
    rcs_charts.cartesian_chart(figure, scattered, legend_outside, DB_RANGE)
    assert figure.axes[0].get_xlabel() == "incidence"
    figure = Figure(layout="constrained")
    assert rcs_charts.polar_chart(figure, scattered, legend_outside, DB_RANGE) is None
    assert "no single angle" in figure.axes[0].texts[0].get_text()
