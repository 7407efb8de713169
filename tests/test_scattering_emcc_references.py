"""The EMCC ogive, double ogive and cone-sphere examples at their defaults against bempp-cl's EFIE (an independent
boundary-element solver), both polarisations: references solved on the very surface each example meshes and on
it with every triangle split into four (tests/references/build_bempp_references.py, bempp-<target>.json, taken
from the solves of docs/benchmarks/scattering-peers.json); the test also checks that each reference moved little
between its two levels (at most 0.07 dB in the region when built).

The examples run as they are (order 3 on order 2's surface of 6 elements per wavelength, their gaps, shells and
GMRES tolerance): all 37 directions of the bench are within the issue's 1 dB of the refined reference where it
is within 30 dB of its peak (largest: ogive HH 0.34 dB, double ogive HH 0.18 dB, cone-sphere HH 0.58 dB, beside
nulls; at order 2 they were 1.02, 1.36 and 1.73 dB off). For time on a 2-core CI host the test takes DIRECTIONS of
the 37 (the bench page carries all): nose-on, a lobe, broadside and where order 2 was farthest off."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

REFERENCES = Path(__file__).parent / "references"
TOLERANCE_DB = 1.0  # |ParaFlux - bempp-cl| in the region (the target)
REGION_DB = 30.0  # the region: where the finest reference is within this of its peak
CONVERGED_DB = 0.3  # the reference's own change between its two finest levels in the region, at most
DIRECTIONS = {  # phi (deg), theta = 90: nose-on, a lobe, broadside and where order 2 was farthest off in HH
    "ogive": (0.0, 45.0, 90.0, 115.0),
    "double-ogive": (0.0, 45.0, 60.0, 90.0),
    "cone-sphere": (0.0, 45.0, 90.0, 165.0),
}


def reference(name: str) -> dict:
    return json.loads((REFERENCES / f"bempp-{name}.json").read_text())


def region(levels: list[dict], polarization: str) -> np.ndarray:
    """Per reference phi: whether the finest level is within REGION_DB of its peak."""
    finest = np.array(levels[-1]["rcs_dbsm"][polarization])
    return finest >= finest.max() - REGION_DB


@pytest.mark.parametrize("name", DIRECTIONS)
def test_the_reference_is_on_the_examples_own_surface_and_converged_where_refined(name):
    """The reference was solved on the surface the example builds today (else it is stale: rebuild it), to a
    small residual; where it holds a refined level, that level moved at most CONVERGED_DB in the region."""
    from paraflux.engine.bench.scattering_peers import PeersBenchConfig, shared_surface  # noqa: PLC0415
    from paraflux.engine.problems import case_problem_path  # noqa: PLC0415
    from paraflux.engine.problems.toml_input import read_toml  # noqa: PLC0415

    ref = reference(name)
    example = read_toml(case_problem_path(name))
    assert ref["frequency_hz"] == float(example["problem"]["frequency"])
    body = shared_surface(name, example, PeersBenchConfig())
    levels = ref["levels"]
    assert levels[0]["splits"] == 0 and levels[0]["triangles"] == len(body.triangles), "stale: rebuild the reference"
    assert all(level["triangles"] == 4 ** level["splits"] * levels[0]["triangles"] for level in levels)
    for p in ("theta", "phi") if len(levels) > 1 else ():
        inside = region(levels, p)
        moved = np.abs(np.subtract(levels[-1]["rcs_dbsm"][p], levels[-2]["rcs_dbsm"][p]))[inside]
        assert moved.max() <= CONVERGED_DB, (p, moved.max())
    assert max(level["residual"] for level in levels) < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("name", DIRECTIONS)
def test_the_example_at_its_defaults_is_within_1_db_of_bempp_on_both_polarisations(name):
    from paraflux.engine.bench.scattering_peers import PeersBenchConfig, ours, shared_surface  # noqa: PLC0415
    from paraflux.engine.problems import case_problem_path  # noqa: PLC0415
    from paraflux.engine.problems.toml_input import read_toml  # noqa: PLC0415

    ref, phi = reference(name), DIRECTIONS[name]
    example = read_toml(case_problem_path(name))
    config = PeersBenchConfig(phi_deg=phi)
    result = ours(example, config, shared_surface(name, example, config))
    assert result["settings"]["case"] == name and result["converged"]  # the example itself, not a file
    at = [ref["phi_deg"].index(p) for p in phi]
    for p in ("theta", "phi"):
        inside = region(ref["levels"], p)[at]
        assert inside.any()
        difference = np.subtract(result["rcs_dbsm"][p], np.array(ref["levels"][-1]["rcs_dbsm"][p])[at])
        assert np.abs(difference[inside]).max() <= TOLERANCE_DB, (p, dict(zip(phi, difference.round(2))))
