"""bench scattering-peers with several targets: an earlier almond-only record joined by --merge, the summary row
per target, and the comparison region (where the finest reference is within 30 dB of its peak)."""

from __future__ import annotations

from copy import deepcopy

import pytest

from .test_bench_report import _peers_record


def _ogive(theta_ours: list[float]) -> dict:
    """An ogive target of a newer record: two phi, the reference split once; VV's second phi 40 dB under the
    first, outside the region."""
    t = deepcopy({k: v for k, v in _peers_record().items() if k in ("config", "ours", "bempp", "example")})
    t["config"] = {**t["config"], "region_db": 30.0}
    t["ours"]["settings"]["case"] = "ogive"
    t["ours"]["rcs_dbsm"]["theta"] = theta_ours
    t["bempp"]["rcs_dbsm"]["theta"] = [-20.0, -60.0]
    split = {**deepcopy(t["bempp"]), "splits": 1, "triangles": 6808, "dofs": 10212}
    split["rcs_dbsm"]["theta"] = [-20.1, -61.0]
    return {**t, "target": "ogive", "example": "resources/problems/ogive.toml", "frequency_hz": 1.18e9,
            "triangles": 1702, "body": {"length_in": 10.0, "radius_in": 1.0}, "references": [split], "settings": [],
            "reference_skipped": {"splits": 2, "triangles": 27232}}


def _newer(theta_ours: list[float]) -> dict:
    old = _peers_record()
    return {**{k: old[k] for k in ("benchmark", "versions", "host_cpu", "host_threads", "load_before")},
            "date": "d2", "command": "c2", "commit": "y", "config": {}, "targets": [_ogive(theta_ours)]}


def test_merge_keeps_the_earlier_almond_with_its_run_and_orders_the_targets():
    from paraflux.engine.bench.scattering_peers import merge

    merged = merge(_newer([-20.5, -45.0]), _peers_record())
    assert [t["target"] for t in merged["targets"]] == ["nasa-almond", "ogive"]
    almond = merged["targets"][0]
    assert almond["run"] == {"date": "d", "command": "c", "commit": "x"} and "ours" in almond
    assert "run" not in merged["targets"][1] and merged["commit"] == "y"
    cut = merge(_newer([-20.5, -45.0]), {**_peers_record(), "cut_short": True})["targets"][0]["run"]
    assert cut["cut_short"] is True
    with pytest.raises(ValueError):
        merge(_newer([-20.5, -45.0]), {"benchmark": "scattering"})


def test_the_page_judges_each_target_in_its_region_and_sums_up_a_row_per_target():
    from paraflux.engine.bench.scattering_peers import merge
    from paraflux.engine.bench.scattering_peers_report import render_markdown

    text = render_markdown(merge(_newer([-20.5, -45.0]), _peers_record()))  # VV 16 dB off outside the region
    assert "## Summary" in text and "### VV" in text and "## The EMCC ogive" in text
    assert "| the EMCC ogive | 1.18 | 1,702 | 26,022 | 19.0 | 10,212 | 0.10 | 0.00 | 0.40 at 0 | 0.90 at 70 | yes |" \
        in text  # the reference moved 1 dB at phi = 70 in VV (outside: not counted), 0.1 at 0
    ogive = text.split("## The EMCC ogive")[1]
    assert "| 70 | -45.00 | -60.00 | -61.00 | +16.00 (outside) |" in ogive
    assert "- Measured by an earlier run: d, `c`, commit x.\n" in text.split("## The EMCC ogive")[0]
    cut = render_markdown(merge(_newer([-20.5, -45.0]), {**_peers_record(), "cut_short": True}))
    assert "commit x. That run was cut short: it holds only the solves it finished." in cut
    assert "split 2 times (27,232 triangles) its dense matrix and LU factors would not fit" in ogive
    assert "The EMCC ogive example at its defaults within 1 dB" in ogive and "deg): met." in ogive
    missed = render_markdown(merge(_newer([-21.5, -61.0]), _peers_record()))  # 1.4 dB off inside the region
    assert "(largest difference 1.40 dB, VV at phi = 0 deg): MISSED." in missed.split("## The EMCC ogive")[1]
    assert "| 1.40 at 0 | 0.90 at 70 | NO |" in missed
