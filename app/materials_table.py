"""Editable tables of a problem's regions and boundaries: magnetostatic (mu_r, current density; type,
value) and elastic (Young's modulus, Poisson's ratio; type, value).

They edit the problem-file dictionary (engine.problems.problem_as_dict); the window parses the edited
dictionary with the engine, so a bad entry is reported like a bad file."""

from __future__ import annotations

import copy

from PySide6 import QtCore, QtWidgets

from paraflux.engine.problems.elasticity import BOUNDARY_TYPES as ELASTIC_BOUNDARY_TYPES
from paraflux.engine.problems.elasticity import FREE

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


class ElasticMaterialsTable(MaterialsTable):
    """Regions with Young's modulus (Pa) and Poisson's ratio; boundaries with a type and a value typed
    as "ux, uy, uz" (a component may be "free") or one number for a pressure. A boundary of type
    "free" is left out of the problem: a traction-free surface."""

    HEADERS = ("kind", "name", "young (Pa)  |  type", "poisson  |  value")
    TYPES = (FREE, *ELASTIC_BOUNDARY_TYPES)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHorizontalHeaderLabels(self.HEADERS)

    def show_problem(self, data: dict, boundary_names=()) -> None:
        """Fill from a problem dictionary; boundary_names lists mesh boundaries the problem leaves free."""
        regions = data.get("regions", {})
        boundaries = dict(data.get("boundaries", {}))
        for name in boundary_names:
            boundaries.setdefault(name, {"type": FREE})
        self.setRowCount(0)
        self.setRowCount(len(regions) + len(boundaries))
        row = 0
        for name, table in regions.items():
            self._row(row, "region", name, f"{table.get('young', 0.0):g}", f"{table.get('poisson', 0.0):g}")
            row += 1
        for name, table in boundaries.items():
            self._row(row, "boundary", name, None, _value_text(table.get("value")))
            box = QtWidgets.QComboBox()
            box.addItems(self.TYPES)
            box.setCurrentText(table.get("type", FREE))
            box.setToolTip("free: traction-free surface; fixed: every component zero; displacement: "
                           "\"ux, uy, uz\" in the length unit, a component may be \"free\"; traction: "
                           "\"tx, ty, tz\" in Pa; pressure: one number in Pa, along the inward normal")
            self.setCellWidget(row, 2, box)
            row += 1
        self.resizeColumnsToContents()

    def apply(self, data: dict) -> dict:
        """A copy of data with the table's regions and boundaries; text that is no number is passed on
        for the engine to reject by name."""
        data = copy.deepcopy(data)
        regions, boundaries = {}, {}
        for row in range(self.rowCount()):
            kind, name = self.item(row, 0).text(), self.item(row, 1).text()
            if kind == "region":
                regions[name] = {"young": _number(self.item(row, 2).text()),
                                 "poisson": _number(self.item(row, 3).text())}
                continue
            btype = self.cellWidget(row, 2).currentText()
            if btype == FREE:
                continue
            boundaries[name] = {"type": btype}
            text = self.item(row, 3).text().strip()
            if btype != "fixed" and text:
                parts = [_number(part) for part in text.split(",")]
                boundaries[name]["value"] = parts[0] if len(parts) == 1 else parts
        data["regions"], data["boundaries"] = regions, boundaries
        return data


def _value_text(value) -> str:
    """A boundary value as typed in the table: "" (none), "1e+06" or "0, free, -0.001"."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(v if isinstance(v, str) else f"{v:g}" for v in value)
    return f"{value:g}"


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text.strip()


class BemMaterialsTable(ElasticMaterialsTable):
    """The elastic table for a boundary element problem: one homogeneous body, whose Young's modulus and
    Poisson's ratio live in [problem], shown as the region row 'body'."""

    def show_problem(self, data: dict, boundary_names=()) -> None:
        head = data["problem"]
        body = {"body": {"young": head.get("young", 0.0), "poisson": head.get("poisson", 0.0)}}
        super().show_problem({**data, "regions": body}, boundary_names)

    def apply(self, data: dict) -> dict:
        data = super().apply(data)
        body = data.pop("regions")["body"]
        data["problem"]["young"], data["problem"]["poisson"] = body["young"], body["poisson"]
        return data
