"""The elastostatic boundary element study for users: problem files, built-in cases, the command line's
outputs and refusals, a mesh file with physical groups."""

import json
from pathlib import Path

import meshio
import numpy as np
import pytest

from paraflux.engine.bem.shapes import BOX_FACES, box_surface
from paraflux.engine.cli import main
from paraflux.engine.errors import ProblemError
from paraflux.engine.problems import load_case_problem, parse_problem, problem_as_dict
from paraflux.engine.studies import STUDIES
from paraflux.engine.variants import M2L

BEM = STUDIES["elastostatic-bem"]
RESOURCES = Path(__file__).resolve().parents[1] / "resources" / "problems"


def test_bar_case_by_the_direct_method_is_exact(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["solve", "--case", "bar", "--size", "300", "--method", "direct", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["method"] == "direct" and summary["n_dofs"] == 3 * summary["n_nodes"]
    assert abs(summary["max_displacement"] - np.hypot(1e-4, np.hypot(0.3 * 100e6 * 0.05 / 200e9,
                                                                     0.3 * 100e6 * 0.05 / 200e9))) < 1e-9
    probe = summary["probes"][0]
    assert probe["where"] == "interior" and abs(probe["von_mises"] / 100e6 - 1) < 1e-5
    assert np.allclose(probe["displacement"], [5e-5, -3.75e-6, -3.75e-6], rtol=1e-5)
    vtu = meshio.read(out / "solution.vtu")
    assert set(vtu.point_data) >= {"displacement", "traction", "von_mises"}
    assert np.abs(vtu.point_data["von_mises"] / 100e6 - 1).max() < 1e-5
    assert "dense LU" in capsys.readouterr().out


def test_fmm_method_agrees_with_direct_and_reports_gmres():
    problem = load_case_problem("bar", 300)
    direct = BEM.run(BEM.with_variants(problem, {"method": "direct"}))
    fmm = BEM.run(BEM.with_variants(problem, {"method": "fmm", "order": 10, "m2l": "batched-gemm"}))
    assert fmm.iterations == len(fmm.residual_history) > 0 and fmm.relative_residual < 1e-7
    assert np.linalg.norm(fmm.solution - direct.solution) < 1e-3 * np.linalg.norm(direct.solution)
    assert fmm.memory["host_bytes"] > 0 and fmm.memory["device_bytes"] == 0 and fmm.memory["near_pairs"] > 0
    assert all(fmm.timings[f"fmm_{k}"] > 0 for k in ("near_setup", "far_setup", "preconditioner", "gmres"))


@pytest.mark.parametrize("m2l, leaf_size", [(c.name, n) for c, n in zip(M2L.choices, (32, 8, 16, 12, 24, 20))])
def test_every_m2l_scheme_and_leaf_size_reach_the_fmm_and_agree_with_direct(m2l, leaf_size, monkeypatch):
    """At p = 8 (measured against the direct solve: 4e-6 for the standard M2L and batched GEMM, 2e-5
    child-to-parent, 8e-6 parent-to-child, 1.4e-4 exponential); p = 10 took 35 s with leaves of 8."""
    from paraflux.engine.bem import run

    settings = []
    solve_fmm = run.solve_fmm
    monkeypatch.setattr(run, "solve_fmm", lambda *a: settings.append(a[-1]) or solve_fmm(*a))
    problem = load_case_problem("bar", 300)
    direct = BEM.run(BEM.with_variants(problem, {"method": "direct"}))
    variants = {"method": "fmm", "order": 8, "m2l": m2l, "leaf_size": leaf_size, "backend": "numpy"}
    fmm = BEM.run(BEM.with_variants(problem, variants))
    runs = "batched-gemm" if m2l == "auto" else m2l  # auto on NumPy
    assert [(s.m2l, s.leaf_size, s.order) for s in settings] == [(runs, leaf_size, 8)]
    assert fmm.problem.solver.m2l == runs
    assert np.linalg.norm(fmm.solution - direct.solution) < 1e-3 * np.linalg.norm(direct.solution)


@pytest.mark.parametrize("written, nodes", [("26", 26), ('"8"', 8)])
def test_exponential_nodes_reach_the_fmm_from_the_problem_file(tmp_path, monkeypatch, written, nodes):
    from paraflux.engine.bem import fmm_operator

    asked = []
    laplace = fmm_operator.LaplaceFMM
    monkeypatch.setattr(fmm_operator, "LaplaceFMM", lambda *a, **k: asked.append(k["exponential_nodes"])
                        or laplace(*a, **k))
    text = (RESOURCES / "bar.toml").read_text().replace('method = "fmm"', 'method = "fmm"\nm2l = "exponential"\n'
                                                        f'exponential_nodes = {written}')
    (tmp_path / "p.toml").write_text(text)
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet", "--size", "300"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert asked == [nodes] and summary["exponential_nodes"] == nodes and summary["m2l"] == "exponential"
    assert abs(summary["max_displacement"] / np.hypot(1e-4, np.hypot(3.75e-6, 3.75e-6)) - 1) < 2e-2


def test_exponential_nodes_other_than_the_rules_are_refused(tmp_path, capsys):
    text = (RESOURCES / "bar.toml").read_text().replace('method = "fmm"', 'method = "fmm"\nexponential_nodes = 9')
    (tmp_path / "p.toml").write_text(text)
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "[solver] exponential_nodes = '9' is not one of: 8, 17, 26" in capsys.readouterr().err


def test_the_fmm_solve_of_the_tension_bar_gains_accuracy_with_the_multipole_order_not_rtol():
    """The bar's exact field u = (sigma x, -nu sigma y, -nu sigma z) / E: the fmm method's error is the
    FMM's (1.9e-3 at p = 4, 6.1e-6 at p = 10 measured with the solve's default separation 2; 2.8e-2 and
    3.4e-4 with separation 1), however small rtol is."""
    problem = load_case_problem("bar", 300)
    errors = []
    for order in (4, 10):
        result = BEM.run(BEM.with_variants(problem, {"method": "fmm", "order": order, "rtol": 1e-10}))
        x = result.grouped.surface.points
        exact = np.stack([x[:, 0], -0.3 * x[:, 1], -0.3 * x[:, 2]], axis=1) * 100e6 / 200e9
        errors.append(np.abs(result.fields.displacement - exact).max() / np.abs(exact).max())
        assert result.relative_residual <= 1e-10
    assert errors[1] < 1e-4 < 1e-3 < errors[0], errors


def test_running_out_of_memory_is_a_solver_error(monkeypatch):
    from paraflux.engine.bem import fmm_solve
    from paraflux.engine.errors import SolverError

    def exhausted(*args, **kwargs):
        raise MemoryError("cannot allocate")

    monkeypatch.setattr(fmm_solve, "FmmBemOperator", exhausted)
    with pytest.raises(SolverError, match="host ran out of memory for the FMM solve"):
        BEM.run(load_case_problem("bar", 300))


def test_hollow_sphere_case_matches_lame():
    result = BEM.run(BEM.with_variants(load_case_problem("hollow-sphere", 800), {"method": "direct"}))
    x = result.mesh.points
    r = np.linalg.norm(x, axis=1)
    k = 100e6 * 0.125 / 0.875
    exact = k / 200e9 * ((1 - 0.6) * r + 1.3 / (2 * r ** 2))
    assert np.abs(np.einsum("ij,ij->i", result.displacement, x / r[:, None]) - exact).max() < 0.02 * exact.max()
    assert result.probes[0].where == "interior"


def write_box_file(path, drop=0):
    """A box surface with the six faces as gmsh physical groups, in mm."""
    surface, face = box_surface((200.0, 50.0, 50.0), (8, 2, 2))
    tri = surface.triangles[:len(surface.triangles) - drop]
    mesh = meshio.Mesh(surface.points, [("triangle", tri)],
                       cell_data={"gmsh:physical": [face[:len(tri)] + 1], "gmsh:geometrical": [face[:len(tri)] + 1]},
                       field_data={name: np.array([i + 1, 2]) for i, name in enumerate(BOX_FACES)})
    meshio.write(path, mesh, file_format="gmsh22", binary=False)
    return path


def write_box_with_a_sliver(path):
    """The box of write_box_file with its first triangle (a, b, c) split at the middle m of edge a-b and the
    zero-area triangle (m, a, b) closing the surface: closed and consistently oriented, but degenerate."""
    surface, face = box_surface((200.0, 50.0, 50.0), (8, 2, 2))
    a, b, c = surface.triangles[0]
    m = len(surface.points)
    points = np.vstack([surface.points, 0.5 * (surface.points[a] + surface.points[b])])
    tri = np.vstack([[[a, m, c], [m, b, c], [m, a, b]], surface.triangles[1:]])
    groups = np.concatenate([[face[0]] * 3, face[1:]]) + 1
    mesh = meshio.Mesh(points, [("triangle", tri)],
                       cell_data={"gmsh:physical": [groups], "gmsh:geometrical": [groups]},
                       field_data={name: np.array([i + 1, 2]) for i, name in enumerate(BOX_FACES)})
    meshio.write(path, mesh, file_format="gmsh22", binary=False)


def test_a_zero_area_triangle_is_named(tmp_path, capsys):
    write_box_with_a_sliver(tmp_path / "box.msh")
    (tmp_path / "p.toml").write_text(problem_text())
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "surface 'box.msh' has 1 degenerate (zero-area) triangles" in err and not out.exists()


def problem_text(mesh="box.msh", boundaries=None, extra=""):
    boundaries = boundaries if boundaries is not None else """
[boundaries.x0]
type = "fixed"
[boundaries.x1]
type = "traction"
value = [0.0, 0.0, -1e6]
"""
    return f"""
[problem]
kind = "elastostatic-bem"
mesh = "{mesh}"
length_unit = "mm"
young = 200e9
poisson = 0.3
{boundaries}
[solver]
method = "direct"
{extra}
"""


def test_mesh_file_with_physical_groups_round_trips_and_solves(tmp_path):
    write_box_file(tmp_path / "box.msh")
    (tmp_path / "p.toml").write_text(problem_text(extra='[[probes]]\nname = "tip"\npoint = [200.0, 25.0, 25.0]'))
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    tip = summary["probes"][0]
    assert tip["where"] == "surface" and tip["displacement"][2] < 0  # the cantilever bends down
    problem = parse_problem({**problem_as_dict(load_case_problem("bracket"))}, tmp_path)
    assert parse_problem(problem_as_dict(problem), tmp_path) == problem


def test_two_fixed_faces_meeting_at_an_edge_get_double_nodes(tmp_path):
    write_box_file(tmp_path / "box.msh")
    fixed_two = '[boundaries.x0]\ntype = "fixed"\n[boundaries.y0]\ntype = "fixed"\n[boundaries.x1]\ntype = "traction"\n' \
                'value = [0.0, 0.0, -1e6]'
    (tmp_path / "p.toml").write_text(problem_text(boundaries=fixed_two))
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["double_nodes"] == 3  # the three nodes of the x = 0, y = 0 edge
    assert summary["max_displacement"] > 0


@pytest.mark.parametrize("case, message", [
    (dict(boundaries='[boundaries.nowhere]\ntype = "fixed"'), "unknown boundary 'nowhere'"),
    (dict(boundaries='[boundaries.x1]\ntype = "traction"\nvalue = [1.0, 0.0, 0.0]'), "free to move as a rigid body"),
    (dict(mesh="open.msh"), "not closed"),
    (dict(mesh="missing.msh"), "not found"),
    (dict(extra='[[probes]]\nname = "far"\npoint = [500.0, 0.0, 0.0]'), "lies outside the body"),
    (dict(extra='order = 1'), "multipole order must be a whole number from 2 to 20"),
])
def test_bad_input_is_one_line_exit_2_and_no_output(tmp_path, capsys, case, message):
    write_box_file(tmp_path / "box.msh")
    write_box_file(tmp_path / "open.msh", drop=3)
    text = problem_text(**case)
    if "order" in case.get("extra", ""):
        text = text.replace('method = "direct"', 'method = "fmm"')
    (tmp_path / "p.toml").write_text(text)
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_gmres_that_does_not_converge_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["solve", "--case", "bar", "--size", "200", "--method", "fmm", "--rtol", "1e-12",
                 "--max-iterations", "1", "--out", str(out), "--quiet"]) == 3  # the numerics failed
    assert "GMRES did not converge" in capsys.readouterr().err and not out.exists()


def test_a_probe_on_a_face_between_nodes_reads_the_surface_values(tmp_path):
    text = (RESOURCES / "bar.toml").read_text().replace('method = "fmm"', 'method = "direct"')
    text += '\n[[probes]]\nname = "end face"\npoint = [0.2, 0.013, 0.017]\n'  # on x = 200 mm, off the nodes
    (tmp_path / "p.toml").write_text(text)
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet", "--size", "200"]) == 0
    probe = json.loads((out / "summary.json").read_text())["probes"][1]
    assert probe["where"] == "surface"
    # uniform stress, exact for linear elements: u = (sigma x, -nu sigma y, -nu sigma z) / E, von Mises = sigma
    assert np.allclose(probe["displacement"], np.array([0.2, -0.3 * 0.013, -0.3 * 0.017]) * 1e8 / 200e9, rtol=1e-5)
    assert abs(probe["von_mises"] - 1e8) < 1e-5 * 1e8


def test_the_bar_checked_against_hexahedral_p_fem_agrees_and_other_parts_are_refused():
    from paraflux.engine.bem.fem_check import check_against_hex_fem

    direct = BEM.run(BEM.with_variants(load_case_problem("bar", 300), {"method": "direct"}))
    check = check_against_hex_fem(direct)
    assert check.hex_case == "bar-hex" and check.order == 3 and check.fem_dofs > 0
    assert check.bem_dofs == 3 * direct.mesh.n_nodes
    assert check.max_difference < 1e-6  # uniform stress: both discretisations are exact
    fmm = BEM.run(BEM.with_variants(load_case_problem("bar", 300), {"method": "fmm", "order": 4}))
    assert 1e-3 < check_against_hex_fem(fmm).max_difference < 1e-1  # the fmm method's error at p = 4
    sphere = BEM.run(BEM.with_variants(load_case_problem("hollow-sphere", 300), {"method": "direct"}))
    with pytest.raises(ProblemError, match="no hexahedral mesh of this part \\(case 'hollow-sphere'\\)"):
        check_against_hex_fem(sphere)


def test_a_requested_precision_picks_the_multipole_order_for_the_scheme(tmp_path, capsys):
    """precision = "1e-4" runs the order measured to reach it for the scheme that runs (bem/precision.py):
    p = 8 for standard and batched-gemm, 10 for parent-to-child; the summary names both. The hollow-sphere's
    solve is then within 1e-4 of the direct solve. A scheme that reaches it at no measured order is refused
    in one line before meshing (exit 2)."""
    from paraflux.engine.bem.precision import ORDERS, order_for
    from paraflux.engine.variants import M2L

    assert order_for("order", "parent-to-child", 7) == 7
    assert [order_for("1e-4", s, 4) for s in ("standard", "batched-gemm", "parent-to-child")] == [8, 8, 10]
    assert set(ORDERS) == {s for s in M2L.names if s != "auto"}
    problem = load_case_problem("hollow-sphere", 800)
    direct = BEM.run(BEM.with_variants(problem, {"method": "direct"})).fields.displacement
    result = BEM.run(BEM.with_variants(problem, {"precision": "1e-4", "order": 4, "rtol": 1e-10}))
    assert result.problem.solver.order == 8
    fmm = result.fields.displacement
    assert np.linalg.norm(fmm - direct) <= 1e-4 * np.linalg.norm(direct)
    out = tmp_path / "out"
    assert main(["solve", "--case", "hollow-sphere", "--size", "800", "--precision", "1e-4", "--m2l", "parent-to-child",
                 "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["precision"], summary["order"], summary["m2l"]) == ("1e-4", 10, "parent-to-child")
    code = main(["solve", "--case", "hollow-sphere", "--size", "800", "--precision", "1e-5", "--m2l", "exponential",
                 "--out", str(tmp_path / "no"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "does not reach a precision of 1e-5" in err, err
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("where, written, ratio", [("file", "4.5", 4.5), ("file", '"8"', 8.0), ("file", "2", 2.0),
                                                   ("option", "4.5", 4.5), ("none", None, 6.0)])
def test_the_near_field_reach_goes_from_the_problem_file_or_option_to_the_solve(tmp_path, monkeypatch, where,
                                                                                 written, ratio):
    """near_field sets how far the preconditioner reaches (auto: 6 on NumPy); the accurate corrections stay
    at 3 element sizes."""
    asked, summary = _solve_the_bar_with(tmp_path, monkeypatch, "near_field", where, written)
    assert [(s.precondition_ratio, s.correction_ratio) for s in asked] == [(ratio, 3.0)]
    assert summary["near_field"] == ratio


def _solve_the_bar_with(tmp_path, monkeypatch, key, where, written):
    """(the FmmSettings solve_fmm got, summary.json) for the bar solved with [solver] key = written in the
    problem file (where "file"), as its option (where "option"), or neither."""
    from paraflux.engine.bem import run

    asked = []
    solve = run.solve_fmm
    monkeypatch.setattr(run, "solve_fmm", lambda *a: asked.append(a[-1]) or solve(*a))
    text = (RESOURCES / "bar.toml").read_text()
    if where == "file":
        text = text.replace('method = "fmm"', f'method = "fmm"\n{key} = {written}')
    (tmp_path / "p.toml").write_text(text)
    option = [f"--{key.replace('_', '-')}", written] if where == "option" else []
    out = tmp_path / "out"
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(out), "--quiet", "--size", "300", *option]) == 0
    return asked, json.loads((out / "summary.json").read_text())


def test_a_near_field_reach_not_offered_is_refused(tmp_path, capsys):
    text = (RESOURCES / "bar.toml").read_text().replace('method = "fmm"', 'method = "fmm"\nnear_field = 0.5')
    (tmp_path / "p.toml").write_text(text)
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "[solver] near_field = '0.5' is not one of: auto, 2, 3, 4.5, 6, 8" in capsys.readouterr().err


@pytest.mark.parametrize("where, written, clusters", [("file", '"off"', 0), ("option", "off", 0),
                                                      ("none", None, None)])
def test_the_coarse_level_goes_from_the_problem_file_or_option_to_the_solve(tmp_path, monkeypatch, where,
                                                                            written, clusters):
    """coarse = "off" (or --coarse off) leaves the ILU alone; on by default, its size in summary.json."""
    asked, summary = _solve_the_bar_with(tmp_path, monkeypatch, "coarse", where, written)
    assert [s.coarse_clusters for s in asked] == [clusters]
    assert summary["coarse"] == ("off" if clusters == 0 else "on")
    assert (summary["memory"]["coarse_unknowns"] > 0) == (clusters is None)


def test_fp32_far_tables_reach_the_fmm_within_1e_7_of_fp64_where_the_precision_allows(monkeypatch):
    """far_tables = fp32 runs the FMM with its M2L table in FP32: the displacements stay within 1e-7 of the FP64
    table's (its rounding, about 1e-7 per translation, far below the 1e-4 asked); it is refused past order 10
    where no precision is asked, and with the exponential scheme."""
    from paraflux.engine.bem import run

    settings = []
    solve_fmm = run.solve_fmm
    monkeypatch.setattr(run, "solve_fmm", lambda *a: settings.append(a[-1]) or solve_fmm(*a))
    problem = load_case_problem("bar", 300)
    variants = {"method": "fmm", "precision": "1e-4", "backend": "numpy"}
    fp64 = BEM.run(BEM.with_variants(problem, variants))
    fp32 = BEM.run(BEM.with_variants(problem, {**variants, "far_tables": "fp32"}))
    assert [s.fp32_tables for s in settings] == [False, True]
    change = np.linalg.norm(fp32.solution - fp64.solution) / np.linalg.norm(fp64.solution)
    assert 0 < change < 1e-7
    BEM.with_variants(problem, {"method": "fmm", "far_tables": "fp32"})  # the default order, 10
    with pytest.raises(ProblemError, match="takes orders up to 10"):
        BEM.with_variants(problem, {"method": "fmm", "order": 12, "far_tables": "fp32"})
    with pytest.raises(ProblemError, match="not the exponential one"):
        BEM.with_variants(problem, {**variants, "precision": "1e-3", "m2l": "exponential", "far_tables": "fp32"})
