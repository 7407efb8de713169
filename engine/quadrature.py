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
    for weight, a, b in orbits:  # orbit of (a, b, b)
        if a == b:
            pts.append((a, a, a))
            wts.append(weight)
        else:
            for p in ((a, b, b), (b, a, b), (b, b, a)):
                pts.append(p)
                wts.append(weight)
    return np.array(pts), np.array(wts)


def dunavant(degree: int) -> TriangleRule:
    """Dunavant's symmetric rules, exact for polynomials up to degree (1..5); all weights are positive
    except the centroid weight of the degree-3 rule."""
    table = {
        1: [(1.0, 1 / 3, 1 / 3)],
        2: [(1 / 3, 2 / 3, 1 / 6)],
        3: [(-27 / 48, 1 / 3, 1 / 3), (25 / 48, 0.6, 0.2)],
        4: [(0.223381589678011, 0.108103018168070, 0.445948490915965),
            (0.109951743655322, 0.816847572980459, 0.091576213509771)],
        5: [(0.225, 1 / 3, 1 / 3),
            (0.132394152788506, 0.059715871789770, 0.470142064105115),
            (0.125939180544827, 0.797426985353087, 0.101286507323456)],
    }
    if degree not in table:
        raise ValueError(f"no triangle rule of degree {degree} (1..5)")
    points, weights = _symmetric(table[degree])
    return TriangleRule(degree, points, weights / weights.sum())
