"""Built-in truncation geometries: S' (a gmsh sphere or the NASA almond) and the box S as closed triangulated
surfaces with a size knob."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ProblemError
from ..mesh.gmsh_build import gmsh_nodes_and_groups, gmsh_session, triangle_size
from .almond import ALMOND_LENGTH, almond_surface
from .surfaces import TriSurface, compact_surface

MAX_SURFACE_ELEMENTS = 200_000
COUNT_TOLERANCE = 0.02  # relative deviation of a case's triangle count from the one asked
REMESH_TRIES = 4


@dataclass(frozen=True)
class SurfaceCase:
    name: str
    title: str
    inner: str  # the S' shape: "sphere" (size: radius) or "almond" (size: length along x)
    inner_size: float  # m
    box_centre: tuple[float, float, float]  # m, the box S
    box_half: tuple[float, float, float]  # m, its half sides
    default_inner: int  # triangles
    default_outer: int
    description: str


CASES = {
    "sphere-in-box": SurfaceCase(
        "sphere-in-box", "Sphere S' inside a cube S", "sphere", 0.25, (0.0, 0.0, 0.0), (0.5, 0.5, 0.5), 1272, 1572,
        "S' a sphere of radius 0.25 m, S the surface of a cube of side 1 m around it; the dipoles sit inside S'."),
    "almond": SurfaceCase(
        "almond", "NASA almond S' inside a box S", "almond", ALMOND_LENGTH, (0.021, 0.0, 0.0), (0.2, 0.12, 0.1),
        1272, 1572,
        "S' the EMCC benchmark almond (9.936 in = 0.252 m long, 3:1 elliptic sections, a sharp tip at +x), "
        "S a 0.4 x 0.24 x 0.2 m box around it; the dipoles sit inside the almond."),
}


def _mesh_surface(kind: str, size, target: int, centre=(0.0, 0.0, 0.0)) -> TriSurface:
    """A gmsh sphere of radius size, or a box of half sides size (3,), about target triangles."""
    with gmsh_session(kind) as gmsh:
        occ = gmsh.model.occ
        if kind == "sphere":
            occ.addSphere(*centre, size)
            area = 4 * math.pi * size ** 2
        else:
            hx, hy, hz = size
            occ.addBox(centre[0] - hx, centre[1] - hy, centre[2] - hz, 2 * hx, 2 * hy, 2 * hz)
            area = 8 * (hx * hy + hy * hz + hx * hz)
        occ.synchronize()
        surfaces = [tag for _, tag in gmsh.model.getEntities(2)]
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, surfaces), kind)
        h = triangle_size(area, target)
        best = None
        for _ in range(REMESH_TRIES):  # the count jumps with the edge subdivisions: rescale h, keep the closest
            gmsh.model.mesh.clear()
            gmsh.option.setNumber("Mesh.MeshSizeMin", h)
            gmsh.option.setNumber("Mesh.MeshSizeMax", h)
            gmsh.model.mesh.generate(2)
            points, cells_of = gmsh_nodes_and_groups(gmsh)
            triangles, _, _ = cells_of(2, 2, 3)
            if best is None or abs(len(triangles) - target) < abs(len(best[1]) - target):
                best = points, triangles
            if abs(len(triangles) - target) <= COUNT_TOLERANCE * target:
                break
            h *= math.sqrt(len(triangles) / target)
        points, triangles = best
    return compact_surface(kind, points, triangles)


def mesh_surface_case(name: str, inner_elements: int | None = None, outer_elements: int | None = None):
    """(S', S) of a built-in case, about the requested triangle counts (m)."""
    if name not in CASES:
        raise ProblemError(f"unknown case '{name}'; built-in truncation cases: {', '.join(CASES)}")
    case = CASES[name]
    counts = (inner_elements or case.default_inner, outer_elements or case.default_outer)
    for label, n in zip(("inner", "outer"), counts):
        if not 20 <= n <= MAX_SURFACE_ELEMENTS:
            raise ProblemError(f"{label} surface elements must be from 20 to {MAX_SURFACE_ELEMENTS:,}, got {n}")
    inner = (_mesh_surface("sphere", case.inner_size, counts[0]) if case.inner == "sphere"
             else almond_surface(counts[0], case.inner_size))
    return inner, _mesh_surface("box", case.box_half, counts[1], case.box_centre)
