"""PyVista view of a result: for magnetostatics a |B| colour map with a scalar bar, flux lines as
contours and region outlines; for elasticity the body warped by its displacement and coloured by von
Mises stress over the undeformed wireframe; point probing for both. Visual only: values come from the
engine's result."""

from __future__ import annotations

import numpy as np
import pyvista as pv
from PySide6 import QtCore
from pyvistaqt import QtInteractor

from paraflux.engine.magnetostatics.post import evaluate_at

from .fields_view import field_grid, pattern_grid, pattern_probe_text, shown_field
from .solid_view import CAMERA_DIRECTION, CAMERA_UP, default_warp_scale, hex_mesh_grid, solid_grid, solid_probe_text
from .surface_view import FIELDS, surface_poly, truncation_poly, truncation_probe_text

N_FLUX_LINES = 20
CLIP_PERCENTILE = 99.5  # colour ranges of fields with singular peaks (re-entrant corners, clamped edges) end here


UNIFORM_SPAN = 1e-2  # a field varying less than this relative to its size is drawn as uniform


def colour_range(values: np.ndarray, clip: bool = False) -> tuple[float, float]:
    """(low, high) of a colour map over values: up to the CLIP_PERCENTILE with clip; a nearly uniform field
    (relative span under UNIFORM_SPAN, e.g. uniform tension) gets a range of +-1 % around its mean, so that
    round-off is not painted as variation."""
    low = float(np.min(values))
    high = float(np.percentile(values, CLIP_PERCENTILE)) if clip else float(np.max(values))
    size = max(abs(low), abs(high))
    if size == 0.0:
        return 0.0, 1.0
    if high - low < UNIFORM_SPAN * size:
        mean = float(np.mean(values))
        return mean - 0.01 * size, mean + 0.01 * size
    return low, high


def colour_bar(title: str, labels: int = 5, digits: int = 3) -> dict:
    """scalar_bar_args of a vertical colour bar at the view's right edge: a few labels of `digits` significant
    digits and the title with its unit."""
    return {"title": title, "color": "black", "n_labels": labels, "fmt": f"%.{digits}g", "vertical": True,
            "position_x": 0.84, "position_y": 0.12, "width": 0.06, "height": 0.7, "title_font_size": 14,
            "label_font_size": 13, "bold": False, "shadow": False}

def mesh_grid(mesh) -> pv.PolyData:
    """A TriMesh as PolyData (z = 0) with cell data 'region'."""
    points = np.column_stack([mesh.points, np.zeros(mesh.n_nodes)])
    faces = np.column_stack([np.full(mesh.n_elements, 3), mesh.triangles]).ravel()
    grid = pv.PolyData(points, faces)
    grid.cell_data["region"] = mesh.region_index
    return grid


def result_grid(result) -> pv.PolyData:
    """The result's mesh as PolyData (metres, z = 0) with cell data B_magnitude and region and point
    data A (and flux for vector potentials)."""
    grid = mesh_grid(result.mesh)
    grid.cell_data["B_magnitude"] = result.flux_density_magnitude
    grid.point_data["A"] = result.potential
    grid.point_data["flux"] = result.flux_function
    return grid


def region_outlines(result) -> pv.PolyData:
    """Edges between triangles of different regions and edges on the mesh boundary, as lines."""
    tri, region = result.mesh.triangles, result.mesh.region_index
    edges = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
    owner = np.tile(region, 3)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    edges, owner = edges[order], owner[order]
    same_as_next = np.all(edges[1:] == edges[:-1], axis=1)
    pair_start = np.flatnonzero(same_as_next)
    interface = pair_start[owner[pair_start] != owner[pair_start + 1]]
    shared = np.zeros(len(edges), dtype=bool)
    shared[pair_start] = shared[pair_start + 1] = True
    keep = np.concatenate([edges[interface], edges[~shared]])
    points = np.column_stack([result.mesh.points, np.zeros(result.mesh.n_nodes)])
    lines = np.column_stack([np.full(len(keep), 2), keep]).ravel()
    return pv.PolyData(points, lines=lines)


class ResultView(QtInteractor):
    """Shows one result; emits probed(text) when the user picks a point.

    grid is what is coloured: the 2D field, or the warped sampled solid; solid is that solid undeformed
    (None for 2D results), warp_scale the factor its displacement is drawn at."""

    probed = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result = None
        self.grid: pv.DataSet | None = None
        self.solid: pv.UnstructuredGrid | None = None
        self.warp_scale = 1.0
        self.flux_lines: pv.PolyData | None = None
        self.point_picking_on = False
        self.set_background("white")

    def _show_regions(self, grid, region_names) -> None:
        self.clear()
        self.result = None
        self.solid = None
        self.grid = grid
        self.add_mesh(self.grid, scalars="region", categories=True, cmap="tab10", show_edges=True,
                      edge_color="gray", name="mesh",
                      scalar_bar_args={**colour_bar("region: " + ", ".join(f"{i} {n}" for i, n in enumerate(region_names))),
                                       "n_labels": 0})

    def show_mesh(self, mesh) -> None:
        """Preview a mesh before solving: elements coloured by region, edges drawn."""
        self._show_regions(mesh_grid(mesh), list(mesh.region_names))
        self.view_xy()
        self.reset_camera()
        self.render()

    def show_hex_mesh(self, mesh) -> None:
        """Preview a hexahedral mesh: elements coloured by region, edges drawn."""
        self._show_regions(hex_mesh_grid(mesh), list(mesh.region_names))
        self.view_vector(CAMERA_DIRECTION, CAMERA_UP)
        self.reset_camera()
        self.render()

    def show_solid_result(self, result) -> None:
        """An elasticity result: the sampled solid warped by its displacement at the default scale,
        coloured by von Mises stress, over the undeformed mesh as a wireframe."""
        self._show_warped(result, solid_grid(result), hex_mesh_grid(result.mesh))

    def show_grouped_surface(self, grouped) -> None:
        """Preview a boundary element surface: triangles coloured by group, edges drawn."""
        grid = surface_poly(grouped.surface)
        grid.cell_data["region"] = grouped.group
        self._show_regions(grid, list(grouped.names))
        self.view_vector(CAMERA_DIRECTION, CAMERA_UP)
        self.reset_camera()
        self.render()

    def show_bem_result(self, result) -> None:
        """A boundary element result: the surface warped by its displacement, coloured by von Mises stress,
        over the undeformed surface as a wireframe."""
        poly = surface_poly(result.mesh)
        poly.point_data["displacement"] = result.displacement
        poly.point_data["von_mises"] = result.nodal_von_mises
        self._show_warped(result, poly, surface_poly(result.mesh))

    def _show_warped(self, result, solid, undeformed) -> None:
        self.clear()
        self.result = result
        self.flux_lines = None
        self.solid = solid
        self.warp_scale = default_warp_scale(result, self.solid)
        self.grid = self.solid.warp_by_vector("displacement", factor=self.warp_scale)
        # the clamped edges carry singular stress peaks: the colours end at the CLIP_PERCENTILE
        stress = self.grid.point_data["von_mises"]
        low, top = colour_range(stress, clip=True)
        self.add_mesh(self.grid, scalars="von_mises", cmap="turbo", clim=(low, top), name="field",
                      scalar_bar_args=colour_bar("von Mises (Pa)", digits=3 if top - low > 0.05 * top else 4))
        self._note_clip(stress, top, "Pa")
        self.add_mesh(undeformed, style="wireframe", color="black", opacity=0.4, line_width=1.0,
                      name="undeformed")
        self.view_vector(CAMERA_DIRECTION, CAMERA_UP)
        self._frame()
        self._enable_probing()
        self.render()

    def show_surfaces(self, inner, outer) -> None:
        """Preview the truncation surfaces: S' solid, S translucent with its edges."""
        self.clear()
        self.result, self.solid = None, None
        self.grid = surface_poly(outer)
        self.add_mesh(surface_poly(inner), color="orange", show_edges=True, edge_color="gray", name="inner")
        self.add_mesh(self.grid, color="lightsteelblue", opacity=0.25, show_edges=True, edge_color="gray",
                      name="outer")
        self.view_vector(CAMERA_DIRECTION, CAMERA_UP)
        self.reset_camera()
        self.render()

    def show_truncation(self, result, field: str = "E_magnitude") -> None:
        """A truncation result: S coloured per triangle by |E| or its error, S' translucent inside."""
        self.clear()
        self.result, self.solid, self.flux_lines = result, None, None
        self.grid = truncation_poly(result)
        log = field == "E_error"
        values = self.grid.cell_data[field]
        clim = (max(values.min(), 1e-16), max(values.max(), 1e-15)) if log else (0.0, float(values.max()) or 1.0)
        self.add_mesh(self.grid, scalars=field, cmap="viridis", log_scale=log, clim=clim, name="field",
                      scalar_bar_args=colour_bar(FIELDS[field].split(",")[0]))
        self.add_mesh(surface_poly(result.setup.inner), color="orange", opacity=0.35, name="inner")
        self.view_vector(CAMERA_DIRECTION, CAMERA_UP)
        self._frame()
        self._enable_probing()
        self.render()

    def set_warp_scale(self, scale: float) -> None:
        """Redraw the solid with its displacement multiplied by scale (0 draws it undeformed)."""
        self.warp_scale = scale
        if self.solid is not None:
            self.grid.points = self.solid.warp_by_vector("displacement", factor=scale).points
            self.render()

    def _enable_probing(self) -> None:
        if not self.point_picking_on:  # once: later results reuse the same callback
            self.enable_point_picking(self._on_pick, show_message=False, show_point=True,
                                      left_clicking=True, color="red", point_size=10)
            self.point_picking_on = True

    def show_result(self, result) -> None:
        self.clear()
        self.result = result
        self.solid = None
        self.grid = result_grid(result)
        # a few re-entrant corners carry singular peaks: the colours end at the CLIP_PERCENTILE
        b = self.grid.cell_data["B_magnitude"]
        top = float(np.percentile(b, CLIP_PERCENTILE)) or 1.0
        self.add_mesh(self.grid, scalars="B_magnitude", cmap="viridis", show_edges=False, clim=(0.0, top),
                      scalar_bar_args=colour_bar("B magnitude (T)"), name="field")
        self._note_clip(b, top, "T")
        self.flux_lines = None
        if "flux" in self.grid.point_data and np.ptp(self.grid.point_data["flux"]) > 0:
            self.flux_lines = self.grid.contour(isosurfaces=N_FLUX_LINES, scalars="flux")
            if self.flux_lines.n_points:
                self.add_mesh(self.flux_lines, color="white", line_width=1.0, opacity=0.8, name="flux")
        self.add_mesh(region_outlines(result), color="black", line_width=1.0, name="regions")
        self.view_xy()
        self._frame(0.9)
        self._enable_probing()
        self.render()

    def show_field_mesh(self, mesh) -> None:
        """Preview a study's field mesh (engine.study.FieldMesh): its cells with edges."""
        self.clear()
        self.result, self.solid = None, None
        self.grid = field_grid(mesh)
        self.add_mesh(self.grid, color="lightsteelblue", show_edges=True, edge_color="gray", name="mesh")
        self.reset_camera()
        self.render()

    def show_fields(self, result, result_fields) -> None:
        """A result through its declared fields: the field mesh coloured by the first point field's
        magnitude (else the first cell field's); nothing to draw without a field mesh."""
        self.clear()
        self.result, self.solid, self.grid = result, None, None
        if result_fields.mesh is not None:
            self.grid = field_grid(result_fields.mesh, result_fields.fields)
            name = shown_field(result_fields)
            self.add_mesh(self.grid, scalars=name, cmap="viridis", show_edges=False, name="field",
                          line_width=3, scalar_bar_args=colour_bar(name or ""))
        self.reset_camera()
        self._enable_probing()
        self.render()

    def show_cut_plane(self, result, result_fields, normal: str = "y") -> None:
        """The first cell field (|E| total for scattering) on the plane through the origin with this normal,
        inside the field mesh's translucent boundary (the scatterer and S)."""
        self.show_fields(result, result_fields)
        if self.grid is None or not self.grid.cell_data:
            return
        name = next(iter(self.grid.cell_data))
        self.clear()
        self.add_mesh(self.grid.extract_surface(algorithm="dataset_surface"), color="lightgrey", opacity=0.15, name="boundary")
        self.add_mesh(self.grid.slice(normal=normal, origin=(0.0, 0.0, 0.0)), scalars=name, cmap="viridis",
                      name="cut", scalar_bar_args=colour_bar(name))
        self.reset_camera()
        self.render()

    def show_surface_points(self, result, result_fields) -> None:
        """The declared surface fields (scattering: |J| and |M| on S') at their points, coloured by the first,
        inside the field mesh's translucent boundary."""
        fields = result_fields.at("surface")
        if not fields:
            return
        self.show_fields(result, result_fields)
        boundary = None if self.grid is None else self.grid.extract_surface(algorithm="dataset_surface")
        self.clear()
        if boundary is not None:
            self.add_mesh(boundary, color="lightgrey", opacity=0.15, name="boundary")
        self.grid = pv.PolyData(np.asarray(result_fields.surface_points, dtype=float))
        for f in fields:
            self.grid.point_data[f"{f.name} ({f.unit})"] = f.values
        name = f"{fields[0].name} ({fields[0].unit})"
        self.add_mesh(self.grid, scalars=name, cmap="inferno", point_size=6, render_points_as_spheres=True,
                      name="surface points", scalar_bar_args=colour_bar(name))
        self.reset_camera()
        self.render()

    def show_pattern(self, result) -> None:
        """A scattering result's 3D far-field pattern (fields_view.pattern_grid), coloured by RCS in dBsm."""
        self.clear()
        self.result, self.solid = result, None
        self.grid = pattern_grid(result.pattern_theta, result.pattern_phi, result.pattern_sigma)
        self.add_mesh(self.grid, scalars="RCS (dBsm)", cmap="plasma", name="pattern",
                      scalar_bar_args=colour_bar("RCS (dBsm)"))
        self.add_axes()
        self.reset_camera()
        self.render()

    def _frame(self, zoom: float = 0.7) -> None:
        """Fit the camera to what is drawn, a little farther out so the colour bar at the right stays clear."""
        self.reset_camera()
        self.camera.zoom(zoom)

    def show_incidence(self, result) -> None:
        """Scattering: each distinct incidence drawn as an arrow arriving at the scatterer along -r(theta, phi),
        with its polarisation (theta^ or phi^) as a short green arrow at its tail."""
        points = np.asarray(self.grid.points if self.grid is not None else np.zeros((1, 3)))
        reach = float(np.max(np.linalg.norm(points, axis=1))) or 1.0
        for k, inc in enumerate(result.problem.incidences[:6]):
            t, p = np.radians(inc.theta_deg), np.radians(inc.phi_deg)
            r_hat = np.array([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)])
            pol = (np.array([np.cos(t) * np.cos(p), np.cos(t) * np.sin(p), -np.sin(t)]) if inc.polarization == "theta"
                   else np.array([-np.sin(p), np.cos(p), 0.0]))
            tail = 1.9 * reach * r_hat
            self.add_mesh(pv.Arrow(start=tail, direction=-r_hat, scale=0.8 * reach), color="crimson", name=f"incidence {k}")
            self.add_mesh(pv.Arrow(start=tail, direction=pol, scale=0.5 * reach), color="green", name=f"polarisation {k}")
        self.add_text("red: incident direction, green: E polarisation", position="lower_left", font_size=8,
                      color="black", name="incidence note")
        self._frame(0.9)
        self.render()

    def _note_clip(self, values: np.ndarray, top: float, unit: str) -> None:
        """Say under the colour bar where its range was clipped below the field's largest value."""
        if top < float(values.max()):
            self.add_text(f"colours clipped at the {CLIP_PERCENTILE:g}th percentile\n(largest {values.max():.3g} {unit})",
                          position="lower_right", font_size=8, color="black", name="clip")

    def _shown_scalars(self):
        """(actor name, dataset, array name) of the last drawn actor coloured by a field, or None."""
        for name, actor in reversed(list(self.actors.items())):
            mapper = getattr(actor, "mapper", None)
            array = getattr(mapper, "array_name", None) if mapper is not None else None
            if array and mapper.dataset is not None and array in mapper.dataset.array_names:
                return name, mapper.dataset, array
        return None

    def show_difference(self, draw, first, chosen, label: str) -> str | None:
        """Draw chosen with draw(result), coloured by its shown field minus first's on the same mesh (a
        diverging map, symmetric about 0); the reason when it cannot (no field shown, other meshes)."""
        draw(first)
        shown = self._shown_scalars()
        if shown is None:
            return "this view colours no field: no difference to draw"
        before = np.array(shown[1][shown[2]])
        draw(chosen)
        name, data, array = self._shown_scalars()
        after = np.asarray(data[array])
        if after.shape != before.shape:
            return "the variants' meshes differ: no difference to draw"
        where = data.point_data if array in data.point_data else data.cell_data
        where["difference"] = after - before
        top = float(np.max(np.abs(after - before))) or 1e-300
        self.add_mesh(data, scalars="difference", cmap="coolwarm", clim=(-top, top), name=name,
                      scalar_bar_args=colour_bar(f"{array}: {label}\nminus the first variant"))
        self.render()
        return None

    def _on_pick(self, point) -> None:
        if self.result is None or point is None:
            return
        if self.solid is not None:
            self.probed.emit(solid_probe_text(self.grid, self.solid, point))
        elif isinstance(self.grid, pv.UnstructuredGrid):
            self.probed.emit(fields_probe_text(self.grid, point))
        elif isinstance(self.grid, pv.PolyData) and self.grid.n_cells == self.grid.n_points:  # surface points
            k = int(np.argmin(np.linalg.norm(self.grid.points - np.asarray(point), axis=1)))
            self.probed.emit(", ".join(f"{n} = {self.grid.point_data[n][k]:.4g}" for n in self.grid.point_data))
        elif "RCS (dBsm)" in self.grid.point_data:
            self.probed.emit(pattern_probe_text(self.grid, point))
        elif "E_magnitude" in self.grid.cell_data:
            self.probed.emit(truncation_probe_text(self.grid, point))
        else:
            self.probed.emit(probe_text(self.result, point[:2]))


def probe_text(result, point) -> str:
    """A line describing A and B at a point (metres), for the status bar."""
    value = evaluate_at(result, point)
    if value is None:
        return f"({point[0]:.4g}, {point[1]:.4g}) m: outside the mesh"
    a, b = value
    axis = ("B_r", "B_z") if result.problem.formulation == "axisymmetric" else ("Bx", "By")
    return (f"({point[0]:.4g}, {point[1]:.4g}) m: A = {a:.5g}, {axis[0]} = {b[0]:.4g} T, "
            f"{axis[1]} = {b[1]:.4g} T, |B| = {np.hypot(*b):.4g} T")


def fields_probe_text(grid: pv.UnstructuredGrid, point) -> str:
    """The point fields at the mesh point nearest to a picked point (m), for the status bar."""
    i = grid.find_closest_point(point)
    values = ", ".join(f"{name} = {grid.point_data[name][i]:.5g}" for name in grid.point_data.keys())
    return f"({', '.join(f'{c:.4g}' for c in grid.points[i])}) m: {values or 'no point fields'}"
