"""The truncation study for users: problem files, the command line's outputs and refusals, random
dipole sets, and the zgemm strategy (BLAS on the CPU) against the NumPy specification."""

import json

import meshio
import numpy as np
import pytest

from paraflux.engine.cli import main
from paraflux.engine.errors import BackendError, ProblemError
from paraflux.engine.problems import load_case_problem, parse_problem, problem_as_dict
from paraflux.engine.studies import STUDIES
from paraflux.engine.truncation.surfaces import uv_sphere
from paraflux.engine.truncation.operator import Currents, apply_reference, operator_flops, paper_flops
from paraflux.engine.truncation.zgemm import ZgemmOperator


def write_sphere(path, radius, n_theta=8, drop=0, centre=(0.0, 0.0, 0.0)):
    pts, tri = uv_sphere(n_theta, radius)
    meshio.write(path, meshio.Mesh(pts + np.asarray(centre), [("triangle", tri[:len(tri) - drop])]))
    return path


def problem_file(tmp_path, inner="inner.vtu", outer="outer.vtu", frequency="300e6",
                 position="[0.02, 0.01, -0.03]", extra=""):
    text = f"""
[problem]
kind = "truncation"
inner_surface = "{inner}"
outer_surface = "{outer}"
length_unit = "m"
frequency = {frequency}
quadrature = 6
[[sources]]
position = {position}
moment = [0.0, 0.0, 1.0]
[[sources]]
position = [-0.05, 0.04, 0.02]
moment = [1.0, 0.0, 0.0]
moment_imag = [0.0, 0.5, 0.0]
{extra}
"""
    path = tmp_path / "problem.toml"
    path.write_text(text)
    return path


@pytest.fixture
def spheres(tmp_path):
    write_sphere(tmp_path / "inner.vtu", 0.3, 10)
    write_sphere(tmp_path / "outer.vtu", 0.6, 6)
    return tmp_path


def test_solve_writes_fields_vtu_and_summary(spheres, capsys):
    out = spheres / "out"
    assert main(["solve", str(problem_file(spheres)), "--out", str(out), "--loop", "serial", "--quiet"]) == 0
    fields = np.load(out / "fields_S.npz")
    n_s = fields["points"].shape[0]
    assert fields["E"].shape == fields["curlE"].shape == (2, n_s, 3) and fields["E"].dtype == np.complex128
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_rhs"] == 2 and summary["loop"] == "serial" and summary["quadrature"] == 6
    assert summary["n_outer_elements"] * 6 == n_s
    assert summary["relative_error"] < 1e-5 and summary["relative_error_curl"] < 1e-5
    assert summary["flops"] == operator_flops(6 * summary["n_inner_elements"], n_s, 2)
    assert summary["gflops"] > 0 and set(summary["timings"]) >= {"surfaces", "operator"}
    vtu = meshio.read(out / "solution.vtu")
    assert vtu.cell_data["E_error"][0].max() < 1e-4
    assert len(vtu.cell_data["E_magnitude"][0]) == summary["n_outer_elements"]


@pytest.mark.parametrize("case, message", [
    (dict(position="[0.5, 0.0, 0.0]"), "outside the inner surface"),
    (dict(inner="outer.vtu", outer="inner.vtu"), "not inside"),
    (dict(inner="open.vtu"), "not closed"),
    (dict(frequency="0.0"), "frequency must be positive"),
    (dict(frequency="-1e6"), "frequency must be positive"),
    (dict(extra='[solver]\nloop = "warp-drive"'), "loop = 'warp-drive' is not one of"),
    (dict(inner="missing.vtu"), "not found"),
    (dict(extra='[solver]\nloop = "fmm"\nprecision = 0.5'), "precision must be from"),
    (dict(extra='[[sources]]\nposition = [0.0, 0.0, 0.0]\nmoment = [1e300, 0.0, 0.0]'),
     "moment[0] = 1e+300 is too large"),  # named where it is read
])
def test_bad_input_is_one_line_exit_2_and_no_output(spheres, capsys, case, message):
    write_sphere(spheres / "open.vtu", 0.3, 8, drop=3)
    out = spheres / "out"
    assert main(["solve", str(problem_file(spheres, **case)), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("loop, message", [
    ("cpu-sprime", "cpu-sprime's per-thread copies of the output needs"),  # checked before it allocates them
    ("serial", "2 right-hand sides on"),  # the fields of every right-hand side
])
def test_a_run_that_does_not_fit_in_free_memory_is_refused_before_it_starts(spheres, capsys, monkeypatch, loop,
                                                                             message):
    import numba

    from paraflux.engine.truncation import run

    monkeypatch.setattr(numba, "get_num_threads", lambda: 4096)  # a copy of the output per thread: 0.5 GiB
    monkeypatch.setattr(run, "host_free_bytes", lambda: 10_000_000 if loop == "cpu-sprime" else 10_000)
    out = spheres / "out"
    assert main(["solve", str(problem_file(spheres)), "--loop", loop, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "GiB free" in err and not out.exists()


def test_gpu_loop_without_a_gpu_says_so(spheres, capsys, monkeypatch):
    monkeypatch.setattr("paraflux.engine.truncation.strategies.gpu_unavailable_reason", lambda: "no CUDA GPU")
    assert main(["solve", str(problem_file(spheres)), "--loop", "cuda-s", "--out", str(spheres / "o")]) == 2
    assert "runs on a CUDA GPU: no CUDA GPU" in capsys.readouterr().err
    from paraflux.engine.truncation.strategies import apply_operator  # noqa: PLC0415

    with pytest.raises(BackendError, match="multi-gpu-tiled"):
        apply_operator("multi-gpu-tiled", np.ones((1, 3)), np.zeros((1, 3)), None, 1.0, 1)


def test_options_of_other_studies_are_refused(spheres, capsys):
    assert main(["solve", str(problem_file(spheres)), "--rtol", "1e-6", "--out", str(spheres / "o")]) == 2
    assert "--rtol does not apply to Truncation" in capsys.readouterr().err
    assert main(["solve", "--case", "open-slot", "--devices", "2", "--out", str(spheres / "o")]) == 2
    assert "--devices applies to the truncation" in capsys.readouterr().err


def test_problem_round_trip_random_sources_and_variants(spheres):
    problem = parse_problem({"problem": {"kind": "truncation", "case": "sphere-in-box", "frequency": 600e6},
                             "case": {"inner_elements": 300, "outer_elements": 200},
                             "random_sources": {"count": 5, "seed": 3},
                             "solver": {"loop": "zgemm", "precision": 1e-7}}, spheres)
    assert problem.n_rhs == 5 and problem.quadrature == 6 and problem.case_elements == 200
    assert problem.solver.precision == 1e-7
    assert parse_problem(problem_as_dict(problem), spheres) == problem
    study = STUDIES["truncation"]
    problem = study.with_variants(problem, {"loop": "cpu-rhs", "quadrature": "3"})
    assert problem.solver.loop == "cpu-rhs" and problem.quadrature == 3
    result = study.run(problem)
    assert result.e.shape == (5, 3 * result.setup.outer.n_elements, 3)
    assert result.relative_error < 1e-3  # 3 points per triangle on a coarse S'
    positions = np.array([s.position for s in result.setup.sources])
    assert np.linalg.norm(positions, axis=1).max() < 0.25 and len({tuple(p) for p in positions}) == 5
    with pytest.raises(ProblemError, match="quadrature must be one of"):
        parse_problem({"problem": {"kind": "truncation", "case": "sphere-in-box", "frequency": 1e9,
                                   "quadrature": 4}, "random_sources": {"count": 1}}, spheres)
    with pytest.raises(ProblemError, match="no sources"):
        parse_problem({"problem": {"kind": "truncation", "case": "sphere-in-box", "frequency": 1e9}}, spheres)


def test_built_in_case_reaches_the_accuracy_of_its_quadrature():
    problem = load_case_problem("sphere-in-box")
    assert problem.case == "sphere-in-box" and problem.n_rhs == 2
    result = STUDIES["truncation"].run(problem)
    assert result.relative_error < 1e-6 and result.relative_error_curl < 1e-6
    assert abs(result.setup.inner.n_elements - 1272) < 100  # the paper's numSp
    assert result.paper_flops == paper_flops(result.setup.inner.n_elements, result.setup.outer.n_elements, 2)


def test_paper_count_reproduces_its_table_3_time():
    """99.35 GFLOP/s and about 1.46 s at numSp = 1,272, numS = 32,576, one right-hand side."""
    assert paper_flops(1272, 32576, 1) / 99.35e9 == pytest.approx(1.46, abs=0.01)


@pytest.mark.parametrize("n_rhs", [1, 7])
def test_zgemm_on_blas_matches_the_specification_and_reuses_its_tiles(n_rhs):
    rng = np.random.default_rng(n_rhs)
    n_s, n_t = 250, 190
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    cur = Currents(cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s), cplx(n_rhs, n_s))
    sources, targets = 0.3 * rng.standard_normal((n_s, 3)), rng.standard_normal((n_t, 3)) + 2.0
    e_ref, f_ref = apply_reference(targets, sources, cur, 6.0)
    op = ZgemmOperator(targets, sources, 6.0, cache_bytes=3 * 40 * 4 * n_s * 16, tile_bytes=40 * 4 * n_s * 16)
    assert op.tile == 40 and op.n_tiles == 5 and op.cached_tiles == 3
    for _ in range(2):  # the second application reads three tiles from the cache
        e, f = op.apply(cur)
        assert np.abs(e - e_ref).max() < 1e-12 * np.abs(e_ref).max()
        assert np.abs(f - f_ref).max() < 1e-12 * np.abs(f_ref).max()
    assert len(op.cache) == 3


def test_the_numba_coupling_tile_is_the_numpy_specification():
    from paraflux.engine.truncation.zgemm import coupling_cpu, coupling_numpy

    rng = np.random.default_rng(3)
    targets, sources = rng.standard_normal((37, 3)) + 2.0, rng.standard_normal((53, 3))
    reference = coupling_numpy(targets, sources, 6.0)
    assert np.abs(coupling_cpu(targets, sources, 6.0) - reference).max() < 1e-14 * np.abs(reference).max()


def test_cuda_tiled_chunks_fill_the_gpu_within_the_memory_cap():
    from paraflux.engine.truncation.gpu_loops import PARTIAL_BYTES, s_chunks

    assert s_chunks(132, 5000, 4000, 1000) == 1  # enough blocks already
    assert s_chunks(132, 760, 3774, 97_266) == 6  # 32 x 132 / 760 blocks
    assert s_chunks(132, 192, 3774, 24_498) == 22
    assert s_chunks(132, 88, 3816, 11_000) == 29  # no chunk below one 128-point tile
    assert s_chunks(132, 1, 300, 100) == 2
    assert s_chunks(132, 88, 3816, PARTIAL_BYTES // 96 // 3) == 3  # partial sums capped


def test_case_meshes_come_close_to_the_paper_sizes():
    from paraflux.engine.truncation.cases import mesh_surface_case

    inner, outer = mesh_surface_case("sphere-in-box", 1272, 32576)
    assert abs(inner.n_elements - 1272) < 0.02 * 1272 and abs(outer.n_elements - 32576) < 0.02 * 32576


@pytest.mark.parametrize("precision", [1e-4, 1e-8, 1e-11])
def test_fmm_loop_reaches_its_requested_precision(precision):
    pytest.importorskip("fmm3dpy")
    from paraflux.engine.truncation.strategies import apply_operator

    rng = np.random.default_rng(2)
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    sources = rng.standard_normal((3000, 3))
    sources *= 0.3 / np.linalg.norm(sources, axis=1, keepdims=True)  # on a sphere, as S' is
    targets = rng.uniform(-1.0, 1.0, (4000, 3))
    targets[:, 0] = np.where(rng.random(4000) < 0.5, -1.0, 1.0)  # on two faces of a cube
    cur = Currents(cplx(2, 3000, 3), cplx(2, 3000, 3), cplx(2, 3000), cplx(2, 3000))
    e_ref, f_ref = apply_reference(targets, sources, cur, 12.0)
    applied = apply_operator("fmm", targets, sources, cur, 12.0, 1, precision=precision)
    err_e = np.linalg.norm(applied.e - e_ref) / np.linalg.norm(e_ref)
    err_f = np.linalg.norm(applied.f - f_ref) / np.linalg.norm(f_ref)
    assert applied.backend == "numpy" and max(err_e, err_f) < 10 * precision
    if precision < 1e-10:
        assert max(err_e, err_f) > 1e-16  # it is an FMM, not a direct sum


def test_study_runs_the_fmm_loop_from_the_problem_file(spheres):
    pytest.importorskip("fmm3dpy")
    study = STUDIES["truncation"]
    problem = parse_problem({"problem": {"kind": "truncation", "case": "sphere-in-box", "frequency": 600e6,
                                         "quadrature": 3}, "case": {"inner_elements": 300, "outer_elements": 300},
                             "random_sources": {"count": 2}, "solver": {"loop": "fmm", "precision": 1e-9}}, spheres)
    fmm = study.run(problem)
    direct = study.run(study.with_variants(problem, {"loop": "cpu-s"}))
    assert np.linalg.norm(fmm.solution - direct.solution) < 1e-8 * np.linalg.norm(direct.solution)


@pytest.mark.parametrize("sizes, rhs, message", [
    ([0], [1], "S triangle counts must be from 20"),
    ([300], [0], "right-hand-side counts must be from 1"),
    ([300], [-1], "right-hand-side counts must be from 1"),
])
def test_scaling_refuses_counts_out_of_range(sizes, rhs, message):
    from paraflux.engine.truncation.scaling import scaling_sweep  # noqa: PLC0415

    with pytest.raises(ProblemError, match=message):
        scaling_sweep(load_case_problem("sphere-in-box"), ["serial"], sizes, rhs)


def test_the_mesh_preview_does_not_place_the_random_dipoles(monkeypatch):
    from paraflux.engine.truncation import run  # noqa: PLC0415

    def refuse(*args, **kwargs):
        raise AssertionError("random dipoles placed for a preview")

    monkeypatch.setattr(run, "random_dipoles", refuse)
    problem = parse_problem({"problem": {"kind": "truncation", "case": "sphere-in-box", "frequency": 3e8},
                             "random_sources": {"count": 100_000}}, ".")
    pair = run.load_surfaces(problem)
    assert pair.inner.n_elements > 0 and pair.outer.n_elements > pair.inner.n_elements


def test_compare_of_the_truncation_loops_reports_no_iterations(tmp_path):
    from paraflux.engine.studies.compare import compare_variants, comparison_csv

    study = STUDIES["truncation"]
    problem = load_case_problem("sphere-in-box")
    problem = parse_problem(problem_as_dict(problem) | {"case": {"inner_elements": 80, "outer_elements": 120}},
                            tmp_path)
    rows, _ = compare_variants(study, problem, study.compare_sets("loop", ["serial", "cpu-s"]))
    assert [r.iterations for r in rows] == [None, None] and rows[1].relative_difference < 1e-12
    assert [line.split(",")[-2] for line in comparison_csv(rows).splitlines()[1:]] == ["", ""]


def test_every_loop_of_the_registry_has_one_implementation():
    from paraflux.engine.truncation.strategies import IMPLEMENTATIONS, _gpu_loop, _multi_gpu_loop
    from paraflux.engine.variants import LOOP

    assert sorted(IMPLEMENTATIONS) == sorted(LOOP.names)
    assert all((IMPLEMENTATIONS[c.name] in (_gpu_loop, _multi_gpu_loop)) == c.needs_gpu for c in LOOP.choices)
