"""The benchmark's CPU helpers and its report: the committed Markdown is exactly the rendering of the
committed JSON (no number is typed by hand)."""

import json
from pathlib import Path


from paraflux.engine.bench.ebe import _cpu_run, _scipy_cg, gpu_reductions
from paraflux.engine.bench.ebe_report import render_markdown
from paraflux.engine.magnetostatics.ebe_serial import solve_ebe_jpcg_serial
from paraflux.engine.magnetostatics.run import case_system

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"


def test_committed_report_is_the_rendering_of_the_committed_json():
    data = json.loads((DOCS / "ebe.json").read_text())
    assert (DOCS / "ebe.md").read_text() == render_markdown(data)
    assert set(data["sizes"][0]["gpu"]) == set(gpu_reductions())


def test_committed_coloring_report_is_the_rendering_of_the_committed_json():
    from paraflux.engine.bench.coloring_report import METHODS, render_markdown as render_coloring

    data = json.loads((DOCS / "coloring.json").read_text())
    assert (DOCS / "coloring.md").read_text() == render_coloring(data)
    assert set(data["meshes"][0]["methods"]) == set(METHODS)


def test_committed_hex_report_is_the_rendering_of_the_committed_json():
    from paraflux.engine.bench.hex_report import render_markdown as render_hex

    data = json.loads((DOCS / "hex.json").read_text())
    assert (DOCS / "hex.md").read_text() == render_hex(data)
    assert [r["order"] for r in data["orders"]] == list(range(1, 11))
    assert data["config"]["elements"] == 10_000



def test_committed_fmm_report_is_the_rendering_of_the_committed_json():
    from paraflux.engine.bench.fmm_report import render_markdown as render_fmm

    data = json.loads((DOCS / "fmm.json").read_text())
    assert (DOCS / "fmm.md").read_text() == render_fmm(data)
    assert data["benchmark"] == "fmm"
    assert {c["n"] for c in data["cases"]} >= {1_000_000, 10_000_000}
    for line in render_fmm(data).split("## Targets")[1].splitlines():  # every missed target says why
        if "MISSED" in line or "NOT reproduced" in line:
            assert "- Reason:" in render_fmm(data).split(line, 1)[1].split("\n- ", 1)[0]

def test_cpu_baselines_full_and_capped():
    system = case_system("transformer", 3000)[2]
    full = _cpu_run(lambda m: solve_ebe_jpcg_serial(system, 1e-8, m), True, 10)
    assert not full["capped"] and full["iterations"] > 50
    capped = _cpu_run(lambda m: solve_ebe_jpcg_serial(system, 1e-8, m), False, 20)
    assert capped["capped"] and capped["iterations"] == 20 and capped["seconds_per_iteration"] > 0
    scipy_full = _cpu_run(lambda m: _scipy_cg(system, 1e-8, m), True, 10)
    assert abs(scipy_full["iterations"] - full["iterations"]) <= 3  # the same Jacobi-PCG in exact arithmetic


def test_committed_truncation_report_is_the_rendering_of_the_committed_json():
    from paraflux.engine.bench.truncation_report import render_markdown as render_truncation

    data = json.loads((DOCS / "truncation.json").read_text())
    assert (DOCS / "truncation.md").read_text() == render_truncation(data)
    assert data["benchmark"] == "truncation"
    assert [c["n_outer"] for c in data["cases"]][-1] > 0.98 * 32576
    assert {r["devices"] for c in data["cases"] for r in c["multi_gpu"]} >= {1, 2}
    assert all(r["check"] < 1e-12 for c in data["cases"] for r in c["gpu"] + c["multi_gpu"])
