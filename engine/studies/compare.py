"""Run one problem under several variants in sequence and tabulate them: time per phase, iterations,
and the difference of each solution from the first one."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..run_control import RunControl


@dataclass(frozen=True)
class ComparisonRow:
    """One variant's run: label 'axis=choice, ...' (an "auto" choice followed by what it ran, in brackets),
    seconds per phase, iterations, and
    ||x - x_first|| / ||x_first|| of its solution vector (NaN where the two have different shapes)."""

    label: str
    variants: dict[str, str]
    timings: dict[str, float]
    iterations: int | None  # None: the study iterates nothing
    relative_difference: float


def compare_variants(study, problem, variant_sets: Sequence[Mapping[str, str]],
                     control: RunControl | None = None) -> tuple[list[ComparisonRow], list]:
    """Run the study once per variant set; returns the table rows and the results, in order."""
    control = control or RunControl()
    rows, results, first = [], [], None
    for i, variants in enumerate(variant_sets):
        label = ", ".join(f"{k}={v}" for k, v in variants.items()) or "as in the problem"
        scaled = RunControl(lambda f, m, i=i, label=label: control.progress(
            (i + f) / len(variant_sets), f"{label}: {m}"), control.cancel)
        result = study.run(study.with_variants(problem, variants), scaled)
        first = result.solution if first is None else first
        norm = float(np.linalg.norm(first)) or 1.0
        label = ", ".join(f"{k}={v}" + (f" ({ran})" if v == "auto" and (ran := what_ran(result, k)) else "")
                          for k, v in variants.items()) or label
        same_shape = np.shape(result.solution) == np.shape(first)  # e.g. another mesh: not comparable
        difference = float(np.linalg.norm(result.solution - first)) / norm if same_shape else float("nan")
        rows.append(ComparisonRow(label, dict(variants), dict(result.timings), result.iterations, difference))
        results.append(result)
    return rows, results


def what_ran(result, axis: str) -> str | None:
    """The choice an "auto" variant of the axis resolved to, where the result records it: its own field of
    that name (backend, reduction) or its problem's solver setting (the BEM's m2l)."""
    ran = getattr(result, axis, None)
    if ran is None:
        ran = getattr(getattr(getattr(result, "problem", None), "solver", None), axis, None)
    return ran if isinstance(ran, str) and ran != "auto" else None


def comparison_csv(rows: Sequence[ComparisonRow]) -> str:
    """The table as CSV text: variant, one column per phase (s), iterations, relative difference."""
    phases = list(dict.fromkeys(p for row in rows for p in row.timings))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["variant", *[f"{p}_s" for p in phases], "iterations", "relative_difference"])
    for row in rows:
        writer.writerow([row.label, *[f"{row.timings.get(p, float('nan')):.6g}" for p in phases],
                         "" if row.iterations is None else row.iterations, f"{row.relative_difference:.3e}"])
    return out.getvalue()
