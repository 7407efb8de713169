"""Any study's declared result fields (engine.study.ResultFields) as PyVista data: the field mesh with its
point and cell fields, each drawn by magnitude. Visual only: values come from the engine's result."""

from __future__ import annotations

import numpy as np
import pyvista as pv


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
