"""Read 8-node hexahedral meshes with named regions and boundaries through meshio (gmsh .msh 2.2 / 4.1,
Abaqus .inp, .vtu), and write results through meshio."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import MeshError
from .meshio_read import read_meshio
from .hexmesh import HexMesh, make_hexmesh

_JOIN_CHARACTERS = "-_#+/"  # meshio joins cell-set names with the first of these absent from all names


def _hex_regions(mesh, members, hex_blocks, path):
    """(hexahedra, region index per hexahedron, region names): each hexahedron in exactly one named set."""
    hexes = np.concatenate([mesh.cells[k].data for k in hex_blocks])
    offsets = np.cumsum([0] + [len(mesh.cells[k].data) for k in hex_blocks])
    region_index = np.full(len(hexes), -1, dtype=np.int32)
    region_names: list[str] = []
    for name, per_block in members.items():
        cells = np.concatenate([offsets[i] + per_block[k] for i, k in enumerate(hex_blocks)])
        if not cells.size:
            continue
        taken = cells[region_index[cells] >= 0]
        if taken.size:
            other = region_names[region_index[taken[0]]]
            raise MeshError(f"mesh file {path}: hexahedron {taken[0]} is in both '{other}' and '{name}'; "
                            "each hexahedron must belong to exactly one named region")
        region_index[cells] = len(region_names)
        region_names.append(name)
    unnamed = np.count_nonzero(region_index < 0)
    if unnamed:
        raise MeshError(f"mesh file {path}: {unnamed} of {len(hexes)} hexahedra belong to no named physical "
                        "group or element set; name every 3D region (gmsh Physical Volume, Abaqus *ELSET)")
    return hexes, region_index, region_names


def _boundary_faces(mesh, members, path):
    """(quadrilateral faces, boundary index per face, boundary names) of the named 2D sets."""
    faces, face_boundary, boundary_names = [], [], []
    for name, per_block in members.items():
        for k, block in enumerate(mesh.cells):
            if block.dim != 2 or not per_block[k].size:
                continue
            if block.type != "quad":
                raise MeshError(f"mesh file {path}: boundary '{name}' has {block.type} cells; boundaries "
                                "must be 4-node quadrilaterals (faces of the hexahedra)")
            if name not in boundary_names:
                boundary_names.append(name)
            faces.append(block.data[per_block[k]])
            face_boundary.append(np.full(per_block[k].size, boundary_names.index(name), dtype=np.int32))
    faces = np.concatenate(faces) if faces else np.zeros((0, 4), dtype=np.int64)
    face_boundary = np.concatenate(face_boundary) if face_boundary else np.zeros(0, dtype=np.int32)
    return faces, face_boundary, boundary_names


def read_hexmesh(path: str | os.PathLike) -> HexMesh:
    """Read a meshio-readable mesh of 8-node hexahedra whose regions and boundaries are named.

    Regions: 3D gmsh physical groups, or Abaqus element sets (*ELSET, ELSET= on *ELEMENT) of
    hexahedra. Boundaries: quadrilateral cells in 2D physical groups or element sets; unnamed
    quadrilaterals, lines and points are ignored. A .vtu file names its cells by the integer cell data
    meshio writes for cell sets (the set names joined into the array's name). Coordinates are returned
    as stored (the problem's length_unit says what they mean).
    """
    path = Path(path)
    mesh = read_meshio(path)

    points = np.asarray(mesh.points, dtype=np.float64)
    if points.ndim != 2 or points.shape[0] == 0:
        raise MeshError(f"mesh file {path} has no nodes")
    if points.shape[1] != 3:
        raise MeshError(f"mesh file {path} is {points.shape[1]}D; hexahedral meshes need x, y and z")

    for block in mesh.cells:
        if block.dim == 3 and block.type != "hexahedron":
            raise MeshError(f"mesh file {path} contains {len(block.data)} {block.type} cells; "
                            "only 8-node hexahedra are supported")
    hex_blocks = [k for k, block in enumerate(mesh.cells) if block.type == "hexahedron"]
    if not hex_blocks:
        raise MeshError(f"mesh file {path} has no hexahedra")

    members = _named_cells(mesh, path)
    hexes, region_index, region_names = _hex_regions(mesh, members, hex_blocks, path)
    faces, face_boundary, boundary_names = _boundary_faces(mesh, members, path)
    return make_hexmesh(points, hexes, region_index, region_names, faces, face_boundary, boundary_names)


def _named_cells(mesh, path) -> dict[str, list[np.ndarray]]:
    """{name: [indices of the named cells in each cell block]} from gmsh physical groups, cell sets or
    meshio's integer cell data for cell sets."""
    n_blocks = len(mesh.cells)
    empty = np.zeros(0, dtype=np.int64)
    physical = mesh.cell_data.get("gmsh:physical")
    if physical is not None:
        names_by_tag: dict[tuple[int, int], str] = {}
        for name, data in (mesh.field_data or {}).items():
            data = np.asarray(data).ravel()
            if data.size >= 2:
                names_by_tag[(int(data[1]), int(data[0]))] = name
        members: dict[str, list[np.ndarray]] = {}
        for k, (block, tags) in enumerate(zip(mesh.cells, physical)):
            tags = np.asarray(tags)
            for tag in np.unique(tags):
                name = names_by_tag.get((block.dim, int(tag)))
                if name is not None:
                    members.setdefault(name, [empty] * n_blocks)[k] = np.flatnonzero(tags == tag)
        return members
    sets = {name: blocks for name, blocks in (mesh.cell_sets or {}).items() if not name.startswith("gmsh:")}
    if sets:
        return {name: [empty if b is None else np.asarray(b, dtype=np.int64).ravel() for b in blocks]
                for name, blocks in sets.items()}
    for key, blocks in mesh.cell_data.items():
        if not all(np.asarray(b).dtype.kind in "iu" for b in blocks):
            continue
        top = max((int(np.max(b)) for b in blocks if np.size(b)), default=-1)
        for char in _JOIN_CHARACTERS:
            names = key.split(char)
            if top < len(names):
                return {name: [np.flatnonzero(np.asarray(b) == i) for b in blocks]
                        for i, name in enumerate(names)}
    return {}


def write_hexmesh(path: str | os.PathLike, mesh: HexMesh, point_data=None, cell_data=None) -> None:
    """Write a mesh and its fields with meshio (format from the suffix), via a temporary name in the
    same folder and an atomic rename.

    point_data: {name: (n_nodes, ...) array}; cell_data: {name: (n_elements, ...) array}.
    """
    import meshio  # noqa: PLC0415

    path = Path(path)
    out = meshio.Mesh(mesh.points, [("hexahedron", mesh.hexes)],
                      point_data=dict(point_data or {}),
                      cell_data={k: [np.asarray(v)] for k, v in (cell_data or {}).items()})
    tmp = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        meshio.write(tmp, out)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
