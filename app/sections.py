"""Collapsible groups of controls in a scrolling column: the window's left dock (problem, variants, solve,
compare), each group opened or closed by its header."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class Section(QtWidgets.QWidget):
    """A header button with an arrow over a body widget that it shows or hides."""

    def __init__(self, title: str, body: QtWidgets.QWidget, expanded: bool = True):
        super().__init__()
        self.header = QtWidgets.QToolButton()
        self.header.setText(title)
        self.header.setCheckable(True)
        self.header.setToolButtonStyle(QtCore.Qt.ToolButtonTextBesideIcon)
        self.header.setSizePolicy(QtWidgets.QSizePolicy.Expanding, QtWidgets.QSizePolicy.Fixed)
        self.header.setStyleSheet("QToolButton { font-weight: bold; border: none; padding: 4px 0px; }")
        self.header.toggled.connect(self.set_expanded)
        self.body = body
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        layout.addWidget(body)
        self.header.setChecked(expanded)
        self.set_expanded(expanded)

    def set_expanded(self, expanded: bool) -> None:
        self.header.setArrowType(QtCore.Qt.DownArrow if expanded else QtCore.Qt.RightArrow)
        self.body.setVisible(expanded)

    @property
    def expanded(self) -> bool:
        return self.header.isChecked()


class SectionColumn(QtWidgets.QScrollArea):
    """Sections stacked top to bottom in a vertical scroll area (never a horizontal one: controls wrap)."""

    def __init__(self, sections: list[Section]):
        super().__init__()
        self.sections = {s.header.text(): s for s in sections}
        inner = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(inner)
        layout.setContentsMargins(6, 6, 6, 6)
        for section in sections:
            layout.addWidget(section)
        layout.addStretch(1)
        self.setWidget(inner)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarAlwaysOff)
        self.setFrameShape(QtWidgets.QFrame.NoFrame)

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt's name)
        """As wide as the widest control needs (its minimum size hint, plus the scroll bar), whatever its height."""
        hint = self.widget().minimumSizeHint()
        return QtCore.QSize(hint.width() + self.verticalScrollBar().sizeHint().width(), 400)
