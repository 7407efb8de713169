"""Built-in parametric 2D cases meshed with gmsh: geometry, named regions and boundaries, a size knob.

Each case is meshed at its nominal size; a target element count rescales every mesh
size by one factor calibrated from the nominal mesh (element count ~ 1 / size^2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..errors import ProblemError
from .gmsh_build import gmsh_session, trimesh_from_gmsh
from .refine import refine_uniform
from .trimesh import TriMesh

MAX_GMSH_ELEMENTS = 300_000


@dataclass(frozen=True)
class Case:
    """A built-in geometry. Coordinates are in the case's length_unit."""

    name: str
    title: str
    formulation: str  # "planar" or "axisymmetric"
    length_unit: str
    build: Callable  # build(gmsh) adds geometry, physical groups and size fields at nominal size
    description: str
    boundaries: tuple[str, ...]  # the named boundaries build() makes (a test checks them against the mesh)


def _classify(gmsh, dim: int, groups: dict[str, Callable[[float, float], bool]]) -> None:
    """Put every entity of dim into the first group whose predicate holds at its centre of mass."""
    members: dict[str, list[int]] = {name: [] for name in groups}
    for _, tag in gmsh.model.getEntities(dim):
        x, y, _ = gmsh.model.occ.getCenterOfMass(dim, tag)
        for name, inside in groups.items():
            if inside(x, y):
                members[name].append(tag)
                break
    for name, tags in members.items():
        if tags:
            gmsh.model.setPhysicalName(dim, gmsh.model.addPhysicalGroup(dim, tags), name)


def _polygon(occ, xy) -> int:
    pts = [occ.addPoint(x, y, 0.0) for x, y in xy]
    lines = [occ.addLine(pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts))]
    return occ.addPlaneSurface([occ.addCurveLoop(lines)])


def _threshold_field(gmsh, entities: list[int], size_min, size_max, dist_min, dist_max,
                     kind: str = "CurvesList") -> None:
    """Mesh size growing from size_min within dist_min of the entities to size_max beyond dist_max."""
    field = gmsh.model.mesh.field
    dist = field.add("Distance")
    field.setNumbers(dist, kind, entities)
    field.setNumber(dist, "Sampling", 200)
    thr = field.add("Threshold")
    field.setNumber(thr, "InField", dist)
    for key, value in (("SizeMin", size_min), ("SizeMax", size_max),
                       ("DistMin", dist_min), ("DistMax", dist_max)):
        field.setNumber(thr, key, value)
    field.setAsBackgroundMesh(thr)
    gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 0)
    gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 0)
    gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 0)


# --- open-slot: paper 000, Fig. 7 (mm) -------------------------------------------------------------
# A=(0,0) on the air-gap centre line under the slot centre; B=(12,0) under the tooth centre line;
# C=(12,1) on the tooth surface; the tooth corner at (5,1); the slot wall up to (5,16); E=(0,16).
# AB: 700 A (gap centre line), C-D-E: 0 A (stator iron surface), BC and EA: flux/symmetry lines.
SLOT_HALF_WIDTH, HALF_PITCH, HALF_GAP, SLOT_DEPTH = 5.0, 12.0, 1.0, 15.0


def _build_open_slot(gmsh) -> None:
    occ = gmsh.model.occ
    w, t, g, d = SLOT_HALF_WIDTH, HALF_PITCH, HALF_GAP, SLOT_DEPTH
    _polygon(occ, [(0, 0), (t, 0), (t, g), (w, g), (w, g + d), (0, g + d)])
    occ.synchronize()
    eps = 1e-9
    _classify(gmsh, 2, {"air": lambda x, y: True})
    _classify(gmsh, 1, {
        "AB": lambda x, y: abs(y) < eps,
        "BC": lambda x, y: abs(x - t) < eps,
        "EA": lambda x, y: abs(x) < eps,
        "CDE": lambda x, y: True,
    })
    # the re-entrant tooth corner carries an r^(2/3) singularity: grade the mesh towards it
    corner = [tag for _, tag in gmsh.model.getEntities(0)
              if max(abs(a - b) for a, b in zip(gmsh.model.getValue(0, tag, []), (w, g, 0))) < eps]
    _threshold_field(gmsh, corner, 0.02, 0.4, 0.05, 6.0, kind="PointsList")


# --- solenoid: paper 002, Fig. 2 (m, axisymmetric: x = r, y = z) ------------------------------------
COIL_R1, COIL_R2, COIL_HALF_LENGTH, AIR_EXTENT = 0.02, 0.025, 0.05, 0.5


def _build_solenoid(gmsh) -> None:
    occ = gmsh.model.occ
    coil = occ.addRectangle(COIL_R1, -COIL_HALF_LENGTH, 0, COIL_R2 - COIL_R1, 2 * COIL_HALF_LENGTH)
    air = occ.addRectangle(0, -AIR_EXTENT, 0, AIR_EXTENT, 2 * AIR_EXTENT)
    occ.fragment([(2, air)], [(2, coil)])
    occ.synchronize()
    eps = 1e-9
    _classify(gmsh, 2, {
        "coil": lambda r, z: COIL_R1 < r < COIL_R2 and abs(z) < COIL_HALF_LENGTH,
        "air": lambda r, z: True,
    })
    _classify(gmsh, 1, {
        "axis": lambda r, z: abs(r) < eps,
        "outer": lambda r, z: abs(r - AIR_EXTENT) < eps or abs(abs(z) - AIR_EXTENT) < eps,
    })
    coil_curves = [tag for _, tag in gmsh.model.getBoundary([(2, coil)], oriented=False)]
    _threshold_field(gmsh, coil_curves, 0.0012, 0.04, 0.03, 0.4)


# --- transformer: papers 000 and 002 (m) ------------------------------------------------------------
# Core 2.2 m x 3.0 m with one 1.2 m x 2.0 m window; a winding on each limb: secondary (inner, open)
# and primary (outer, excited). "_in" conductors lie in the window, "_out" ones outside the core.
CORE_HALF_W, CORE_HALF_H, WINDOW_HALF_W, WINDOW_HALF_H, AIR_HALF = 1.1, 1.5, 0.6, 1.0, 3.5
COIL_HALF_H = 0.85


def _build_transformer(gmsh) -> None:
    occ = gmsh.model.occ
    core_outer = occ.addRectangle(-CORE_HALF_W, -CORE_HALF_H, 0, 2 * CORE_HALF_W, 2 * CORE_HALF_H)
    window = occ.addRectangle(-WINDOW_HALF_W, -WINDOW_HALF_H, 0, 2 * WINDOW_HALF_W, 2 * WINDOW_HALF_H)
    core, _ = occ.cut([(2, core_outer)], [(2, window)])
    coils = {}
    # (x from, x to) measured outward from the limb's window face / outer face
    for name, (gap, width) in {"secondary": (0.02, 0.10), "primary": (0.18, 0.15)}.items():
        rects = []
        for sign in (-1, 1):
            inner = sign * (WINDOW_HALF_W - gap - width)
            outer = sign * (CORE_HALF_W + gap)
            rects.append(("in", occ.addRectangle(min(inner, inner + sign * width), -COIL_HALF_H, 0,
                                                 width, 2 * COIL_HALF_H)))
            rects.append(("out", occ.addRectangle(min(outer, outer + sign * width), -COIL_HALF_H, 0,
                                                  width, 2 * COIL_HALF_H)))
        coils[name] = rects
    air = occ.addRectangle(-AIR_HALF, -AIR_HALF, 0, 2 * AIR_HALF, 2 * AIR_HALF)
    named = [("core", core)] + [(f"{name}_{side}", [(2, tag)])
                                for name, rects in coils.items() for side, tag in rects]
    tools = [dt for _, dts in named for dt in dts]
    _, pieces = occ.fragment([(2, air)], tools)
    occ.synchronize()
    # pieces[0] lists what the air box became; pieces[1 + i] what tools[i] became.
    owner: dict[str, list[int]] = {}
    claimed = set()
    regions_of_tools = [region for region, dts in named for _ in dts]
    for i, region in enumerate(regions_of_tools):
        tags = [tag for _, tag in pieces[1 + i]]
        owner.setdefault(region, []).extend(tags)
        claimed.update(tags)
    owner["air"] = [tag for _, tag in pieces[0] if tag not in claimed]
    for region, tags in owner.items():
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, sorted(set(tags))), region)
    eps = 1e-9
    _classify(gmsh, 1, {
        "outer": lambda x, y: abs(abs(x) - AIR_HALF) < eps or abs(abs(y) - AIR_HALF) < eps,
    })
    inner_curves = [tag for _, tag in gmsh.model.getEntities(1)
                    if max(map(abs, gmsh.model.occ.getCenterOfMass(1, tag)[:2])) < AIR_HALF - eps]
    _threshold_field(gmsh, inner_curves, 0.06, 0.3, 0.2, 2.0)


CASES: dict[str, Case] = {c.name: c for c in (
    Case("open-slot", "Motor open slot ABDE (paper 000, Fig. 7)", "planar", "mm", _build_open_slot,
         "Air region of a stator open slot and half the air gap, magnetic scalar potential "
         "700 A on AB and 0 A on the iron surface CDE.", ("AB", "BC", "EA", "CDE")),
    Case("solenoid", "Axisymmetric solenoid in air (paper 002, Fig. 2)", "axisymmetric", "m",
         _build_solenoid,
         "Thick solenoid (r 20-25 mm, length 100 mm) carrying azimuthal current density, "
         "air region r < 0.5 m, |z| < 0.5 m, A = 0 on the outer boundary.", ("axis", "outer")),
    Case("transformer", "Single-phase core-type transformer (papers 000 and 002)", "planar", "m",
         _build_transformer,
         "Iron core with one window, primary winding excited, secondary open, air box 7 m x 7 m "
         "with A = 0 on its boundary; sizable from a few thousand to millions of elements.", ("outer",)),
)}


def mesh_case(name: str, elements: int | None = None, mesh_size_factor: float | None = None) -> TriMesh:
    """Mesh a built-in case; coordinates in the case's length_unit.

    elements: approximate target element count; mesh_size_factor: multiplies every mesh size
    (1 = nominal). At most one of them.
    """
    if name not in CASES:
        raise ProblemError(f"unknown case '{name}'; built-in cases: {', '.join(CASES)}")
    if elements is not None and mesh_size_factor is not None:
        raise ProblemError("give either a target element count or a mesh size factor, not both")
    if elements is not None and elements < 50:
        raise ProblemError(f"target element count {elements} is too small (at least 50)")
    if mesh_size_factor is not None and not mesh_size_factor > 0:
        raise ProblemError(f"mesh size factor must be positive, got {mesh_size_factor}")
    # Above MAX_GMSH_ELEMENTS, mesh a quarter (or a sixteenth...) with gmsh and refine uniformly:
    # every case has straight edges, so refinement is exact and far faster than meshing.
    refinements = 0
    while elements is not None and elements > MAX_GMSH_ELEMENTS:
        elements //= 4
        refinements += 1
    mesh = _mesh_with_gmsh(CASES[name], elements, mesh_size_factor)
    for _ in range(refinements):
        mesh = refine_uniform(mesh)
    return mesh


def _mesh_with_gmsh(case: Case, elements: int | None, mesh_size_factor: float | None) -> TriMesh:
    with gmsh_session(case.name) as gmsh:
        case.build(gmsh)
        gmsh.option.setNumber("Mesh.Algorithm", 6 if (elements or 0) < 100_000 else 5)
        factor = mesh_size_factor or 1.0
        gmsh.option.setNumber("Mesh.MeshSizeFactor", factor)
        gmsh.model.mesh.generate(2)
        # Two calibration steps bring the count within a few per cent of the target.
        for _ in range(2 if elements is not None else 0):
            count = len(gmsh.model.mesh.getElementsByType(2)[0])
            if abs(count - elements) <= 0.03 * elements:
                break
            factor *= math.sqrt(count / elements)
            gmsh.model.mesh.clear()
            gmsh.option.setNumber("Mesh.MeshSizeFactor", factor)
            gmsh.model.mesh.generate(2)
        return trimesh_from_gmsh(gmsh)
