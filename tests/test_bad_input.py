"""Bad input: one clear line on stderr, exit code 2 (3 where the numerics failed), no traceback and no output
files."""

import subprocess
import sys
import textwrap

import meshio
import numpy as np
import pytest

from paraflux.engine.cli import main

GOOD_MESH_PROBLEM = """
[problem]
kind = "magnetostatic"
formulation = "planar"
potential = "vector"
mesh = "square.msh"
length_unit = "m"
[regions.domain]
mu_r = 1.0
current_density = 1.0
[boundaries.outer]
type = "dirichlet"
value = 0.0
"""


def write_msh(path, points, cells, tags, names):
    """A gmsh 2.2 file: cells [(type, array)], tags per block, names {name: (tag, dim)}."""
    mesh = meshio.Mesh(np.column_stack([points, np.zeros(len(points))]), cells,
                       cell_data={"gmsh:physical": tags, "gmsh:geometrical": tags},
                       field_data={n: np.array(v) for n, v in names.items()})
    meshio.write(path, mesh, file_format="gmsh22", binary=False)


def square_mesh(path, triangles=None):
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], dtype=float)
    if triangles is None:
        triangles = np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])
    lines = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    write_msh(path, points, [("triangle", triangles), ("line", lines)],
              [np.full(len(triangles), 1), np.full(4, 2)], {"domain": (1, 2), "outer": (2, 1)})


def run_cli(tmp_path, capsys, problem_text=None, extra=()):
    problem = tmp_path / "problem.toml"
    if problem_text is not None:
        problem.write_text(textwrap.dedent(problem_text))
    out = tmp_path / "out"
    code = main(["solve", str(problem), "--out", str(out), "--quiet", "--backend", "numpy", *extra])
    captured = capsys.readouterr()
    return code, captured.err, out


def assert_clean_failure(code, err, out, *needles, exit_code=2):
    assert code == exit_code
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not out.exists()


def test_good_problem_solves(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM)
    assert code == 0, err
    assert (out / "solution.vtu").is_file() and (out / "summary.json").is_file()
    assert not list(out.glob(".*partial*"))


def test_missing_problem_file(tmp_path, capsys):
    code, err, out = run_cli(tmp_path, capsys, None)
    assert_clean_failure(code, err, out, "problem file not found")


def test_missing_mesh_file(tmp_path, capsys):
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM)
    assert_clean_failure(code, err, out, "mesh file not found", "square.msh")


def test_malformed_toml(tmp_path, capsys):
    code, err, out = run_cli(tmp_path, capsys, "[problem\nkind = 'magnetostatic'\n")
    assert_clean_failure(code, err, out, "malformed TOML")


def test_unknown_region_name(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    text = GOOD_MESH_PROBLEM + "[regions.coil]\ncurrent_density = 5.0\n"
    code, err, out = run_cli(tmp_path, capsys, text)
    assert_clean_failure(code, err, out, "unknown region 'coil'")


def test_unknown_boundary_name(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    text = GOOD_MESH_PROBLEM.replace("[boundaries.outer]", "[boundaries.outside]")
    code, err, out = run_cli(tmp_path, capsys, text)
    assert_clean_failure(code, err, out, "unknown boundary 'outside'")


def test_region_without_material(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    text = GOOD_MESH_PROBLEM.replace("[regions.domain]\nmu_r = 1.0\ncurrent_density = 1.0\n", "[regions]\n")
    code, err, out = run_cli(tmp_path, capsys, text)
    assert_clean_failure(code, err, out)
    assert "no [regions" in err or "has no material" in err


def test_mesh_region_missing_from_problem(tmp_path, capsys):
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], dtype=float)
    tris = np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])
    write_msh(tmp_path / "square.msh", points,
              [("triangle", tris[:2]), ("triangle", tris[2:]), ("line", np.array([[0, 1], [1, 2]]))],
              [np.full(2, 1), np.full(2, 3), np.full(2, 2)],
              {"domain": (1, 2), "iron": (3, 2), "outer": (2, 1)})
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM)
    assert_clean_failure(code, err, out, "mesh region 'iron' has no material")


def test_non_triangle_mesh(tmp_path, capsys):
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    write_msh(tmp_path / "square.msh", points, [("quad", np.array([[0, 1, 2, 3]])),
                                                ("line", np.array([[0, 1]]))],
              [np.array([1]), np.array([2])], {"domain": (1, 2), "outer": (2, 1)})
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM)
    assert_clean_failure(code, err, out, "non-triangle mesh", "quad")


def test_zero_area_triangle(tmp_path, capsys):
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.0]], dtype=float)
    tris = np.array([[0, 4, 1], [1, 2, 3], [0, 1, 3]])
    write_msh(tmp_path / "square.msh", points, [("triangle", tris), ("line", np.array([[1, 2]]))],
              [np.full(3, 1), np.array([2])], {"domain": (1, 2), "outer": (2, 1)})
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM)
    assert_clean_failure(code, err, out, "zero-area triangle")


def test_inverted_triangle(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh", np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 4, 0]]))
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM)
    assert_clean_failure(code, err, out, "inverted triangle", "region 'domain'")


def test_no_dirichlet_boundary_is_singular(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    text = GOOD_MESH_PROBLEM.replace('type = "dirichlet"', 'type = "neumann"')
    code, err, out = run_cli(tmp_path, capsys, text)
    assert_clean_failure(code, err, out, "singular problem", exit_code=3)  # a singular system: numerics


def test_solver_not_converging(tmp_path, capsys):
    problem = tmp_path / "case.toml"
    problem.write_text(textwrap.dedent("""
        [problem]
        kind = "magnetostatic"
        formulation = "planar"
        potential = "scalar"
        case = "open-slot"
        [regions.air]
        [boundaries.AB]
        value = 700.0
        [boundaries.CDE]
        value = 0.0
        [solver]
        max_iterations = 3
        """))
    out = tmp_path / "out2"
    code = main(["solve", str(problem), "--out", str(out), "--quiet", "--backend", "numpy"])
    err = capsys.readouterr().err
    assert_clean_failure(code, err, out, "did not converge", "3 iterations", exit_code=3)


@pytest.mark.parametrize("bad, needle", [
    ('[problem]\nkind = "heat"\n', "not supported"),
    ('[problem]\nkind = "magnetostatic"\nmesh = "a.msh"\ncase = "solenoid"\n', "exactly one of"),
    ('[problem]\nkind = "magnetostatic"\ncase = "nope"\n', "not a built-in case"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\npotential = "scalar"\n[regions.air]\nmu_r = -1\n',
     "mu_r must be positive"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\n[regions.air]\nmu = 1\n', "unknown key(s): mu"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\n[regions.air]\nmu_r = 1e-305\n',
     "mu_r must lie from 1e-06 to 1e+08"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\n[regions.air]\n[solver]\nrtol = 5.0\n',
     "rtol must lie strictly"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\n[case]\nelements = 9223372036854775807\n',
     "[case] elements must be from 50 to 20,000,000"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\n[regions.air]\n[[probes]]\npoint = [nan, 0.5]\n',
     "probes[0].point[0] = nan is not a finite number"),
    ('[problem]\nkind = "elastostatic-bem"\ncase = "bar"\nlength_unit = "mm"\nyoung = 2e11\npoisson = 0.3\n',
     "case 'bar' is drawn in m"),
    ('[problem]\nkind = "elastostatic-bem"\ncase = "bar"\nyoung = 1.7e308\npoisson = 0.3\n',
     "problem.young = 1.7e+308 is too large: magnitudes beyond 1e+150 overflow double precision"),
    ('[problem]\nkind = "elastostatic-bem"\ncase = "bar"\nyoung = 1e20\npoisson = 0.3\n',
     "[problem] young must lie from 1e-06 to 1e+16 Pa"),
    ('[problem]\nkind = "truncation"\ncase = "sphere-in-box"\nlength_unit = "cm"\nfrequency = 6e8\n',
     "case 'sphere-in-box' is drawn in m"),
    ('[problem]\nkind = "truncation"\ncase = "sphere-in-box"\nfrequency = 6e8\n[random_sources]\ncount = 2\n'
     'seed = -1\n', "seed must be zero or positive"),
    ('[problem]\nkind = "magnetostatic"\ncase = "solenoid"\n', "axisymmetric"),
    ('[problem]\nkind = "magnetostatic"\ncase = "open-slot"\nformulation = "planar"\npotential = "scalar"\n'
     '[regions.air]\ncurrent_density = 5.0\n', "no current regions"),
])
def test_problem_file_mistakes_are_named(tmp_path, capsys, bad, needle):
    code, err, out = run_cli(tmp_path, capsys, bad)
    assert_clean_failure(code, err, out, needle)


def test_probe_outside_mesh(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    text = GOOD_MESH_PROBLEM + '[[probes]]\nname = "far"\npoint = [5.0, 5.0]\n'
    code, err, out = run_cli(tmp_path, capsys, text)
    assert_clean_failure(code, err, out, "probe 'far'", "outside the mesh")


def test_console_script_exit_code(tmp_path):
    """The installed entry point behaves the same in a real process."""
    proc = subprocess.run([sys.executable, "-m", "paraflux.engine.cli", "solve", str(tmp_path / "nope.toml"),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"paraflux: error: problem file not found: {tmp_path / 'nope.toml'}"]


@pytest.mark.parametrize("extra, needle", [
    (["--max-iterations", "-1"], "--max-iterations must be from 1 to 1,000,000, got -1"),
    (["--max-iterations", "9" * 30], "--max-iterations must be from 1 to 1,000,000, got an integer of about"),
    (["--rtol", "0"], "tolerance must lie between 1e-15 and 1"),
    (["--rtol", "1e-300"], "tolerance must lie between 1e-15 and 1"),  # unreachable: CG's p.Ap would underflow
    (["--check-every", "3"], "--check-every must be an even number"),
    (["--leaf-size", "16"], "--leaf-size does not apply"),
])
def test_bad_numbers_on_the_command_line(tmp_path, capsys, extra, needle):
    square_mesh(tmp_path / "square.msh")
    code, err, out = run_cli(tmp_path, capsys, GOOD_MESH_PROBLEM, extra=extra)
    assert_clean_failure(code, err, out, needle)


def test_out_must_be_a_folder(tmp_path, capsys):
    square_mesh(tmp_path / "square.msh")
    (tmp_path / "problem.toml").write_text(GOOD_MESH_PROBLEM)
    (tmp_path / "file").write_text("x")
    code = main(["solve", str(tmp_path / "problem.toml"), "--out", str(tmp_path / "file"), "--quiet"])
    assert code == 2 and "is not a folder" in capsys.readouterr().err


def test_bench_render_of_a_missing_file(tmp_path, capsys):
    assert main(["bench", "ebe", "--render", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    assert "cannot read benchmark results" in capsys.readouterr().err


@pytest.mark.parametrize("args, needle", [
    (["--case", "bar", "--size", "100000000"], "--size 100000000: [case] elements must be from 20 to 2,000,000"),
    (["--case", "solenoid", "--size", "100000000"], "from 50 to 20,000,000"),
    (["--case", "cantilever", "--check-every", "4"], "--check-every applies to the magnetostatic study"),
])
def test_case_options_out_of_range(tmp_path, capsys, args, needle):
    out = tmp_path / "out"
    code = main(["solve", *args, "--out", str(out), "--quiet"])
    assert_clean_failure(code, capsys.readouterr().err, out, needle)


@pytest.mark.parametrize("content, needle", [("[]", "holds 'list' results"),
                                             ('{"benchmark": "ebe"}', "not a complete 'ebe' results file")])
def test_bench_render_of_a_malformed_file(tmp_path, capsys, content, needle):
    (tmp_path / "r.json").write_text(content)
    out = tmp_path / "out"
    assert main(["bench", "ebe", "--render", str(tmp_path / "r.json"), "--out", str(out)]) == 2
    assert needle in capsys.readouterr().err and not (out / "ebe.json").exists()


def test_color_out_is_checked_before_colouring(tmp_path, capsys):
    for target, needle in ((tmp_path / "c.xdmf", "use a .vtu, .vtk or .msh file"),
                           (tmp_path / "missing" / "c.vtu", "does not exist")):
        assert main(["color", "open-slot", "--out", str(target)]) == 2
        captured = capsys.readouterr()
        assert needle in captured.err and captured.out == ""
