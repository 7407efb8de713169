"""Built-in surfaces of the boundary element study, meshed by gmsh: the octant of a hollow sphere with its
symmetry planes labelled."""

from __future__ import annotations

import math

import numpy as np

from ..errors import MeshError
from ..mesh.gmsh_build import gmsh_session
from ..truncation.surfaces import TriSurface, check_closed_outward

OCTANT_GROUPS = ("x0", "y0", "z0", "inner", "outer")  # the symmetry planes x = 0, y = 0, z = 0 and the spheres


def hollow_sphere_octant(inner_radius: float, outer_radius: float, target: int) -> tuple[TriSurface, np.ndarray]:
    """The surface of {a < |x| < b, x, y, z > 0} (m) with about target triangles, oriented outward, and each
    triangle's group index into OCTANT_GROUPS."""
    a, b = inner_radius, outer_radius
    area = (math.pi / 2) * (a * a + b * b) + 3 * (math.pi / 4) * (b * b - a * a)
    h = 1.04 * math.sqrt(4 * area / (math.sqrt(3) * target))
    with gmsh_session("hollow-sphere") as gmsh:
        occ = gmsh.model.occ
        shell = occ.cut([(3, occ.addSphere(0, 0, 0, b))], [(3, occ.addSphere(0, 0, 0, a))])[0]
        occ.intersect(shell, [(3, occ.addBox(0, 0, 0, 2 * b, 2 * b, 2 * b))])
        occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMin", h)
        gmsh.option.setNumber("Mesh.MeshSizeMax", h)
        gmsh.model.mesh.generate(2)
        tags, coords, _ = gmsh.model.mesh.getNodes()
        index = np.full(int(tags.max()) + 1, -1, dtype=np.int64)
        index[tags.astype(np.int64)] = np.arange(len(tags))
        points = coords.reshape(-1, 3)
        blocks, groups = [], []
        for _, entity in gmsh.model.getEntities(2):
            types, _, nodes = gmsh.model.mesh.getElements(2, entity)
            tri = index[np.asarray(nodes[list(types).index(2)], dtype=np.int64).reshape(-1, 3)]
            blocks.append(tri)
            groups.append(np.full(len(tri), _octant_group(points[np.unique(tri)], a, b)))
    triangles = np.concatenate(blocks)
    used = np.unique(triangles)
    remap = np.full(len(points), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    surface = check_closed_outward(TriSurface("hollow-sphere", points[used], remap[triangles]))
    return surface, np.concatenate(groups)


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
