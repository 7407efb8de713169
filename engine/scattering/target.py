"""A scatterer given alone: a surface mesh file any meshio reader takes (split until its triangles are no
larger than the elements beside them) or a STEP / IGES / BREP file meshed through gmsh's OpenCASCADE
kernel, closed and not self-intersecting, and the check that its size in wavelengths is not a unit mistake.
S' and S are built around it by shells.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import MeshError, ProblemError
from ..mesh.checks import check_not_self_intersecting
from ..mesh.gmsh_build import gmsh_nodes_and_groups, gmsh_session
from ..mesh.repair import closed_outward
from ..truncation.surfaces import TriSurface, compact_surface, read_surface
from .mesh import MAX_SURFACE_TRIANGLES, TOO_FINE

CAD_SUFFIXES = (".step", ".stp", ".iges", ".igs", ".brep")
UNIT_DECLARED = (".step", ".stp", ".iges", ".igs")  # these state their length unit: read in metres by it
OCC_MILLIMETRE = 1e-3  # m: the unit a STEP or IGES file is read in
MIN_WAVELENGTHS = 1e-3  # a target smaller than this across is a length_unit mistake, not a scatterer to mesh
MAX_WAVELENGTHS = 100.0  # one larger across needs more than MAX_TETRAHEDRA at any order
CAD_CURVATURE_ELEMENTS = 24  # edges around a circle of the CAD surface's curvature radius
CAD_FINEST = 8  # its smallest triangle edge: size / CAD_FINEST
CAD_MESH_ALGORITHM = 5  # gmsh's Delaunay: Frontal-Delaunay (6) over-refines a cone towards its apex (r 100 mm,
# h 300 mm at 83 mm: 14,710 triangles in 16 s where Delaunay makes 1,158 in 0.05 s)


def target_surface(path: Path, scale: float, size: float, check_extent=lambda across: None) -> TriSurface:
    """The scatterer of a file in metres (coordinates times scale): a CAD file meshed at triangle edge
    size (m), a surface mesh split until no edge is longer than size; closed and not self-intersecting
    (MeshError naming the file otherwise). check_extent(across) sees its widest extent (m) before either.
    A STEP or IGES file is read in the unit it declares (scale is not applied)."""
    path = Path(path)
    if not path.is_file():
        raise MeshError(f"scatterer: file not found: {path}")
    if path.suffix.lower() in CAD_SUFFIXES:
        surface = cad_surface(path, scale, size, check_extent)
    else:
        surface = read_surface(path, scale, "scatterer")
        check_extent(float(np.ptp(surface.points, axis=0).max()))
        surface = split_to_size(surface, size)
    return TriSurface("scatterer", surface.points, surface.triangles)


def cad_surface(path: Path, scale: float, size: float, check_extent=lambda across: None) -> TriSurface:
    """The surfaces of a STEP, IGES or BREP file meshed by gmsh (OpenCASCADE), in metres (a BREP file's
    coordinates times scale): solids that overlap or touch fused into one, solids apart kept as several
    closed parts of the one scatterer, the triangles repaired as mesh.repair does (faces not sewn to each
    other, the folded triangles gmsh can make at a cone's apex)."""
    with gmsh_session("target") as gmsh:
        occ = gmsh.model.occ
        try:
            import_in_metres(gmsh, path, scale)
            solids = occ.getEntities(3)
            if len(solids) > 1:
                occ.fuse(solids[:1], solids[1:])
            occ.synchronize()
        except Exception as exc:  # noqa: BLE001 (gmsh raises a bare Exception with OCC's reason)
            raise MeshError(f"scatterer: cannot read CAD file {path}: {exc}") from None
        surfaces = [t for _, t in gmsh.model.getEntities(2)]
        if not surfaces:
            raise MeshError(f"scatterer: CAD file {path} has no surface (a closed solid or shell is needed)")
        boxes = np.array([gmsh.model.getBoundingBox(2, t) for t in surfaces])  # the faces': a degenerate
        check_extent(float((boxes[:, 3:].max(axis=0) - boxes[:, :3].min(axis=0)).max()))  # edge's is not scaled
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, surfaces), "scatterer")
        gmsh.option.setNumber("Mesh.Algorithm", CAD_MESH_ALGORITHM)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
        gmsh.option.setNumber("Mesh.MeshSizeMin", size / CAD_FINEST)
        gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", CAD_CURVATURE_ELEMENTS)
        gmsh.model.mesh.generate(2)
        points, cells_of = gmsh_nodes_and_groups(gmsh)
        triangles, _, _ = cells_of(2, 2, 3)
    if not len(triangles):
        raise MeshError(f"scatterer: gmsh made no triangles on the surfaces of {path}")
    surface = compact_surface(path.name, *closed_outward(points, triangles, path.name))
    check_not_self_intersecting(surface.points, surface.triangles, f"scatterer {path.name}")
    return surface


def import_in_metres(gmsh, path: Path, scale: float) -> None:
    """The file's shapes imported into the gmsh session in metres: a STEP or IGES file converted by
    OpenCASCADE to millimetres from the unit it declares (Geometry.OCCTargetUnit), a BREP file as it is in
    length_unit, then scaled by gmsh (Geometry.OCCScaling: 1e-3, or scale). OpenCASCADE keeps its unit for
    the rest of the process, where gmsh also writes files in it, so it stays at its default millimetres;
    converted to metres instead, the curves of an IGES cone's faces no longer meet within MERGE_TOLERANCE.
    gmsh meshes a STEP cone's apex as it is only in metres: in millimetres its triangles stop short of it
    (27 mm short at 250 mm triangles). Before OpenCASCADE's first STEP file in a process gmsh cannot set
    the unit for an IGES file, which is then in the default millimetres."""
    declared = path.suffix.lower() in UNIT_DECLARED
    gmsh.option.setNumber("Geometry.OCCScaling", OCC_MILLIMETRE if declared else scale)
    gmsh.option.setString("Geometry.OCCTargetUnit", "MM" if declared else "")
    try:
        gmsh.model.occ.importShapes(str(path))
    except Exception as exc:  # noqa: BLE001 (gmsh's bare Exception)
        if not declared or "target unit" not in str(exc):
            raise
        gmsh.option.setString("Geometry.OCCTargetUnit", "")
        gmsh.model.occ.importShapes(str(path))


def split_to_size(surface: TriSurface, size: float) -> TriSurface:
    """The surface with every triangle split into four (at its edge midpoints) until no edge is longer
    than size (m): the same faceted shape, fine enough for the tetrahedra beside it."""
    points, triangles = np.asarray(surface.points, dtype=float), surface.triangles
    while _longest_edge(points, triangles) > size:
        if 4 * len(triangles) > MAX_SURFACE_TRIANGLES:
            raise ProblemError(f"the scatterer's triangles split to {size:.3g} m would number more than "
                               f"{MAX_SURFACE_TRIANGLES:,}; {TOO_FINE}")
        points, triangles = _split(points, triangles)
    return TriSurface(surface.name, points, triangles)


def _longest_edge(points, triangles) -> float:
    p = points[triangles]
    return float(np.linalg.norm(p - np.roll(p, 1, axis=1), axis=2).max())


def _split(points, triangles):
    """Every triangle into four; the midpoints of shared edges shared."""
    edges = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]), axis=1)
    unique, inverse = np.unique(edges, axis=0, return_inverse=True)
    mid = len(points) + inverse.reshape(3, -1).T  # (m, 3): the midpoints of edges 01, 12, 20
    points = np.vstack([points, points[unique].mean(axis=1)])
    a, b, c = triangles.T
    ab, bc, ca = mid.T
    return points, np.vstack([np.column_stack(t) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))])


def check_target_size(across: float, wavelength: float, where: str) -> None:
    """ProblemError when the target, across (m) at its widest, is under MIN_WAVELENGTHS or over
    MAX_WAVELENGTHS: a unit mistake (where says which length_unit and file to look at)."""
    ratio = across / wavelength
    if ratio < MIN_WAVELENGTHS:
        raise ProblemError(f"the scatterer is {across:.3g} m across, {ratio:.2g} wavelengths: below "
                           f"{MIN_WAVELENGTHS:g} wavelengths it scatters nothing measurable; {where}")
    if ratio > MAX_WAVELENGTHS:
        raise ProblemError(f"the scatterer is {across:.3g} m across, {ratio:,.0f} wavelengths: more than "
                           f"{MAX_WAVELENGTHS:g} wavelengths cannot be meshed; {where}")
