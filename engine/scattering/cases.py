"""Built-in scattering geometries and targets from files as three closed surfaces (Gamma, S', S) in metres,
meshed for a frequency: the PEC sphere inside two spheres; the NASA almond, the other EMCC bodies
(emcc.py) and the faceted aircraft (aircraft.py), or a scatterer from a surface mesh or CAD file
(target.py), inside S' and S built around them; or all three surfaces from files."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..mesh.meshing_process import run_meshing
from ..truncation.almond import ALMOND_LENGTH, almond_surface
from ..truncation.surfaces import TriSurface, read_surface
from .aircraft import AIRCRAFT_LENGTH, aircraft_surface
from .edges import edge_sizes
from .emcc import BODIES, INCH, body_surface
from .geodesic import geodesic_sphere
from .mesh import check_surface_size, enclosed_volume
from .shells import ellipsoid, ellipsoid_shell, shells_around
from .target import UNIT_DECLARED, check_target_size, target_surface

CURVATURE_ELEMENTS = 60  # at least this many edges around a great circle of a sphere: its facets limit the RCS error
EMCC_CASES = tuple(BODIES)
enclosing_ellipsoid = ellipsoid_shell  # the name bench/scattering_peers.py builds its almond's surfaces with


def sphere_case(radius: float, wavelength: float, inner_gap: float, outer_gap: float, density: float):
    """(Gamma, S', S) for a sphere of radius (m); gaps in wavelengths, density in elements per wavelength."""
    size = wavelength / density
    curved = 2 * math.pi * radius / CURVATURE_ELEMENTS
    volume = 4 / 3 * math.pi * radius ** 3
    shells = ((radius + inner_gap * wavelength, "inner"), (radius + outer_gap * wavelength, "outer"))
    if curved < size:  # the scatterer finer than the element size: each surface meshed by gmsh at its own
        body = volume_matched(ellipsoid((0, 0, 0), (radius,) * 3, curved, "scatterer", CURVATURE_ELEMENTS), volume)
        return body, *(ellipsoid((0, 0, 0), (r,) * 3, size, name) for r, name in shells)
    body = volume_matched(geodesic_sphere(radius, size, "scatterer"), volume)  # one triangulation, in layers
    return body, *(projected(body, r, name) for r, name in shells)


def projected(body: TriSurface, radius: float, name: str) -> TriSurface:
    """The body's triangles with its nodes moved along their directions from the origin onto the sphere of
    radius (m) about it."""
    points = np.asarray(body.points, dtype=float)
    return TriSurface(name, radius * points / np.linalg.norm(points, axis=1, keepdims=True), body.triangles)


def volume_matched(body: TriSurface, volume: float) -> TriSurface:
    """body scaled about the origin to enclose volume (m^3). A sphere's straight facets lie inside it and
    leave it about 0.4 % small at CURVATURE_ELEMENTS edges a great circle; at Nedelec order 3 that shortfall,
    not the elements, dominates the RCS error against Mie (2 wavelengths: 0.087 / 0.057 dB E / H-plane,
    0.028 / 0.018 dB with the volume matched), so the sphere's facets enclose the true sphere's volume."""
    scale = (volume / enclosed_volume(body)) ** (1.0 / 3.0)
    return replace(body, points=body.points * scale)


def almond_case(wavelength: float, inner_gap: float, outer_gap: float, density: float, shells: str):
    """(Gamma, S', S) for the EMCC almond (length along x, tip toward +x); shells as shells.shells_around."""
    size = wavelength / density
    fine = min(size, ALMOND_LENGTH / 60)  # the tip and the thin edges need a minimum resolution
    probe = almond_surface(2000)
    area = 0.5 * np.linalg.norm(np.cross(*(probe.points[probe.triangles[:, i]] - probe.points[probe.triangles[:, 0]]
                                           for i in (1, 2))), axis=1).sum()
    body = almond_surface(int(4 * area / (math.sqrt(3) * fine ** 2)))
    body = TriSurface("scatterer", body.points, body.triangles)
    return (body, *shells_around(body, inner_gap * wavelength, outer_gap * wavelength, size, shells))


def emcc_case(name: str, wavelength: float, inner_gap: float, outer_gap: float, density: float, shells: str):
    """(Gamma, S', S) for an EMCC body of revolution (emcc.BODIES, axis along x) inside S' and S."""
    size = wavelength / density
    body = body_surface(name, size)
    return (body, *shells_around(body, inner_gap * wavelength, outer_gap * wavelength, size, shells))


def aircraft_case(wavelength: float, inner_gap: float, outer_gap: float, density: float, shells: str):
    """(Gamma, S', S) for the faceted aircraft (aircraft.py, nose toward +x) inside S' and S."""
    size = wavelength / density
    body = aircraft_surface(size)
    return (body, *shells_around(body, inner_gap * wavelength, outer_gap * wavelength, size, shells))


def target_case(path: str, scale: float, unit: str, wavelength: float, inner_gap: float, outer_gap: float,
                density: float, shells: str):
    """(Gamma, S', S) for the scatterer of a surface-mesh or CAD file (coordinates in unit, scale m per unit,
    but for a STEP or IGES file's own unit) inside S' and S; ProblemError for a target whose size says the
    unit is wrong."""
    size = wavelength / density
    name = Path(path).name
    where = (f"is the length unit {name} declares right?" if Path(path).suffix.lower() in UNIT_DECLARED
             else f'is length_unit = "{unit}" right for {name}?')

    def check_extent(across: float) -> None:  # before the target is meshed or split for this size
        check_target_size(across, wavelength, where)
        check_surface_size(across / 2 + outer_gap * wavelength, size)

    body = target_surface(Path(path), scale, size, check_extent)
    return (body, *shells_around(body, inner_gap * wavelength, outer_gap * wavelength, size, shells))


def file_surfaces(problem) -> tuple[TriSurface, TriSurface, TriSurface]:
    """(Gamma, S', S) from the problem's three mesh files, in metres."""
    scale = problem.length_scale
    return (read_surface(problem.scatterer_path, scale, "scatterer"),
            read_surface(problem.inner_path, scale, "inner_surface"),
            read_surface(problem.outer_path, scale, "outer_surface"))


def surfaces_of(problem, wavelength: float, control=None) -> tuple[TriSurface, TriSurface, TriSurface]:
    """(Gamma, S', S) in metres for any scattering problem: a built-in case or a target file meshed (in a
    child process when control can cancel), or three surface files."""
    gaps = (problem.inner_gap, problem.outer_gap, problem.density)
    size = wavelength / problem.density
    if problem.case is None and problem.inner_path is not None:
        return file_surfaces(problem)
    if problem.case is None:
        return run_meshing(target_case, str(problem.scatterer_path), problem.length_scale, problem.length_unit,
                           wavelength, *gaps, problem.shells, control=control)
    if problem.case == "pec-sphere":
        radius = problem.radius * problem.length_scale
        check_surface_size(radius + problem.outer_gap * wavelength, size)  # S, before gmsh
        check_target_size(2 * radius, wavelength, f'is length_unit = "{problem.length_unit}" right for the radius?')
        return run_meshing(sphere_case, radius, wavelength, *gaps, control=control)
    half = (ALMOND_LENGTH if problem.case == "nasa-almond" else AIRCRAFT_LENGTH if problem.case == "aircraft"
            else BODIES[problem.case].length * INCH) / 2
    check_surface_size(half + problem.outer_gap * wavelength, size)
    if problem.case == "nasa-almond":
        return run_meshing(almond_case, wavelength, *gaps, problem.shells, control=control)
    if problem.case == "aircraft":
        return run_meshing(aircraft_case, wavelength, *gaps, problem.shells, control=control)
    return run_meshing(emcc_case, problem.case, wavelength, *gaps, problem.shells, control=control)


def volume_sizes(problem, body: TriSurface, size: float):
    """What mesh.volume_mesh takes as size_at for a problem's scatterer meshed at element size (m): finer
    tetrahedra at its sharp edges (edges.py) for the almond, the EMCC bodies, the aircraft and a target
    file; None (the element size everywhere) for the sphere, which has none, and for three surface files,
    whose volume mesh follows their own triangles."""
    if problem.case == "pec-sphere" or (problem.case is None and problem.inner_path is not None):
        return None
    return edge_sizes(body, size)
