"""The faceted low-observable aircraft, the scattering study's aircraft-class target (the role of the F117 in
paper 003): an arrowhead planform with leading edges swept 67 degrees and a sawtooth trailing edge, a hull
of flat facets whose upper and lower halves meet at a sharp chine all round the planform, and twin tails
canted outward. Its length and span are the F-117's (20.1 and 13.2 m), its leading-edge sweep about the
F-117's; the facets are this project's, not the aircraft's. Nose toward +x, span along y, up along z, the planform
centred on the origin; it is its own mirror image across y = 0.

The hull is two height fields over one triangulation of the planform, z > 0 above and z < 0 below at every
interior vertex and 0 on the outline, so it is closed and cannot cut itself; each tail is the convex hull
of two diamond sections, its root sunk into the hull. gmsh's OpenCASCADE kernel fuses the three solids and
meshes the result."""

from __future__ import annotations

import math
from itertools import product

import numpy as np
from scipy.spatial import ConvexHull

from ..errors import MeshError
from ..mesh.checks import check_not_self_intersecting
from ..mesh.gmsh_build import gmsh_nodes_and_groups, gmsh_session
from ..truncation.surfaces import TriSurface, compact_surface

AIRCRAFT_LENGTH = 20.1  # m, nose to the tail's end (the tail tips overhang it by TAIL_OVERHANG)
AIRCRAFT_SPAN = 13.2  # m
LEADING_EDGE_SWEEP_DEG = 67.3
TAIL_CANT_DEG = 40.0  # each tail leans outward from the vertical by this
TAIL_OVERHANG = 0.3  # m behind the hull's rear edge at the tail tips
FINEST = 8  # the smallest triangle edge gmsh makes: size / FINEST (where the tails meet the hull)

# The half planform (y >= 0), nose at x = 20.1, rear edge at x = 0: outline vertices (z = 0) then the
# interior vertices, each with its height above (top) and below (bottom) the chine plane, metres.
_OUTLINE = {"nose": (20.1, 0.0), "tip_front": (4.3, 6.6), "tip_rear": (3.1, 6.6), "notch": (6.2, 3.0),
            "tail_corner": (0.0, 1.7), "rear": (0.0, 0.0)}
_INTERIOR = {"spine_front": (15.0, 0.0, 1.0, -0.5), "spine_mid": (10.0, 0.0, 1.9, -0.7),  # cockpit hump
             "spine_rear": (4.0, 0.0, 1.2, -0.6), "shoulder_front": (11.0, 1.8, 1.3, -0.6),
             "shoulder_rear": (6.0, 2.2, 1.0, -0.5), "tail_root": (1.5, 1.2, 0.5, -0.3)}
# The half planform's triangles (counter-clockwise seen from above), each with an interior vertex.
_FACETS = (("tip_front", "shoulder_front", "nose"), ("nose", "shoulder_front", "spine_front"),
           ("spine_front", "shoulder_front", "spine_mid"), ("shoulder_front", "tip_front", "shoulder_rear"),
           ("tip_front", "tip_rear", "shoulder_rear"), ("tip_rear", "notch", "shoulder_rear"),
           ("notch", "tail_corner", "shoulder_rear"), ("tail_corner", "rear", "tail_root"),
           ("tail_corner", "tail_root", "shoulder_rear"), ("rear", "spine_rear", "tail_root"),
           ("tail_root", "spine_rear", "shoulder_rear"), ("spine_rear", "spine_mid", "shoulder_rear"),
           ("spine_mid", "shoulder_front", "shoulder_rear"))
# A tail in its own frame (x along the body, h up its span, t across it): the diamond sections at the sunk
# root and at the tip, (x of leading edge, x of trailing edge, half thickness, h); placed at TAIL_ROOT.
_TAIL_SECTIONS = ((5.47, 1.77, 0.12, -0.45), (1.9, -TAIL_OVERHANG, 0.06, 3.0))
_TAIL_ROOT = (1.3, 0.35)  # y, z of the tail's h = 0 line (inside the hull at the root, which rises above it)


def hull_facets() -> tuple[np.ndarray, np.ndarray]:
    """The hull as a closed outward triangle surface: points (n, 3) m (planform centred on x = 0) and
    triangles (m, 3): the half planform's facets mirrored across y = 0, above and below."""
    vertex = {n: (x, y, 0.0, 0.0) for n, (x, y) in _OUTLINE.items()} | _INTERIOR  # x, y, top, bottom

    def key(name: str, side: int, level: int) -> tuple:  # one point for both sides on y = 0, for top and
        _, y, *heights = vertex[name]                     # bottom on the outline
        return name, side if y else 1, level if heights[level] else 0

    index: dict[tuple, int] = {}
    for name, side, level in product(vertex, (1, -1), (0, 1)):  # level 0 top, 1 bottom
        index.setdefault(key(name, side, level), len(index))
    points = [(vertex[n][0] - AIRCRAFT_LENGTH / 2, vertex[n][1] * side, vertex[n][2 + level])
              for n, side, level in index]
    triangles = []
    for facet, side, level in product(_FACETS, (1, -1), (0, 1)):
        tri = [index[key(n, side, level)] for n in facet]
        triangles.append(tri if (side > 0) == (level == 0) else tri[::-1])  # outward everywhere
    return np.array(points, dtype=float), np.array(triangles, dtype=np.int64)


def tail_facets(side: int) -> tuple[np.ndarray, np.ndarray]:
    """The tail on side +1 (y > 0) or -1 as the outward convex hull of its two diamond sections, canted
    outward by TAIL_CANT_DEG: points (8, 3) m, triangles (k, 3)."""
    cant = math.radians(TAIL_CANT_DEG)
    span = np.array([0.0, side * math.sin(cant), math.cos(cant)])  # h direction
    across = np.array([0.0, math.cos(cant), -side * math.sin(cant)])
    root = np.array([-AIRCRAFT_LENGTH / 2, side * _TAIL_ROOT[0], _TAIL_ROOT[1]])
    points = []
    for lead, trail, half, h in _TAIL_SECTIONS:
        mid = (lead + trail) / 2
        for x, t in ((lead, 0.0), (mid, half), (trail, 0.0), (mid, -half)):
            points.append(root + [x, 0.0, 0.0] + h * span + t * across)
    points = np.array(points)
    hull = ConvexHull(points)
    triangles = hull.simplices.copy()
    centre = points.mean(axis=0)
    p = points[triangles]
    inward = np.einsum("ij,ij->i", np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), p[:, 0] - centre) < 0
    triangles[inward] = triangles[inward][:, ::-1]
    return points, triangles


def _occ_solid(occ, points: np.ndarray, triangles: np.ndarray) -> int:
    """An OpenCASCADE volume bounded by these closed triangles (one plane surface each, shared lines)."""
    point_tags = [occ.addPoint(*p) for p in points]
    lines = {}
    surfaces = []
    for tri in triangles:
        loop = []
        for a, b in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
            key = (min(a, b), max(a, b))
            if key not in lines:
                lines[key] = occ.addLine(point_tags[key[0]], point_tags[key[1]])
            loop.append(lines[key] if a < b else -lines[key])
        surfaces.append(occ.addPlaneSurface([occ.addCurveLoop(loop)]))
    return occ.addVolume([occ.addSurfaceLoop(surfaces)])


def aircraft_surface(size: float) -> TriSurface:
    """The aircraft's closed outward surface in metres, meshed by gmsh with triangles of edge at most size
    (m), at least size / FINEST; MeshError if the fused surface cuts itself."""
    with gmsh_session("aircraft") as gmsh:
        occ = gmsh.model.occ
        hull = _occ_solid(occ, *hull_facets())
        tails = [_occ_solid(occ, *tail_facets(side)) for side in (1, -1)]
        occ.fuse([(3, hull)], [(3, t) for t in tails])
        occ.synchronize()
        surfaces = [t for _, t in gmsh.model.getEntities(2)]
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, surfaces), "scatterer")
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
        gmsh.option.setNumber("Mesh.MeshSizeMin", size / FINEST)
        gmsh.model.mesh.generate(2)
        points, cells_of = gmsh_nodes_and_groups(gmsh)
        triangles, _, _ = cells_of(2, 2, 3)
    if not len(triangles):
        raise MeshError("aircraft: gmsh made no triangles")
    surface = compact_surface("scatterer", points, triangles)
    check_not_self_intersecting(surface.points, surface.triangles, "the aircraft")
    return surface
