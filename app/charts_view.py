"""PyVista charts of a run: time per phase as bars, and the solver's residual history."""

from __future__ import annotations

import numpy as np
import pyvista as pv
from pyvistaqt import QtInteractor


class ChartsView(QtInteractor):
    """Two charts side by side; timing_bars and residual_line hold what is drawn."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.set_background("white")
        self.timing_bars = None
        self.residual_line = None
        self.shown: list = []

    def show_result(self, result) -> None:
        for chart in self.shown:
            self.remove_chart(chart)
        phases = list(result.timings)
        timing = pv.Chart2D(size=(0.5, 1.0), loc=(0.0, 0.0))
        self.timing_bars = timing.bar(np.arange(len(phases), dtype=float),
                                      np.array([result.timings[p] for p in phases]), color="steelblue")
        timing.x_axis.tick_locations = list(range(len(phases)))
        timing.x_axis.tick_labels = phases
        timing.x_label, timing.y_label, timing.title = "", "seconds", "Time per phase"
        residual = pv.Chart2D(size=(0.5, 1.0), loc=(0.5, 0.0))
        history = np.asarray(result.residual_history)
        if history.size:
            self.residual_line = residual.line(np.arange(1, history.size + 1, dtype=float),
                                               np.log10(np.maximum(history, 1e-300)), color="darkred")
            residual.title = "Residual history"
        else:
            self.residual_line = None
            residual.title = "Residual history: none (direct solve)"
        residual.x_label, residual.y_label = "iteration", "log10 relative residual"
        self.add_chart(timing, residual)
        self.shown = [timing, residual]
        self.render()
