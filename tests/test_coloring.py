"""Colourings are valid for every method on random meshes, balanced without extra colours, and the
parallel colouring's NumPy twin is what the GPU must reproduce."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import Delaunay

from paraflux.engine.coloring import METHODS, color_elements, groups_from_colors, is_valid_coloring
from paraflux.engine.coloring.adjacency import element_adjacency, max_node_degree, node_elements
from paraflux.engine.coloring.sequential import balance_colors, color_sequential
from paraflux.engine.mesh import cases


def random_mesh(seed: int, n_points: int):
    rng = np.random.default_rng(seed)
    points = rng.uniform(size=(n_points, 2))
    return Delaunay(points).simplices.astype(np.int64), n_points


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 400), st.sampled_from(METHODS), st.booleans())
def test_every_method_gives_a_valid_coloring(seed, n_points, method, balance):
    triangles, n = random_mesh(seed, n_points)
    groups = color_elements(triangles, n, method, balance)
    assert is_valid_coloring(triangles, groups.colors)
    assert sorted(groups.permutation.tolist()) == list(range(len(triangles)))  # each element exactly once
    for c in range(groups.n_colors):
        members = groups.permutation[groups.offsets[c]:groups.offsets[c + 1]]
        assert np.all(groups.colors[members] == c)
        assert len(np.unique(triangles[members])) == 3 * len(members)  # no node twice in a group
    assert groups.n_colors >= groups.lower_bound == max_node_degree(triangles, n)


def test_validity_check_catches_a_clash():
    triangles = np.array([[0, 1, 2], [1, 3, 2]])
    assert is_valid_coloring(triangles, np.array([0, 1]))
    assert not is_valid_coloring(triangles, np.array([0, 0]))
    assert not is_valid_coloring(triangles, np.array([0, -1]))


def test_fcm_and_ofcm_agree_and_ccm_uses_no_fewer_colors():
    mesh = cases.mesh_case("transformer", elements=5000)
    fcm = color_sequential("fcm", mesh.triangles, mesh.n_nodes)
    ofcm = color_sequential("ofcm", mesh.triangles, mesh.n_nodes)
    ccm = color_sequential("ccm", mesh.triangles, mesh.n_nodes)
    assert np.array_equal(fcm, ofcm)  # the tabu table finds the same smallest free colours
    assert ccm.max() >= fcm.max()
    assert fcm.max() + 1 <= max_node_degree(mesh.triangles, mesh.n_nodes) + 2


def test_balancing_evens_groups_without_new_colors():
    mesh = cases.mesh_case("transformer", elements=20000)
    colors = color_sequential("ofcm", mesh.triangles, mesh.n_nodes)
    balanced = balance_colors(mesh.triangles, mesh.n_nodes, colors)
    before, after = groups_from_colors(colors), groups_from_colors(balanced)
    assert after.n_colors == before.n_colors
    assert before.balance_ratio > 10 and after.balance_ratio <= 1.3
    assert is_valid_coloring(mesh.triangles, balanced)


def test_csr_maps():
    triangles = np.array([[0, 1, 2], [1, 3, 2], [3, 4, 2], [5, 6, 7]])
    offsets, elements = node_elements(triangles, 8)
    assert offsets.tolist() == [0, 1, 3, 6, 8, 9, 10, 11, 12]
    assert elements[offsets[2]:offsets[3]].tolist() == [0, 1, 2]
    adj_offsets, adj = element_adjacency(triangles, 8)
    assert [adj[adj_offsets[e]:adj_offsets[e + 1]].tolist() for e in range(4)] == [[1, 2], [0, 2], [0, 1], []]


def test_unknown_method_is_named():
    from paraflux.engine.errors import ProblemError

    with pytest.raises(ProblemError, match="unknown colouring method 'dsatur'"):
        color_elements(np.array([[0, 1, 2]]), 3, "dsatur")


@pytest.mark.parametrize("case", ["open-slot", "transformer"])
def test_colored_accumulation_matches_atomic_and_repeats_bitwise(case, monkeypatch):
    from paraflux.engine.magnetostatics import ebe_pcg, run
    from paraflux.engine.problems import load_case_problem

    methods, coloured_sums = [], []  # what the solve really coloured with, and how it accumulated
    monkeypatch.setattr(run, "color_elements", lambda *a: methods.append(a[2]) or color_elements(*a))
    accumulate = ebe_pcg.EbeOperator.accumulate
    monkeypatch.setattr(ebe_pcg.EbeOperator, "accumulate",
                        lambda self, v: coloured_sums.append(self.groups is not None) or accumulate(self, v))
    problem = load_case_problem(case).with_solver(backend="numpy", rtol=1e-12)
    atomic = run.run_magnetostatic(problem)
    assert methods == [] and not any(coloured_sums)
    for coloring in METHODS:
        methods.clear()
        coloured_sums.clear()
        colored = run.run_magnetostatic(problem.with_solver(accumulate="colored", coloring=coloring))
        assert methods == [coloring] and coloured_sums and all(coloured_sums), coloring
        mesh = colored.mesh
        assert colored.n_colors == color_elements(mesh.triangles, mesh.n_nodes, coloring).n_colors >= 3
        diff = np.linalg.norm(colored.potential - atomic.potential) / np.linalg.norm(atomic.potential)
        assert diff < 1e-10, coloring
    runs = [run.run_magnetostatic(problem.with_solver(accumulate="colored")).potential for _ in range(5)]
    assert all(np.array_equal(runs[0], r) for r in runs[1:])


def test_color_command_prints_groups_and_writes_cell_data(tmp_path, capsys):
    import meshio

    from paraflux.engine.cli import main

    out = tmp_path / "colors.vtu"
    assert main(["color", "open-slot", "--size", "2000", "--method", "ofcm", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "colours (lower bound" in text and "ratio" in text
    colors = meshio.read(out).cell_data["color"][0]
    assert colors.min() == 0 and len(np.unique(colors)) == colors.max() + 1
    assert main(["color", str(tmp_path / "missing.msh")]) == 2


def test_the_summary_names_the_colouring_a_solve_used(tmp_path):
    import json

    from paraflux.engine.cli import main

    for extra, coloring in ((["--accumulate", "colored", "--coloring", "fcm"], "fcm"), ([], "none")):
        out = tmp_path / coloring
        assert main(["solve", "--case", "open-slot", "--size", "500", "--backend", "numpy", "--out", str(out),
                     "--quiet", *extra]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["coloring"] == coloring and (summary["n_colors"] > 0) == (coloring != "none")


def test_the_color_command_names_a_case_of_another_study(capsys):
    from paraflux.engine.cli import main

    assert main(["color", "cantilever"]) == 2
    assert "'cantilever' is a case of the elasticity study, not a 2D one" in capsys.readouterr().err
    assert main(["color", "nothing"]) == 2
    assert "'nothing' is neither a mesh file nor a built-in case" in capsys.readouterr().err


def test_parallel_colouring_past_its_64_colours_points_to_the_sequential_methods():
    from paraflux.engine.errors import MeshError

    fan = np.array([[0, 1 + i, 2 + i] for i in range(80)])  # 80 triangles around node 0
    with pytest.raises(MeshError, match="more than 64 colours .* use ccm, fcm or ofcm"):
        color_elements(fan, 82, "parallel")
    assert color_elements(fan, 82, "ofcm").n_colors == 80
