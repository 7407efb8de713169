"""Garbage collection in the window's thread only.

Python's collector runs in whichever thread allocates when a threshold is passed: with jobs in a
background thread that is often the job's thread. A Qt widget or VTK render window caught in a
reference cycle would then be destroyed outside the GUI thread, which Qt and OpenGL do not allow
(a crash, at random). While installed, automatic collection is off and a timer in the GUI thread
collects instead, with the collector's own thresholds.
"""

from __future__ import annotations

import gc

from PySide6 import QtCore

INTERVAL_MS = 500


def collect_due() -> int:
    """Collect the oldest generation whose count passed its threshold, as gc would; objects freed."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    due = [g for g in range(3) if counts[g] > thresholds[g]]
    return gc.collect(due[-1]) if due else 0


class GuiThreadCollector(QtCore.QObject):
    """Owns the timer; create it in the GUI thread, call uninstall() to give collection back."""

    def __init__(self, parent: QtCore.QObject | None = None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.was_enabled = gc.isenabled()
        gc.disable()
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(collect_due)
        self.timer.start(interval_ms)

    def uninstall(self) -> None:
        self.timer.stop()
        gc.collect()
        if self.was_enabled:
            gc.enable()


def install(app: QtCore.QCoreApplication) -> GuiThreadCollector:
    """One collector per application, kept as its child; returns it."""
    existing = app.findChild(GuiThreadCollector)
    return existing if existing is not None else GuiThreadCollector(app)
