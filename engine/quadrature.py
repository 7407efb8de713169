"""Quadrature rules on the reference triangle, as barycentric points and weights summing to 1."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class TriangleRule:
    """points: (n_points, 3) barycentric coordinates; weights: (n_points,) summing to 1 (times area)."""

    degree: int
    points: np.ndarray
    weights: np.ndarray


def _symmetric(orbits) -> TriangleRule:
    pts, wts = [], []
    for weight, a, b, *c in orbits:  # orbit of (a, b, b), or of (a, b, c) with its six permutations
        if c:
            for p in ((a, b, c[0]), (a, c[0], b), (b, a, c[0]), (b, c[0], a), (c[0], a, b), (c[0], b, a)):
                pts.append(p)
                wts.append(weight)
        elif a == b:
            pts.append((a, a, a))
            wts.append(weight)
        else:
            for p in ((a, b, b), (b, a, b), (b, b, a)):
                pts.append(p)
                wts.append(weight)
    return np.array(pts), np.array(wts)


def dunavant(degree: int) -> TriangleRule:
    """Dunavant's symmetric rules, exact for polynomials up to degree (1..6: 1, 3, 4, 6, 7, 12 points); all
    weights are positive except the centroid weight of the degree-3 rule."""
    table = {
        1: [(1.0, 1 / 3, 1 / 3)],
        2: [(1 / 3, 2 / 3, 1 / 6)],
        3: [(-27 / 48, 1 / 3, 1 / 3), (25 / 48, 0.6, 0.2)],
        4: [(0.223381589678011, 0.108103018168070, 0.445948490915965),
            (0.109951743655322, 0.816847572980459, 0.091576213509771)],
        5: [(0.225, 1 / 3, 1 / 3),
            (0.132394152788506, 0.059715871789770, 0.470142064105115),
            (0.125939180544827, 0.797426985353087, 0.101286507323456)],
        6: [(0.116786275726379, 0.501426509658179, 0.249286745170910),
            (0.050844906370207, 0.873821971016996, 0.063089014491502),
            (0.082851075618374, 0.053145049844817, 0.310352451033784, 0.636502499121399)],
    }
    if degree not in table:
        raise ValueError(f"no triangle rule of degree {degree} (1..6)")
    points, weights = _symmetric(table[degree])
    return TriangleRule(degree, points, weights / weights.sum())
