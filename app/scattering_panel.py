"""The scattering study's panel: a target file opened directly (its name, unit and extent in metres and
wavelengths; Gamma, S' and S previewed as the solve meshes them), frequency, a table of incidences with a
generator (theta or phi from, to, step, in one or both polarisations), far-field cuts or monostatic, the
remaining settings in the generic table; the view shows |E| total on a cut plane inside the translucent
mesh, or the first incidence's 3D far-field pattern; the charts show the RCS against angle (Cartesian and
polar, Mie beside a sphere; VV, HH and the cross-polarised parts of a monostatic sweep) and each incidence's
iteration; the RCS table shows the four parts side by side. Visual only: every value comes from the
engine's result or is parsed by the engine."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
from PySide6 import QtWidgets

from paraflux.engine.errors import ProblemError
from paraflux.engine.scattering.target_info import preview_target, unit_declared
from paraflux.engine.scattering.waves import dbsm

from .problem_table import text_of, value_of
from .rcs_table import RcsTable
from .results_table import summary_rows
from .study_panels import GenericPanel
from .surface_view import surface_poly
from .target_box import TargetBox, button_row

POLARIZATIONS = ("theta", "phi")
BOTH = "both"  # the generator's choice that makes each direction once per polarisation
MAX_GENERATED = 3600  # directions the generator makes at most
TARGET_FILES = ("*.step", "*.stp", "*.iges", "*.igs", "*.brep", "*.stl", "*.obj", "*.ply", "*.msh", "*.vtu")
VIEWS = ("|E| total on the cut plane y = 0", "3D far-field pattern (first incidence)",
         "Currents |J| and |M| on S' (first incidence)")


def _number(edit: QtWidgets.QLineEdit, what: str) -> float:
    try:
        return float(edit.text())
    except ValueError:
        raise ProblemError(f"{what} must be a number, got '{edit.text()}'") from None


def _as_list(value, n: int) -> list:
    return list(value) if isinstance(value, list) else [value] * n


class IncidenceTable(QtWidgets.QTableWidget):
    """Rows of (theta_deg, phi_deg, polarization): the directions the waves arrive from."""

    def __init__(self):
        super().__init__(0, 3)
        self.setHorizontalHeaderLabels(["theta (deg)", "phi (deg)", "polarization"])
        self.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.Stretch)  # all three in sight
        self.verticalHeader().setVisible(False)

    def add(self, theta: float, phi: float, polarization: str = "theta") -> None:
        row = self.rowCount()
        self.insertRow(row)
        self.setItem(row, 0, QtWidgets.QTableWidgetItem(f"{theta:g}"))
        self.setItem(row, 1, QtWidgets.QTableWidgetItem(f"{phi:g}"))
        box = QtWidgets.QComboBox()
        box.addItems(POLARIZATIONS)
        box.setCurrentText(polarization)
        self.setCellWidget(row, 2, box)

    def show_incidences(self, incidence: dict) -> None:
        theta = incidence.get("theta_deg", [])
        n = len(theta) if isinstance(theta, list) else 1
        self.setRowCount(0)
        for t, p, pol in zip(_as_list(theta, n), _as_list(incidence.get("phi_deg", 0.0), n),
                             _as_list(incidence.get("polarization", "theta"), n)):
            self.add(float(t), float(p), str(pol))

    def incidence(self) -> dict:
        """The [incidence] table: lists of angles (text the engine names if it is not a number)."""
        cells = [[value_of(self.item(r, c).text(), 0.0) for c in (0, 1)] for r in range(self.rowCount())]
        return {"theta_deg": [c[0] for c in cells], "phi_deg": [c[1] for c in cells],
                "polarization": [self.cellWidget(r, 2).currentText() for r in range(self.rowCount())]}


class ScatteringPanel(GenericPanel):
    mesh_filter = f"Targets ({' '.join(TARGET_FILES)});;All files (*)"
    preview_on_open = True  # the window previews a target as soon as it is opened
    result_table_title = "RCS by polarisation"

    def _add_problem_controls(self) -> None:
        super()._add_problem_controls()
        self.target = TargetBox(self.unit_box)
        self.open_target_button, self.save_problem_button = self.target.open_button, self.target.save_button
        self.form.addRow(self.target)
        self.frequency_edit = QtWidgets.QLineEdit("450")
        self.form.addRow("Frequency (MHz)", self.frequency_edit)
        self.frequency_edit.textChanged.connect(self._show_extent)
        self.unit_box.currentTextChanged.connect(self._show_extent)
        self.incidences = IncidenceTable()
        self.incidences.setMinimumHeight(110)
        self.form.addRow("Incidences (arriving from)", self.incidences)
        self.form.addRow(self._generator_row())
        self.far_edits = [QtWidgets.QLineEdit(t) for t in ("0", "180", "1")]
        self.far_phi_edit = QtWidgets.QLineEdit("0, 90")
        self.monostatic_box = QtWidgets.QCheckBox("monostatic")
        self.monostatic_box.setToolTip("the far field in each incidence's back-scatter direction only")
        self.monostatic_box.toggled.connect(lambda on: [e.setEnabled(not on) for e in (*self.far_edits,
                                                                                        self.far_phi_edit)])
        self.form.addRow("Far field theta from, to, step", button_row(*self.far_edits))
        self.form.addRow("Far-field cuts phi (deg)", self.far_phi_edit)
        self.form.addRow(self.monostatic_box)
        self.view_box = QtWidgets.QComboBox()
        self.view_box.addItems(VIEWS)
        self.view_box.currentIndexChanged.connect(self._redraw)
        self.form.addRow("View", self.view_box)
        self.result_table = self.rcs_table = RcsTable()  # the window shows it as a tab beside the summary
        self.shown = None  # (view, result) last drawn, for the view box
        self.data = None  # the problem last shown, in its problem-file schema: an opened target keeps its settings

    def _generator_row(self) -> QtWidgets.QWidget:
        """Theta (or phi) from, to, step at one phi (or theta), in one polarisation or both: replaces the rows."""
        self.sweep_axis = QtWidgets.QComboBox()
        for angle in ("theta", "phi"):
            self.sweep_axis.addItem(f"sweep {angle}", angle)
        self.sweep_axis.setToolTip("the angle the incidences sweep; the last field holds the other one")
        self.sweep_edits = [QtWidgets.QLineEdit(t) for t in ("0", "180", "30", "0")]
        self.sweep_axis.currentIndexChanged.connect(lambda _: self._name_sweep_edits(self.sweep_axis.currentData()))
        self._name_sweep_edits("theta")
        self.sweep_polarization = QtWidgets.QComboBox()
        self.sweep_polarization.addItems([*POLARIZATIONS, BOTH])
        self.sweep_polarization.setToolTip("the incident E along theta^ or phi^; both: each direction twice")
        self.generate_button = QtWidgets.QPushButton("Fill table")
        self.generate_button.setToolTip("incidences from 'from' to 'to' every 'step' of the swept angle")
        self.generate_button.clicked.connect(self.generate_incidences)
        add, remove = QtWidgets.QPushButton("Add"), QtWidgets.QPushButton("Remove")
        add.clicked.connect(lambda: self.incidences.add(0.0, 0.0))
        remove.clicked.connect(lambda: self.incidences.removeRow(self.incidences.currentRow()))
        box = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(button_row(self.sweep_axis, *self.sweep_edits))
        layout.addWidget(button_row(self.sweep_polarization, self.generate_button, add, remove))
        return box

    def _name_sweep_edits(self, axis: str) -> None:
        other = "phi" if axis == "theta" else "theta"
        for edit, tip in zip(self.sweep_edits, (f"{axis} from (deg)", f"{axis} to (deg)", f"{axis} step (deg)",
                                                f"at {other} (deg)")):
            edit.setPlaceholderText(tip)
            edit.setToolTip(tip)

    def generate_incidences(self) -> None:
        """Fill the table from the generator; a bad entry is named in a dialog and the table kept."""
        try:
            start, stop, step, fixed = (_number(e, e.toolTip()) for e in self.sweep_edits)
            if step <= 0 or stop < start or (stop - start) / step > MAX_GENERATED:
                raise ProblemError(f"the incidence sweep needs step > 0, 'to' at least 'from' and at most "
                                   f"{MAX_GENERATED} steps")
        except ProblemError as exc:
            QtWidgets.QMessageBox.critical(self.page, "Incidences", str(exc))
            return
        chosen = self.sweep_polarization.currentText()
        polarizations = POLARIZATIONS if chosen == BOTH else (chosen,)
        self.incidences.setRowCount(0)
        for angle in np.arange(start, stop + step / 2, step):
            theta, phi = (angle, fixed) if self.sweep_axis.currentData() == "theta" else (fixed, angle)
            for polarization in polarizations:
                self.incidences.add(float(theta), float(phi), polarization)

    def show_problem(self, data: dict, boundary_names=()) -> None:
        self.data = copy.deepcopy(data)
        self.target.show_target(data["problem"])
        self.frequency_edit.setText(f"{float(data['problem'].get('frequency', 450e6)) / 1e6:.12g}")
        self.incidences.show_incidences(data.get("incidence", {}))
        far = data.get("far_field", {})
        theta = far.get("theta_deg", {"start": 0.0, "stop": 180.0, "step": 1.0})
        if isinstance(theta, dict):
            for edit, key in zip(self.far_edits, ("start", "stop", "step")):
                edit.setText(text_of(theta.get(key, "")))
        self.far_phi_edit.setText(text_of(far.get("phi_deg", [0.0, 90.0])))
        self.monostatic_box.setChecked(bool(far.get("monostatic", False)))
        rest = {k: v for k, v in copy.deepcopy(data).items() if k not in ("incidence", "far_field")}
        for key in ("frequency", "length_unit", "scatterer"):  # the target box and the fields above show them
            rest["problem"].pop(key, None)
        self.materials.show_problem(rest, boundary_names)

    def edited(self, data: dict) -> dict:
        data = self.materials.apply(data)
        data["problem"]["frequency"] = 1e6 * _number(self.frequency_edit, "the frequency (MHz)")
        data["problem"]["length_unit"] = self.unit_box.currentText()
        data["incidence"] = self.incidences.incidence()
        if self.monostatic_box.isChecked():
            data["far_field"] = {"monostatic": True}
        else:
            start, stop, step = (value_of(e.text(), 0.0) for e in self.far_edits)
            data["far_field"] = {"theta_deg": {"start": start, "stop": stop, "step": step},
                                 "phi_deg": value_of(self.far_phi_edit.text(), [0.0])}
        return data

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        """A target file as the scatterer of the problem shown (its frequency, incidences, far field, unit,
        gaps and solver settings kept), S' and S built around it."""
        if path.suffix.lower() not in {t.removeprefix("*") for t in TARGET_FILES}:
            raise ProblemError(f"{path.name}: the scattering study opens targets as "
                               f"{', '.join(t.removeprefix('*.').upper() for t in TARGET_FILES)} files")
        data = self.edited(self.data)
        for key in ("case", "inner_surface", "outer_surface"):
            data["problem"].pop(key, None)
        data["problem"]["scatterer"] = str(Path(path).resolve())
        data.get("geometry", {}).pop("radius", None)  # the sphere case's alone
        return data, ()

    def load_mesh(self, problem, control):
        """Gamma, S' and S as the solve meshes them, with the target's extent (engine)."""
        return preview_target(problem, control)

    def show_mesh(self, view, mesh) -> None:
        self.shown = None
        self.target.show_preview(mesh, self._frequency())
        show_target(view, mesh)

    def _frequency(self) -> float | None:
        """The frequency field in Hz, None while it is not a number."""
        try:
            return 1e6 * float(self.frequency_edit.text())
        except ValueError:
            return None

    def _show_extent(self) -> None:
        self.target.show_extent(self._frequency())

    def show_result(self, view, result) -> None:
        self.shown = (view, result)
        self.rcs_table.show_result(result)
        self._redraw()
    @property
    def done_message(self) -> str:
        """What the status line says once a result is shown."""
        if self.shown is not None and self.shown[1].problem.monostatic:
            return "done: VV, HH, HV and VH in the charts and the RCS by polarisation tab"
        return "done: the RCS cuts, the polar cuts and each incidence's iteration are in the charts"

    def _redraw(self) -> None:
        if self.shown is None:
            return
        view, result = self.shown
        index = self.view_box.currentIndex()
        if index == 0:
            view.show_cut_plane(result, self.study.fields(result))
        elif index == 1:
            view.show_pattern(result)
        else:
            view.show_surface_points(result, self.study.fields(result))
        if index != 1:
            view.show_incidence(result)

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        p = result.problem
        return summary_rows({
            "n_elements": result.mesh.n_elements, "n_dofs": result.n_dofs, "order": p.solver.order,
            "frequency": p.frequency / 1e6, "frequency_unit": "MHz", "incidences": len(p.incidences),
            "converged": f"{int(np.sum(result.converged))} of {len(result.converged)}", "iterations": result.iterations,
            "largest_rcs": float(max(dbsm(result.sigma_theta).max(), dbsm(result.sigma_phi).max())),
            "factor_nonzeros": result.factor_nonzeros, "acceleration": p.solver.acceleration,
            "linear_solver": result.linear_solver, "backend": result.backend, "timings": dict(result.timings)})

    def show_charts(self, charts, result) -> None:
        charts.show_scattering(result, self.study.fields(result))


def show_target(view, preview) -> None:
    """Gamma with its edges inside S' (orange) and S (blue), both translucent, before solving."""
    view.clear()
    view.result, view.solid = None, None
    view.grid = surface_poly(preview.body)
    view.add_mesh(view.grid, color="silver", show_edges=True, edge_color="dimgray", name="scatterer")
    for surface, colour, name in ((preview.inner, "orange", "inner"), (preview.outer, "lightsteelblue", "outer")):
        view.add_mesh(surface_poly(surface), color=colour, opacity=0.15, name=name)
    view.add_text(f"{preview.name}: the scatterer inside S' (orange) and S (blue)", position="lower_left",
                  font_size=8, color="black", name="target note")
    view.view_isometric()
    view.render()
