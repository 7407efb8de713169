"""Any study's declared result fields (engine.study.ResultFields) as PyVista data: the field mesh with its
point and cell fields, each drawn by magnitude. Visual only: values come from the engine's result."""

from __future__ import annotations

import numpy as np
import pyvista as pv

from paraflux.engine.scattering.waves import dbsm


def magnitude(values: np.ndarray) -> np.ndarray:
    """|v| per entry: abs of scalars, the 2-norm of vectors, over real and complex values alike."""
    values = np.abs(values)
    return values if values.ndim == 1 else np.linalg.norm(values.reshape(len(values), -1), axis=1)


def field_grid(mesh, fields=()) -> pv.UnstructuredGrid:
    """The FieldMesh as an UnstructuredGrid with the magnitude of every point and cell field among fields,
    named '|name| (unit)'."""
    import meshio  # noqa: PLC0415

    grid = pv.from_meshio(meshio.Mesh(np.asarray(mesh.points, dtype=float), list(mesh.cells.items())))
    for f in fields:
        if f.location not in ("points", "cells"):
            continue
        data = grid.point_data if f.location == "points" else grid.cell_data
        data[f"|{f.name}| ({f.unit})" if f.unit else f"|{f.name}|"] = magnitude(f.values)
    return grid


def shown_field(result_fields) -> str | None:
    """The name field_grid gives the first point field, else the first cell field (None: neither)."""
    for f in (*result_fields.at("points"), *result_fields.at("cells")):
        return f"|{f.name}| ({f.unit})" if f.unit else f"|{f.name}|"
    return None


def pattern_grid(theta_deg, phi_deg, sigma, dynamic_db: float = 40.0) -> pv.StructuredGrid:
    """A far-field pattern sigma (n_t, n_p) m^2 on theta x phi (degrees) as a closed surface whose radius
    is the RCS in dB above (peak - dynamic_db), scaled to 1 at the peak; point data 'RCS (dBsm)'."""
    db = dbsm(np.asarray(sigma, dtype=float))
    radius = np.clip((db - db.max() + dynamic_db) / dynamic_db, 0.0, None)
    t, p = np.meshgrid(np.radians(theta_deg), np.radians(np.append(phi_deg, 360.0)), indexing="ij")
    r = np.concatenate([radius, radius[:, :1]], axis=1)  # phi closed at 360
    grid = pv.StructuredGrid(r * np.sin(t) * np.cos(p), r * np.sin(t) * np.sin(p), r * np.cos(t))
    grid.point_data["RCS (dBsm)"] = np.concatenate([db, db[:, :1]], axis=1).ravel(order="F")
    return grid


def pattern_probe_text(grid: pv.StructuredGrid, point) -> str:
    """The RCS at the pattern's point nearest to a picked point, with its direction, for the status bar."""
    i = grid.find_closest_point(point)
    x, y, z = grid.points[i]
    theta = np.degrees(np.arctan2(np.hypot(x, y), z))
    phi = np.degrees(np.arctan2(y, x)) % 360.0
    return f"theta {theta:.0f} deg, phi {phi:.0f} deg: RCS {grid.point_data['RCS (dBsm)'][i]:.2f} dBsm"
