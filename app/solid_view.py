"""PyVista data of a 3D elasticity result: the hexahedral mesh and the sampled sub-grid (displacement,
von Mises stress) as unstructured grids, the default warp scale, and the probe text. Visual only:
values come from the engine's result."""

from __future__ import annotations

import numpy as np
import pyvista as pv

WARP_FRACTION = 0.1  # the default warp draws the largest displacement at this fraction of the model size
# the camera in front (-y), a little to +x and above, z up: x runs to the right, as beams are drawn
CAMERA_DIRECTION, CAMERA_UP = (1.0, -2.0, 1.0), (0.0, 0.0, 1.0)


def hexahedra_grid(points: np.ndarray, hexes: np.ndarray) -> pv.UnstructuredGrid:
    """(n, 3) points and (k, 8) VTK-ordered hexahedra as an UnstructuredGrid."""
    cells = np.column_stack([np.full(len(hexes), 8), hexes]).ravel()
    return pv.UnstructuredGrid(cells, np.full(len(hexes), pv.CellType.HEXAHEDRON, dtype=np.uint8),
                               np.asarray(points, dtype=np.float64))


def hex_mesh_grid(mesh) -> pv.UnstructuredGrid:
    """A HexMesh as an UnstructuredGrid with cell data 'region'."""
    grid = hexahedra_grid(mesh.points, mesh.hexes)
    grid.cell_data["region"] = mesh.region_index
    return grid


def solid_grid(result) -> pv.UnstructuredGrid:
    """The result's sampled sub-grid (metres, undeformed) with point data displacement (m) and
    von_mises (Pa) and cell data element."""
    field = result.field
    grid = hexahedra_grid(field.points, field.cells)
    grid.point_data["displacement"] = field.displacement
    grid.point_data["von_mises"] = field.von_mises
    grid.cell_data["element"] = field.element
    return grid


def default_warp_scale(result, grid: pv.UnstructuredGrid) -> float:
    """A round scale that draws the largest displacement at WARP_FRACTION of the bounding-box diagonal."""
    if result.max_displacement <= 0.0:
        return 1.0
    return float(f"{WARP_FRACTION * grid.length / result.max_displacement:.2g}")


def solid_probe_text(grid: pv.UnstructuredGrid, undeformed: pv.UnstructuredGrid, point) -> str:
    """Displacement and von Mises stress at the sample point nearest a picked point, for the status bar."""
    index = grid.find_closest_point(point)
    x, y, z = undeformed.points[index]
    u = grid.point_data["displacement"][index]
    return (f"({x:.4g}, {y:.4g}, {z:.4g}) m (nearest sample point): u = ({u[0]:.4g}, {u[1]:.4g}, {u[2]:.4g}) m, "
            f"von Mises = {grid.point_data['von_mises'][index]:.4g} Pa")
