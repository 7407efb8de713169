"""The scattering study's panel: frequency, a table of incidences with a generator (theta from, to, step),
far-field cuts or monostatic, the remaining settings in the generic table; the view shows |E| total on a
cut plane inside the translucent mesh, or the first incidence's 3D far-field pattern; the charts show the
RCS against angle (Cartesian and polar, Mie beside a sphere) and each incidence's iteration. Visual only:
every value comes from the engine's result or is parsed by the engine."""

from __future__ import annotations

import copy

import numpy as np
from PySide6 import QtWidgets

from paraflux.engine.errors import ProblemError
from paraflux.engine.scattering.waves import dbsm

from .problem_table import text_of, value_of
from .results_table import summary_rows
from .study_panels import GenericPanel

OWNED = ("problem.frequency", "incidence.", "far_field.")  # settings the panel's controls show, not the table
POLARIZATIONS = ("theta", "phi")
MAX_GENERATED = 3600  # incidences the generator makes at most
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
        self.horizontalHeader().setStretchLastSection(True)
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
    done_message = "done: the RCS cuts, the polar cuts and each incidence's iteration are in the charts"

    def _add_problem_controls(self) -> None:
        super()._add_problem_controls()
        self.frequency_edit = QtWidgets.QLineEdit("450")
        self.form.addRow("Frequency (MHz)", self.frequency_edit)
        self.incidences = IncidenceTable()
        self.incidences.setMinimumHeight(110)
        self.form.addRow("Incidences (arriving from)", self.incidences)
        self.form.addRow(self._generator_row())
        self.far_edits = [QtWidgets.QLineEdit(t) for t in ("0", "180", "1")]
        self.far_phi_edit = QtWidgets.QLineEdit("0, 90")
        self.monostatic_box = QtWidgets.QCheckBox("monostatic")
        self.monostatic_box.setToolTip("the far field in each incidence's back-scatter direction only")
        self.form.addRow("Far field theta from, to, step", self._row(*self.far_edits))
        self.form.addRow("Far-field cuts phi (deg)", self.far_phi_edit)
        self.form.addRow(self.monostatic_box)
        self.view_box = QtWidgets.QComboBox()
        self.view_box.addItems(VIEWS)
        self.view_box.currentIndexChanged.connect(self._redraw)
        self.form.addRow("View", self.view_box)
        self.shown = None  # (view, result) last drawn, for the view box

    @staticmethod
    def _row(*widgets) -> QtWidgets.QWidget:
        row = QtWidgets.QWidget()
        layout = QtWidgets.QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in widgets:
            layout.addWidget(w)
        return row

    def _generator_row(self) -> QtWidgets.QWidget:
        """Theta from, to, step at one phi and polarisation: replaces the table's rows."""
        self.sweep_edits = [QtWidgets.QLineEdit(t) for t in ("0", "180", "30", "0")]
        for edit, tip in zip(self.sweep_edits, ("theta from (deg)", "theta to (deg)", "theta step (deg)", "phi (deg)")):
            edit.setPlaceholderText(tip)
            edit.setToolTip(tip)
        self.sweep_polarization = QtWidgets.QComboBox()
        self.sweep_polarization.addItems(POLARIZATIONS)
        self.generate_button = QtWidgets.QPushButton("Fill table")
        self.generate_button.setToolTip("incidences from theta 'from' to 'to' every 'step' at this phi")
        self.generate_button.clicked.connect(self.generate_incidences)
        add, remove = QtWidgets.QPushButton("Add"), QtWidgets.QPushButton("Remove")
        add.clicked.connect(lambda: self.incidences.add(0.0, 0.0))
        remove.clicked.connect(lambda: self.incidences.removeRow(self.incidences.currentRow()))
        box = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._row(*self.sweep_edits))
        layout.addWidget(self._row(self.sweep_polarization, self.generate_button, add, remove))
        return box

    def generate_incidences(self) -> None:
        """Fill the table from the generator; a bad entry is named in a dialog and the table kept."""
        try:
            start, stop, step, phi = (_number(e, e.toolTip()) for e in self.sweep_edits)
            if step <= 0 or stop < start or (stop - start) / step > MAX_GENERATED:
                raise ProblemError(f"the incidence sweep needs step > 0, 'to' at least 'from' and at most "
                                   f"{MAX_GENERATED} steps")
        except ProblemError as exc:
            QtWidgets.QMessageBox.critical(self.page, "Incidences", str(exc))
            return
        self.incidences.setRowCount(0)
        for theta in np.arange(start, stop + step / 2, step):
            self.incidences.add(float(theta), phi, self.sweep_polarization.currentText())

    def show_problem(self, data: dict, boundary_names=()) -> None:
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
        rest["problem"].pop("frequency", None)
        self.materials.show_problem(rest, boundary_names)

    def edited(self, data: dict) -> dict:
        data = self.materials.apply(data)
        data["problem"]["frequency"] = 1e6 * _number(self.frequency_edit, "the frequency (MHz)")
        data["incidence"] = self.incidences.incidence()
        if self.monostatic_box.isChecked():
            data["far_field"] = {"monostatic": True}
        else:
            start, stop, step = (value_of(e.text(), 0.0) for e in self.far_edits)
            data["far_field"] = {"theta_deg": {"start": start, "stop": stop, "step": step},
                                 "phi_deg": value_of(self.far_phi_edit.text(), [0.0])}
        return data

    def show_result(self, view, result) -> None:
        self.shown = (view, result)
        self._redraw()

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
