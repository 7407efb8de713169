"""The elasticity study from the command line: outputs, summary keys, and bad input refused cleanly."""

import json
import textwrap

import numpy as np
import pytest

from paraflux.engine.cli import main
from tests.test_bad_input import assert_clean_failure
from tests.test_hex_mesh_problem import box_grid, write_msh22

PROBLEM = """
[problem]
kind = "elasticity"
mesh = "beam.msh"
order = {order}
length_unit = "m"
[regions.steel]
young = 210e9
poisson = 0.3
[boundaries.clamp]
type = "{clamp}"
{clamp_value}
[boundaries.tip]
type = "traction"
value = [0.0, 0.0, -1.0e6]
[solver]
method = "cg"
integration = "numpy"
rtol = 1e-10
[[probes]]
name = "tip"
point = [1.0, 0.05, 0.05]
"""


def beam(tmp_path, hexes_transform=None, extra_cells=()):
    points, hexes, clamp, tip = box_grid(4)
    if hexes_transform is not None:
        hexes = hexes_transform(hexes)
    cells = [("hexahedron", hexes), ("quad", np.vstack([clamp, tip])), *extra_cells]
    tags = [np.full(len(hexes), 1), np.r_[np.full(len(clamp), 2), np.full(len(tip), 3)],
            *[np.full(len(c[1]), 1) for c in extra_cells]]
    write_msh22(tmp_path / "beam.msh", points, cells, tags, {"steel": (1, 3), "clamp": (2, 2), "tip": (3, 2)})


def run(tmp_path, capsys, order=3, clamp="fixed", clamp_value="", extra=()):
    problem = tmp_path / "beam.toml"
    problem.write_text(textwrap.dedent(PROBLEM.format(order=order, clamp=clamp, clamp_value=clamp_value)))
    out = tmp_path / "out"
    code = main(["solve", str(problem), "--out", str(out), "--quiet", "--backend", "numpy", *extra])
    return code, capsys.readouterr(), out


def test_solve_writes_the_sampled_fields_and_the_summary(tmp_path, capsys):
    beam(tmp_path)
    code, captured, out = run(tmp_path, capsys, extra=["--order", "4", "--integration", "gemm"])
    assert code == 0, captured.err
    import meshio  # noqa: PLC0415

    vtu = meshio.read(out / "solution.vtu")
    assert set(vtu.point_data) >= {"displacement", "von_mises"} and vtu.cells[0].type == "hexahedron"
    summary = json.loads((out / "summary.json").read_text())
    for key in ("n_elements", "n_dofs", "order", "iterations", "strain_energy", "max_displacement", "probes",
                "timings", "backend", "device"):
        assert key in summary
    assert summary["order"] == 4 and summary["n_elements"] == 4 and summary["integration"] == "gemm"
    assert "element_matrices" in summary["timings"]
    probe = summary["probes"][0]
    assert probe["name"] == "tip" and probe["displacement"][2] < 0 and probe["von_mises"] > 0
    assert summary["strain_energy"] == pytest.approx(0.5 * 1e4 * -probe["displacement"][2], rel=5e-3)


@pytest.mark.parametrize("order", [0, 11])
def test_order_outside_1_to_10(tmp_path, capsys, order):
    beam(tmp_path)
    code, captured, out = run(tmp_path, capsys, order=order)
    assert_clean_failure(code, captured.err, out, "order")


def test_rigid_body_motion_left_free(tmp_path, capsys):
    beam(tmp_path)
    code, captured, out = run(tmp_path, capsys, clamp="displacement", clamp_value='value = [0.0, "free", "free"]')
    assert_clean_failure(code, captured.err, out, "rigid-body motion left free")


def test_inverted_hexahedra(tmp_path, capsys):
    beam(tmp_path, hexes_transform=lambda h: np.vstack([h[:2], h[2:, [4, 5, 6, 7, 0, 1, 2, 3]]]))
    code, captured, out = run(tmp_path, capsys)
    assert_clean_failure(code, captured.err, out, "invert")


def test_non_hexahedral_cells(tmp_path, capsys):
    beam(tmp_path, extra_cells=[("tetra", np.array([[0, 1, 2, 12]]))])
    code, captured, out = run(tmp_path, capsys)
    assert_clean_failure(code, captured.err, out, "tetra")


def test_magnetostatic_flags_are_refused_for_elasticity(tmp_path, capsys):
    beam(tmp_path)
    code, captured, out = run(tmp_path, capsys, extra=["--reduction", "fused"])
    assert_clean_failure(code, captured.err, out, "--reduction does not apply")
