"""The sweep's combined table (sweep.csv, and sweep.parquet where pyarrow is importable) and its PNG plots
of outputs against the axes, each file written to a temporary name and renamed."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Sequence

from ..output import replace_atomically
from .spec import Axis
from .task import PointOutcome


def table_rows(axes: Sequence[Axis], outcomes: Sequence[PointOutcome]) -> tuple[list[str], list[dict]]:
    """Columns and rows of the combined table: point, status, the axes' values, the outputs, message;
    one row per point (or per row a study gives a point, e.g. per angle), in the order given."""
    outputs = list(dict.fromkeys(k for o in outcomes for row in o.rows for k in row))
    columns = ["point", "status", *[a.name for a in axes], *outputs, "message"]
    rows = []
    for o in outcomes:
        for row in o.rows or ({},):
            rows.append({"point": o.key, "status": o.status, **o.values, **row, "message": o.message})
    return columns, rows


def write_table(out_dir: Path, columns: list[str], rows: list[dict]) -> list[Path]:
    """out_dir/sweep.csv (numbers with repr's 17 significant digits), plus sweep.parquet with pyarrow."""
    text = io.StringIO()
    writer = csv.DictWriter(text, columns, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    written = [replace_atomically(Path(out_dir) / "sweep.csv", lambda p: p.write_text(text.getvalue()))]
    try:
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.parquet as pq  # noqa: PLC0415
    except ImportError:
        return written
    table = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows])
    written.append(replace_atomically(Path(out_dir) / "sweep.parquet",
                                       lambda p: pq.write_table(table, p)))
    return written


def plot_pairs(axes: Sequence[Axis], columns: list[str], rows: list[dict], wanted: Sequence[str],
               hints: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """(x, y) column pairs to plot: the study's hints whose columns exist, else each wanted output (or every
    output that varies) against the first numeric axis."""
    present = [(x, y) for x, y in hints if x in columns and y in columns]
    if present:
        return present
    numeric = [a.name for a in axes if a.kind == "key"]
    if not numeric:
        return []
    fixed = {"point", "status", "message", *[a.name for a in axes]}
    done = [r for r in rows if r["status"] == "done"]
    outputs = [c for c in columns if c not in fixed
               and len({r.get(c) for r in done if r.get(c) is not None}) > 1]
    return [(numeric[0], y) for y in (list(wanted) or outputs) if y in columns]


def write_plots(out_dir: Path, axes: Sequence[Axis], rows: list[dict], pairs) -> list[Path]:
    """One PNG per (x, y) pair, out_dir/plot-Y-vs-X.png: a line per value of the other axes."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415

    written = []
    for x, y in pairs:
        others = [a.name for a in axes if a.name != x]
        series: dict[tuple, list] = {}
        for row in rows:
            if row["status"] == "done" and isinstance(row.get(x), (int, float)) and isinstance(row.get(y), (int, float)):
                series.setdefault(tuple(row.get(o) for o in others), []).append((row[x], row[y]))
        figure = Figure(figsize=(6, 4), dpi=100)
        ax = figure.subplots()
        for label, points in series.items():
            points.sort()
            ax.plot(*zip(*points), marker="o", label=", ".join(f"{o}={v}" for o, v in zip(others, label)) or None)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(True, alpha=0.3)
        if others and series:
            ax.legend(fontsize="small")
        path = Path(out_dir) / f"plot-{y}-vs-{x}.png".replace("/", "_")
        written.append(replace_atomically(path, lambda p: figure.savefig(p, format="png")))
    return written
