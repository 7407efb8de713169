"""The geodesic sphere (engine/scattering/geodesic.py): a closed outward triangulation of the sphere with
the icosahedron's point and triangle counts, its mean edge at the size asked, every point on the sphere."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paraflux.engine.scattering.geodesic import geodesic_sphere, mean_edge, subdivided
from paraflux.engine.scattering.mesh import enclosed_volume
from paraflux.engine.truncation.surfaces import check_closed_outward


@pytest.mark.parametrize("n", [1, 2, 7])
def test_counts_and_orientation(n):
    points, triangles = subdivided(n)
    assert (len(points), len(triangles)) == (10 * n * n + 2, 20 * n * n)
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 1.0, rtol=1e-14)
    p = points[triangles]
    outward = np.einsum("ij,ij->i", np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), p.mean(axis=1))
    assert (outward > 0).all()


def test_the_sphere_at_a_size():
    surface = geodesic_sphere(2.0, 0.1, "s")
    checked = check_closed_outward(surface)
    np.testing.assert_array_equal(checked.triangles, surface.triangles)  # already outward
    assert 0.09 < mean_edge(surface.points, surface.triangles) <= 0.1
    np.testing.assert_allclose(np.linalg.norm(surface.points, axis=1), 2.0, rtol=1e-14)
    assert enclosed_volume(surface) == pytest.approx(4 / 3 * math.pi * 8, rel=2e-3)  # inscribed facets
