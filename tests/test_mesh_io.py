"""Reading gmsh meshes (msh 2.2 and 4.1) with named physical groups, and writing results."""

import meshio
import numpy as np
import pytest

from paraflux.engine.errors import MeshError
from paraflux.engine.magnetostatics.run import run_magnetostatic
from paraflux.engine.mesh import cases
from paraflux.engine.mesh.gmsh_build import gmsh_session
from paraflux.engine.mesh.io import read_trimesh, write_trimesh
from paraflux.engine.mesh.locate import PointLocator
from paraflux.engine.mesh.trimesh import make_trimesh
from paraflux.engine.problems import case_problem_path, load_case_problem, load_problem

from .conftest import structured_square


def write_case_msh(name, path, version):
    with gmsh_session(name) as gmsh:
        cases.CASES[name].build(gmsh)
        gmsh.model.mesh.generate(2)
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.write(str(path))


@pytest.mark.parametrize("version", [2.2, 4.1])
def test_read_gmsh_versions_and_solve_like_the_case(tmp_path, version):
    path = tmp_path / "slot.msh"
    write_case_msh("open-slot", path, version)
    mesh = read_trimesh(path)
    nominal = cases.mesh_case("open-slot")
    assert set(mesh.region_names) == {"air"}
    assert set(mesh.boundary_names) == {"AB", "BC", "CDE", "EA"}
    assert mesh.n_elements == nominal.n_elements
    problem_file = tmp_path / "slot.toml"  # the case's own problem, reading the file instead
    problem_file.write_text(case_problem_path("open-slot").read_text().replace(
        'case = "open-slot"', 'mesh = "slot.msh"'))
    from_file = run_magnetostatic(load_problem(problem_file).with_solver(backend="numpy"))
    from_case = run_magnetostatic(load_case_problem("open-slot").with_solver(backend="numpy"))
    assert from_file.energy == pytest.approx(from_case.energy, rel=1e-9)


def test_unnamed_mesh_is_rejected(tmp_path):
    path = tmp_path / "plain.msh"
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=float)
    meshio.write(path, meshio.Mesh(pts, [("triangle", np.array([[0, 1, 2]]))]), file_format="gmsh22")
    with pytest.raises(MeshError, match="no named physical groups"):
        read_trimesh(path)


def test_garbage_file_is_rejected_in_one_message(tmp_path, capfd):
    for text in (b"\x00\x01 not a mesh at all", b"garbage\n"):
        path = tmp_path / "garbage.msh"
        path.write_bytes(text)
        with pytest.raises(MeshError, match="cannot read mesh file .*garbage.msh"):
            read_trimesh(path)
    assert capfd.readouterr() == ("", "")  # what meshio says is in the message, not on the terminal


def test_empty_and_truncated_files_are_named(tmp_path):
    (tmp_path / "empty.msh").write_bytes(b"")
    with pytest.raises(MeshError, match="empty.msh is empty"):
        read_trimesh(tmp_path / "empty.msh")
    (tmp_path / "cut.vtu").write_text("<VTKFile>")
    with pytest.raises(MeshError, match="cut.vtu: it is malformed or incomplete"):
        read_trimesh(tmp_path / "cut.vtu")


def test_unused_nodes_are_dropped_and_clockwise_regions_flipped():
    points = np.array([[0, 0], [1, 0], [0, 1], [9, 9]], dtype=float)
    mesh = make_trimesh(points, [[0, 2, 1]], [0], ("r",), [[0, 1]], [0], ("b",))
    assert mesh.n_nodes == 3
    coords = mesh.element_coords()[0]
    d1, d2 = coords[1] - coords[0], coords[2] - coords[0]
    assert d1[0] * d2[1] - d1[1] * d2[0] > 0


def test_write_vtu_round_trip(tmp_path):
    mesh = structured_square(4)
    path = tmp_path / "m.vtu"
    write_trimesh(path, mesh, {"A": np.arange(mesh.n_nodes, dtype=float)},
                  {"region": mesh.region_index.astype(np.int32)})
    back = meshio.read(path)
    assert np.allclose(back.point_data["A"], np.arange(mesh.n_nodes))
    assert back.cells_dict["triangle"].shape == (mesh.n_elements, 3)
    assert not list(tmp_path.glob(".*"))


def test_point_locator_interpolates_linear_fields_exactly():
    mesh = structured_square(7)
    f = 2.0 * mesh.points[:, 0] - 3.0 * mesh.points[:, 1] + 0.5
    q = np.random.default_rng(3).uniform(0, 1, size=(200, 2))
    values = PointLocator(mesh).interpolate(f, q)
    assert np.allclose(values, 2.0 * q[:, 0] - 3.0 * q[:, 1] + 0.5)
    assert np.isnan(PointLocator(mesh).interpolate(f, np.array([[2.0, 2.0]]))[0])


@pytest.mark.parametrize("target", [3000, 8732])
def test_transformer_hits_target_element_count(target):
    mesh = cases.mesh_case("transformer", elements=target)
    assert abs(mesh.n_elements - target) <= 0.05 * target
    assert set(mesh.region_names) == {"core", "air", "primary_in", "primary_out",
                                      "secondary_in", "secondary_out"}


def test_uniform_refinement_keeps_geometry_regions_and_boundaries():
    from paraflux.engine.mesh.refine import refine_uniform
    from paraflux.engine.mesh.trimesh import signed_areas

    mesh = cases.mesh_case("transformer", elements=3000)
    fine = refine_uniform(mesh)
    assert fine.n_elements == 4 * mesh.n_elements
    assert fine.edges.shape[0] == 2 * mesh.edges.shape[0]
    area, fine_area = signed_areas(mesh.points, mesh.triangles), signed_areas(fine.points, fine.triangles)
    assert np.all(fine_area > 0)
    for k in range(len(mesh.region_names)):
        assert fine_area[fine.region_index == k].sum() == pytest.approx(area[mesh.region_index == k].sum())
    # a conforming mesh: every interior edge shared by exactly two triangles
    e = np.sort(np.concatenate([fine.triangles[:, [0, 1]], fine.triangles[:, [1, 2]], fine.triangles[:, [2, 0]]]), 1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    assert set(counts) == {1, 2} and (counts == 1).sum() == fine.edges.shape[0]


def test_large_targets_use_refinement(monkeypatch):
    monkeypatch.setattr(cases, "MAX_GMSH_ELEMENTS", 2500)
    mesh = cases.mesh_case("open-slot", elements=8000)  # gmsh at ~2000, refined once
    assert mesh.n_elements % 4 == 0
    assert abs(mesh.n_elements - 8000) <= 0.05 * 8000


def test_nodes_and_elements_are_numbered_for_locality():
    from paraflux.engine.mesh.refine import refine_uniform

    mesh = refine_uniform(cases.mesh_case("transformer", elements=3000))
    spread = mesh.triangles.max(axis=1) - mesh.triangles.min(axis=1)
    assert np.median(spread) < 0.01 * mesh.n_nodes  # a random numbering gives about n / 3
    assert np.all(np.diff(mesh.triangles.min(axis=1)) >= 0)  # elements sorted by first node


def test_evaluate_at_matches_probes_and_is_none_outside():
    from paraflux.engine.magnetostatics.post import evaluate_at

    result = run_magnetostatic(load_case_problem("solenoid").with_solver(backend="numpy"))
    a, b = evaluate_at(result, (0.0, 0.0))
    assert b == pytest.approx(result.probes[0].flux_density, rel=1e-12)
    assert evaluate_at(result, (5.0, 0.0)) is None
