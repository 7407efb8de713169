"""The scattering result's RCS table: a row per arrival direction (and far-field direction when the far field
is a grid) with VV, HH and the cross-polarised HV and VH side by side in dBsm, as the engine pairs them
(engine/scattering/polarisations.py); empty cells where a polarisation was not sent. Read-only, any size
(a model over the arrays, not an item per cell); Ctrl+C copies the selected rows as tab-separated text."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from paraflux.engine.scattering.polarisations import PARTS, polarised_rcs

PART_TIPS = {"VV": "theta-polarised incidence, sigma_theta", "HH": "phi-polarised incidence, sigma_phi",
             "HV": "theta-polarised incidence, sigma_phi (cross-polarised)",
             "VH": "phi-polarised incidence, sigma_theta (cross-polarised)"}


class RcsModel(QtCore.QAbstractTableModel):
    """Columns (headers, tips) over a (rows, columns) float array; NaN shows as an empty cell."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.headers: list[str] = []
        self.tips: list[str] = []
        self.values = np.zeros((0, 0))

    def set_table(self, headers: list[str], tips: list[str], values: np.ndarray) -> None:
        self.beginResetModel()
        self.headers, self.tips, self.values = headers, tips, values
        self.endResetModel()

    def rowCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802 (Qt's name)
        return 0 if parent.isValid() else len(self.values)

    def columnCount(self, parent=QtCore.QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.headers)

    def text(self, row: int, column: int) -> str:
        value = self.values[row, column]
        return "" if np.isnan(value) else f"{value:.4g}" if column >= self.angle_columns else f"{value:g}"

    @property
    def angle_columns(self) -> int:
        return len(self.headers) - len(PARTS)

    def data(self, index, role=QtCore.Qt.DisplayRole):
        if role == QtCore.Qt.DisplayRole:
            return self.text(index.row(), index.column())
        if role == QtCore.Qt.TextAlignmentRole:
            return int(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=QtCore.Qt.DisplayRole):  # noqa: N802
        if orientation != QtCore.Qt.Horizontal:
            return None
        if role == QtCore.Qt.DisplayRole:
            return self.headers[section]
        if role == QtCore.Qt.ToolTipRole:
            return self.tips[section]
        return None


class RcsTable(QtWidgets.QTableView):
    """The RCS of a scattering result by direction, the four polarisation parts side by side."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_ = RcsModel(self)
        self.setModel(self.model_)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.Stretch)
        copy = QtGui.QAction("Copy", self)
        copy.setShortcut(QtGui.QKeySequence.Copy)
        copy.setShortcutContext(QtCore.Qt.WidgetShortcut)
        copy.triggered.connect(lambda: QtWidgets.QApplication.clipboard().setText(self.text()))
        self.addAction(copy)
        self.setContextMenuPolicy(QtCore.Qt.ActionsContextMenu)

    def show_result(self, result) -> None:
        """Arrival angles (and, for a far-field grid, the far-field angles), then VV, HH, HV, VH in dBsm."""
        rcs = polarised_rcs(result)
        n, d = rcs.theta.shape
        parts = [rcs.dbsm(p).ravel() for p in PARTS]
        if result.problem.monostatic:
            angles = [rcs.inc_theta, rcs.inc_phi]
            headers, tips = ["theta\n(deg)", "phi\n(deg)"], ["arrival and back-scatter direction"] * 2
        else:
            angles = [np.repeat(rcs.inc_theta, d), np.repeat(rcs.inc_phi, d), rcs.theta.ravel(), rcs.phi.ravel()]
            headers = ["arrival\ntheta (deg)", "arrival\nphi (deg)", "theta\n(deg)", "phi\n(deg)"]
            tips = ["the direction the waves arrive from"] * 2 + ["the far-field direction"] * 2
        self.model_.set_table(headers + [f"{p}\n(dBsm)" for p in PARTS], tips + [PART_TIPS[p] for p in PARTS],
                              np.column_stack(angles + parts) if n else np.zeros((0, len(headers) + 4)))

    def headers(self) -> list[str]:
        """The column headers on one line each."""
        return [h.replace("\n", " ") for h in self.model_.headers]

    def text(self) -> str:
        """The selected rows (or every row) as tab-separated lines with the header first."""
        m = self.model_
        chosen = sorted({i.row() for i in self.selectedIndexes()}) or range(m.rowCount())
        return "\n".join(["\t".join(self.headers())] + ["\t".join(m.text(r, c) for c in range(m.columnCount()))
                                                        for r in chosen])
