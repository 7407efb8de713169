"""Editable table of a problem's regions (mu_r, current density) and boundaries (type, value).

It edits the problem-file dictionary (engine.problems.magnetostatic.problem_to_dict); the window
parses the edited dictionary with the engine, so a bad entry is reported like a bad file."""

from __future__ import annotations

import copy

from PySide6 import QtCore, QtWidgets

BOUNDARY_TYPES = ("natural", "dirichlet", "neumann")
HEADERS = ("kind", "name", "mu_r  |  type", "J (A/m²)  |  value")


class MaterialsTable(QtWidgets.QTableWidget):
    def __init__(self, parent=None):
        super().__init__(0, len(HEADERS), parent)
        self.setHorizontalHeaderLabels(HEADERS)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setVisible(False)

    def show_problem(self, data: dict, boundary_names=()) -> None:
        """Fill from a problem dictionary; boundary_names lists mesh boundaries the problem leaves natural."""
        regions = data.get("regions", {})
        boundaries = dict(data.get("boundaries", {}))
        for name in boundary_names:
            boundaries.setdefault(name, {"type": "natural", "value": 0.0})
        self.setRowCount(0)  # drops the previous rows' type boxes too
        self.setRowCount(len(regions) + len(boundaries))
        row = 0
        for name, table in regions.items():
            self._row(row, "region", name, f"{table.get('mu_r', 1.0):g}", f"{table.get('current_density', 0.0):g}")
            row += 1
        for name, table in boundaries.items():
            self._row(row, "boundary", name, None, f"{table.get('value', 0.0):g}")
            box = QtWidgets.QComboBox()
            box.addItems(BOUNDARY_TYPES)
            box.setCurrentText(table.get("type", "dirichlet"))
            self.setCellWidget(row, 2, box)
            row += 1
        self.resizeColumnsToContents()

    def _row(self, row: int, kind: str, name: str, first: str | None, second: str) -> None:
        for col, text in ((0, kind), (1, name)):
            item = QtWidgets.QTableWidgetItem(text)
            item.setFlags(item.flags() & ~QtCore.Qt.ItemIsEditable)
            self.setItem(row, col, item)
        if first is not None:
            self.setItem(row, 2, QtWidgets.QTableWidgetItem(first))
        self.setItem(row, 3, QtWidgets.QTableWidgetItem(second))

    def apply(self, data: dict) -> dict:
        """A copy of data with the table's regions and boundaries (text kept as typed: numbers are
        converted here, anything else is passed on for the engine to reject by name)."""
        data = copy.deepcopy(data)
        scalar = data.get("problem", {}).get("potential") == "scalar"
        regions, boundaries = {}, {}
        for row in range(self.rowCount()):
            kind, name = self.item(row, 0).text(), self.item(row, 1).text()
            second = _number(self.item(row, 3).text())
            if kind == "region":
                regions[name] = {"mu_r": _number(self.item(row, 2).text())}
                if not scalar or second != 0.0:
                    regions[name]["current_density"] = second
            else:
                btype = self.cellWidget(row, 2).currentText()
                if btype != "natural":
                    boundaries[name] = {"type": btype, "value": second}
        data["regions"], data["boundaries"] = regions, boundaries
        return data


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text.strip()
