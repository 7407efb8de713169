"""The soak's record and page (engine/soak_report.py): verdicts from the samples as the targets state them, a run
stopped short says "not measured", and the page lists each record's curve and verdicts."""

from dataclasses import asdict

import pytest

from paraflux.engine.soak import (ROUND, SOAK_JOBS, WORKER_POINTS, Sample, floor_slope_mib_per_job,
                                  slope_mib_per_job)
from paraflux.engine.soak_report import (cycle_verdicts, run_header, save_cycle, save_worker, worker_verdicts,
                                         write_page)


def cycle_record(rss, device=None) -> dict:
    samples = [Sample(i + 1, ROUND[i % len(ROUND)].label, float(v), None if device is None else float(device[i]),
                      None if device is None else 1.0) for i, v in enumerate(rss)]
    return {"round": [s.label for s in ROUND], "device": "cpu" if device is None else "gpu",
            "samples": [asdict(s) for s in samples]}


def test_the_slope_is_the_least_squares_growth_after_the_warm_up():
    assert slope_mib_per_job([500.0, 900.0, 100.0, 102.0, 104.0, 106.0], warmup=2) == pytest.approx(2.0)
    assert slope_mib_per_job([1.0, 2.0], warmup=2) == 0.0


def test_the_floor_slope_follows_what_each_round_keeps_not_its_peaks():
    peaks = [900.0, 500.0, 530.0, 500.0, 560.0, 500.0, 520.0, 500.0, 580.0]  # rounds of 3, floor flat
    assert floor_slope_mib_per_job(peaks, per_round=3, warmup_rounds=1) == pytest.approx(0.0)
    leak = [100.0 + 4.0 * job + (30.0 if job % 3 == 1 else 0.0) for job in range(12)]  # 4 MiB per job kept
    assert floor_slope_mib_per_job(leak, per_round=3, warmup_rounds=1) == pytest.approx(4.0)


def test_cycle_verdicts_follow_the_targets():
    first = len(ROUND)
    flat = [600.0] * first + [600.0 + (i % 3) for i in range(SOAK_JOBS - first)]
    (verdict,) = cycle_verdicts(cycle_record(flat))
    assert verdict.status == "met" and "largest +2.0 MiB" in verdict.measured
    growing = [600.0] * first + [600.0 + 0.3 * i for i in range(SOAK_JOBS - first)]  # ~148 MiB by the end
    assert cycle_verdicts(cycle_record(growing))[0].status == "MISSED"
    assert cycle_verdicts(cycle_record(flat[:100]))[0].status == "not measured"  # 100 of 500 jobs
    device = [900.0] * first + [900.0 + (70.0 if i == 200 else 0.0) for i in range(SOAK_JOBS - first)]
    window, gpu = cycle_verdicts(cycle_record(flat, device))
    assert window.status == "met" and gpu.status == "MISSED" and "70.0 MiB" in gpu.measured


def test_worker_verdicts_measure_from_the_tenth_point():
    curve = [100.0 + 5 * i for i in range(10)] + [150.0] * (WORKER_POINTS - 10)
    (verdict,) = worker_verdicts({"rss_mib": curve})
    assert verdict.status == "met" and "(145 MiB)" in verdict.target
    assert worker_verdicts({"rss_mib": curve[:50]})[0].status == "not measured"
    assert worker_verdicts({"rss_mib": curve[:10] + [300.0] * 190})[0].status == "MISSED"


def test_the_page_shows_each_record(tmp_path):
    samples = [Sample(i + 1, ROUND[i % len(ROUND)].label, 600.0) for i in range(2 * len(ROUND))]
    save_cycle(tmp_path / "soak", run_header("window", 500), samples, 12.0)
    save_worker(tmp_path / "soak", run_header("worker", 200), [200.0] * 20, 3.0, "cpu")
    text = write_page(tmp_path / "soak", tmp_path / "soak.md").read_text()
    assert "![The window, mixed cycle](soak/window-cpu.png)" in text and (tmp_path / "soak" / "window-cpu.png").exists()
    assert "16 jobs of 500" in text and "20 points of 200" in text and text.count("| not measured |") == 2
