"""The crossing checks' shortcuts (engine/mesh/checks.py): the candidate pairs across two stacked surfaces
are those of the whole set that join one to the other, and the plane test drops no pair that crosses."""

from __future__ import annotations

import numpy as np
import pytest

from paraflux.engine.errors import MeshError
from paraflux.engine.mesh import checks
from paraflux.engine.scattering.cases import sphere_case


@pytest.fixture(scope="module")
def shells():
    return sphere_case(0.5, 1.0, 0.1, 0.2, 6.0)[:2]  # the scatterer (r 0.5 m) and S' (r 0.6 m), apart


@pytest.fixture(scope="module")
def stacked(shells):
    body, inner = shells
    points = np.concatenate([body.points, inner.points])
    triangles = np.concatenate([body.triangles, inner.triangles + len(body.points)])
    return points, triangles, len(body.triangles)


def test_pairs_across_are_the_whole_set_s_pairs_that_join_the_two(stacked):
    points, triangles, split = stacked
    every = checks._candidate_pairs(points, triangles)
    expected = every[(every[:, 0] < split) & (every[:, 1] >= split)]
    np.testing.assert_array_equal(checks._candidate_pairs(points, triangles, split), expected)


def test_a_surface_pushed_through_another_is_found(shells):
    body, inner = shells
    checks.check_apart(body.points, body.triangles, inner.points, inner.triangles, "apart")  # no error
    onto = inner.points * (0.5 / 0.6)  # S' shrunk onto the scatterer's sphere: their facets cross
    with pytest.raises(MeshError, match="the two intersect each other"):
        checks.check_apart(body.points, body.triangles, onto, inner.triangles, "the two")


def test_the_plane_test_keeps_every_crossing_pair():
    rng = np.random.default_rng(7)
    points = rng.normal(size=(600, 3))
    triangles = rng.integers(0, 600, size=(200, 3))
    triangles = triangles[(np.diff(np.sort(triangles, axis=1), axis=1) > 0).all(axis=1)]
    a, b = np.triu_indices(len(triangles), 1)
    crossing = checks._edges_cross(points, triangles, a, b) | checks._edges_cross(points, triangles, b, a)
    kept = checks._straddles(points, triangles, a, b) & checks._straddles(points, triangles, b, a)
    assert crossing.sum() > 0 and not (crossing & ~kept).any()
