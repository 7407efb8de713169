"""The Compare box: an axis (or a parameter offering values) of the current study, its choices to tick, the
table of a comparison (or of the truncation study's scaling runs) and its CSV export. The window starts
the runs; this box only chooses and shows."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from paraflux.engine.backend import gpu_unavailable_reason
from paraflux.engine.output import write_text_atomic
from paraflux.engine.studies.compare import comparison_csv


def _checkable(text: str, tip: str, usable: bool = True) -> QtWidgets.QListWidgetItem:
    item = QtWidgets.QListWidgetItem(text)
    item.setToolTip(tip)
    item.setFlags((item.flags() | QtCore.Qt.ItemIsUserCheckable) if usable else item.flags() & ~QtCore.Qt.ItemIsEnabled)
    item.setCheckState(QtCore.Qt.Unchecked)
    return item


class ComparePanel(QtWidgets.QWidget):
    """axis, choices, run_button (the controls); table, export_button (on table_page, shown beside the charts);
    rows: the last comparison's rows (for the CSV)."""

    def __init__(self, study, on_error, parent=None):
        super().__init__(parent)
        self.on_error = on_error
        layout = QtWidgets.QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.axis = QtWidgets.QComboBox()
        self.axis.currentTextChanged.connect(self._fill_choices)
        self.choices = QtWidgets.QListWidget()
        self.choices.setMaximumHeight(110)
        self.run_button = QtWidgets.QPushButton("Run comparison")
        layout.addRow("Axis", self.axis)
        layout.addRow(self.choices)
        layout.addRow(self.run_button)
        self.table = QtWidgets.QTableWidget(0, 0)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(QtCore.Qt.ElideNone)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SingleSelection)
        self.table.setHorizontalScrollMode(QtWidgets.QAbstractItemView.ScrollPerPixel)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.setToolTip("select a variant to draw its field minus the first variant's")
        self.export_button = QtWidgets.QPushButton("Export table as CSV...")
        self.export_button.clicked.connect(self.export)
        self.table_page = QtWidgets.QWidget()
        page = QtWidgets.QVBoxLayout(self.table_page)
        page.setContentsMargins(0, 0, 0, 0)
        page.addWidget(self.table, 1)
        page.addWidget(self.export_button, 0, QtCore.Qt.AlignRight)
        self.rows: list = []
        self.set_study(study)

    def set_study(self, study) -> None:
        """The study's comparable axes and parameters; the table cleared."""
        self.study = study
        self.axis.blockSignals(True)
        self.axis.clear()
        self.axis.addItems(study.comparable())
        self.axis.blockSignals(False)
        self._fill_choices(self.axis.currentText())
        self.show_table([], [])
        self.rows = []
        self.export_button.setEnabled(False)

    def _fill_choices(self, axis_name: str) -> None:
        self.choices.clear()
        parameter = next((p for p in self.study.parameters if p.name == axis_name), None)
        if parameter is not None:  # a numeric setting Compare offers values of
            for value in parameter.compare_values:
                self.choices.addItem(_checkable(f"{value:g}", parameter.description))
            return
        reason = gpu_unavailable_reason()
        for choice in self.study.axis(axis_name).choices:
            self.choices.addItem(_checkable(choice.name, choice.description, choice.unavailable(reason) is None))

    def checked(self) -> tuple[str, list[str]]:
        """The axis and its ticked choices."""
        return self.axis.currentText(), [self.choices.item(i).text() for i in range(self.choices.count())
                                         if self.choices.item(i).checkState() == QtCore.Qt.Checked]

    def show_table(self, headers: list[str], cells: list[list[str]]) -> None:
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(cells))
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QtWidgets.QTableWidgetItem(text))
        self.table.resizeColumnsToContents()  # whole headers and names; the table scrolls sideways instead

    def selected_row(self) -> int | None:
        """The selected comparison row past the first (the one a difference is drawn for), else None."""
        rows = {i.row() for i in self.table.selectedIndexes()}
        return next(iter(rows)) if len(rows) == 1 and self.rows and 0 < next(iter(rows)) < len(self.rows) else None

    def show_comparison(self, rows) -> None:
        """A comparison's rows: time per phase, iterations and the difference from the first variant."""
        self.rows = rows
        phases = list(dict.fromkeys(p for row in rows for p in row.timings))
        headers = ["variant", *[f"{p} (s)" for p in phases], "iterations", "difference"]
        self.show_table(headers, [[row.label, *[f"{row.timings.get(p, float('nan')):.4g}" for p in phases],
                                   "" if row.iterations is None else str(row.iterations),
                                   f"{row.relative_difference:.2e}"] for row in rows])
        self.export_button.setEnabled(True)

    def show_scaling(self, rows) -> None:
        """The truncation study's scaling runs."""
        headers = ["loop", "S triangles", "right-hand sides", "operator (s)", "acceleration over serial"]
        self.show_table(headers, [[row.loop, f"{row.n_outer:,}", str(row.n_rhs), f"{row.seconds:.4g}",
                                   f"{row.acceleration:.3g}"] for row in rows])

    def export(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export comparison", "comparison.csv",
                                                        "CSV files (*.csv)")
        if path:
            try:
                write_text_atomic(Path(path), comparison_csv(self.rows))
            except OSError as exc:
                self.on_error(f"cannot write {path}: {exc}")
