"""An editable table of every setting of a problem-file dictionary, one row per dotted key
(`problem.frequency`, `geometry.radius`, `sources.0.position`): the panel of a study that brings no table
of its own. Lists of numbers are edited as comma-separated text; the engine parses the edited dictionary
like a file, so a bad entry is reported like a bad file."""

from __future__ import annotations

import copy

from PySide6 import QtCore, QtWidgets

HEADERS = ("setting", "value")


def flat_settings(data, prefix: str = "") -> dict[str, object]:
    """Dotted key -> leaf value (numbers, text, booleans, lists of those) of a nested dict or list."""
    out: dict[str, object] = {}
    items = data.items() if isinstance(data, dict) else enumerate(data)
    for key, value in items:
        path = f"{prefix}{key}"
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)):
            out.update(flat_settings(value, path + "."))
        else:
            out[path] = value
    return out


def text_of(value) -> str:
    if isinstance(value, list):
        return ", ".join(text_of(v) for v in value)
    if isinstance(value, float):
        return f"{value:.12g}"
    return str(value).lower() if isinstance(value, bool) else str(value)


def value_of(text: str, like):
    """The typed text as the kind of value it replaces (a number stays a number where it parses)."""
    text = text.strip()
    if isinstance(like, list):
        return [value_of(t, like[0] if like else 0.0) for t in text.split(",") if t.strip()]
    if isinstance(like, bool):
        return text.lower() in ("true", "1", "yes")
    if isinstance(like, (int, float)):
        try:
            number = float(text)
        except ValueError:
            return text  # passed on for the engine to name
        return int(number) if isinstance(like, int) and number.is_integer() else number
    return text


def set_path(data, path: str, value) -> None:
    keys = path.split(".")
    for key in keys[:-1]:
        data = data[int(key)] if isinstance(data, list) else data[key]
    last = keys[-1]
    if isinstance(data, list):
        data[int(last)] = value
    else:
        data[last] = value


UNITS = {"frequency": "Hz", "radius": "length unit", "gap": "length unit", "theta_deg": "deg", "phi_deg": "deg",
         "position": "length unit", "moment": "A m", "moment_imag": "A m"}


def readable(key: str) -> str:
    """A dotted key as a label a user reads: `problem.length_unit` -> "length unit",
    `sources.0.position` -> "sources 1: position", `geometry.radius` -> "geometry: radius"."""
    parts = key.split(".")
    if parts[0] == "problem":
        parts = parts[1:]
    words = [str(int(p) + 1) if p.isdigit() else p.replace("_deg", "").replace("_", " ") for p in parts]
    head, last = words[:-1], words[-1]
    unit = UNITS.get(parts[-1])
    label = (" ".join(head) + ": " if head else "") + last
    return f"{label} ({unit})" if unit else label


class ProblemTable(QtWidgets.QTableWidget):
    """Rows of (setting, value): the setting's readable label (its dotted key in the tooltip and the item's
    data); the problem kind is shown but not editable."""

    def __init__(self, parent=None):
        super().__init__(0, len(HEADERS), parent)
        self.setHorizontalHeaderLabels(HEADERS)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setVisible(False)
        self.settings: dict[str, object] = {}

    def show_problem(self, data: dict, boundary_names=()) -> None:
        self.settings = flat_settings(data)
        self.setRowCount(0)
        self.setRowCount(len(self.settings))
        for row, (key, value) in enumerate(self.settings.items()):
            name = QtWidgets.QTableWidgetItem(readable(key))
            name.setData(QtCore.Qt.UserRole, key)
            name.setToolTip(f"problem-file key {key}")
            name.setFlags(name.flags() & ~QtCore.Qt.ItemIsEditable)
            self.setItem(row, 0, name)
            item = QtWidgets.QTableWidgetItem(text_of(value))
            if key == "problem.kind":
                item.setFlags(item.flags() & ~QtCore.Qt.ItemIsEditable)
            self.setItem(row, 1, item)
        self.resizeColumnsToContents()

    def apply(self, data: dict) -> dict:
        """A copy of data with the values the table shows."""
        data = copy.deepcopy(data)
        for row in range(self.rowCount()):
            key = self.item(row, 0).data(QtCore.Qt.UserRole)
            if key in self.settings:
                set_path(data, key, value_of(self.item(row, 1).text(), self.settings[key]))
        return data
