"""What a person reading a chart would object to, measured from matplotlib's text extents after a draw:
tick labels over each other or past their axis, a legend over the plotting area, a title or label cut by the
figure's edge."""

from __future__ import annotations

from matplotlib.figure import Figure


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def _inside(box, frame) -> bool:
    return box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1 and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1


def _drawn_tick_labels(axis) -> list:
    """The axis's major tick labels that are drawn: visible, not empty, at a tick inside the view limits."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(abs(low), abs(high), 1.0)
    return [label for loc, label in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
            if low - slack <= loc <= high + slack and label.get_visible() and label.get_text()]


def legibility_problems(figure: Figure) -> list[str]:
    """Each problem as a sentence (empty when the figure reads cleanly); the figure is drawn first."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    frame = figure.bbox
    problems = []
    for ax in figure.axes:
        name = ax.get_title() or "untitled axes"
        for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _drawn_tick_labels(axis)]
            for i, (text, box) in enumerate(boxes):
                if not _inside(box, frame):
                    problems.append(f"{name}: {axis_name} tick label {text!r} is cut by the figure's edge")
                for other, other_box in boxes[i + 1:]:
                    if _overlap(box, other_box):
                        problems.append(f"{name}: {axis_name} tick labels {text!r} and {other!r} overlap")
        for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
            if text.get_text() and not _inside(text.get_window_extent(renderer), frame):
                problems.append(f"{name}: {text.get_text()!r} is cut by the figure's edge")
    for legend in figure.legends + [ax.get_legend() for ax in figure.axes if ax.get_legend()]:
        box = legend.get_window_extent(renderer)
        if not _inside(box, frame):
            problems.append("a legend is cut by the figure's edge")
        for ax in figure.axes:
            if _overlap(box, ax.get_window_extent(renderer)):
                problems.append(f"a legend lies over the axes {ax.get_title()!r}")
    return problems
