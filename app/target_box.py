"""The scattering panel's target group: Open target... and Save problem..., the scatterer file's name, its
length unit (a choice for files without one, "declared in the file" for STEP and IGES) and its extent in
metres and in wavelengths once previewed (engine/scattering/target_info.py measures it)."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from paraflux.engine.problems.scattering import LENGTH_UNITS
from paraflux.engine.scattering.target_info import unit_declared

NOT_MEASURED = "Preview mesh to measure it"


def button_row(*widgets) -> QtWidgets.QWidget:
    """Widgets side by side, without margins."""
    row = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        layout.addWidget(w)
    return row


class TargetBox(QtWidgets.QGroupBox):
    """The scatterer of the problem shown; unit_box is the panel's length-unit combo (shown here)."""

    def __init__(self, unit_box: QtWidgets.QComboBox):
        super().__init__("Target")
        self.open_button = QtWidgets.QPushButton("Open target...")
        self.open_button.setToolTip("a closed surface mesh (STL, OBJ, PLY, MSH, VTU) or a CAD solid (STEP, IGES, "
                                    "BREP) as the scatterer; S' and S are built around it")
        self.save_button = QtWidgets.QPushButton("Save problem...")
        self.save_button.setToolTip("the problem as shown as a TOML file that `paraflux solve` runs")
        self.name_label = QtWidgets.QLabel()
        self.unit_box = unit_box
        self.unit_box.addItems(list(LENGTH_UNITS))
        self.unit_box.setVisible(True)
        self.declared_label = QtWidgets.QLabel("declared in the file")
        self.extent_label = QtWidgets.QLabel(NOT_MEASURED)  # two lines of its own: a wrapped label is cut here
        self.preview = None  # the engine's TargetPreview of the target shown
        form = QtWidgets.QFormLayout(self)
        form.addRow(button_row(self.open_button, self.save_button))
        form.addRow("File", self.name_label)
        form.addRow("Length unit", button_row(self.unit_box, self.declared_label))
        form.addRow("Extent", self.extent_label)

    def show_target(self, head: dict) -> None:
        """The [problem] table's scatterer (or case) and length unit; the extent until the next preview unknown."""
        path, self.preview = head.get("scatterer"), None
        self.name_label.setText(Path(path).name if path else f"built-in case {head.get('case', '')}")
        self.name_label.setToolTip(str(path or ""))
        declared = bool(path) and unit_declared(path)
        self.unit_box.setCurrentText(head.get("length_unit", "m"))
        self.unit_box.setEnabled(not declared)
        self.unit_box.setToolTip("the unit the file's coordinates are in" if path else
                                 "the unit of the case's lengths ([geometry] radius)")
        self.declared_label.setVisible(declared)
        self.extent_label.setText(NOT_MEASURED)

    def show_preview(self, preview, frequency: float | None) -> None:
        self.preview = preview
        self.show_extent(frequency)

    def show_extent(self, frequency: float | None) -> None:
        """The previewed target's extent (m) in the unit chosen, and across in wavelengths at frequency (Hz)."""
        if self.preview is None:
            return
        unit = self.unit_box.currentText()
        text = " x ".join(f"{e:.3g}" for e in self.preview.extent_in(unit)) + " m (x, y, z)"
        if frequency:
            text += f"\n{self.preview.wavelengths(frequency, unit):.3g} wavelengths across at {frequency / 1e6:g} MHz"
        self.extent_label.setText(text)
