"""The sweep's combined table (sweep.csv, and sweep.parquet where pyarrow is importable), each file written
to a temporary name and renamed."""

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
