"""What a sweep plots: a study's declared figures (SweepPlot) drawn from the sweep's table rows as matplotlib
Figures, the same ones for the PNGs `paraflux sweep` writes and for the window's sweep panel. Lines and
panels are split by declared columns, so no line joins rows of different directions, cuts or components;
matplotlib is imported only when a figure is drawn."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from ..output import replace_atomically

MAX_LINES = 12  # lines drawn per panel; more are thinned (whole curves, evenly), and the figure says so
LABEL_CHARS = 32  # a label longer than this is shortened with an ellipsis
FIXED = ("point", "status", "message")  # table columns that are never plotted
STYLES = ("-", "--", "-.", (0, (5, 1, 1, 1)))  # a line style per y; dotted is the reference's
REFERENCE_STYLE = {"color": "black", "linestyle": ":", "linewidth": 1.2, "markersize": 5}


@dataclass(frozen=True)
class Quantity:
    """How a table column reads on an axis or in a legend: label, unit, and the factor from the column's
    numbers to that unit (a column in Hz shown in MHz: scale 1e-6). named: beside other values, a value
    reads "label value unit" ("radius 0.2 m"), else "value unit" ("300 MHz"). Text values read as they are."""

    column: str
    label: str
    unit: str = ""
    scale: float = 1.0
    named: bool = True

    def axis_label(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def value_text(self, value) -> str:
        """A value alone, in the quantity's unit: "300 MHz", "90°", "ebe-jpcg"."""
        if isinstance(value, str):
            return value
        unit = self.unit if self.unit in ("°", "") else f" {self.unit}"
        return f"{value * self.scale:.4g}{unit}"

    def text(self, value) -> str:
        """A value beside others (a legend entry of several quantities, a panel's title): "300 MHz", "θ 90°",
        "method ebe-jpcg"."""
        return f"{self.label} {self.value_text(value)}" if self.named else self.value_text(value)


@dataclass(frozen=True)
class SweepPlot:
    """One figure: each y against x, a line per distinct value of the `lines` columns (and of the sweep's
    axes other than x), a panel per distinct value of the `panels` columns. x None: the sweep's first key
    axis. select(rows) -> rows picks (and may label) the rows drawn. floor_db: lines lying wholly more than
    this below their panel's peak (in dB) are left out, and the figure says so. reference(rows) -> rows:
    an independent answer at the drawn rows (the same columns, y replaced; e.g. the Mie series), drawn
    dotted in black beside each line it has rows for and named reference_label in the legend."""

    name: str  # the PNG is plot-NAME.png
    title: str
    y: tuple[Quantity, ...]
    x: Quantity | None = None
    lines: tuple[Quantity, ...] = ()
    panels: tuple[Quantity, ...] = ()
    select: Callable[[list[dict]], list[dict]] | None = None
    y_label: str = ""  # for several y sharing a unit, e.g. "RCS (dBsm)"; default: the first y's
    floor_db: float | None = None
    log_y: bool = False  # e.g. an error across mesh sizes
    reference: Callable[[list[dict]], list[dict]] | None = None
    reference_label: str = "reference"


@dataclass(frozen=True)
class SweepPlots:
    """A study's sweep pictures for one problem: its figures, and how its problem keys and outputs read
    where a sweep varies or names them (column may hold one `*` for a dotted part, which fills the
    label's `{}`: "boundaries.*.value" -> "value on {}")."""

    figures: tuple[SweepPlot, ...] = ()
    quantities: tuple[Quantity, ...] = ()

    def quantity(self, column: str) -> Quantity:
        """The declared quantity of a column, else a label made from its dotted key ("case.elements" ->
        "elements", "regions.air.mu_r" -> "air mu_r")."""
        parts = column.split(".")
        for q in self.quantities:
            pattern = q.column.split(".")
            if len(pattern) == len(parts) and all(p in ("*", c) for p, c in zip(pattern, parts)):
                filled = [c for p, c in zip(pattern, parts) if p == "*"]
                return replace(q, column=column, label=q.label.format(*filled))
        return Quantity(column, shorten(" ".join(parts[1:]) if len(parts) > 1 else column))


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    """text, or its first limit - 1 characters and an ellipsis."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def figures_to_draw(plots: SweepPlots, axes: Sequence, columns: Sequence[str], rows: list[dict],
                    wanted: Sequence[str] = ()) -> list[SweepPlot]:
    """The study's figures whose columns the table has (those naming a `wanted` output or figure name when
    the sweep file lists some), each with its x resolved (a figure against the swept key needs a key axis);
    a wanted output none of them draws, or (where none applies) every output that varies, gets a plot of
    its own against the first key axis."""
    first_key = next((a.name for a in axes if a.kind == "key"), None)
    resolved = [_resolved(f, f.x or plots.quantity(first_key)) for f in plots.figures if f.x or first_key]
    present = [f for f in resolved if f.x.column in columns and any(y.column in columns for y in f.y)]
    if wanted:
        present = [f for f in present if f.name in wanted or any(y.column in wanted for y in f.y)]
        drawn = {y.column for f in present for y in f.y} | {f.name for f in present}
        outputs = [y for y in wanted if y in columns and y not in drawn]
    else:
        done = [r for r in rows if r["status"] == "done"]
        outputs = [] if present else [c for c in columns if c not in (*FIXED, *(a.name for a in axes))
                                      and len({r.get(c) for r in done if _number(r.get(c))}) > 1]
    return present + ([_plain(plots, first_key, y) for y in outputs] if first_key else [])


def _resolved(plot: SweepPlot, x: Quantity) -> SweepPlot:
    """The plot with its x, and "{x}" in its name and title filled (the column, the label)."""
    return replace(plot, x=x, name=plot.name.format(x=x.column), title=plot.title.format(x=x.label))


def _plain(plots: SweepPlots, x: str, y: str) -> SweepPlot:
    yq, xq = plots.quantity(y), plots.quantity(x)
    return SweepPlot(f"{y}-vs-{x}", f"{yq.label} against {xq.label}", (yq,), xq)


@dataclass
class _Line:
    """One drawn line: its panel, its label parts, its y quantity and its (x, y) points."""

    panel: tuple
    key: tuple
    y: Quantity
    points: list


def _series(plot: SweepPlot, rows: list[dict], split: Sequence[Quantity]) -> list[_Line]:
    """The plot's lines: rows grouped by panel and line columns, a line per y quantity of each group."""
    lines: dict[tuple, _Line] = {}
    for row in rows:
        x = row.get(plot.x.column)
        if not _number(x):
            continue
        panel = tuple(row.get(q.column) for q in plot.panels)
        key = tuple(row.get(q.column) for q in split)
        for y in plot.y:
            if _number(row.get(y.column)):
                line = lines.setdefault((panel, key, y.column), _Line(panel, key, y, []))
                line.points.append((x * plot.x.scale, row[y.column] * y.scale))
    for line in lines.values():
        line.points.sort()
    return list(lines.values())


def _varying(quantities: Sequence[Quantity], values: list[tuple]) -> list[int]:
    """Indices of the quantities whose value differs between the tuples."""
    return [i for i in range(len(quantities)) if len({v[i] for v in values}) > 1]


def _peaks(lines: list[_Line]) -> dict[tuple, float]:
    """The largest y of each panel's lines."""
    peaks: dict[tuple, float] = {}
    for line in lines:
        peaks[line.panel] = max(peaks.get(line.panel, -math.inf), max(y for _, y in line.points))
    return peaks


def _above(lines: list[_Line], peaks: dict[tuple, float], floor_db: float) -> list[bool]:
    """Whether each line reaches within floor_db of its panel's peak."""
    return [max(y for _, y in line.points) >= peaks[line.panel] - floor_db for line in lines]


def _below_floor(plot: SweepPlot, lines: list[_Line]) -> tuple[list[_Line], list[_Line]]:
    """(kept, left out): a line is left out when all of it lies more than floor_db below its panel's peak."""
    if plot.floor_db is None:
        return lines, []
    above = _above(lines, _peaks(lines), plot.floor_db)
    return ([line for line, a in zip(lines, above) if a], [line for line, a in zip(lines, above) if not a])


def _reference(plot: SweepPlot, rows: list[dict], split: Sequence[Quantity], lines: list[_Line]) -> list[_Line]:
    """The reference's lines beside the drawn lines, those above the floor (an exact zero is not a curve)."""
    if plot.reference is None:
        return []
    drawn = {(line.panel, line.key, line.y.column) for line in lines}
    reference = [line for line in _series(plot, plot.reference(rows), split)
                 if (line.panel, line.key, line.y.column) in drawn]
    if plot.floor_db is None:
        return reference
    return [line for line, a in zip(reference, _above(reference, _peaks(lines), plot.floor_db)) if a]


def _thinned(lines: list[_Line]) -> tuple[list[_Line], str]:
    """At most MAX_LINES lines per panel: where more, the line keys evenly spaced in order, each with all
    its y; and the note saying so ("" where nothing was left out)."""
    kept, notes = [], set()
    for panel in dict.fromkeys(line.panel for line in lines):
        mine = [line for line in lines if line.panel == panel]
        keys = list(dict.fromkeys(line.key for line in mine))
        room = max(1, MAX_LINES // len({line.y.column for line in mine}))
        if len(keys) > room:
            keys = [keys[round(i * (len(keys) - 1) / (room - 1))] for i in range(room)] if room > 1 else keys[:1]
            notes.add(f"{len(keys)} of {len(dict.fromkeys(line.key for line in mine))} curves drawn, evenly spaced")
        kept += [line for line in mine if line.key in keys]
    return kept, "; ".join(sorted(notes))


@dataclass
class _Picture:
    """What one figure draws: its lines (after the floor and thinning), the panel values, the line keys and
    y columns in order of first appearance, which panel and split columns vary, and the notes for its title."""

    lines: list[_Line]
    split: list[Quantity]
    panels: list[tuple]
    keys: list[tuple]
    ys: list[str]
    panel_vary: list[int]
    key_vary: list[int]
    notes: list[str]
    reference: list[_Line]


def _picture(plot: SweepPlot, axes: Sequence, rows: list[dict], plots: SweepPlots) -> _Picture | None:
    """The lines of a plot over the done rows, or None where it has none (nothing finished, or rows that
    are not this figure's, e.g. an RCS against an angle that stays put)."""
    done = [r for r in rows if r.get("status") == "done"]
    declared = {q.column for q in (*plot.lines, *plot.panels)}
    split = [*plot.lines, *(plots.quantity(a.name) for a in axes
                            if a.kind != "blocks" and a.name not in (plot.x.column, *declared))]
    chosen = plot.select(done) if plot.select else done
    lines, low = _below_floor(plot, _series(plot, chosen, split))
    if not lines:
        return None
    lines, thinned = _thinned(lines)
    reference = _reference(plot, chosen, split, lines)
    panels = list(dict.fromkeys(line.panel for line in lines))
    keys = list(dict.fromkeys(line.key for line in lines))
    panel_vary, key_vary = _varying(plot.panels, panels), _varying(split, keys)
    context = _constant_notes(plot.panels, panels, panel_vary) + _constant_notes(split, keys, key_vary)
    notes = [", ".join(context)] if context else []
    notes += _left_out_notes(plot, low, thinned, lines, panel_vary)
    return _Picture(lines, split, panels, keys, list(dict.fromkeys(line.y.column for line in lines)), panel_vary,
                    key_vary, notes, reference)


def draw(plot: SweepPlot, axes: Sequence, rows: list[dict], plots: SweepPlots):
    """The figure of one SweepPlot over the table rows (done rows only), or None where it has no line: a
    panel per panel value side by side sharing the y axis, a colour per line key and a line style per y,
    values the same for every line said once under the title, the legend outside the data on the right,
    constrained layout so that nothing is cut."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    picture = _picture(plot, axes, rows, plots)
    if picture is None:
        return None
    last = picture.panel_vary[-1] if picture.panel_vary else None  # e.g. the cut: a column per value
    columns = min(len({panel[last] for panel in picture.panels}) if last is not None else 1, 3)
    rows_of_panels = math.ceil(len(picture.panels) / columns)
    width = 3.9 * columns + 2.4
    figure = Figure(figsize=(width, 3.2 * rows_of_panels + 1.2), dpi=100, layout="constrained")
    grid = figure.subplots(rows_of_panels, columns, sharey=True, squeeze=False)
    for index, (ax, panel) in enumerate(zip(grid.flat, picture.panels)):
        for line in (line for line in picture.lines if line.panel == panel):
            ax.plot(*zip(*line.points), linestyle=_style(picture, line) if _joined(line) else "none",
                    color=_colour(picture, line), marker=_marker(line), markersize=3.5)
        for line in (line for line in picture.reference if line.panel == panel):
            ax.plot(*zip(*line.points), **REFERENCE_STYLE, marker="+" if len(line.points) < 25 else None)
        if picture.panel_vary:
            ax.set_title(shorten(", ".join(plot.panels[i].text(panel[i]) for i in picture.panel_vary), 60),
                         fontsize="medium")
        _style_axis(ax, plot, index + columns >= len(picture.panels), index % columns == 0)  # no panel below
    if plot.floor_db is not None:  # deep nulls (an exact zero is -400 dB) would squash the rest
        values = [y for line in (*picture.lines, *picture.reference) for _, y in line.points]
        grid[0, 0].set_ylim(bottom=max(min(values), max(values) - plot.floor_db) - 2, top=max(values) + 3)
    for ax in list(grid.flat)[len(picture.panels):]:
        ax.set_visible(False)
    _legend(figure, plot, picture)
    wrap = int((width - 2.4) * 13)  # characters of the title's font left of the legend
    figure.suptitle("\n".join([plot.title, *(text for note in picture.notes for text in textwrap.wrap(note, wrap))]),
                    x=0.02, ha="left", fontsize="medium")
    return figure


def _colour(picture: _Picture, line: _Line):
    """A colour per line key (per y where there is one key), the same in every panel."""
    from matplotlib import colormaps  # noqa: PLC0415

    order, item = (picture.keys, line.key) if len(picture.keys) > 1 else (picture.ys, line.y.column)
    if len(order) <= 10:
        return colormaps["tab10"](order.index(item))
    return colormaps["viridis"](0.9 * order.index(item) / (len(order) - 1))


def _style(picture: _Picture, line: _Line) -> str:
    """A line style per y where colours tell the line keys apart, else solid."""
    return STYLES[picture.ys.index(line.y.column) % len(STYLES)] if len(picture.keys) > 1 else "-"


def _joined(line: _Line) -> bool:
    """Whether the line's points have distinct x, so that joining them never doubles back."""
    return len({x for x, _ in line.points}) == len(line.points)


def _marker(line: _Line) -> str | None:
    """Dots on a line of few points, or on points not joined."""
    return "o" if len(line.points) < 25 or not _joined(line) else None


def _key_text(picture: _Picture, key: tuple) -> str:
    """A legend entry: the value alone where one quantity varies (the legend's title names it), else each
    varying quantity's "label value"."""
    if len(picture.key_vary) == 1:
        return shorten(picture.split[picture.key_vary[0]].value_text(key[picture.key_vary[0]]), 40)
    return shorten(", ".join(picture.split[i].text(key[i]) for i in picture.key_vary), 40)


def _legend(figure, plot: SweepPlot, picture: _Picture) -> None:
    """Outside the data, right of the panels: an entry per line key (its colour) and per y (its style)
    where both vary, else per whichever varies; none for a single line."""
    from matplotlib.lines import Line2D  # noqa: PLC0415

    quantities = {q.column: q for q in plot.y}
    entries = []
    if len(picture.keys) > 1:
        first = {line.key: line for line in reversed(picture.lines)}
        entries += [(_key_text(picture, key), Line2D([], [], color=_colour(picture, first[key]),
                                                     marker=_marker(first[key]), markersize=3.5))
                    for key in picture.keys]
    if len(picture.ys) > 1 or (picture.reference and len(picture.keys) == 1):  # what the reference is beside
        first = {line.y.column: line for line in reversed(picture.lines)}
        entries += [(quantities[y].label, Line2D([], [], color="0.25" if len(picture.keys) > 1 else
                                                 _colour(picture, first[y]), linestyle=_style(picture, first[y])))
                    for y in picture.ys]
    if picture.reference:
        entries.append((plot.reference_label, Line2D([], [], **REFERENCE_STYLE)))
    if len(entries) < 2:
        return
    title = ", ".join(picture.split[i].label for i in picture.key_vary) if len(picture.keys) > 1 else None
    figure.legend([handle for _, handle in entries], [text for text, _ in entries], loc="outside right center",
                  fontsize="small", title=shorten(title, 40) if title else None, title_fontsize="small",
                  ncols=1 if len(entries) <= 16 else 2)


def _constant_notes(quantities: Sequence[Quantity], values: list[tuple], vary: list[int]) -> list[str]:
    """Each quantity that has one value over the whole figure, as it reads beside others ("radius 0.2 m",
    "300 MHz", "θ-polarised")."""
    if not values:
        return []
    shown = [(q, values[0][i]) for i, q in enumerate(quantities) if i not in vary and values[0][i] is not None]
    return [q.text(v) for q, v in shown]


def _left_out_notes(plot: SweepPlot, low: list[_Line], thinned: str, lines: list[_Line],
                    panel_vary: list[int]) -> list[str]:
    """What the figure leaves out: components below the floor (and where), lines thinned, points not joined."""
    notes = []
    if low:
        where = dict.fromkeys(line.y.label + (" in " + ", ".join(plot.panels[i].text(line.panel[i])
                                                                  for i in panel_vary) if panel_vary else "")
                              for line in low)
        notes.append(f"not drawn, more than {plot.floor_db:g} dB below the peak: {'; '.join(where)}")
    if thinned:
        notes.append(thinned)
    if not all(_joined(line) for line in lines):
        notes.append("points sharing an x are not joined")
    return notes


def _style_axis(ax, plot: SweepPlot, bottom: bool, left: bool) -> None:
    """Units on the axes, a handful of ticks (degrees in steps of 15, 30, 45, 90), a light grid."""
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    degrees = plot.x.unit == "°"
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 1.5, 3, 4.5, 9, 10] if degrees else [1, 2, 2.5, 5, 10]))
    if plot.log_y:
        ax.set_yscale("log")
    else:
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6))
    ax.grid(True, alpha=0.3)
    if bottom:
        ax.set_xlabel(plot.x.axis_label())
    if left:
        ax.set_ylabel(plot.y_label or plot.y[0].axis_label())


def sweep_figures(plots: SweepPlots, axes: Sequence, columns: Sequence[str], rows: list[dict],
                  wanted: Sequence[str] = (), zipped: bool = False) -> list[tuple[str, object]]:
    """(name, Figure) for each figure the sweep draws (figures_to_draw); axes: the sweep's Axis tuple
    (spec.py), rows: its table rows (table.table_rows). The other axes split lines, except where they are
    zipped (paired with x, so a line each would be a point each) and blocks axes (the parts of one list,
    told apart by the study's own columns)."""
    split_axes = () if zipped else axes
    drawn = [(p.name, draw(p, split_axes, rows, plots)) for p in figures_to_draw(plots, axes, columns, rows, wanted)]
    return [(name, figure) for name, figure in drawn if figure is not None]


def write_plots(out_dir: Path, figures: Sequence[tuple[str, object]]) -> list[Path]:
    """out_dir/plot-NAME.png for each (name, Figure), each written to a temporary name and renamed."""
    written = []
    for name, figure in figures:
        path = Path(out_dir) / f"plot-{name}.png".replace("/", "_")
        written.append(replace_atomically(path, lambda p, f=figure: f.savefig(p, format="png")))
    return written
