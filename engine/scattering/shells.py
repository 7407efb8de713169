"""The auxiliary surfaces S' and S of the FE-IIIEE built around a target: closed surfaces at least
inner_gap and outer_gap from it. Two shapes:
  ellipsoid  about the target's principal axes (its surface's second moment), its semi-axes in the
             proportions of the target's extent along them, grown until every node is the gap away;
  offset     the surface at a constant distance from the target: the outer level set of the distance to its
             surface, traced by marching tetrahedra (isosurface.py) and remeshed by gmsh.
shells = "auto" takes the offset where the ellipsoid S would enclose more than OFFSET_VOLUME_RATIO times the
offset S's volume of space around the target (the tetrahedra between the target and S cost in proportion to
that volume), the ellipsoid otherwise (fewer, better-shaped tetrahedra for the same target)."""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from ..errors import MeshError
from ..mesh.gmsh_build import gmsh_nodes_and_groups, gmsh_session
from ..truncation.surfaces import TriSurface, compact_surface
from .isosurface import zero_surface
from .mesh import enclosed_volume

OFFSET_VOLUME_RATIO = 2.0
GRID_POINTS = 2_000_000  # the distance grid of an offset surface at most (about 0.3 GB to trace)
SAMPLES_PER_GAP = 20  # the target sampled this densely (per gap) for distances
MAX_SAMPLES = 4_000_000
GRID_SHIFT = 0.3819660  # of a grid spacing: the distance grid's offset from the target's bounding box
LEVEL_CLEARANCE = 0.01  # of a grid spacing: how far a grid value is kept from the traced level
GROWTH_TRIES = 8


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

def shells_around(body: TriSurface, inner_gap: float, outer_gap: float, size: float,
                  shells: str = "auto") -> tuple[TriSurface, TriSurface]:
    """(S', S) at least inner_gap and outer_gap (m) from the body, triangles of edge about size (m); shells
    "auto", "ellipsoid" or "offset" (auto: by the volume rule of the module's docstring)."""
    if shells == "auto":
        shells = chosen_shells(body, outer_gap, size)
    build = ellipsoid_shell if shells == "ellipsoid" else offset_shell
    return build(body, inner_gap, size, "inner"), build(body, outer_gap, size, "outer")

def chosen_shells(body: TriSurface, gap: float, size: float) -> str:
    """"offset" where the ellipsoid S at gap (m) would enclose more than OFFSET_VOLUME_RATIO times the space
    around the body that the offset S encloses, else "ellipsoid"."""
    points, triangles, _ = offset_trace(body, gap, min(gap, size))
    inside = enclosed_volume(body)
    offset = enclosed_volume(TriSurface("S", points, triangles)) - inside
    return "offset" if ellipsoid_volume(body, gap) - inside > OFFSET_VOLUME_RATIO * offset else "ellipsoid"

def principal_frame(body: TriSurface) -> tuple[np.ndarray, np.ndarray]:
    """(centre (3,), axes (3, 3) rows of unit vectors, right-handed): the body's principal axes (eigenvectors
    of the second moment of its surface about its centroid, smallest first) and the centre of its extent
    along them."""
    p = np.asarray(body.points, dtype=float)[body.triangles]
    area = 0.5 * np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    mean = area @ p.mean(axis=1) / area.sum()
    d = p - mean
    total = d.sum(axis=1)  # exact over each triangle: A / 12 (sum of v v^T over its corners + s s^T)
    moment = np.einsum("t,tij->ij", area / 12, np.einsum("tci,tcj->tij", d, d) + np.einsum("ti,tj->tij", total, total))
    axes = np.linalg.eigh(moment)[1].T
    axes[2] *= np.sign(np.linalg.det(axes))  # right-handed: a mirrored frame would turn surfaces inside out
    local = (body.points - mean) @ axes.T
    return mean + (local.min(axis=0) + local.max(axis=0)) / 2 @ axes, axes

def ellipsoid_shell(body: TriSurface, gap: float, size: float, name: str) -> TriSurface:
    """An ellipsoid about the body's principal frame, its semi-axes proportional to the body's extent along
    them, whose nodes are at least gap (m) from the body (grown until they are)."""
    centre, axes, semi = _ellipsoid_fit(body)
    distance_to_body = _distance_to(body, gap)
    extra = gap
    for _ in range(GROWTH_TRIES):
        surface = ellipsoid((0.0, 0.0, 0.0), semi + extra, size, name)
        placed = TriSurface(name, centre + surface.points @ axes, surface.triangles)
        distance = distance_to_body(placed.points).min()
        if distance >= gap:
            return placed
        extra *= 1.05 * gap / max(distance, 1e-6 * gap)
    raise MeshError(f"could not place the {name} surface {gap:g} m from the scatterer")

def ellipsoid_volume(body: TriSurface, gap: float) -> float:
    """The volume (m^3) of ellipsoid_shell's first ellipsoid (grown by gap), before any growth."""
    return 4 / 3 * math.pi * float(np.prod(_ellipsoid_fit(body)[2] + gap))

def _ellipsoid_fit(body: TriSurface) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, axes, semi-axes (3,) m): the smallest ellipsoid about the principal frame, with semi-axes
    in the proportions of the body's half-extents along it, that holds every node."""
    centre, axes = principal_frame(body)
    local = (body.points - centre) @ axes.T
    half = np.maximum(np.abs(local).max(axis=0), 1e-3 * np.abs(local).max())
    return centre, axes, np.sqrt(((local / half) ** 2).sum(axis=1)).max() * half

def _distance_to(body: TriSurface, gap: float):
    """A function giving, for points (n, 3), a lower bound on their distance (m) to the body's surface: the
    distance to samples of it (a lattice on each triangle no coarser than gap / SAMPLES_PER_GAP, or than
    MAX_SAMPLES allow), less that spacing."""
    spacing = max(gap / SAMPLES_PER_GAP, math.sqrt(2 * surface_area(body) / MAX_SAMPLES))
    tree = cKDTree(surface_samples(body, spacing))
    return lambda x: tree.query(np.asarray(x, dtype=float))[0] - spacing

def surface_samples(surface: TriSurface, spacing: float) -> np.ndarray:
    """Points (n, 3) on the surface: on each triangle the lattice of its k-fold split, k the least with edges
    of at most spacing (m), so that every point of the surface is within spacing of one."""
    corners = np.asarray(surface.points, dtype=float)[surface.triangles]
    longest = np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2).max(axis=1)
    folds = np.maximum(1, np.ceil(longest / spacing)).astype(int)
    out = []
    for k in np.unique(folds):
        i, j = (a.ravel() for a in np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij"))
        keep = i + j <= k
        weights = np.column_stack([k - i[keep] - j[keep], i[keep], j[keep]]) / k
        out.append(np.einsum("sw,twk->tsk", weights, corners[folds == k]).reshape(-1, 3))
    return np.unique(np.concatenate(out), axis=0)

def surface_area(surface: TriSurface) -> float:
    p = np.asarray(surface.points, dtype=float)[surface.triangles]
    return 0.5 * float(np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1).sum())

def offset_shell(body: TriSurface, gap: float, size: float, name: str) -> TriSurface:
    """The closed surface at about gap (m) outside the body, its nodes at least gap away, triangles of edge
    about size (m): the outer level set of the distance to the body at gap plus a margin for the grid,
    traced by marching tetrahedra and remeshed by gmsh (grown and traced again while a node is too close)."""
    distance_to_body = _distance_to(body, gap)
    level = gap
    for _ in range(GROWTH_TRIES):
        points, triangles, spacing = offset_trace(body, level, min(gap, size))
        surface = remeshed(points, triangles, size, name)
        distance = distance_to_body(surface.points).min()
        if distance >= gap:
            return surface
        level += max(gap - distance, spacing / 2)
    raise MeshError(f"could not place the {name} surface {gap:g} m from the scatterer")

def offset_trace(body: TriSurface, level: float, resolution: float):
    """(points, triangles, grid spacing): the outer component of {distance to the body = level} traced on a
    grid of spacing resolution / 2 (coarser where GRID_POINTS would not hold it); triangles outward."""
    low, high = body.points.min(axis=0) - level - resolution, body.points.max(axis=0) + level + resolution
    spacing = max(resolution / 2, (np.prod(high - low) / GRID_POINTS) ** (1 / 3))
    low = low - GRID_SHIFT * spacing  # no grid plane on a flat face's offset: no value at the level
    axes = [np.arange(lo, hi + spacing, spacing) for lo, hi in zip(low, high)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    tree = cKDTree(surface_samples(body, spacing / 4))
    values = tree.query(grid, distance_upper_bound=level + 2 * spacing)[0] - level
    near = LEVEL_CLEARANCE * spacing  # no grid value at the level itself: no vanishing triangle
    values = np.where(np.abs(values) < near, np.where(values < 0, -near, near), np.minimum(values, 2 * spacing))
    points, triangles = zero_surface(values.reshape([len(a) for a in axes]), low, spacing)
    return points, outermost(points, triangles), spacing

def outermost(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The triangles of the connected component enclosing the largest volume."""
    n = len(points)
    edges = np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]]])
    graph = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    owner = label[triangles[:, 0]]
    p = points[triangles]
    volume = np.bincount(owner, np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])))
    return triangles[owner == np.argmax(np.abs(volume))]

def remeshed(points: np.ndarray, triangles: np.ndarray, size: float, name: str) -> TriSurface:
    """A closed triangulated surface meshed again by gmsh with triangles of edge about size (m): its
    triangles classified into patches gmsh can parametrise, then meshed as those patches."""
    surface = compact_surface(name, points, triangles)
    with gmsh_session(name) as gmsh:
        gmsh.model.addDiscreteEntity(2, 1)
        gmsh.model.mesh.addNodes(2, 1, np.arange(1, len(surface.points) + 1), surface.points.ravel())
        gmsh.model.mesh.addElementsByType(1, 2, [], (surface.triangles + 1).ravel())
        gmsh.model.mesh.classifySurfaces(math.pi, True, True, math.pi)
        gmsh.model.mesh.createGeometry()
        gmsh.model.geo.synchronize()
        patches = [t for _, t in gmsh.model.getEntities(2)]
        gmsh.model.setPhysicalName(2, gmsh.model.addPhysicalGroup(2, patches), name)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size)
        gmsh.option.setNumber("Mesh.MeshSizeMin", size / 2)
        gmsh.model.mesh.generate(2)
        nodes, cells_of = gmsh_nodes_and_groups(gmsh)
        triangles, _, _ = cells_of(2, 2, 3)
    return compact_surface(name, nodes, triangles)
