"""The EMCC benchmark bodies of revolution beside the almond (Woo, Wang, Schuh and Sanders, "Benchmark radar
targets for the validation of computational electromagnetics programs", IEEE Antennas and Propagation
Magazine 35(1), 84-89, 1993): the ogive, the double ogive, the cone-sphere and the cone-sphere with a gap,
as profiles r(x) in inches revolved about the x axis into closed triangle surfaces in metres: rings of
points along the profile, as far apart along it as around it, joined ring to ring.

The ogive's profile is the paper's r(x) = (sqrt(1 - (x / h)^2 sin^2 a) - cos a) / (1 - cos a) in, with
half-length h and tip half-angle a; the published dimensions are the constants below. The paper's own
pages past the first were not reachable; every constant is as in Puma-EM's geo/EMCC_*.geo, made from it
(I. Van den Bosch; github.com/Gjacquenot/Puma-EM, doc/EXAMPLES cites the paper), and the two ogives' also as
in the facet models of L. A. Harrison's radar book (github.com/RadarBook/software, pyradar/Libs/rcs/ogive.facet
and double_ogive.facet, whose vertices lie on these profiles to 1e-8 in)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..truncation.surfaces import TriSurface, compact_surface

INCH = 0.0254  # m
OGIVE_HALF_LENGTH = 5.0  # in: the ogive runs from x = -5 to 5 in, 1 in in radius at x = 0
OGIVE_HALF_ANGLE = 22.62  # degrees at the tips
DOUBLE_OGIVE_FRONT = 2.5  # in: the double ogive's blunter half runs from x = -2.5 to 0 ...
DOUBLE_OGIVE_FRONT_ANGLE = 46.6  # degrees, its a (46.6 in both sources above; 46.4, used here before, in
#                                   neither); the back half is the ogive's, x = 0 to 5 in
CONE_SPHERE_RADIUS = 2.947  # in: the sphere of the cone-sphere
CONE_HALF_ANGLE = 7.0  # degrees: the cone is tangent to the sphere, its tip at x = 23.821 in
GAP_FLOOR_RADIUS = 2.697  # in: the cone-sphere with a gap: the sphere's cap between the cone's tangent circle
#                           (x = 0) and its equator (x = -0.359 in) cut down to this radius (0.25 in deep)
PROFILE_POINTS = 2001  # samples of a profile segment
CURVATURE_ELEMENTS = 24  # edges around a circle of the surface's curvature radius (a ring, or the profile's)
FINEST = 8  # the smallest triangle edge is size / FINEST (at the tips)


@dataclass(frozen=True)
class Body:
    """A body of revolution: its profile as segments ("line" | "arc" | "curve", points (k, 2) (x, r) in
    inches; an arc is start, centre, end; a curve is dense samples), from the tip on the axis at the largest
    x to the one at the smallest; its published length and largest radius (in)."""

    name: str
    segments: tuple
    length: float
    radius: float


def ogive_radius(x: np.ndarray, half_length: float, half_angle: float) -> np.ndarray:
    """The EMCC ogive profile r(x) in inches for |x| <= half_length (in), tip half-angle in degrees."""
    s, c = math.sin(math.radians(half_angle)), math.cos(math.radians(half_angle))
    return (np.sqrt(np.clip(1 - (x / half_length) ** 2 * s * s, 0, None)) - c) / (1 - c)


def _ogive_arc(start: float, stop: float, half_length: float, half_angle: float) -> tuple:
    x = np.linspace(start, stop, PROFILE_POINTS)
    r = ogive_radius(x, half_length, half_angle)
    r[[0, -1]] = np.where(np.isclose(np.abs(x[[0, -1]]), half_length), 0.0, r[[0, -1]])
    return ("curve", np.column_stack([x, r]))


def _cone_sphere(gap: bool) -> tuple:
    radius, a = CONE_SPHERE_RADIUS, math.radians(CONE_HALF_ANGLE)
    centre = -radius * math.sin(a)  # the sphere's centre: the cone meets it tangentially at x = 0
    tangent = radius * math.cos(a)
    tip = tangent / math.tan(a)
    back = (centre - radius, 0.0)
    cone = ("line", np.array([[tip, 0.0], [0.0, tangent]]))
    if not gap:
        return (cone, ("arc", np.array([[0.0, tangent], [centre, 0.0], back])))
    floor = GAP_FLOOR_RADIUS
    return (cone, ("line", np.array([[0.0, tangent], [0.0, floor]])),
            ("line", np.array([[0.0, floor], [centre, floor]])),
            ("line", np.array([[centre, floor], [centre, radius]])),
            ("arc", np.array([[centre, radius], [centre, 0.0], back])))


def _bodies() -> dict[str, Body]:
    h, a = OGIVE_HALF_LENGTH, OGIVE_HALF_ANGLE
    cone_length = CONE_SPHERE_RADIUS * (1 + 1 / math.sin(math.radians(CONE_HALF_ANGLE)))  # tip to the back
    return {
        "ogive": Body("ogive", (_ogive_arc(h, -h, h, a),), 2 * h, 1.0),
        "double-ogive": Body("double-ogive", (_ogive_arc(h, 0.0, h, a),
                                              _ogive_arc(0.0, -DOUBLE_OGIVE_FRONT, DOUBLE_OGIVE_FRONT,
                                                         DOUBLE_OGIVE_FRONT_ANGLE)), h + DOUBLE_OGIVE_FRONT, 1.0),
        "cone-sphere": Body("cone-sphere", _cone_sphere(False), cone_length, CONE_SPHERE_RADIUS),
        "cone-sphere-gap": Body("cone-sphere-gap", _cone_sphere(True), cone_length, CONE_SPHERE_RADIUS),
    }


BODIES = _bodies()


def body_surface(name: str, size: float) -> TriSurface:
    """The EMCC body `name` (a key of BODIES) in metres, its axis along x, outward triangles of edge about
    size (m), finer where the surface curves (CURVATURE_ELEMENTS edges per radius of curvature, down to
    size / FINEST at the tips)."""
    rings = [_stations(_sampled(kind, xr) * INCH, size) for kind, xr in BODIES[name].segments]
    x, r, h = (np.concatenate([ring[i][1:] if k else ring[i] for k, ring in enumerate(rings)]) for i in range(3))
    counts = np.where(r > 1e-9 * size, np.maximum(3, np.ceil(2 * math.pi * r / h)), 1).astype(int)
    start = np.concatenate([[0], np.cumsum(counts)])
    phi = np.concatenate([2 * math.pi * np.arange(n) / n for n in counts])
    radius = np.repeat(r, counts)
    points = np.column_stack([np.repeat(x, counts), radius * np.cos(phi), radius * np.sin(phi)])
    triangles = np.vstack([_zipper(start[i], counts[i], start[i + 1], counts[i + 1]) for i in range(len(counts) - 1)])
    return compact_surface("scatterer", points, triangles)


def _sampled(kind: str, xr: np.ndarray) -> np.ndarray:
    """A profile segment as PROFILE_POINTS points (k, 2) (x, r) in inches."""
    t = np.linspace(0.0, 1.0, PROFILE_POINTS)[:, None]
    if kind == "line":
        return xr[0] + t * (xr[1] - xr[0])
    if kind == "arc":
        start, centre, end = xr
        a0, a1 = (math.atan2(*(p - centre)[::-1]) for p in (start, end))
        a1 += 2 * math.pi * round((a0 - a1) / (2 * math.pi))  # the short way round
        angle = a0 + t[:, 0] * (a1 - a0)
        return centre + np.linalg.norm(start - centre) * np.column_stack([np.cos(angle), np.sin(angle)])
    return np.asarray(xr, dtype=float)


def _stations(curve: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, r, h): the rings along a profile segment (k, 2) in metres, spaced by h, the local triangle edge:
    size, or less where the ring or the profile curves tightly; both ends of the segment are rings."""
    step = np.linalg.norm(np.diff(curve, axis=0), axis=1)
    turn = np.abs(np.diff(np.unwrap(np.arctan2(*np.diff(curve, axis=0).T[::-1]))))
    bend = np.concatenate([[0.0], turn / np.maximum((step[1:] + step[:-1]) / 2, 1e-300), [0.0]])
    bend = np.maximum(bend, np.concatenate([bend[1:], [0.0]]))[:len(curve)]
    h = np.minimum(2 * math.pi * curve[:, 1] / CURVATURE_ELEMENTS,
                   2 * math.pi / np.maximum(bend, 1e-300) / CURVATURE_ELEMENTS)
    h = np.clip(h, size / FINEST, size)
    u = np.concatenate([[0.0], np.cumsum(step / np.minimum(h[1:], h[:-1]))])
    n = max(1, math.ceil(u[-1]))
    at = np.linspace(0.0, u[-1], n + 1)
    return np.interp(at, u, curve[:, 0]), np.interp(at, u, curve[:, 1]), np.interp(at, u, h)


def _zipper(a: int, n: int, b: int, m: int) -> np.ndarray:
    """Triangles joining ring A (points a..a+n-1 at angles 2 pi i / n) to ring B (b..b+m-1): walking round
    both by increasing angle, each step advances one ring by a point (a ring of one point, a pole, never)."""
    events = [(np.arange(1, k + 1) / k, np.full(k, side)) for k, side in ((n, 0), (m, 1)) if k > 1]
    angle, side = (np.concatenate(e) for e in zip(*events))
    side = side[np.argsort(angle, kind="stable")]
    i = np.concatenate([[0], np.cumsum(side == 0)])[:-1]  # ring A's point before each step
    j = np.concatenate([[0], np.cumsum(side == 1)])[:-1]
    pa, pb = a + i % n, b + j % m
    return np.where((side == 0)[:, None], np.column_stack([pa, a + (i + 1) % n, pb]),
                    np.column_stack([pa, b + (j + 1) % m, pb]))
