"""Built-in surfaces of the boundary element study, meshed by gmsh: the octant of a hollow sphere with its
symmetry planes labelled, and a chassis-like bracket."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import MeshError
from ..mesh.gmsh_build import gmsh_session, triangle_size
from ..truncation.surfaces import TriSurface, compact_surface
from .assembly import elements_of
from .direct import BoundaryData
from .shapes import BOX_FACES, box_surface

OCTANT_GROUPS = ("x0", "y0", "z0", "inner", "outer")  # the symmetry planes x = 0, y = 0, z = 0 and the spheres


def hollow_sphere_octant(inner_radius: float, outer_radius: float, target: int) -> tuple[TriSurface, np.ndarray]:
    """The surface of {a < |x| < b, x, y, z > 0} (m) with about target triangles, oriented outward, and each
    triangle's group index into OCTANT_GROUPS."""
    a, b = inner_radius, outer_radius
    area = (math.pi / 2) * (a * a + b * b) + 3 * (math.pi / 4) * (b * b - a * a)
    h = triangle_size(area, target)
    with gmsh_session("hollow-sphere") as gmsh:
        occ = gmsh.model.occ
        shell = occ.cut([(3, occ.addSphere(0, 0, 0, b))], [(3, occ.addSphere(0, 0, 0, a))])[0]
        occ.intersect(shell, [(3, occ.addBox(0, 0, 0, 2 * b, 2 * b, 2 * b))])
        occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMin", h)
        gmsh.option.setNumber("Mesh.MeshSizeMax", h)
        gmsh.model.mesh.generate(2)
        points, blocks, groups = _entities(gmsh)
        groups += [_octant_group(points[np.unique(tri)], a, b) for tri in blocks]
    return _surface("hollow-sphere", points, blocks, groups)


def pressurised_octant(target: int, pressure: float = 1e8, inner_radius: float = 0.5,
                       outer_radius: float = 1.0) -> tuple[TriSurface, np.ndarray, BoundaryData]:
    """The hollow-sphere octant on rollers (u_x = 0 on x0, ...) under `pressure` Pa on the inner sphere (along
    -n, into the body), the outer sphere free: Lame's problem; with each triangle's group index."""
    s, group = hollow_sphere_octant(inner_radius, outer_radius, target)
    normal = elements_of(s.points, s.triangles).normals
    fixed = np.zeros((len(s.triangles), 3), dtype=bool)
    for axis in range(3):
        fixed[group == axis, axis] = True
    traction = np.zeros((len(s.triangles), 3, 3))
    inner = group == OCTANT_GROUPS.index("inner")
    traction[inner] = (-pressure * normal[inner])[:, None, :]
    return s, group, BoundaryData(fixed, np.zeros_like(s.points), traction)


def _octant_group(points: np.ndarray, a: float, b: float) -> int:
    """Which of OCTANT_GROUPS a gmsh surface entity is, from its nodes."""
    tol = 1e-6 * b
    for axis in range(3):
        if np.abs(points[:, axis]).max() < tol:
            return axis
    r = np.linalg.norm(points, axis=1)
    if np.abs(r - a).max() < 1e-3 * a:
        return 3
    if np.abs(r - b).max() < 1e-3 * b:
        return 4
    raise MeshError("the hollow-sphere octant has a surface that is neither a symmetry plane nor a sphere")


BRACKET_GROUPS = ("base", "load", "free")  # the plate's underside, the web's top face, every other face
BRACKET_MM = {"plate": (120.0, 80.0, 10.0), "web": 10.0, "height": 110.0, "hole": 6.0, "gusset": 50.0}


def bracket(target: int) -> tuple[TriSurface, np.ndarray]:
    """A chassis-like bracket in metres: a 120 x 80 x 10 mm base plate with two 12 mm bolt holes, a
    10 mm web rising to z = 110 mm at x = 0, and a triangular gusset between them at mid-width; about
    target triangles, oriented outward, each triangle's group index into BRACKET_GROUPS."""
    lx, ly, lz = (v / 1000 for v in BRACKET_MM["plate"])
    web, height, hole, gusset = (BRACKET_MM[k] / 1000 for k in ("web", "height", "hole", "gusset"))
    with gmsh_session("bracket") as gmsh:
        occ = gmsh.model.occ
        plate = occ.addBox(0, 0, 0, lx, ly, lz)
        wall = occ.addBox(0, 0, 0, web, ly, height)
        rib_t = 8e-3
        pts = [occ.addPoint(web, (ly - rib_t) / 2, lz), occ.addPoint(web + gusset, (ly - rib_t) / 2, lz),
               occ.addPoint(web, (ly - rib_t) / 2, lz + gusset)]
        lines = [occ.addLine(pts[i], pts[(i + 1) % 3]) for i in range(3)]
        face = occ.addPlaneSurface([occ.addCurveLoop(lines)])
        rib = occ.extrude([(2, face)], 0, rib_t, 0)[1][1]
        body = occ.fuse([(3, plate)], [(3, wall), (3, rib)])[0]
        holes = [(3, occ.addCylinder(x, y, -1e-3, 0, 0, lz + 2e-3, hole))
                 for x, y in ((0.8 * lx, 0.25 * ly), (0.8 * lx, 0.75 * ly))]
        occ.cut(body, holes)
        occ.synchronize()
        area = sum(gmsh.model.occ.getMass(2, tag) for _, tag in gmsh.model.getEntities(2))
        h = triangle_size(area, target)
        gmsh.option.setNumber("Mesh.MeshSizeMin", h)
        gmsh.option.setNumber("Mesh.MeshSizeMax", h)
        gmsh.model.mesh.generate(2)
        points, blocks, groups = _entities(gmsh)
        for tri in blocks:
            z = points[np.unique(tri), 2]
            groups.append(0 if z.max() < 1e-9 else 1 if z.min() > height - 1e-9 else 2)
    return _surface("bracket", points, blocks, groups)


def _entities(gmsh):
    """Node coordinates and the triangles of every surface entity of the current gmsh model."""
    tags, coords, _ = gmsh.model.mesh.getNodes()
    index = np.full(int(tags.max()) + 1, -1, dtype=np.int64)
    index[tags.astype(np.int64)] = np.arange(len(tags))
    blocks = []
    for _, entity in gmsh.model.getEntities(2):
        types, _, nodes = gmsh.model.mesh.getElements(2, entity)
        blocks.append(index[np.asarray(nodes[list(types).index(2)], dtype=np.int64).reshape(-1, 3)])
    return coords.reshape(-1, 3), blocks, []


def _surface(name, points, blocks, groups) -> tuple[TriSurface, np.ndarray]:
    """The closed surface of the entities' triangles (unused nodes dropped, oriented outward) and each
    triangle's group index."""
    surface = compact_surface(name, points, np.concatenate(blocks))
    return surface, np.concatenate([np.full(len(b), g) for b, g in zip(blocks, groups)])


@dataclass(frozen=True)
class BemCase:
    name: str
    title: str
    groups: tuple[str, ...]  # names of the surface groups, indexed by the builder's group array
    default_elements: int  # triangles
    build: Callable[[int], tuple[TriSurface, np.ndarray]]  # triangles -> (surface in m, group per triangle)
    description: str


def bar_surface(target: int, lengths=(0.2, 0.05, 0.05)) -> tuple[TriSurface, np.ndarray]:
    """The box [0, 0.2] x [0, 0.05] x [0, 0.05] m with square cells of about equal size, about target
    triangles, faces as BOX_FACES."""
    lx, ly, lz = lengths
    h = math.sqrt(2 * (lx * ly + ly * lz + lx * lz) / (max(target, 12) / 2))
    return box_surface(lengths, [max(1, round(v / h)) for v in lengths])


def mesh_bem_case(name: str, elements: int | None = None) -> tuple[TriSurface, np.ndarray]:
    """(surface, group per triangle) of a built-in case at about `elements` triangles (None: its default)."""
    case = BEM_CASES[name]
    return case.build(elements or case.default_elements)


BEM_CASES = {case.name: case for case in (
    BemCase("bar", "Bar under uniform tension", BOX_FACES, 1200, bar_surface,
            "a 200 x 50 x 50 mm steel bar on rollers at x = 0, y = 0, z = 0, pulled by 100 MPa at x = 200 mm: "
            "uniform stress, the exact answer for linear elements"),
    BemCase("hollow-sphere", "Hollow sphere under inner pressure", OCTANT_GROUPS, 1600,
            lambda n: hollow_sphere_octant(0.5, 1.0, n),
            "the octant of a hollow sphere (radii 0.5 and 1 m) on symmetry rollers, 100 MPa inside: Lame's "
            "closed-form solution"),
    BemCase("bracket", "Chassis-like bracket", BRACKET_GROUPS, 13_000, bracket,
            "a 120 x 80 x 10 mm base plate with two bolt holes, a 110 mm web and a gusset; base fixed, the "
            "web's top face loaded (13,000 triangles: the paper's 19,314 DOFs)"),
)}
