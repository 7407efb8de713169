"""Read 2D triangle meshes with named physical groups through meshio, and write results through meshio."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import MeshError
from .meshio_read import read_meshio
from .trimesh import TriMesh, make_trimesh

_IGNORED_CELLS = {"vertex"}


def read_trimesh(path: str | os.PathLike) -> TriMesh:
    """Read a meshio-readable 2D triangle mesh whose physical groups are named (gmsh .msh 2.2 / 4.1, ...).

    2D groups become regions, 1D groups boundaries. Coordinates are returned as stored
    (the problem's length_unit says what they mean).
    """
    path = Path(path)
    mesh = read_meshio(path)

    points = np.asarray(mesh.points, dtype=np.float64)
    if points.ndim != 2 or points.shape[0] == 0:
        raise MeshError(f"mesh file {path} has no nodes")
    if points.shape[1] == 3:
        z = points[:, 2]
        if np.ptp(z) > 1e-12 * max(1.0, np.ptp(points[:, :2])):
            raise MeshError(f"mesh file {path} is not planar: its z coordinates vary")
        points = points[:, :2]

    names_by_tag: dict[tuple[int, int], str] = {}
    for name, data in (mesh.field_data or {}).items():
        data = np.asarray(data).ravel()
        if data.size >= 2:
            names_by_tag[(int(data[1]), int(data[0]))] = name
    physical = mesh.cell_data.get("gmsh:physical")
    if physical is None or not names_by_tag:
        raise MeshError(f"mesh file {path} has no named physical groups; "
                        "name the 2D regions and 1D boundaries (gmsh Physical Surface/Curve)")

    tri_blocks, tri_tags, line_blocks, line_tags = [], [], [], []
    for block, tags in zip(mesh.cells, physical):
        if block.type == "triangle":
            tri_blocks.append(block.data)
            tri_tags.append(tags)
        elif block.type == "line":
            line_blocks.append(block.data)
            line_tags.append(tags)
        elif block.type not in _IGNORED_CELLS:
            raise MeshError(f"non-triangle mesh: {path} has '{block.type}' cells; "
                            "2D studies need first-order triangles (and lines for boundaries)")
    if not tri_blocks:
        raise MeshError(f"non-triangle mesh: {path} has no triangle cells")

    triangles = np.concatenate(tri_blocks)
    region_index, region_names = _name_cells(np.concatenate(tri_tags), 2, names_by_tag, path, "triangles")
    if line_blocks:
        edges = np.concatenate(line_blocks)
        edge_tags = np.concatenate(line_tags)
        named = np.array([(1, int(t)) in names_by_tag for t in edge_tags], dtype=bool)
        edges, edge_tags = edges[named], edge_tags[named]
        edge_boundary, boundary_names = _name_cells(edge_tags, 1, names_by_tag, path, "lines")
    else:
        edges = np.zeros((0, 2), dtype=np.int64)
        edge_boundary, boundary_names = np.zeros(0, dtype=np.int64), ()
    return make_trimesh(points, triangles, region_index, region_names, edges, edge_boundary,
                        boundary_names)


def _name_cells(tags: np.ndarray, dim: int, names_by_tag, path, what: str):
    """Map physical tags of one dimension to (index per cell, tuple of names)."""
    unique = np.unique(tags)
    missing = [int(t) for t in unique if (dim, int(t)) not in names_by_tag]
    if missing:
        raise MeshError(f"mesh file {path}: {what} carry physical tag(s) {missing} that have no name")
    names = tuple(names_by_tag[(dim, int(t))] for t in unique)
    return np.searchsorted(unique, tags).astype(np.int64), names


def write_trimesh(path: str | os.PathLike, mesh: TriMesh, point_data=None, cell_data=None) -> None:
    """Write a mesh and its fields with meshio (format from the suffix), via a temporary name and a rename.

    point_data: {name: (n_nodes, ...) array}; cell_data: {name: (n_elements, ...) array}.
    """
    import meshio  # noqa: PLC0415

    path = Path(path)
    points = np.column_stack([mesh.points, np.zeros(mesh.n_nodes)])
    out = meshio.Mesh(points, [("triangle", mesh.triangles)],
                      point_data=dict(point_data or {}),
                      cell_data={k: [np.asarray(v)] for k, v in (cell_data or {}).items()})
    tmp = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        meshio.write(tmp, out)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
