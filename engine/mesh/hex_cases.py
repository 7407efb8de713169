"""Built-in parametric 3D cases meshed by gmsh as structured (transfinite, recombined) hexahedra, with
named regions and boundary faces and a size knob."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import ProblemError
from .gmsh_build import gmsh_nodes_and_groups, gmsh_session
from .hexmesh import HexMesh, make_hexmesh

MAX_HEX_ELEMENTS = 2_000_000
_GMSH_HEXAHEDRON, _GMSH_QUADRANGLE = 5, 3  # gmsh element types of the 8-node hexahedron and 4-node quad


@dataclass(frozen=True)
class HexCase:
    """A built-in 3D geometry. Coordinates are in the case's length_unit."""

    name: str
    title: str
    length_unit: str
    # build(gmsh, divisions) adds geometry, transfinite divisions and physical groups; divisions(elements)
    # gives the divisions for a target element count (None: nominal)
    build: Callable
    divisions: Callable
    description: str
    boundaries: tuple[str, ...]  # the named faces build() makes (a test checks them against the mesh)


# --- cantilever: a steel beam clamped at x = 0, loaded on its tip face x = L (m) ------------------
BEAM_LENGTH, BEAM_WIDTH, BEAM_HEIGHT = 1.0, 0.1, 0.1
BEAM_NOMINAL = (10, 1, 1)  # elements along x, y, z: coarse, the element order p carries the accuracy


def _beam_divisions(aspect: float, nominal: tuple[int, int, int]):
    """divisions(elements): (nx, ny, ny) of a beam aspect times longer (x) than its square section is wide,
    nearly cubic elements, about elements of them (None: nominal)."""
    def divisions(elements: int | None) -> tuple[int, int, int]:
        if elements is None:
            return nominal
        nx = max(1, round((elements * aspect ** 2) ** (1 / 3)))
        ny = max(1, round(nx / aspect))
        return max(1, round(elements / (ny * ny))), ny, ny

    return divisions


def _box_builder(lengths: tuple[float, float, float], region: str, faces: dict[str, tuple[int, float]]):
    """build(gmsh, divisions): the box [0, lengths] as one region of transfinite hexahedra, with the named
    faces {name: (axis, coordinate)}."""
    def build(gmsh, divisions: tuple[int, int, int]) -> None:
        occ, mesh = gmsh.model.occ, gmsh.model.mesh
        volume = occ.addBox(0, 0, 0, *lengths)
        occ.synchronize()
        for _, curve in gmsh.model.getEntities(1):
            box = np.array(gmsh.model.getBoundingBox(1, curve))
            axis = int(np.argmax(box[3:] - box[:3]))
            mesh.setTransfiniteCurve(curve, divisions[axis] + 1)
        for _, surface in gmsh.model.getEntities(2):
            mesh.setTransfiniteSurface(surface)
            mesh.setRecombine(2, surface)
        mesh.setTransfiniteVolume(volume)
        gmsh.model.setPhysicalName(3, gmsh.model.addPhysicalGroup(3, [volume]), region)
        eps = 1e-9 * max(lengths)
        for name, (axis, value) in faces.items():
            tags = [tag for _, tag in gmsh.model.getEntities(2)
                    if abs(gmsh.model.occ.getCenterOfMass(2, tag)[axis] - value) < eps]
            gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, tags), name)

    return build


_BEAM = (BEAM_LENGTH, BEAM_WIDTH, BEAM_HEIGHT)
_BEAM_FACES = {"clamp": (0, 0.0), "tip": (0, BEAM_LENGTH), "bottom": (2, 0.0), "top": (2, BEAM_HEIGHT)}
# --- bar-hex: the boundary element study's tension bar, 200 x 50 x 50 mm, as hexahedra (m) ----------
_BAR = (0.2, 0.05, 0.05)
_BAR_FACES = {f"{'xyz'[axis]}{side}": (axis, side * _BAR[axis]) for axis in range(3) for side in (0, 1)}


HEX_CASES: dict[str, HexCase] = {c.name: c for c in (
    HexCase("cantilever", "Clamped steel cantilever beam", "m",
            _box_builder(_BEAM, "steel", _BEAM_FACES),
            _beam_divisions(BEAM_LENGTH / BEAM_WIDTH, BEAM_NOMINAL),
            "Beam 1 m x 0.1 m x 0.1 m clamped at x = 0 (face 'clamp'), loaded on its tip face x = 1 m "
            "('tip'); faces 'top' (z = 0.1 m) and 'bottom' (z = 0). Structured hexahedra, 10 x 1 x 1 "
            "at nominal size: the element order carries the accuracy.", tuple(_BEAM_FACES)),
    HexCase("bar-hex", "Bar under uniform tension (hexahedra)", "m", _box_builder(_BAR, "steel", _BAR_FACES),
            _beam_divisions(_BAR[0] / _BAR[1], (4, 1, 1)),
            "The boundary element study's bar (200 x 50 x 50 mm on rollers at x = 0, y = 0, z = 0, pulled by "
            "100 MPa at x = 200 mm) as structured hexahedra, faces x0, x1, y0, y1, z0, z1: the same part for "
            "checking one study against the other.", tuple(_BAR_FACES)),
)}


def mesh_hex_case(name: str, elements: int | None = None) -> HexMesh:
    """Mesh a built-in 3D case; coordinates in the case's length_unit.

    elements: approximate target element count (None: the case's nominal mesh).
    """
    if name not in HEX_CASES:
        raise ProblemError(f"unknown case '{name}'; built-in 3D cases: {', '.join(HEX_CASES)}")
    if elements is not None and (isinstance(elements, bool) or not 1 <= elements <= MAX_HEX_ELEMENTS):
        raise ProblemError(f"target element count must be from 1 to {MAX_HEX_ELEMENTS:,}, got {elements}")
    case = HEX_CASES[name]
    with gmsh_session(case.name) as gmsh:
        case.build(gmsh, case.divisions(elements))
        gmsh.model.mesh.generate(3)
        return hexmesh_from_gmsh(gmsh)


def hexmesh_from_gmsh(gmsh) -> HexMesh:
    """Read the current gmsh model's 3D mesh: 3D physical groups as regions, 2D ones as boundaries."""
    points, cells_of = gmsh_nodes_and_groups(gmsh)
    hexes, region_index, region_names = cells_of(3, _GMSH_HEXAHEDRON, 8)
    faces, face_boundary, boundary_names = cells_of(2, _GMSH_QUADRANGLE, 4)
    return make_hexmesh(points, hexes, region_index, region_names, faces, face_boundary, boundary_names)
