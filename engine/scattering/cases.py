"""Built-in scattering geometries as three closed surfaces (Gamma, S', S) in metres, meshed for a
frequency: the PEC sphere inside two spheres, and the NASA almond inside two ellipsoids."""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from ..errors import MeshError
from ..mesh.gmsh_build import gmsh_nodes_and_groups, gmsh_session
from ..truncation.almond import ALMOND_LENGTH, almond_surface
from ..truncation.surfaces import TriSurface, compact_surface, read_surface

CURVATURE_ELEMENTS = 60  # at least this many edges around a great circle of a sphere: its facets limit the RCS error
GAP_GROWTH_TRIES = 8


def ellipsoid(centre, semi_axes, size: float, name: str, curvature: int = 0) -> TriSurface:
    """A gmsh ellipsoid (a sphere when the semi-axes are equal) with triangles of edge about size (m), or
    smaller where curvature (edges per radian-circle, 0 for none) asks."""
    with gmsh_session(name) as gmsh:
        occ = gmsh.model.occ
        tag = occ.addSphere(0.0, 0.0, 0.0, 1.0)
        occ.dilate([(3, tag)], 0.0, 0.0, 0.0, *semi_axes)
        occ.translate([(3, tag)], *centre)
        occ.synchronize()
        surfaces = [t for _, t in gmsh.model.getEntities(2)]
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, surfaces), name)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
        gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", curvature)
        gmsh.model.mesh.generate(2)
        points, cells_of = gmsh_nodes_and_groups(gmsh)
        triangles, _, _ = cells_of(2, 2, 3)
    return compact_surface(name, points, triangles)


def sphere_case(radius: float, wavelength: float, inner_gap: float, outer_gap: float, density: float):
    """(Gamma, S', S) for a sphere of radius (m); gaps in wavelengths, density in elements per wavelength."""
    size = wavelength / density
    body = ellipsoid((0, 0, 0), (radius,) * 3, min(size, 2 * math.pi * radius / CURVATURE_ELEMENTS), "scatterer",
                     CURVATURE_ELEMENTS)
    inner = ellipsoid((0, 0, 0), (radius + inner_gap * wavelength,) * 3, size, "inner")
    outer = ellipsoid((0, 0, 0), (radius + outer_gap * wavelength,) * 3, size, "outer")
    return body, inner, outer


def enclosing_ellipsoid(body: TriSurface, gap: float, size: float, name: str) -> TriSurface:
    """An ellipsoid about the body's bounding-box centre, its axes proportional to the box's, whose nodes
    are at least gap (m) from the body (the body's points; grown until they are)."""
    low, high = body.points.min(axis=0), body.points.max(axis=0)
    centre, half = (low + high) / 2, np.maximum((high - low) / 2, 1e-3 * (high - low).max())
    scale = np.sqrt((((body.points - centre) / half) ** 2).sum(axis=1)).max()  # the body fits in scale * half
    tree = cKDTree(_dense_points(body))
    extra = gap
    for _ in range(GAP_GROWTH_TRIES):
        surface = ellipsoid(centre, scale * half + extra, size, name)
        distance = tree.query(surface.points)[0].min()
        if distance >= gap:
            return surface
        extra *= 1.05 * gap / max(distance, 1e-6 * gap)
    raise MeshError(f"could not place the {name} surface {gap:g} m from the scatterer")


def _dense_points(surface: TriSurface) -> np.ndarray:
    """The surface's nodes and its triangles' centroids and edge midpoints (for distance queries)."""
    c = surface.points[surface.triangles]
    return np.vstack([surface.points, c.mean(axis=1), (c + np.roll(c, 1, axis=1)).reshape(-1, 3) / 2])


def almond_case(wavelength: float, inner_gap: float, outer_gap: float, density: float):
    """(Gamma, S', S) for the EMCC almond (length along x, tip toward +x) inside two ellipsoids."""
    size = wavelength / density
    fine = min(size, ALMOND_LENGTH / 60)  # the tip and the thin edges need a minimum resolution
    probe = almond_surface(2000)
    area = 0.5 * np.linalg.norm(np.cross(*(probe.points[probe.triangles[:, i]] - probe.points[probe.triangles[:, 0]]
                                           for i in (1, 2))), axis=1).sum()
    body = almond_surface(int(4 * area / (math.sqrt(3) * fine ** 2)))
    body = TriSurface("scatterer", body.points, body.triangles)
    inner = enclosing_ellipsoid(body, inner_gap * wavelength, size, "inner")
    outer = enclosing_ellipsoid(body, outer_gap * wavelength, size, "outer")
    return body, inner, outer


def file_surfaces(problem) -> tuple[TriSurface, TriSurface, TriSurface]:
    """(Gamma, S', S) from the problem's three mesh files, in metres."""
    scale = problem.length_scale
    return (read_surface(problem.scatterer_path, scale, "scatterer"),
            read_surface(problem.inner_path, scale, "inner_surface"),
            read_surface(problem.outer_path, scale, "outer_surface"))
