"""Editable table of the truncation study's dipole sources: position (length unit) and complex current
moment I l (A m), one row per right-hand side. It edits the problem-file dictionary; the engine
validates what comes back, so a bad entry is reported like a bad file."""

from __future__ import annotations

import copy

from PySide6 import QtWidgets

HEADERS = ("x", "y", "z", "Re Ilx", "Re Ily", "Re Ilz", "Im Ilx", "Im Ily", "Im Ilz")


class SourcesTable(QtWidgets.QTableWidget):
    def __init__(self, parent=None):
        super().__init__(0, len(HEADERS), parent)
        self.setHorizontalHeaderLabels(HEADERS)
        self.verticalHeader().setVisible(True)
        self.setToolTip("electric dipoles inside S': position in the length unit, current moment I l in A m")

    def show_problem(self, data: dict, boundary_names=()) -> None:
        self.setRowCount(0)
        for source in data.get("sources", []):
            self.add_row([*source["position"], *source["moment"], *source.get("moment_imag", [0.0] * 3)])
        self.resizeColumnsToContents()

    def add_row(self, values=(0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)) -> None:
        row = self.rowCount()
        self.insertRow(row)
        for col, value in enumerate(values):
            self.setItem(row, col, QtWidgets.QTableWidgetItem(f"{value:g}"))

    def remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.selectedIndexes()}, reverse=True):
            self.removeRow(row)

    def apply(self, data: dict) -> dict:
        """A copy of data with the table's sources (text that is no number is passed on for the engine to
        reject by name)."""
        data = copy.deepcopy(data)
        rows = []
        for row in range(self.rowCount()):
            values = [_number(self.item(row, col).text() if self.item(row, col) else "")
                      for col in range(len(HEADERS))]
            rows.append({"position": values[0:3], "moment": values[3:6], "moment_imag": values[6:9]})
        data["sources"] = rows
        return data


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text.strip()
