"""The results table: a run's summary (the dictionary its summary.json holds) as rows of quantity, value
(4 significant digits) and unit, read-only and copyable as tab-separated text."""

from __future__ import annotations

from numbers import Integral, Real

from PySide6 import QtCore, QtGui, QtWidgets

HEADERS = ("quantity", "value", "unit")
SKIP = {"study", "length_unit_of_points", "residual_history", "flops_count",
        "regions", "sample_points_per_element_edge"}
LABELS = {"n_nodes": "nodes", "n_elements": "elements", "n_dofs": "unknowns", "n_colors": "colours",
          "max_B": "largest |B|", "max_displacement": "largest displacement", "max_von_mises": "largest von Mises",
          "n_inner_elements": "S' triangles", "n_outer_elements": "S triangles", "n_rhs": "right-hand sides",
          "paper_flops": "flops (paper's count)", "gflops": "throughput", "relative_error_curl": "relative error (curl E)",
          "largest_rcs": "largest RCS", "order": "element order", "linear_solver": "linear solver"}
UNITS = {"max_B": "T", "strain_energy": "J", "max_displacement": "m", "max_von_mises": "Pa", "frequency": "Hz",
         "flops": "flop", "paper_flops": "flop", "gflops": "GFLOP/s", "near_field": "element sizes",
         "largest_rcs": "dBsm"}


def number_text(value) -> str:
    """4 significant digits for reals, thousands separators for whole numbers, yes/no for booleans."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return f"{int(value):,}"
    if isinstance(value, Real):
        return f"{float(value):.4g}"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(number_text(v) for v in value) + ")"
    return str(value)


def _probe_rows(probe: dict) -> list[tuple[str, str, str]]:
    name = f"probe {probe['name']}"
    rows = [(f"{name}: point", number_text(probe["point"]), "m")] if "point" in probe else []
    for key, label, unit in (("A", "A", "Wb/m"), ("B", "B", "T"), ("displacement", "displacement", "m"),
                             ("von_mises", "von Mises", "Pa"), ("where", "where", "")):
        if key in probe:
            rows.append((f"{name}: {label}", number_text(probe[key]), unit))
    return rows


def _memory_rows(prefix: str, memory: dict) -> list[tuple[str, str, str]]:
    """Byte counts (nested by device or part) in MiB."""
    rows = []
    for part, value in memory.items():
        label = f"{prefix}: {str(part).replace('_', ' ')}"
        rows += (_memory_rows(label, value) if isinstance(value, dict)
                 else [(label, f"{value / 2**20:.4g}" if isinstance(value, Real) else str(value), "MiB")])
    return rows


def summary_rows(summary: dict) -> list[tuple[str, str, str]]:
    """(quantity, value, unit) rows of a summary dictionary: scalars first, then probes, memory and timings."""
    rows, tail = [], []
    for key, value in summary.items():
        if key in SKIP or value is None or (key.endswith("_unit") and key.removesuffix("_unit") in summary):
            continue  # a unit is shown beside its quantity
        if key == "probes":
            tail += [row for probe in value for row in _probe_rows(probe)]
        elif key == "timings":
            tail += [(f"time: {phase.replace('_', ' ')}", number_text(seconds), "s") for phase, seconds in value.items()]
        elif key == "memory":
            tail += _memory_rows("memory", value)
        elif isinstance(value, dict):
            tail += [(f"{key.replace('_', ' ')}: {k}", number_text(v), "") for k, v in value.items()]
        else:
            unit = summary.get(f"{key}_unit", UNITS.get(key, ""))
            rows.append((LABELS.get(key, key.replace("_", " ")), number_text(value), unit))
    return rows + tail


class ResultsTable(QtWidgets.QTableWidget):
    """Rows of (quantity, value, unit); Ctrl+C copies the selected rows (all rows when none is selected)."""

    def __init__(self, parent=None):
        super().__init__(0, len(HEADERS), parent)
        self.setHorizontalHeaderLabels(HEADERS)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)  # compact rows: more in view
        self.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.horizontalHeader().setStretchLastSection(True)
        self.setWordWrap(False)
        self.setContextMenuPolicy(QtCore.Qt.ActionsContextMenu)
        copy = QtGui.QAction("Copy", self)
        copy.setShortcut(QtGui.QKeySequence.Copy)
        copy.setShortcutContext(QtCore.Qt.WidgetShortcut)
        copy.triggered.connect(self.copy)
        self.addAction(copy)

    def show_rows(self, rows: list[tuple[str, str, str]]) -> None:
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                item.setToolTip(text)
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        width = self.viewport().width()  # long labels and values (a device's name) elide, whole in the tooltip
        for column, share in ((0, 0.45), (1, 0.35)):
            self.setColumnWidth(column, min(self.columnWidth(column), int(share * width)))

    def rows(self) -> list[tuple[str, str, str]]:
        return [tuple(self.item(r, c).text() for c in range(3)) for r in range(self.rowCount())]

    def text(self) -> str:
        """The selected rows (or every row) as tab-separated lines with the header first."""
        chosen = sorted({i.row() for i in self.selectedIndexes()}) or range(self.rowCount())
        lines = ["\t".join(HEADERS)] + ["\t".join(self.item(r, c).text() for c in range(3)) for r in chosen]
        return "\n".join(lines)

    def copy(self) -> None:
        QtWidgets.QApplication.clipboard().setText(self.text())
