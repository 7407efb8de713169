"""Finer tetrahedra at a scatterer's sharp edges (engine/scattering/edges.py): which edges are sharp, the
sizes asked beside them, which problems get them, and the almond example's HH nulls against an independent
EFIE, which the rule brings within 1 dB."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from paraflux.engine.problems.scattering import parse_scattering
from paraflux.engine.scattering.cases import volume_sizes
from paraflux.engine.scattering.edges import EDGE_GROWTH, EDGE_SIZE, edge_sizes, sharp_edges
from paraflux.engine.scattering.shells import ellipsoid
from paraflux.engine.scattering.target import split_to_size
from paraflux.engine.truncation.surfaces import compact_surface

HALF = np.array([0.1, 0.05, 0.04])  # m: a box centred at the origin
CUBE = np.array([[0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3],
                 [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]])
# bempp-cl's EFIE on the 1,200-triangle almond split into 4,800 (docs/benchmarks/scattering-peers.json,
# commit 82a68f8): HH (sigma_phi of phi-polarised incidence), dBsm, at phi = 70, 110, 160 degrees (theta = 90)
EFIE_HH = {70.0: -26.51652941090134, 110.0: -26.332174183633366, 160.0: -24.953124464150825}


@pytest.fixture(scope="module")
def box():
    corners = np.array(list(itertools.product([-1, 1], repeat=3)), dtype=float) * HALF
    return split_to_size(compact_surface("scatterer", corners, CUBE), 0.05)


def test_a_boxs_sharp_edges_are_its_twelve_edges_and_a_sphere_has_none(box):
    edges = box.points[sharp_edges(box)]  # (k, 2, 3)
    on_two_faces = (np.isclose(np.abs(edges), HALF).sum(axis=2) >= 2).all()
    length = np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1).sum()
    assert on_two_faces and abs(length - 4 * 2 * HALF.sum()) < 1e-12
    sphere = ellipsoid((0, 0, 0), (0.1,) * 3, 0.02, "scatterer")
    assert len(sharp_edges(sphere)) == 0 and edge_sizes(sphere, 0.05) is None


def test_the_size_grows_from_a_tenth_of_the_element_at_an_edge(box):
    size = 0.05
    size_at = edge_sizes(box, size)
    d = np.array([0.0, 0.01, 0.05])
    beside = np.column_stack([0.02 + 0 * d, HALF[1] + d, HALF[2] + 0 * d])  # off the edge y = 0.05, z = 0.04
    expected = EDGE_SIZE * size + EDGE_GROWTH * d
    assert np.abs(size_at(beside) - expected).max() <= EDGE_GROWTH * EDGE_SIZE * size / 4 + 1e-12


def _problem(**problem) -> object:
    return parse_scattering({"problem": {"kind": "scattering", "frequency": 1.19e9, **problem}}, Path("."))


def test_the_sphere_keeps_one_size_and_the_almond_gets_its_rim(box):
    assert volume_sizes(_problem(case="pec-sphere"), box, 0.05) is None
    assert volume_sizes(_problem(case="nasa-almond"), box, 0.05) is not None


def test_the_almond_example_is_within_1_db_of_the_efie_at_its_hh_nulls():
    """The example's settings on the bench's 1,200-triangle almond (order 2, 6 per wavelength): 0.70, 0.02
    and 0.31 dB at phi = 70, 110 and 160 with the rule; 2.09, 0.87 and 1.19 dB without."""
    from paraflux.engine.bench.scattering_peers import PeersBenchConfig, ours  # noqa: PLC0415
    from paraflux.engine.problems import case_problem_path  # noqa: PLC0415
    from paraflux.engine.problems.toml_input import read_toml  # noqa: PLC0415
    from paraflux.engine.truncation.almond import almond_surface  # noqa: PLC0415

    config = PeersBenchConfig(phi_deg=tuple(EFIE_HH))
    result = ours(read_toml(case_problem_path("nasa-almond")), config, almond_surface(config.triangles))
    assert result["settings"]["order"] == 2 and result["converged"]
    difference = np.array(result["rcs_dbsm"]["phi"]) - np.array(list(EFIE_HH.values()))
    assert np.abs(difference).max() <= 1.0, difference


def test_the_peers_page_states_the_grading_the_run_recorded():
    from paraflux.engine.bench.scattering_peers_report import render_markdown  # noqa: PLC0415

    from .test_bench_report import _peers_record  # noqa: PLC0415

    data = _peers_record()
    assert "sharp edges" not in render_markdown(data)  # a record from before the grading
    data["ours"]["settings"].update(sharp_edges=60, edge_angle_deg=30.0, edge_size=0.1, edge_growth=0.3)
    assert ("(the file's own), the tetrahedra graded from 0.1 of the element size at its 60 sharp edges (facets "
            "meeting at more than 30 deg), growing 0.3 m per m away; 26,022 unknowns") in render_markdown(data)
