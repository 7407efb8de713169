"""Result writers (VTU, NPZ, JSON). A study's writer writes straight into the folder it is given; write_all
(Study.write) gives it a hidden folder and puts the files in place all together or not at all. write_json
also goes through a temporary name on its own, for the benchmarks' results."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .errors import ProblemError, SolverError
from .mesh.io import write_trimesh


@contextmanager
def made_folder(folder: Path, keep: Callable[[Path], bool] = lambda folder: False):
    """Make folder and its missing parents for the block; if the block fails (an exception, Ctrl-C,
    SIGTERM), remove the folders it made, so a failed run leaves the file system as it was (unless
    keep(folder) says the failed block left something worth keeping, e.g. a sweep's finished points)."""
    folder = Path(folder)
    first_missing = None
    for ancestor in (folder, *folder.parents):
        if ancestor.exists():
            break
        first_missing = ancestor
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    except BaseException:
        if first_missing is not None and not keep(folder):
            shutil.rmtree(first_missing, ignore_errors=True)
        raise


def write_all(out_dir: Path, writer: Callable[[Path], list[Path]]) -> list[Path]:
    """The files writer(folder) writes, moved into out_dir only once every one is complete: written into a
    hidden folder inside out_dir first, so that a failure (a value that is not finite, a folder in the way of
    a file, a full disk, Ctrl-C, SIGTERM) leaves out_dir as it was (and no out_dir, nor the parents made
    for it, where there were none)."""
    with made_folder(out_dir) as out_dir:
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=out_dir))
        try:
            staged = writer(staging)
            targets = [out_dir / p.name for p in staged]
            for target in targets:
                if target.is_dir():
                    raise ProblemError(f"cannot write {target}: a folder of that name is in the way")
            for path, target in zip(staged, targets):
                os.replace(path, target)
            return targets
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def write_json(path: Path, data) -> None:
    """Write JSON via a temporary file and an atomic rename; a NaN or infinity in data is a SolverError."""
    try:
        text = json.dumps(data, indent=2, allow_nan=False) + "\n"
    except ValueError:
        raise SolverError(f"{path.name}: the result holds values that are not finite (NaN or infinity): the "
                          "inputs' magnitudes overflowed double precision; check the loads, sources and "
                          "material values") from None
    write_text_atomic(path, text)


def write_text_atomic(path: Path, text: str) -> None:
    """Write text to path through a temporary name in the same folder and a rename: a failure, Ctrl-C or
    SIGTERM (with cli_edge.raise_on_sigterm) leaves the old file, or none, and no temporary file."""
    replace_atomically(Path(path), lambda tmp: tmp.write_text(text))


def replace_atomically(path: Path, write: Callable[[Path], object]) -> Path:
    """write(temporary path) in path's folder, then renamed to path; the temporary file is removed
    whatever happens (write_text_atomic's way for any writer: bytes, a table, an image)."""
    tmp = path.with_name(f".{path.name}.partial")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _vtk_arrays(fields) -> dict:
    """name -> real array for VTU: complex fields become name_re and name_im."""
    out = {}
    for f in fields:
        if np.iscomplexobj(f.values):
            out[f"{f.name}_re"], out[f"{f.name}_im"] = f.values.real, f.values.imag
        else:
            out[f.name] = f.values
    return out


def _far_field_csv(path: Path, named_values) -> None:
    """One row per far-field direction, one column per component ("name" or "name_i") of each (name,
    values (n, ...)) pair."""
    import csv  # noqa: PLC0415

    columns, header = [], []
    for name, values in named_values:
        flat = np.asarray(values).reshape(len(values), -1)
        names = [name] if flat.shape[1] == 1 else [f"{name}_{i}" for i in range(flat.shape[1])]
        columns += list(flat.T)
        header += names
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(zip(*[[f"{v:.12g}" for v in c] for c in columns]))


def write_fields(result_fields, summary: dict, out_dir) -> list[Path]:
    """The generic writer over a study's declared fields (study.ResultFields): solution.vtu (point and cell
    fields on the result mesh; complex ones as _re and _im), far_field.csv (far-field fields), fields.npz
    (every field as computed, with the mesh points) and summary.json (summary plus each field's unit)."""
    import meshio  # noqa: PLC0415

    out_dir, written = Path(out_dir), []
    mesh = result_fields.mesh
    points, cells = result_fields.at("points"), result_fields.at("cells")
    if mesh is not None and (points or cells):
        sizes = np.cumsum([0, *[len(c) for c in mesh.cells.values()]])
        cell_data = {k: [v[a:b] for a, b in zip(sizes[:-1], sizes[1:])] for k, v in _vtk_arrays(cells).items()}
        vtu = out_dir / "solution.vtu"
        meshio.write(vtu, meshio.Mesh(mesh.points, list(mesh.cells.items()), point_data=_vtk_arrays(points),
                                      cell_data=cell_data))
        written.append(vtu)
    if result_fields.at("far-field"):
        written.append(out_dir / "far_field.csv")
        _far_field_csv(written[-1], [*(result_fields.far_field_angles or {}).items(),
                                     *((f.name, f.values) for f in result_fields.at("far-field"))])
    arrays = {f.name: f.values for f in result_fields.fields}
    if mesh is not None:
        arrays["mesh_points"] = mesh.points
    if result_fields.surface_points is not None:
        arrays["surface_points"] = result_fields.surface_points
    written.append(out_dir / "fields.npz")
    np.savez(written[-1], **arrays)
    units = {f.name: {"unit": f.unit, "location": f.location, "shape": list(f.shape), "dtype": str(f.dtype)}
             for f in result_fields.fields}
    written.append(out_dir / "summary.json")
    write_json(written[-1], {**summary, "fields": units})
    return written


def magnetostatic_summary(result) -> dict:
    """The summary.json content of a magnetostatic result (SI units)."""
    p = result.problem
    return {
        "study": "magnetostatic",
        "formulation": p.formulation,
        "potential": p.potential,
        "method": p.solver.method,
        "reduction": result.reduction,
        "accumulate": p.solver.accumulate if p.solver.method == "ebe-jpcg" else "none",
        "coloring": p.solver.coloring if result.n_colors else "none",
        "n_colors": result.n_colors,
        "n_nodes": result.mesh.n_nodes,
        "n_elements": result.mesh.n_elements,
        "iterations": result.iterations,
        "relative_residual": result.relative_residual,
        "energy": result.energy,
        "energy_unit": "J" if p.formulation == "axisymmetric" else "J/m",
        "max_B": float(result.flux_density_magnitude.max()),
        "probes": [{"name": pr.name, "point": [c * p.length_scale for c in pr.point], "A": pr.potential,
                    "B": list(pr.flux_density)} for pr in result.probes],
        "timings": result.timings,
        "backend": result.backend,
        "device": result.device,
        "length_unit_of_points": "m",  # probe points and solution.vtu coordinates
    }


def write_magnetostatic(result, out_dir) -> list[Path]:
    """Write DIR/solution.vtu (point data A, flux; cell data B, B_magnitude, region) and DIR/summary.json."""
    out_dir = Path(out_dir)
    b = result.flux_density
    point_data = {"A": result.potential}
    point_data["flux"] = result.flux_function
    cell_data = {
        "B": np.column_stack([b, np.zeros(len(b))]),
        "B_magnitude": result.flux_density_magnitude,
        "region": result.mesh.region_index.astype(np.int32),
    }
    vtu, summary = out_dir / "solution.vtu", out_dir / "summary.json"
    write_trimesh(vtu, result.mesh, point_data, cell_data)
    data = magnetostatic_summary(result)
    data["regions"] = list(result.mesh.region_names)
    write_json(summary, data)
    return [vtu, summary]


def elasticity_summary(result) -> dict:
    """The summary.json content of an elasticity result (SI units)."""
    p = result.problem
    return {
        "study": "elasticity",
        "order": p.order,
        "method": p.solver.method,
        "integration": p.solver.integration,
        "preconditioner": p.solver.preconditioner if p.solver.method == "cg" else "none",
        "n_elements": result.mesh.n_elements,
        "n_dofs": result.dofmap.n_dofs,
        "iterations": result.iterations,
        "relative_residual": result.relative_residual,
        "strain_energy": result.strain_energy,
        "strain_energy_unit": "J",
        "max_displacement": result.max_displacement,
        "probes": [{"name": pr.name, "point": list(pr.point), "displacement": list(pr.displacement),
                    "von_mises": pr.von_mises} for pr in result.probes],
        "timings": result.timings,
        "backend": result.backend,
        "device": result.device,
        "sample_points_per_element_edge": result.field.per_edge,
        "length_unit_of_points": "m",  # probe points, displacements and solution.vtu coordinates
        "regions": list(result.mesh.region_names),
    }


def write_elasticity(result, out_dir) -> list[Path]:
    """Write DIR/solution.vtu (sub-grid hexahedra with point data displacement, von_mises; cell data
    element, region) and DIR/summary.json."""
    import meshio  # noqa: PLC0415

    out_dir = Path(out_dir)
    f = result.field
    mesh = meshio.Mesh(f.points, [("hexahedron", f.cells)],
                       point_data={"displacement": f.displacement, "von_mises": f.von_mises},
                       cell_data={"element": [f.element.astype(np.int32)],
                                  "region": [result.mesh.region_index[f.element].astype(np.int32)]})
    vtu, summary = out_dir / "solution.vtu", out_dir / "summary.json"
    meshio.write(vtu, mesh)
    write_json(summary, elasticity_summary(result))
    return [vtu, summary]


def truncation_summary(result) -> dict:
    """The summary.json content of a truncation result (SI units)."""
    s = result.setup
    return {
        "study": "truncation",
        "n_inner_elements": s.inner.n_elements,
        "n_outer_elements": s.outer.n_elements,
        "n_rhs": result.n_rhs,
        "quadrature": s.quadrature,
        "frequency": s.frequency,
        "loop": s.loop,
        "relative_error": result.relative_error,
        "relative_error_curl": result.relative_error_curl,
        "flops": result.flops,
        "flops_count": "41 per S'-S point pair (G, grad'G) + 158 per pair and right-hand side",
        "gflops": result.gflops,
        "paper_flops": result.paper_flops,
        "timings": result.timings,
        "memory": result.memory,
        "backend": result.backend,
        "device": result.device,
        "devices": result.devices,
        "length_unit_of_points": "m",
    }


def write_truncation(result, out_dir) -> list[Path]:
    """Write DIR/fields_S.npz (points (N_S, 3) m, E (n_rhs, N_S, 3) V/m and curlE V/m^2 complex128),
    DIR/solution.vtu (S with cell data E_magnitude, E_error of the first right-hand side) and
    DIR/summary.json."""
    import meshio  # noqa: PLC0415

    out_dir = Path(out_dir)
    npz, vtu, summary = out_dir / "fields_S.npz", out_dir / "solution.vtu", out_dir / "summary.json"
    surface = result.setup.outer
    np.savez(npz, points=result.points, E=result.e, curlE=result.curl_e)
    meshio.write(vtu, meshio.Mesh(surface.points, [("triangle", surface.triangles)],
                                  cell_data={"E_magnitude": [result.element_magnitude],
                                             "E_error": [result.element_error]}))
    write_json(summary, truncation_summary(result))
    return [npz, vtu, summary]


def write_bem(result, out_dir) -> list[Path]:
    """Write DIR/solution.vtu (the surface in m; point data displacement m, traction Pa, von_mises Pa; cell
    data group) and DIR/summary.json."""
    import meshio  # noqa: PLC0415

    from .bem.run import bem_summary  # noqa: PLC0415

    out_dir = Path(out_dir)
    vtu, summary = out_dir / "solution.vtu", out_dir / "summary.json"
    s = result.mesh
    meshio.write(vtu, meshio.Mesh(s.points, [("triangle", s.triangles)],
                                  point_data={"displacement": result.displacement,
                                              "traction": result.nodal_traction,
                                              "von_mises": result.nodal_von_mises},
                                  cell_data={"group": [result.grouped.group.astype(np.int32)]}))
    write_json(summary, bem_summary(result))
    return [vtu, summary]
