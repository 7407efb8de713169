"""PyVista charts of a run: time per phase as bars, the solver's residual history, far-field cuts (and for
scattering a polar chart and each incidence's iteration)."""

from __future__ import annotations

import numpy as np
import pyvista as pv
from pyvistaqt import QtInteractor

from paraflux.engine.scattering.waves import dbsm


DB_RANGE = 50.0  # dB below the peak that the RCS charts show
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
        if not result_fields.far_field_angles or not result_fields.at("far-field"):
            return self.show_result(result)
        self._replace(self._timing_chart(result, size=(0.35, 1.0)),
                      self._far_field_chart(result_fields, size=(0.65, 1.0), loc=(0.35, 0.0)))

    def _far_field_chart(self, result_fields, size, loc) -> pv.Chart2D:
        (x_name, x), *rest = dict(result_fields.far_field_angles).items()
        groups = np.asarray(rest[0][1]) if rest else np.zeros(len(x))
        chart = pv.Chart2D(size=size, loc=loc)
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
        if chart.y_label == "dBsm":  # the top 50 dB: deep cross-polarised nulls would flatten the rest
            top = max(float(np.max(f.values)) for f in result_fields.at("far-field"))
            chart.y_range = [top - DB_RANGE, top + 5.0]
        return chart

    def show_scattering(self, result, result_fields) -> None:
        """A scattering run: the RCS cuts against theta (Cartesian, Mie beside a sphere; for monostatic
        runs the back-scatter RCS of every incidence), the same cuts in a polar chart, and the residual of
        each incidence's iteration."""
        if result.problem.monostatic:
            cartesian = self._monostatic_chart(result, size=(0.4, 1.0), loc=(0.0, 0.0))
        else:
            cartesian = self._far_field_chart(result_fields, size=(0.4, 1.0), loc=(0.0, 0.0))
        self._replace(cartesian, self._polar_chart(result, size=(0.25, 1.0), loc=(0.4, 0.0)),
                      self._convergence_chart(result, size=(0.35, 1.0), loc=(0.65, 0.0)))

    def _monostatic_chart(self, result, size, loc) -> pv.Chart2D:
        chart = pv.Chart2D(size=size, loc=loc)
        n = len(result.theta)
        self.far_field_lines = [chart.line(np.arange(n, dtype=float), dbsm(s[:, 0]),
                                           color=c, label=name) for s, c, name in
                                ((result.sigma_theta, COLORS[0], "sigma_theta"), (result.sigma_phi, COLORS[1], "sigma_phi"))]
        chart.x_label, chart.y_label, chart.title = "incidence", "dBsm", "Monostatic RCS"
        return chart

    def _polar_chart(self, result, size, loc) -> pv.ChartMPL:
        """Co-polarised RCS (dBsm) of the first incidence against theta in a polar chart, one curve per phi cut."""
        import matplotlib.figure  # noqa: PLC0415

        figure = matplotlib.figure.Figure(figsize=(3, 3))
        axes = figure.add_subplot(projection="polar")
        theta, phi = np.asarray(result.theta[0]), np.asarray(result.phi[0])
        for j, cut in enumerate(np.unique(phi)):
            pick = np.flatnonzero(phi == cut)
            pick = pick[np.argsort(theta[pick])]
            total = result.sigma_theta[0][pick] + result.sigma_phi[0][pick]
            axes.plot(np.radians(theta[pick]), dbsm(total), color=COLORS[j % len(COLORS)],
                      label=f"phi = {cut:g}")
        if axes.lines:
            top = max(float(np.max(line.get_ydata())) for line in axes.lines)
            axes.set_rlim(top - DB_RANGE, top + 3.0)
        axes.set_title("RCS (dBsm), first incidence", fontsize=8)
        axes.legend(fontsize=6, loc="lower left")
        self.polar_axes = axes
        return pv.ChartMPL(figure, size=size, loc=loc)

    def _convergence_chart(self, result, size, loc) -> pv.Chart2D:
        """log10 of the iteration's residual per incidence (up to six; more: the largest and the median)."""
        chart = pv.Chart2D(size=size, loc=loc)
        history = np.array(result.history, dtype=float).reshape(len(result.history), -1) if result.history \
            else np.zeros((0, 1))
        steps = np.arange(1, len(history) + 1, dtype=float)
        curves = ([(history[:, i], f"incidence {i}") for i in range(history.shape[1])] if history.shape[1] <= 6
                  else [(history.max(axis=1), "largest"), (np.median(history, axis=1), "median")])
        self.convergence_lines = [chart.line(steps, np.log10(np.maximum(h, 1e-300)), color=COLORS[i % len(COLORS)],
                                             label=label) for i, (h, label) in enumerate(curves)] if len(steps) else []
        chart.x_label, chart.y_label, chart.title = "iteration", "log10 residual", "Iteration"
        return chart

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
