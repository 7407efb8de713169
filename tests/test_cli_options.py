"""Each command documents only its own options: `paraflux bench NAME --help` shows NAME's (declared in its
module), `paraflux solve PROBLEM --help` the options of PROBLEM's study; a wrong option is one line and exit 2;
each benchmark's options reach its configuration as they did under the one shared option set."""

import argparse
import re

import pytest

from paraflux.engine.bench.registry import BENCHMARKS
from paraflux.engine.cli import main
from paraflux.engine.problems import case_problem_path
from paraflux.engine.studies import STUDIES


def own_options(name: str) -> set[str]:
    """The options NAME's module declares."""
    parser = argparse.ArgumentParser()
    BENCHMARKS[name].add_arguments(parser)
    return {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}


def named(option: str, text: str) -> bool:
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def help_text(argv, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_bench_help_shows_the_benchmarks_own_options_only(name, capsys):
    text = help_text(["bench", name, "--help"], capsys)
    mine = own_options(name)
    others = set().union(*(own_options(n) for n in BENCHMARKS)) - mine
    assert mine and all(named(o, text) for o in mine), text
    assert not [o for o in others if named(o, text)], text
    assert named("--render", text) and named("--out", text)


def test_the_ebe_help_names_no_sphere_diameters(capsys):
    text = help_text(["bench", "ebe", "--help"], capsys)
    assert "--elements" in text and "--diameters" not in text and "--sizes" not in text


@pytest.mark.parametrize("argv, needle, help_of", [
    (["bench", "ebe", "--diameters", "1"], "unrecognized arguments: --diameters 1", "paraflux bench ebe --help"),
    (["bench", "fmm", "--sizes", "10"], "unrecognized arguments: --sizes 10", "paraflux bench fmm --help"),
    (["bench", "hex", "--elements", "-5"], "argument --elements: needs a whole number of at least 1, got -5",
     "paraflux bench hex --help"),
    (["bench", "scattering", "--diameters", "nan"], "argument --diameters: needs a finite number",
     "paraflux bench scattering --help"),
    (["bench", "ebe", "--merge", "x.json"], "unrecognized arguments: --merge x.json", "paraflux bench ebe --help"),
    (["bench", "nope"], "invalid choice: 'nope'", "paraflux bench --help"),
])
def test_a_wrong_bench_option_is_one_line_and_exit_2(argv, needle, help_of, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert needle in err and f"(see '{help_of}')" in err


@pytest.mark.parametrize("argv, function, expected", [
    (["ebe", "--elements", "3000", "9000", "--repeats", "2"], "run_ebe_benchmark",
     {"sizes": (3000, 9000), "repeats": 2}),
    (["coloring", "--elements", "3000"], "run_coloring_benchmark", {"meshes": (("transformer", 3000),)}),
    (["hex", "--orders", "2", "3", "--elements", "200"], "run_hex_benchmark", {"orders": (2, 3), "elements": 200}),
    (["fmm", "--points", "1000", "--orders", "0"], "run_fmm_benchmark", {"sizes": (1000,), "orders": ()}),
    (["fmm", "--orders", "4", "6"], "run_fmm_benchmark", {"orders": (4, 6), "sizes": (10_000, 100_000, 1_000_000,
                                                                                       10_000_000)}),
    (["fmbem", "--dofs", "5000"], "run_fmbem_benchmark", {"dofs": (5000,), "orders": ()}),
    (["fmbem", "--orders", "6"], "run_fmbem_benchmark", {"dofs": (), "orders": (6,)}),
    (["fmbem", "--dofs", "5000", "--orders", "8"], "run_fmbem_benchmark", {"dofs": (5000,), "orders": (8,)}),
    (["truncation", "--triangles", "1572", "--rhs", "1", "10", "--multi-gpu-only"], "run_truncation_benchmark",
     {"outer_elements": (1572,), "rhs": (1, 10), "multi_gpu_only": True}),
    (["scattering", "--diameters", "0", "--incidences", "36", "--ghz", "0"], "run_scattering_benchmark",
     {"diameters": (0.0,), "sweep_incidences": 36, "almond_ghz": (0.0,), "orders": (1, 2)}),
    (["scattering-peers", "--triangles", "600"], "run_peers_benchmark", {"triangles": 600}),
    (["scattering-ngsolve", "--diameters", "1", "2", "--paraflux", "1", "3:8"], "run_ngsolve_benchmark",
     {"diameters": (1.0, 2.0), "paraflux_settings": ((1, None), (3, 8.0))}),
    (["scattering-ngsolve", "--ngsolve"], "run_ngsolve_benchmark", {"ngsolve_settings": ()}),
    (["scattering-linear", "--diameter", "0.5", "--rhs", "4"], "run_linear_benchmark",
     {"diameter": 0.5, "rhs": (4,), "orders": (1, 2)}),
    (["sweeps", "--workers", "1", "0", "--gpus", "0", "--frequencies", "8"], "run_sweeps_benchmark",
     {"host_workers": (1, 0), "gpus": (0,), "frequencies": 8}),
])
def test_each_benchmarks_options_reach_its_configuration(argv, function, expected, monkeypatch, tmp_path):
    """The options given change those fields of the benchmark's configuration and nothing else."""
    bench = BENCHMARKS[argv[0]]
    module = bench._module(bench.module)
    seen = {}

    def fake(config, *args, **kwargs):
        seen["config"] = config
        raise KeyboardInterrupt  # stops the command before it writes anything

    monkeypatch.setattr(module, function, fake)
    monkeypatch.setattr("paraflux.engine.bench.command.get_backend", lambda name: None)
    assert main(["bench", *argv, "--out", str(tmp_path / "out")]) == 130
    config = seen["config"]
    default = type(config)()
    for key, value in expected.items():
        assert getattr(config, key) == value, key
    changed = {k for k in vars(default) if getattr(config, k) != getattr(default, k)}
    assert changed <= set(expected), changed


def study_help(study, capsys, how: str) -> str:
    case = study.cases[0].name
    argv = ["solve", "--case", case, "--help"] if how == "case" else ["solve", str(case_problem_path(case)), "-h"]
    return help_text(argv, capsys)


@pytest.mark.parametrize("how", ["case", "file"])
@pytest.mark.parametrize("study", list(STUDIES.values()), ids=lambda s: s.name)
def test_solve_help_of_a_problem_lists_its_studys_options_only(study, how, capsys):
    from paraflux.engine.cli import _study_options  # noqa: PLC0415

    text = study_help(study, capsys, how)
    mine = set(_study_options(study))
    others = {o for s in STUDIES.values() for o in _study_options(s)} - mine
    assert all(named(o, text) for o in mine), text
    assert not [o for o in others if named(o, text)], text
    for axis in study.axes:  # its own choices, not those another study's axis of the same name has
        assert "{" + ",".join(axis.names) + "}" in text
    assert f"options of {study.title} problems" in text


def test_solve_help_without_a_problem_says_where_each_studys_options_are(capsys):
    text = help_text(["solve", "--help"], capsys)
    assert "paraflux solve PROBLEM --help" in text
    for study in STUDIES.values():
        assert f"  {study.problem_kind}: " in text
    assert "{ebe-jpcg,sparse-direct,cg" not in text  # no axis's choices merged over studies


def test_solve_help_of_an_unreadable_problem_is_the_general_help(tmp_path, capsys):
    (tmp_path / "p.toml").write_text("[problem\n")
    text = help_text(["solve", str(tmp_path / "p.toml"), "--help"], capsys)
    assert "paraflux solve PROBLEM --help" in text


@pytest.mark.parametrize("study", list(STUDIES.values()), ids=lambda s: s.name)
def test_studies_named_lists_that_studys_options_only(study, capsys):
    assert main(["studies", study.name]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith(f"{study.name}: ")
    assert sum(not line.startswith("  ") for line in text.splitlines()) == 1
    assert all(named(axis.option, text) for axis in study.axes)
