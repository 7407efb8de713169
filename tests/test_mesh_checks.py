"""engine/mesh/checks.py and finite.require_measurable: index range, finite and representable coordinates,
degenerate and duplicate cells,
self-intersecting and mutually crossing surfaces (against an all-pairs reference), and the studies that
refuse such meshes in one line with exit 2."""

import itertools

import meshio
import numpy as np
import pytest

from paraflux.engine.cli import main
from paraflux.engine.errors import MeshError
from paraflux.engine.finite import require_measurable
from paraflux.engine.mesh.checks import check_apart, check_indices, check_no_duplicates, crossing_pairs
from paraflux.engine.mesh.hex_io import read_hexmesh
from paraflux.engine.truncation.surfaces import uv_sphere

from .test_bad_input import GOOD_MESH_PROBLEM, square_mesh
from .test_bem_study import problem_text as bem_problem_text, write_box_file
from .test_hex_mesh_problem import box_grid, write_msh22
from .test_truncation_study import problem_file, write_sphere


def all_pairs_crossing(points, triangles):
    """The reference: every pair of triangles sharing no node, tested by segment-triangle intersection
    solved as a 3x3 linear system (p + t (q - p) = a + u (b - a) + v (c - a))."""
    found = []
    for i, j in itertools.combinations(range(len(triangles)), 2):
        if set(triangles[i]) & set(triangles[j]):
            continue
        for s, t in ((i, j), (j, i)):
            a, b, c = points[triangles[t]]
            hit = False
            for e in range(3):
                p, q = points[triangles[s][e]], points[triangles[s][(e + 1) % 3]]
                m = np.column_stack([q - p, a - b, a - c])
                if abs(np.linalg.det(m)) < 1e-14:
                    continue
                x, u, v = np.linalg.solve(m, a - p)
                eps = 1e-9
                hit |= eps < x < 1 - eps and u > eps and v > eps and u + v < 1 - eps
            if hit:
                found.append((i, j))
                break
    return sorted(found)


@pytest.mark.parametrize("seed", range(4))
def test_crossing_pairs_match_the_all_pairs_reference(seed):
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 1, (60, 3))
    triangles = np.array([rng.choice(60, 3, replace=False) for _ in range(40)])
    expected = all_pairs_crossing(points, triangles)
    assert expected  # random triangles in a unit cube do cross
    assert sorted(map(tuple, crossing_pairs(points, triangles).tolist())) == expected


def test_a_closed_sphere_does_not_cross_itself_and_two_overlapping_spheres_do():
    points, triangles = uv_sphere(24, 1.0)
    assert len(crossing_pairs(points, triangles)) == 0
    other = points + [1.0, 0.1, 0.05]
    with pytest.raises(MeshError, match=r"S' and S intersect each other near .* crossing pair"):
        check_apart(points, triangles, other, triangles, "S' and S")
    check_apart(points, triangles, 0.5 * points, triangles, "nested")  # inside, apart


@pytest.mark.parametrize("check, args, message", [
    (check_indices, (np.array([[0, 1, -3]]), 5, "m"), "refers to a node that does not exist"),
    (check_indices, (np.array([[0, 1, 5]]), 5, "m"), "numbered 0 to 4"),
    (require_measurable, (np.array([[0.0, np.nan]]),), "non-finite node coordinates"),
    (require_measurable, (np.array([[0.0, 1e200]]),), r"reach 1e\+200: .* overflow double precision"),
    (check_no_duplicates, (np.array([[0, 1, 1]]), "m"), "degenerate cell"),
    (check_no_duplicates, (np.array([[0, 1, 2], [2, 0, 1]]), "m"), "cells 0 and 1 are the same cell"),
])
def test_each_check_names_what_it_found(check, args, message):
    with pytest.raises(MeshError, match=message):
        check(*args)


def run(tmp_path, capsys, problem):
    out = tmp_path / "out"
    code = main(["solve", str(problem), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not out.exists()
    return err


def test_a_2d_mesh_with_a_duplicate_triangle_is_refused(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh", np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4], [4, 1, 0]]))
    (tmp_path / "problem.toml").write_text(GOOD_MESH_PROBLEM)
    assert "triangles 0 and 4 are the same triangle" in run(tmp_path, capsys, tmp_path / "problem.toml")


def test_a_negative_node_index_in_a_surface_is_refused(tmp_path, capsys):
    points, triangles = uv_sphere(10, 0.3)
    triangles[5, 1] = -3  # would wrap to the third-last node
    meshio.write(tmp_path / "inner.vtu", meshio.Mesh(points, [("triangle", triangles)]))
    write_sphere(tmp_path / "outer.vtu", 0.6, 6)
    err = run(tmp_path, capsys, problem_file(tmp_path))
    assert "triangle refers to a node that does not exist (1 such; first: triangle 5" in err


def test_a_2d_mesh_scaled_by_1e200_is_named_as_an_overflow(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    mesh = meshio.read(tmp_path / "square.msh")
    mesh.points *= 1e200
    meshio.write(tmp_path / "square.msh", mesh, file_format="gmsh22", binary=False)
    (tmp_path / "problem.toml").write_text(GOOD_MESH_PROBLEM)
    assert "overflow double precision" in run(tmp_path, capsys, tmp_path / "problem.toml")


def test_a_self_intersecting_bem_surface_is_refused(tmp_path, capsys):
    write_box_file(tmp_path / "box.msh")
    mesh = meshio.read(tmp_path / "box.msh")
    x, y, z = mesh.points.T
    ridge = (z == z.max()) & np.isclose(y, 0.5 * (y.min() + y.max())) & (x > x.min()) & (x < x.max())
    assert ridge.sum() == 7
    mesh.points[ridge] += [0.0, 3.0, -3.3 * np.ptp(z)]  # the top's middle line pushed through the bottom
    meshio.write(tmp_path / "box.msh", mesh, file_format="gmsh22", binary=False)
    (tmp_path / "p.toml").write_text(bem_problem_text())
    assert "mesh box.msh intersects itself: triangles" in run(tmp_path, capsys, tmp_path / "p.toml")


def test_truncation_surfaces_that_cross_each_other_are_refused(tmp_path, capsys):
    write_sphere(tmp_path / "inner.vtu", 0.3, 10, centre=(0.35, 0.0, 0.0))
    write_sphere(tmp_path / "outer.vtu", 0.6, 6)
    err = run(tmp_path, capsys, problem_file(tmp_path, position="[0.35, 0.0, 0.0]"))
    assert "the inner and outer surfaces intersect each other near" in err


@pytest.mark.parametrize("twin", [lambda h: h, lambda h: np.roll(h, 3)], ids=["same order", "other order"])
def test_a_hexahedral_mesh_with_a_duplicate_hexahedron_is_refused(tmp_path, twin):
    points, hexes, clamp, tip = box_grid(2)
    hexes = np.vstack([hexes, twin(hexes[0])])
    write_msh22(tmp_path / "m.msh", points, [("hexahedron", hexes), ("quad", np.vstack([clamp, tip]))],
                [np.ones(len(hexes), int), np.array([2, 3])], {"steel": (1, 3), "clamp": (2, 2), "tip": (3, 2)})
    with pytest.raises(MeshError, match=r"hexahedra 0 and 2 are the same hexahedron .*1 duplicate\(s\) in all"):
        read_hexmesh(tmp_path / "m.msh")
