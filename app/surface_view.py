"""PyVista data of the truncation study: S' and S as surfaces, S coloured per triangle by |E| or its
error against the exact field (first right-hand side), and the probe text. Visual only: values come
from the engine's result."""

from __future__ import annotations

import numpy as np
import pyvista as pv

FIELDS = {"E_magnitude": "|E| (V/m), first right-hand side",
          "E_error": "|E - E_exact| / max|E_exact|, first right-hand side"}


def surface_poly(surface) -> pv.PolyData:
    """A TriSurface (metres) as PolyData."""
    faces = np.column_stack([np.full(surface.n_elements, 3), surface.triangles]).ravel()
    return pv.PolyData(np.asarray(surface.points, dtype=float), faces)


def truncation_poly(result) -> pv.PolyData:
    """S with cell data E_magnitude and E_error."""
    poly = surface_poly(result.setup.outer)
    poly.cell_data["E_magnitude"] = result.element_magnitude
    poly.cell_data["E_error"] = result.element_error
    return poly


def truncation_probe_text(poly: pv.PolyData, point) -> str:
    cell = poly.find_closest_cell(point)
    x, y, z = poly.cell_centers().points[cell]
    return (f"S triangle {cell} at ({x:.4g}, {y:.4g}, {z:.4g}) m: |E| = {poly.cell_data['E_magnitude'][cell]:.4g} V/m, "
            f"relative error {poly.cell_data['E_error'][cell]:.3e}")
