"""The spheres' growth with size (engine/bench/sphere_scaling.py): the power law recovers known exponents,
the rows drawn are the GPU's at one order (the latest of each diameter), and the model's lines and the
figure come from the rows given."""

from __future__ import annotations

import re

import numpy as np
import pytest

from paraflux.engine.bench.sphere_scaling import model_lines, power_law, scaling_rows, write_scaling_png


def _row(d: float, date: str = "2026-11-28 03:00 UTC", loop: str = "cuda-tiled", order: int = 2) -> dict:
    dofs = 12_000 * d ** 2
    return {"diameter_wavelengths": d, "order": order, "loop": loop, "acceleration": "gmres", "date": date,
            "dofs": dofs, "device": "GPU", "total_s": 1e-5 * dofs ** 1.5, "host_peak_bytes": 1e3 * dofs,
            "seconds": {"mesh": 1e-5 * dofs, "iterations": 1e-9 * dofs ** 2}, "sprime_points": 0.1 * dofs,
            "factor": {"peak_device_bytes": 5000 * dofs}}


def test_the_power_law_recovers_its_exponent():
    x = np.array([1.0, 2.0, 5.0, 11.0])
    law = power_law(x, 3.0 * x ** 1.7)
    assert (law.coefficient, law.exponent) == (pytest.approx(3.0), pytest.approx(1.7))
    assert power_law([1.0], [2.0]) is None


def test_the_rows_drawn_are_the_gpu_s_latest_at_one_order():
    rows = [_row(8, "2026-11-27"), _row(8, "2026-11-28"), _row(4, loop="cpu-s"), _row(4, order=3), _row(16)]
    picked = scaling_rows(rows)
    assert [(r["diameter_wavelengths"], r["date"]) for r in picked] == [(8, "2026-11-28"), (16, rows[-1]["date"])]


def test_the_model_extrapolates_the_fitted_growth():
    lines = model_lines([_row(d) for d in (4, 8, 16)])
    assert "Model, not a measurement" in lines[0] and "diameter^2.00" in lines[0]
    assert "iterations as unknowns^2.00" in lines[0] and "mesh as unknowns^1.00" in lines[0]
    dofs = 12_000 * 50 ** 2
    assert f"{dofs / 1e6:.0f} M unknowns" in lines[1]
    assert f"iterations {1e-9 * dofs ** 2:,.0f} s" in lines[1]
    assert f"factor {5000 * dofs / 1e9:,.0f} GB" in lines[1]
    assert len(model_lines([_row(8)])) == 1  # one row: nothing fitted


def test_the_figure_is_written(tmp_path):
    assert write_scaling_png(tmp_path / "s.png", [_row(8)]) is None
    path = write_scaling_png(tmp_path / "s.png", [_row(d) for d in (4, 8)])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_with_merge_joins_an_earlier_run(tmp_path):
    """`bench NAME --render NEW.json --merge EARLIER.json`: the bench's own join, then its page."""
    import json
    from pathlib import Path

    from paraflux.engine.cli import main

    committed = Path(__file__).parents[1] / "docs" / "benchmarks" / "scattering.json"
    earlier = json.loads(committed.read_text())
    assert main(["bench", "scattering", "--render", str(committed), "--merge", str(committed),
                 "--out", str(tmp_path)]) == 0
    joined = json.loads((tmp_path / "scattering.json").read_text())
    assert len(joined["earlier_runs"]) == len(earlier.get("earlier_runs", [])) + 1
    assert f"{len(joined['earlier_runs'])} earlier runs" in (tmp_path / "scattering.md").read_text()


def test_several_gpus_are_judged_against_the_one_gpu_row_of_their_own_run():
    from paraflux.engine.bench.scattering_report import _several_gpus_target  # noqa: PLC0415

    def sphere(loop, device, commit, total, operator):
        return {"diameter_wavelengths": 16.0, "order": 2, "acceleration": "gmres", "loop": loop, "device": device,
                "commit": commit, "total_s": total, "iteration_phases_s": {"operator": operator},
                "seconds": {"assembly": 20.0, "factorisation": 11.0}}

    many = sphere("multi-gpu-tiled", "2 x GPU", "new", 60.0, 10.0)
    line = _several_gpus_target([many, sphere("cuda-tiled", "GPU", "old", 50.0, 40.0),
                                 sphere("cuda-tiled", "GPU", "new", 70.0, 20.0)])
    assert "met" in line and "60.0 s against 70.0 s" in line and "2.00x" in line and "MISSED" not in line
    alone = _several_gpus_target([many, sphere("cuda-tiled", "GPU", "old", 50.0, 40.0)])
    assert "not measured" in alone.lower() and "against" not in alone


def test_the_several_gpu_model_divides_the_operator_by_the_measured_efficiency():
    from paraflux.engine.bench.sphere_scaling import MODEL_GPUS, several_gpu_lines  # noqa: PLC0415

    rows = [_row(d) for d in (8, 16, 20)]
    for r in rows:
        r["iteration_phases_s"] = {"operator": 0.5 * r["seconds"]["iterations"]}
        r["commit"] = "c"
    one = {**rows[1], "loop": "cuda-tiled"}
    many = {**one, "loop": "multi-gpu-tiled", "device": "2 x GPU",
            "iteration_phases_s": {"operator": one["iteration_phases_s"]["operator"] / 1.6}}  # 0.8 per GPU
    assert "not both measured" in several_gpu_lines(rows, rows)[0]
    lines = several_gpu_lines(rows, [*rows, many])
    assert f"divided by {MODEL_GPUS} x 0.80" in lines[0] and "2 x GPU" in lines[0]
    dofs = 12_000 * 50 ** 2
    iterations = 1e-9 * dofs ** 2
    modelled = float(re.search(r"iterations ([\d,]+) s", lines[1]).group(1).replace(",", ""))
    assert modelled == pytest.approx(0.5 * iterations / (MODEL_GPUS * 0.8) + 0.5 * iterations, abs=1.0)
    assert f"factor {5000:,.0f} B" in lines[1] and f"J and M on S' ({6 * 16 * 0.1 * dofs / 1e6:,.0f} MB)" in lines[1]


def test_the_several_gpu_model_says_n_a_for_what_its_rows_lack():
    from paraflux.engine.bench.sphere_scaling import several_gpu_lines  # noqa: PLC0415

    rows = [_row(d) for d in (8, 16, 20)]
    for r in rows:
        r["iteration_phases_s"] = {"operator": 0.5 * r["seconds"]["iterations"]}
        r["commit"] = "c"
        del r["host_peak_bytes"], r["factor"]
    many = {**rows[1], "loop": "multi-gpu-tiled", "device": "2 x GPU",
            "iteration_phases_s": {"operator": rows[1]["iteration_phases_s"]["operator"] / 2}}
    lines = several_gpu_lines(rows, [*rows, many])
    assert "factor not recorded in the rows, host not recorded in the rows" in lines[1]
    assert "the factor per GPU not modelled" in lines[1] and "nan" not in lines[1]
    no_commit = [{**r, "commit": None} for r in (*rows, many)]
    assert "not both measured" in several_gpu_lines(rows, no_commit)[0]  # unrecorded commits are not a pair
