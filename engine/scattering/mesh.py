"""The scattering study's volume mesh: tetrahedra between the scatterer Gamma and the outer surface S, with
S' embedded (faces of tetrahedra lie on it), meshed by gmsh from three closed triangle surfaces."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import MeshError, ProblemError
from ..mesh.checks import check_apart
from ..mesh.gmsh_build import gmsh_nodes_and_groups, gmsh_session
from ..truncation.surfaces import INSIDE, TriSurface, check_closed_outward, winding_number
from .layers import layered_tets, shares_triangulation
from .nedelec import sorted_tets

SURFACES = ("scatterer", "inner", "outer")  # Gamma, S', S
MAX_TETRAHEDRA = 3_000_000
MAX_SURFACE_TRIANGLES = 1_000_000  # S's triangles at MAX_TETRAHEDRA: about one layer of three per triangle
TOO_FINE = "lower the frequency or elements_per_wavelength, or narrow the gaps"
NESTING_PROBES = 16  # nodes of a surface tested for being inside the next one


@dataclass(frozen=True, eq=False)
class ScatteringMesh:
    """points (n, 3) m; tets (m, 4) with sorted vertices; region (m,) 0 between Gamma and S', 1 between S'
    and S; surfaces {name: (k, 3) triangles over points, oriented with normals pointing away from the
    scatterer}."""

    points: np.ndarray
    tets: np.ndarray
    region: np.ndarray
    surfaces: dict

    @property
    def n_elements(self) -> int:
        return len(self.tets)

    @property
    def n_nodes(self) -> int:
        return len(self.points)


def check_nested(scatterer: TriSurface, inner: TriSurface, outer: TriSurface) -> None:
    """Gamma inside S' inside S, no two touching or crossing (ProblemError naming the pair). Surfaces that
    do not cross lie wholly inside or wholly outside each other, so a few nodes of each decide it."""
    check_apart(scatterer.points, scatterer.triangles, inner.points, inner.triangles,
                "the scatterer and the inner surface S'")
    check_apart(inner.points, inner.triangles, outer.points, outer.triangles,
                "the inner surface S' and the outer surface S")
    for body, around, what in ((scatterer, inner, "the scatterer is not enclosed by S'"),
                               (inner, outer, "S' is not inside S")):
        probe = body.points[np.linspace(0, len(body.points) - 1, min(NESTING_PROBES, len(body.points))).astype(int)]
        outside = int((winding_number(around, probe) < INSIDE).sum())
        if outside:
            raise ProblemError(f"{what}: '{body.name}' lies outside '{around.name}' ({outside} of {len(probe)} "
                               "nodes tested)")


def check_surface_size(radius: float, size: float) -> None:
    """ProblemError before gmsh meshes a surface of about a sphere of radius (m) at triangle edge size (m)
    when it would have more than MAX_SURFACE_TRIANGLES (gmsh would run for hours and out of memory)."""
    triangles = 4 * math.pi * radius ** 2 / (math.sqrt(3) / 4 * size ** 2)
    if triangles > MAX_SURFACE_TRIANGLES:
        raise ProblemError(f"the outer surface S would have about {triangles:,.0f} triangles, more than "
                           f"{MAX_SURFACE_TRIANGLES:,}; {TOO_FINE}")


def enclosed_volume(surface: TriSurface) -> float:
    """The volume (m^3) a closed triangle surface encloses (divergence theorem, either orientation)."""
    p = np.asarray(surface.points, dtype=float)[surface.triangles]
    return abs(float(np.einsum("ij,ij->", p[:, 0], np.cross(p[:, 1], p[:, 2])))) / 6


def check_tetrahedra(scatterer: TriSurface, outer: TriSurface, size: float) -> None:
    """ProblemError before gmsh meshes the volume when regular tetrahedra of edge size (m) filling the
    space between the scatterer and S would number more than MAX_TETRAHEDRA."""
    shell = enclosed_volume(outer) - enclosed_volume(scatterer)
    tetrahedra = shell / (size ** 3 / (6 * math.sqrt(2)))
    if tetrahedra > MAX_TETRAHEDRA:
        raise ProblemError(f"the volume mesh would have about {tetrahedra:,.0f} tetrahedra, more than "
                           f"{MAX_TETRAHEDRA:,}; {TOO_FINE}")


def volume_mesh(scatterer: TriSurface, inner: TriSurface, outer: TriSurface, size: float,
                check=lambda: None, size_at=None) -> ScatteringMesh:
    """Tetrahedra of edge about size (m) between the three nested closed surfaces, their triangles kept as
    given (the surfaces' own mesh is the volume mesh's boundary and interface); smaller where size_at
    (points (n, 3) m -> (n,) m, or None) asks. Surfaces sharing one triangulation are meshed in prism
    layers (layers.py) where none folds, otherwise by gmsh."""
    check_nested(scatterer, inner, outer)
    check_tetrahedra(scatterer, outer, size)
    layered = layered_tets((scatterer, inner, outer), size) if shares_triangulation(scatterer, inner, outer) else None
    if layered is not None:
        points, tets, region, offsets = layered
        triangles = np.concatenate([scatterer.triangles + offset for offset in offsets])
        owner = np.repeat(np.arange(3), len(scatterer.triangles))
        return _scattering_mesh(points, tets, region, triangles, owner)
    with gmsh_session("scattering") as gmsh:
        _add_surfaces(gmsh, (scatterer, inner, outer))
        loops = [gmsh.model.geo.addSurfaceLoop([i + 1]) for i in range(3)]
        near = gmsh.model.geo.addVolume([loops[1], loops[0]])
        far = gmsh.model.geo.addVolume([loops[2], loops[1]])
        gmsh.model.geo.synchronize()
        for dim, tag, name in ((3, near, "near"), (3, far, "far")):
            gmsh.model.setPhysicalName(dim, gmsh.model.addPhysicalGroup(dim, [tag]), name)
        for i, name in enumerate(SURFACES):
            gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, [i + 1]), name)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
        gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 1)
        if size_at is not None:
            gmsh.model.mesh.setSizeCallback(lambda dim, tag, x, y, z, lc: min(lc, float(size_at([[x, y, z]])[0])))
        check()
        gmsh.model.mesh.generate(3)
        points, cells_of = gmsh_nodes_and_groups(gmsh)
        tets, region, _ = cells_of(3, 4, 4)
        triangles, owner, _ = cells_of(2, 2, 3)
    if len(tets) == 0:
        raise MeshError("gmsh made no tetrahedra between the surfaces (are they nested and closed?)")
    return _scattering_mesh(points, tets, region, triangles, owner)


def _scattering_mesh(points, tets, region, triangles, owner) -> ScatteringMesh:
    """The mesh of points (n, 3) m, tets (m, 4), region (m,) and the SURFACES' triangles (k, 3), owner (k,)
    their index in SURFACES; ProblemError over MAX_TETRAHEDRA, MeshError where a surface is not closed."""
    if len(tets) > MAX_TETRAHEDRA:
        raise ProblemError(f"the volume mesh has {len(tets):,} tetrahedra, more than {MAX_TETRAHEDRA:,}; {TOO_FINE}")
    surfaces = {name: check_closed_outward(TriSurface(name, points, triangles[owner == i])).triangles
                for i, name in enumerate(SURFACES)}
    return ScatteringMesh(points, sorted_tets(tets, len(points)), region.astype(np.int8), surfaces)


def _add_surfaces(gmsh, surfaces) -> None:
    """Each surface as a discrete gmsh surface (tags 1, 2, 3) with its nodes and triangles."""
    node_offset, element_offset = 0, 0
    for tag, surface in enumerate(surfaces, start=1):
        gmsh.model.addDiscreteEntity(2, tag)
        nodes = np.arange(node_offset + 1, node_offset + 1 + len(surface.points))
        gmsh.model.mesh.addNodes(2, tag, nodes, np.asarray(surface.points, dtype=float).ravel())
        elements = np.arange(element_offset + 1, element_offset + 1 + len(surface.triangles))
        gmsh.model.mesh.addElementsByType(tag, 2, elements, (surface.triangles + node_offset + 1).ravel())
        node_offset += len(surface.points)
        element_offset += len(surface.triangles)
