"""PyVista charts of a run: time per phase as bars, and the solver's residual history."""

from __future__ import annotations

import numpy as np
import pyvista as pv
from pyvistaqt import QtInteractor


COLORS = ("steelblue", "darkorange", "seagreen", "darkred", "purple", "olive", "teal", "gray")


class ChartsView(QtInteractor):
    """Two charts side by side; timing_bars and residual_line hold what is drawn."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.set_background("white")
        self.timing_bars = None
        self.residual_line = None
        self.far_field_lines: list = []
        self.comparison_bars = None
        self.scaling_lines = None
        self.shown: list = []

    def _replace(self, *charts) -> None:
        for chart in self.shown:
            self.remove_chart(chart)
        self.add_chart(*charts)
        self.shown = list(charts)
        self.render()

    def show_comparison(self, rows) -> None:
        """Per variant a group of bars, one per phase (side by side, so a phase reads across variants),
        and its iterations."""
        phases = list(dict.fromkeys(p for row in rows for p in row.timings))
        x = np.arange(len(rows), dtype=float)
        labels = [row.label.rsplit("=", 1)[-1] for row in rows]  # the compared axis's choice (it comes last)
        timing = pv.Chart2D(size=(0.5, 1.0), loc=(0.0, 0.0))
        self.comparison_bars = [  # VTK places the bar plots of one chart side by side around each x
            timing.bar(x, np.array([row.timings.get(p, 0.0) for row in rows]),
                       color=COLORS[j % len(COLORS)], label=p)
            for j, p in enumerate(phases)]
        second = pv.Chart2D(size=(0.5, 1.0), loc=(0.5, 0.0))
        if any(row.iterations for row in rows):
            second.bar(x, np.array([row.iterations or 0 for row in rows], dtype=float), color="gray")
            second_title, second_unit = "Iterations by variant", "iterations"
        else:  # nothing iterated (e.g. the truncation operator): speed relative to the first variant
            total = np.array([sum(row.timings.values()) for row in rows])
            second.bar(x, total[0] / total, color="gray")
            second_title, second_unit = f"Acceleration over {labels[0]} (total time)", "x"
        for chart, title, unit in ((timing, "Time per phase by variant", "seconds"),
                                   (second, second_title, second_unit)):
            chart.x_axis.tick_locations = list(range(len(rows)))
            chart.x_axis.tick_labels = labels
            chart.x_label, chart.y_label, chart.title = "", unit, title
        self._replace(timing, second)

    def show_scaling(self, rows) -> None:
        """Truncation scaling runs: acceleration over serial (or operator time, without serial) against
        the S triangles, one line per loop and right-hand-side count; operator time against the
        right-hand sides at the largest S."""
        left = pv.Chart2D(size=(0.5, 1.0), loc=(0.0, 0.0))
        with_serial = not np.isnan(rows[0].acceleration)
        self.scaling_lines = []
        for i, (loop, n_rhs) in enumerate(dict.fromkeys((r.loop, r.n_rhs) for r in rows)):
            pick = [r for r in rows if r.loop == loop and r.n_rhs == n_rhs]
            y = [r.acceleration if with_serial else r.seconds for r in pick]
            self.scaling_lines.append(left.line(np.array([r.n_outer for r in pick], dtype=float), np.array(y),
                                                color=COLORS[i % len(COLORS)], label=f"{loop}, {n_rhs} rhs"))
        left.title = "Acceleration over serial" if with_serial else "Operator time"
        left.x_label, left.y_label = "S triangles", "x" if with_serial else "seconds"
        right = pv.Chart2D(size=(0.5, 1.0), loc=(0.5, 0.0))
        largest = max(r.n_outer for r in rows)
        for i, loop in enumerate(dict.fromkeys(r.loop for r in rows)):
            pick = [r for r in rows if r.loop == loop and r.n_outer == largest]
            right.line(np.array([r.n_rhs for r in pick], dtype=float), np.array([r.seconds for r in pick]),
                       color=COLORS[i % len(COLORS)], label=loop)
        right.title, right.x_label, right.y_label = f"Operator time, S = {largest:,} triangles", "right-hand sides", "seconds"
        self._replace(left, right)

    def show_far_field(self, result, result_fields) -> None:
        """Time per phase, and each far-field field against the first far-field angle, one line per value of
        the second angle (e.g. RCS in dBsm against theta for each phi cut)."""
        angles = dict(result_fields.far_field_angles or {})
        if not angles or not result_fields.at("far-field"):
            return self.show_result(result)
        (x_name, x), *rest = angles.items()
        groups = np.asarray(rest[0][1]) if rest else np.zeros(len(x))
        timing = self._timing_chart(result, size=(0.35, 1.0))
        chart = pv.Chart2D(size=(0.65, 1.0), loc=(0.35, 0.0))
        self.far_field_lines = []
        for i, f in enumerate(result_fields.at("far-field")):
            values = np.abs(f.values) if np.iscomplexobj(f.values) else np.asarray(f.values, dtype=float)
            for j, g in enumerate(np.unique(groups)):
                pick = np.flatnonzero(groups == g)
                pick = pick[np.argsort(np.asarray(x)[pick])]
                label = f.name + (f", {rest[0][0]} = {g:g}" if rest else "")
                self.far_field_lines.append(chart.line(np.asarray(x, dtype=float)[pick], values[pick],
                                                       color=COLORS[(i * 3 + j) % len(COLORS)], label=label))
        chart.x_label, chart.title = x_name, "Far field"
        chart.y_label = ", ".join(dict.fromkeys(f.unit for f in result_fields.at("far-field")))
        self._replace(timing, chart)

    def _timing_chart(self, result, size=(0.5, 1.0)) -> pv.Chart2D:
        phases = list(result.timings)
        timing = pv.Chart2D(size=size, loc=(0.0, 0.0))
        self.timing_bars = timing.bar(np.arange(len(phases), dtype=float),
                                      np.array([result.timings[p] for p in phases]), color="steelblue")
        timing.x_axis.tick_locations = list(range(len(phases)))
        timing.x_axis.tick_labels = [p.replace("_", "\n") for p in phases]  # long names side by side
        timing.x_label, timing.y_label, timing.title = "", "seconds", "Time per phase"
        return timing

    def show_result(self, result) -> None:
        timing = self._timing_chart(result)
        residual = pv.Chart2D(size=(0.5, 1.0), loc=(0.5, 0.0))
        history = np.asarray(getattr(result, "residual_history", ()))
        if history.size:
            self.residual_line = residual.line(np.arange(1, history.size + 1, dtype=float),
                                               np.log10(np.maximum(history, 1e-300)), color="darkred")
            residual.title = "Residual history"
        else:
            self.residual_line = None
            residual.title = "Residual history: none (nothing solved iteratively)"
        residual.x_label, residual.y_label = "iteration", "log10 relative residual"
        self._replace(timing, residual)
