"""The run's charts as matplotlib figures in tabs (each with its toolbar: zoom, pan, save): time per phase
as bars, the solver's residual growing while it runs, far-field cuts, and for scattering the RCS cuts in
dBsm (Cartesian and polar, the Mie series beside a sphere) and each incidence's iteration. Every figure
uses constrained layout with its legend outside the axes, so labels never cover data or each other."""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg, NavigationToolbar2QT
from matplotlib.figure import Figure
from PySide6 import QtCore, QtWidgets

from paraflux.engine.scattering.waves import dbsm

from . import rcs_charts

DB_RANGE = 50.0  # dB below the peak that the RCS charts show
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:olive", "tab:cyan")
LABEL_WIDTH = 18  # characters per line of a category label before it wraps
LIVE_REDRAW_MS = 1000  # the live residual chart redraws at most this often (a draw holds the GIL the solve needs)


def wrapped(text: str) -> str:
    """A phase or variant name as a category label: underscores as spaces, wrapped at LABEL_WIDTH."""
    return textwrap.fill(str(text).replace("_", " "), LABEL_WIDTH)


def legend_outside(figure: Figure, axes) -> None:
    """The figure's legend below its axes (constrained layout makes room), in as many columns as fit."""
    handles, labels = [], []
    for ax in np.atleast_1d(axes):
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    if handles:
        width = figure.get_figwidth() * figure.dpi  # pixels
        per_entry = 7.0 * max(len(label) for label in labels) + 40.0  # small font, marker and gap
        columns = max(1, min(len(labels), int(width // per_entry)))
        figure.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize="small")


class ChartPage(QtWidgets.QWidget):
    """One figure with its navigation toolbar."""

    def __init__(self, title: str):
        super().__init__()
        self.title = title
        self.figure = Figure(layout="constrained")
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.canvas.setMinimumSize(200, 150)
        self.toolbar = NavigationToolbar2QT(self.canvas, self)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.canvas, 1)

    def reset(self) -> None:
        """An empty figure and no zoom history, for the next run's chart of this title."""
        self.figure.clear()
        self.toolbar.update()


class ChartsView(QtWidgets.QTabWidget):
    """The charts of the last run, a tab each. Attributes hold what is drawn (matplotlib artists):
    timing_bars, residual_line, comparison_bars, compare_axes, far_field_lines, polar_axes, convergence_lines,
    scaling_lines."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setDocumentMode(True)
        self.pages: dict[str, ChartPage] = {}
        self.timing_bars = None
        self.residual_line = None
        self.far_field_lines: list = []
        self.comparison_bars: list = []
        self.convergence_lines: list = []
        self.scaling_lines: list = []
        self.polar_axes = None
        self.compare_axes = None
        self._live_clock = QtCore.QElapsedTimer()

    def _restart(self, *titles: str) -> list[Figure]:
        """Empty figures with these titles (in this order) as the only tabs. A page whose title the last run
        had is cleared and reused; the others are deleted: a run leaves no figure, canvas or toolbar behind
        (QTabWidget.clear only hides its pages)."""
        old, self.pages = self.pages, {}
        self.clear()
        for title in titles:
            page = old.pop(title, None)
            self.pages[title] = page if page is not None else ChartPage(title)
            self.pages[title].reset()
            self.addTab(self.pages[title], title)
        for page in old.values():
            page.figure.clear()
            page.deleteLater()
        return [self.pages[t].figure for t in titles]

    def _done(self, headline: str) -> None:
        for page in self.pages.values():
            page.canvas.draw_idle()
        self.setCurrentWidget(self.pages[headline])

    def draw_all(self) -> None:
        """Draw every figure now (for screenshots and tests that read text extents)."""
        for page in self.pages.values():
            page.canvas.draw()

    def figures(self) -> list[Figure]:
        return [page.figure for page in self.pages.values()]

    # -- a single run -------------------------------------------------------------------------------------
    def start_live(self) -> None:
        """An empty residual chart that add_iteration fills while a solver runs."""
        (figure,) = self._restart("Residual")
        ax = figure.add_subplot()
        self.residual_line, = ax.semilogy([], [], color="tab:red", marker=".", markersize=3)
        ax.set(xlabel="iteration", ylabel="relative residual", title="Residual (running)")
        ax.grid(True, which="both", alpha=0.3)
        self._live_clock.start()
        self._done("Residual")

    def add_iteration(self, iteration: int, residual: float) -> None:
        """Extend the live residual line; redraws at most every LIVE_REDRAW_MS."""
        if self.residual_line is None or "Residual" not in self.pages or residual <= 0:
            return
        line = self.residual_line
        if len(line.get_xdata()) and iteration <= line.get_xdata()[-1]:  # the next variant of a comparison
            line, = line.axes.semilogy([], [], marker=".", markersize=3)
            self.residual_line = line
        line.set_data(np.append(line.get_xdata(), iteration), np.append(line.get_ydata(), residual))
        if self._live_clock.elapsed() >= LIVE_REDRAW_MS:
            self._live_clock.restart()
            line.axes.relim()
            line.axes.autoscale_view()
            self.pages["Residual"].canvas.draw_idle()

    def show_result(self, result) -> None:
        """Residual history (log scale) and time per phase."""
        residual_figure, timing_figure = self._restart("Residual", "Time per phase")
        self._residual_chart(residual_figure.add_subplot(), np.asarray(getattr(result, "residual_history", ())))
        self._timing_chart(timing_figure.add_subplot(), result.timings)
        self._done("Residual" if self.residual_line is not None else "Time per phase")

    def _residual_chart(self, ax, history: np.ndarray) -> None:
        if history.size:
            self.residual_line, = ax.semilogy(np.arange(1, history.size + 1), np.maximum(history, 1e-300),
                                              color="tab:red")
            ax.set_title(f"Residual: {history.size} iterations")
        else:
            self.residual_line = None
            ax.set_title("Residual: none (solved directly)")
            ax.text(0.5, 0.5, "no iterative solve in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set(xlabel="iteration", ylabel="relative residual")
        ax.grid(True, which="both", alpha=0.3)

    def _timing_chart(self, ax, timings: dict) -> None:
        """Horizontal bars, one per phase (names read along the bars, never over each other)."""
        phases = list(timings)
        self.timing_bars = ax.barh(np.arange(len(phases)), [timings[p] for p in phases], color="tab:blue")
        ax.set_yticks(np.arange(len(phases)), [wrapped(p) for p in phases])
        ax.invert_yaxis()
        ax.bar_label(self.timing_bars, fmt="%.3g s", padding=3, fontsize="small")
        ax.margins(x=0.25)
        ax.set(xlabel="seconds", title=f"Time per phase (total {sum(timings.values()):.3g} s)")

    def show_far_field(self, result, result_fields) -> None:
        """Each far-field field against the first far-field angle, a line per value of the second angle."""
        if not result_fields.far_field_angles or not result_fields.at("far-field"):
            return self.show_result(result)
        far, timing = self._restart("Far field", "Time per phase")
        self._far_field_chart(far, result_fields)
        self._timing_chart(timing.add_subplot(), result.timings)
        self._done("Far field")

    def _far_field_chart(self, figure: Figure, result_fields) -> None:
        (x_name, x), *rest = dict(result_fields.far_field_angles).items()
        x = np.asarray(x, dtype=float)
        groups = np.asarray(rest[0][1]) if rest else np.zeros(len(x))
        ax = figure.add_subplot()
        self.far_field_lines = []
        for i, f in enumerate(result_fields.at("far-field")):
            values = np.abs(f.values) if np.iscomplexobj(f.values) else np.asarray(f.values, dtype=float)
            for j, g in enumerate(np.unique(groups)):
                pick = np.flatnonzero(groups == g)
                pick = pick[np.argsort(x[pick])]
                label = f.name + (f", {rest[0][0]} = {g:g}" if rest else "")
                self.far_field_lines += ax.plot(x[pick], values[pick], color=COLORS[(i * 3 + j) % len(COLORS)],
                                                label=label)
        unit = ", ".join(dict.fromkeys(f.unit for f in result_fields.at("far-field")))
        ax.set(xlabel=x_name.replace("_deg", " (deg)"), ylabel=unit, title="Far field")
        ax.grid(True, alpha=0.3)
        legend_outside(figure, ax)

    # -- scattering ----------------------------------------------------------------------------------------
    def show_scattering(self, result, result_fields) -> None:
        """RCS cuts in dBsm (Cartesian, one panel per cut, the Mie series beside a sphere; for monostatic runs
        VV, HH and the cross-polarised parts against the swept angle), the same in polar form, each incidence's
        iteration, time."""
        if result.problem.monostatic:
            cuts, polar, iterations, timing = self._restart("Monostatic RCS", "Monostatic polar", "Iterations",
                                                            "Time per phase")
            self._monostatic_charts(cuts, polar, result)
            headline = "Monostatic RCS"
        else:
            cuts, polar, iterations, timing = self._restart("RCS cuts", "RCS polar", "Iterations", "Time per phase")
            self._cut_charts(cuts, result, result_fields)
            self._polar_charts(polar, result, result_fields)
            headline = "RCS cuts"
        self._convergence_chart(iterations.add_subplot(), result)
        self._timing_chart(timing.add_subplot(), result.timings)
        self._done(headline)

    @staticmethod
    def _cuts(result) -> list[tuple[float, np.ndarray]]:
        """(phi in degrees, indices of the first incidence's directions on that cut sorted by theta)."""
        theta, phi = np.asarray(result.theta[0]), np.asarray(result.phi[0])
        out = []
        for cut in np.unique(phi):
            pick = np.flatnonzero(phi == cut)
            out.append((float(cut), pick[np.argsort(theta[pick])]))
        return out

    @staticmethod
    def _peak_dbsm(result) -> float:
        """The first incidence's largest total RCS (dBsm): the top of its charts' DB_RANGE."""
        return max(float(np.max(dbsm(result.sigma_theta[0] + result.sigma_phi[0]))), -300.0)

    @staticmethod
    def _cut_name(phi: float) -> str:
        plane = {0.0: "E-plane", 90.0: "H-plane"}.get(phi % 180.0, "")
        return f"phi = {phi:g} deg" + (f" ({plane})" if plane else "")

    def _rcs_curves(self, result, result_fields, pick) -> list[tuple[str, np.ndarray, dict]]:
        """(label, dBsm values, line style) of one cut: total, its theta^ and phi^ parts, the Mie series."""
        s_t, s_p = result.sigma_theta[0][pick], result.sigma_phi[0][pick]
        curves = [("total", dbsm(s_t + s_p), {"color": "tab:blue", "linewidth": 2.0}),
                  ("theta^ part", dbsm(s_t), {"color": "tab:orange", "linewidth": 1.0}),
                  ("phi^ part", dbsm(s_p), {"color": "tab:green", "linewidth": 1.0})]
        mie = [f for f in result_fields.at("far-field") if f.name == "sigma_mie"]
        if mie:
            curves.append(("Mie series (total)", np.asarray(mie[0].values)[pick],
                           {"color": "black", "linestyle": "--", "linewidth": 1.2}))
        return curves

    def _cut_charts(self, figure: Figure, result, result_fields) -> None:
        cuts = self._cuts(result)
        axes = figure.subplots(len(cuts), 1, sharex=True, squeeze=False)[:, 0]  # stacked: each cut full width
        theta = np.asarray(result.theta[0])
        top = self._peak_dbsm(result)
        self.far_field_lines = []
        for ax, (phi, pick) in zip(axes, cuts):
            for label, values, style in self._rcs_curves(result, result_fields, pick):
                line, = ax.plot(theta[pick], values, label=label, **style)
                self.far_field_lines.append(line)
            ax.set(ylabel="RCS (dBsm)", title=self._cut_name(phi), ylim=(top - DB_RANGE, top + 5.0))
            ax.grid(True, alpha=0.3)
        axes[-1].set_xlabel("theta (deg)")
        legend_outside(figure, axes)

    def _polar_charts(self, figure: Figure, result, result_fields) -> None:
        cuts = self._cuts(result)
        theta = np.asarray(result.theta[0])
        top = self._peak_dbsm(result)
        self.polar_axes = []
        for k, (phi, pick) in enumerate(cuts):
            ax = figure.add_subplot(1, len(cuts), k + 1, projection="polar")
            ax.set_theta_zero_location("N")
            ax.set_theta_direction(-1)
            for label, values, style in self._rcs_curves(result, result_fields, pick):
                if label in ("total", "Mie series (total)"):
                    ax.plot(np.radians(theta[pick]), values, label=label, **style)
            ax.set_rlim(top - DB_RANGE, top + 3.0)
            ax.set_rlabel_position(135)
            ax.tick_params(labelsize="small")
            ax.set_title(self._cut_name(phi).replace(" (", "\n(") + ", dBsm", fontsize="medium")
            self.polar_axes.append(ax)
        legend_outside(figure, self.polar_axes)

    def _monostatic_charts(self, cartesian: Figure, polar: Figure, result) -> None:
        """VV, HH, HV and VH against the swept angle, Cartesian and polar (app/rcs_charts.py)."""
        self.far_field_lines = rcs_charts.cartesian_chart(cartesian, result, legend_outside, DB_RANGE)
        axes = rcs_charts.polar_chart(polar, result, legend_outside, DB_RANGE)
        self.polar_axes = [] if axes is None else [axes]

    def _convergence_chart(self, ax, result) -> None:
        """The residual per incidence (up to six; more: the largest and the median)."""
        history = (np.array(result.history, dtype=float).reshape(len(result.history), -1) if result.history
                   else np.zeros((0, 1)))
        steps = np.arange(1, len(history) + 1)
        curves = ([(history[:, i], f"incidence {i}") for i in range(history.shape[1])] if history.shape[1] <= 6
                  else [(history.max(axis=1), "largest"), (np.median(history, axis=1), "median")])
        self.convergence_lines = [ax.semilogy(steps, np.maximum(h, 1e-300), color=COLORS[i % len(COLORS)],
                                              label=label)[0] for i, (h, label) in enumerate(curves)] if len(steps) else []
        ax.set(xlabel="iteration", ylabel="residual", title="Iteration per incidence")
        ax.grid(True, which="both", alpha=0.3)
        if self.convergence_lines:
            legend_outside(ax.figure, ax)

    # -- comparisons ---------------------------------------------------------------------------------------
    def show_comparison(self, rows) -> None:
        """A bar per variant with a segment per phase (stacked), and its iterations (or, where nothing
        iterated, its speed over the first variant)."""
        (figure,) = self._restart("Compare")
        timing, second = figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
        phases = list(dict.fromkeys(p for row in rows for p in row.timings))
        y = np.arange(len(rows))
        labels = [wrapped(row.label.rsplit("=", 1)[-1]) for row in rows]  # the compared choice comes last
        left = np.zeros(len(rows))
        self.comparison_bars = []
        for j, phase in enumerate(phases):
            width = np.array([row.timings.get(phase, 0.0) for row in rows])
            self.comparison_bars.append(timing.barh(y, width, left=left, color=COLORS[j % len(COLORS)],
                                                    label=phase.replace("_", " ")))
            left += width
        timing.set_yticks(y, labels)
        timing.invert_yaxis()
        timing.set(xlabel="seconds", title="Time per phase")
        if any(row.iterations for row in rows):
            bars = second.barh(y, [row.iterations or 0 for row in rows], color="gray")
            second.set(xlabel="iterations", title="Iterations")
        else:
            bars = second.barh(y, left[0] / left, color="gray")
            second.set(xlabel="x", title=f"Speed over {rows[0].label.rsplit('=', 1)[-1]}")
        second.bar_label(bars, fmt="%.3g", padding=3, fontsize="small")
        second.margins(x=0.3)
        legend_outside(figure, timing)
        self.compare_axes = timing
        self._done("Compare")

    def show_scaling(self, rows) -> None:
        """Truncation scaling runs: acceleration over serial (or operator time) against S, a line per loop and
        right-hand-side count; operator time against the right-hand sides at the largest S."""
        (figure,) = self._restart("Scaling")
        left, right = figure.subplots(1, 2)
        with_serial = not np.isnan(rows[0].acceleration)
        self.scaling_lines = []
        for i, (loop, n_rhs) in enumerate(dict.fromkeys((r.loop, r.n_rhs) for r in rows)):
            pick = [r for r in rows if r.loop == loop and r.n_rhs == n_rhs]
            y = [r.acceleration if with_serial else r.seconds for r in pick]
            self.scaling_lines += left.plot([r.n_outer for r in pick], y, marker="o", color=COLORS[i % len(COLORS)],
                                            label=f"{loop}, {n_rhs} rhs")
        left.set(xlabel="S triangles", ylabel="x" if with_serial else "seconds",
                 title="Acceleration over serial" if with_serial else "Operator time")
        largest = max(r.n_outer for r in rows)
        for i, loop in enumerate(dict.fromkeys(r.loop for r in rows)):
            pick = [r for r in rows if r.loop == loop and r.n_outer == largest]
            right.plot([r.n_rhs for r in pick], [r.seconds for r in pick], marker="o", color=COLORS[i % len(COLORS)])
        right.set(xlabel="right-hand sides", ylabel="seconds", title=f"Operator time, S = {largest:,}")
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
        legend_outside(figure, left)
        self._done("Scaling")
