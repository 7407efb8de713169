"""The study registry, the backend layer, and the problem parser's behaviour on garbage."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paraflux.engine import backend
from paraflux.engine.cli import build_parser, main
from paraflux.engine.errors import BackendError, ProblemError
from paraflux.engine.magnetostatics.ebe_pcg import solve_ebe_jpcg
from paraflux.engine.bench.systems import case_system
from paraflux.engine.problems import load_case_problem, load_problem
from paraflux.engine.problems.magnetostatic import parse_magnetostatic
from paraflux.engine.studies import STUDIES

RESOURCES = Path(__file__).resolve().parents[1] / "resources" / "problems"


def test_numpy_backend_and_host_transfer():
    b = backend.get_backend("numpy")
    assert b.xp is np and not b.is_gpu and "CPU" in b.device
    assert isinstance(backend.to_host([1.0, 2.0]), np.ndarray)


def test_unknown_backend_is_named():
    with pytest.raises(BackendError, match="unknown backend 'tpu'"):
        backend.get_backend("tpu")


@pytest.mark.skipif(backend.gpu_available(), reason="a GPU is present")
def test_cupy_backend_without_gpu_says_why():
    assert backend.get_backend("auto").name == "numpy"
    with pytest.raises(BackendError, match="backend 'cupy' is not available"):
        backend.get_backend("cupy")


def test_cli_options_come_from_the_registry():
    parser = build_parser()
    solve = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith("solve"))
    flags = {opt for action in solve._actions for opt in action.option_strings}
    for study in STUDIES.values():
        for axis in study.axes:
            assert axis.option in flags
            assert axis.default in [c.name for c in axis.choices]


@pytest.mark.parametrize("study", list(STUDIES.values()), ids=lambda s: s.name)
def test_every_variant_of_every_axis_is_accepted_and_unknown_rejected(study):
    problem = load_case_problem({"magnetostatic": "open-slot", "elasticity": "cantilever",
                                "truncation": "sphere-in-box", "elastostatic-bem": "bar"}[study.name])
    for axis in study.axes:
        for choice in axis.choices:
            study.with_variants(problem, {axis.name: choice.name})
        with pytest.raises(ProblemError, match=f"unknown {axis.name}"):
            study.with_variants(problem, {axis.name: "no-such-variant"})


def test_an_axis_that_applies_with_another_choice_compares_with_that_choice(capsys):
    assert main(["studies"]) == 0
    assert "--exponential-nodes {8, 17, 26} default 17 (used only with --m2l exponential)" in capsys.readouterr().out
    bem = STUDIES["elastostatic-bem"]
    assert bem.axis("exponential_nodes").applies_when == ("m2l", "exponential")
    assert bem.compare_sets("exponential_nodes", ["8", "26"]) == [
        {"m2l": "exponential", "exponential_nodes": "8"}, {"m2l": "exponential", "exponential_nodes": "26"}]
    assert bem.compare_sets("m2l", ["standard"]) == [{"m2l": "standard"}]
    for study in STUDIES.values():  # every condition names an axis of the same study and one of its choices
        for axis in study.axes:
            if axis.applies_when:
                other, choice = axis.applies_when
                assert choice in study.axis(other).names


@pytest.mark.parametrize("method", [c.name for c in STUDIES["magnetostatic"].axis("method").choices])
def test_every_method_runs_through_the_cli(tmp_path, method, capsys):
    out = tmp_path / "out"
    code = main(["solve", "--case", "open-slot", "--size", "800", "--method", method, "--backend", "numpy",
                 "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert (out / "summary.json").is_file()


@pytest.mark.parametrize("path", sorted(RESOURCES.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_problem_files_load(path):
    problem = load_problem(path)
    content = {"truncation": "sources", "elastostatic-bem": "boundaries"}.get(problem.kind, "regions")
    assert getattr(problem, content)
    if getattr(problem, "mesh_path", None) is not None:
        assert problem.mesh_path.is_file()


def test_cancel_stops_the_solver():
    from paraflux.engine.errors import Cancelled
    from paraflux.engine.run_control import RunControl

    system = case_system("transformer")[2]
    calls = []
    control = RunControl(progress=lambda f, m: calls.append(m), cancel=lambda: len(calls) >= 2)
    with pytest.raises(Cancelled):
        solve_ebe_jpcg(system, 1e-12, None, "library", control)


toml_values = st.recursive(
    st.none().map(lambda _: "x") | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=10)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["problem", "regions", "boundaries", "solver", "probes", "case", "x"]),
                       toml_values, max_size=5),
       st.dictionaries(st.sampled_from(["kind", "formulation", "potential", "case", "mesh", "length_unit"]),
                       st.sampled_from(["magnetostatic", "planar", "axisymmetric", "scalar", "vector",
                                        "open-slot", "solenoid", "m", "mm", 3, True]), max_size=6))
def test_parser_rejects_garbage_cleanly(data, head):
    data = dict(data)
    if head:
        data["problem"] = head
    try:
        parse_magnetostatic(data, Path("."))
    except ProblemError:
        pass


def test_compare_variants_tabulates_runs_and_differences():
    from paraflux.engine.studies.compare import compare_variants, comparison_csv

    study = STUDIES["magnetostatic"]
    problem = load_case_problem("open-slot", elements=1000).with_solver(backend="numpy", rtol=1e-12)
    rows, results = compare_variants(study, problem, [{"method": "ebe-jpcg"}, {"method": "sparse-direct"},
                                                      {"reduction": "sequential"}])
    assert [r.label for r in rows] == ["method=ebe-jpcg", "method=sparse-direct", "reduction=sequential"]
    assert rows[0].relative_difference == 0.0 and 0 < rows[1].relative_difference < 1e-9
    assert rows[1].iterations == 0 and rows[0].iterations > 0 and rows[2].iterations > 0
    assert rows[2].relative_difference < 1e-9 and results[2].reduction == "sequential"
    auto, _ = compare_variants(study, problem, [{"reduction": "auto", "backend": "auto"}])
    ran = "numpy" if backend.gpu_unavailable_reason() else "cupy"
    assert auto[0].label == f"reduction=auto ({'library' if ran == 'numpy' else 'fused'}), backend=auto ({ran})"
    text = comparison_csv(rows)
    assert text.splitlines()[0].startswith("variant,mesh_s,assemble_s,solve_s,post_s,iterations")
    assert len(text.splitlines()) == 4


def test_what_an_auto_variant_ran_is_read_from_the_result():
    from types import SimpleNamespace as Record

    from paraflux.engine.studies.compare import what_ran

    bem_like = Record(backend="numpy", problem=Record(solver=Record(m2l="batched-gemm", backend="auto")))
    assert what_ran(bem_like, "backend") == "numpy" and what_ran(bem_like, "m2l") == "batched-gemm"
    assert what_ran(bem_like, "loop") is None  # not recorded: the label stays "loop=auto"
    assert what_ran(Record(m2l="auto", problem=None), "m2l") is None


@pytest.mark.parametrize("path", sorted(RESOURCES.glob("*.toml")), ids=lambda p: p.name)
def test_problem_round_trips_through_its_dictionary(path):
    from paraflux.engine.problems import parse_problem, problem_as_dict

    problem = load_problem(path)
    assert parse_problem(problem_as_dict(problem), Path("/elsewhere")) == problem


def test_the_cases_command_lists_every_built_in_case(capsys):
    from paraflux.engine.bem.cases import BEM_CASES
    from paraflux.engine.cli import main
    from paraflux.engine.mesh.cases import CASES
    from paraflux.engine.mesh.hex_cases import HEX_CASES
    from paraflux.engine.truncation.cases import CASES as SURFACE_CASES

    assert main(["cases"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")}
    assert listed == {*CASES, *HEX_CASES, *BEM_CASES, *SURFACE_CASES}


def test_every_option_the_studies_command_prints_is_accepted_by_solve(capsys):
    import re

    from paraflux.engine.cli import build_parser, main

    assert main(["studies"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("  --")]
    assert len(lines) > 10
    for option, values, *_ in lines:
        value = [v for v in re.split(r"\.\.|[{},]", values) if v][0]  # the first of {a, b [GPU]} or 2..20
        args = build_parser().parse_args(["solve", "--case", "bar", option, value])
        assert getattr(args, option[2:].replace("-", "_")) is not None, option


@pytest.mark.parametrize("argv", [["--debug", "solve", "missing.toml"], ["solve", "missing.toml", "--debug"]])
def test_debug_is_taken_before_or_after_the_command(argv, capsys):
    from paraflux.engine.cli import main

    assert main([a for a in argv if a != "--debug"]) == 2
    with pytest.raises(ProblemError, match="problem file not found"):  # --debug: the traceback, not one line
        main(argv)


def test_axes_resolve_auto_and_name_what_a_choice_needs():
    from paraflux.engine.variants import M2L, REDUCTION, Choice

    assert (REDUCTION.resolve("auto", on_gpu=True), REDUCTION.resolve("auto", on_gpu=False)) == ("fused", "library")
    assert M2L.resolve("auto", on_gpu=False) == "batched-gemm" and M2L.resolve("exponential", True) == "exponential"
    assert "auto" not in REDUCTION.concrete and len(REDUCTION.concrete) == len(REDUCTION.names) - 1
    with pytest.raises(ProblemError, match="unknown reduction 'fastest'"):
        REDUCTION.resolve("fastest", on_gpu=False)
    needs = Choice("x", "needs a package that is not there", package="paraflux_no_such_package")
    assert "pip install paraflux_no_such_package" in needs.unavailable(None)
    assert Choice("g", "GPU only", needs_gpu=True).unavailable("no CUDA device") == "no CUDA device"
    assert Choice("g", "GPU only", needs_gpu=True).unavailable(None) is None
