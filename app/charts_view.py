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
        self.comparison_bars = None
        self.shown: list = []

    def _replace(self, *charts) -> None:
        for chart in self.shown:
            self.remove_chart(chart)
        self.add_chart(*charts)
        self.shown = list(charts)
        self.render()

    def show_comparison(self, rows) -> None:
        """Per variant: its time stacked by phase, and its iterations."""
        phases = list(dict.fromkeys(p for row in rows for p in row.timings))
        x = np.arange(len(rows), dtype=float)
        labels = [row.label.split("=", 1)[-1] for row in rows]
        timing = pv.Chart2D(size=(0.5, 1.0), loc=(0.0, 0.0))
        self.comparison_bars = timing.bar(x, [np.array([row.timings.get(p, 0.0) for row in rows]) for p in phases],
                                          label=phases)
        iterations = pv.Chart2D(size=(0.5, 1.0), loc=(0.5, 0.0))
        iterations.bar(x, np.array([row.iterations for row in rows], dtype=float), color="gray")
        for chart, title, unit in ((timing, "Time per phase by variant", "seconds"),
                                   (iterations, "Iterations by variant", "iterations")):
            chart.x_axis.tick_locations = list(range(len(rows)))
            chart.x_axis.tick_labels = labels
            chart.x_label, chart.y_label, chart.title = "", unit, title
        self._replace(timing, iterations)

    def show_result(self, result) -> None:
        phases = list(result.timings)
        timing = pv.Chart2D(size=(0.5, 1.0), loc=(0.0, 0.0))
        self.timing_bars = timing.bar(np.arange(len(phases), dtype=float),
                                      np.array([result.timings[p] for p in phases]), color="steelblue")
        timing.x_axis.tick_locations = list(range(len(phases)))
        timing.x_axis.tick_labels = [p.replace("_", "\n") for p in phases]  # long names side by side
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
        self._replace(timing, residual)
