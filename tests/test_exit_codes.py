"""The exit-code policy of every command, in real processes: 2 input, 3 numerics, 130 Ctrl-C, 143 SIGTERM,
1 a defect of ParaFlux; each ending is one line on stderr and leaves no output behind."""

import subprocess
import sys
import textwrap

import pytest

from paraflux.engine.cli_edge import outcome, Terminated
from paraflux.engine.errors import Cancelled, MeshError, ProblemError, SolverError

CLI = [sys.executable, "-m", "paraflux.engine.cli"]


def run(args, cwd, **kwargs):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120, **kwargs)


def one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_help_states_the_exit_codes(tmp_path):
    proc = run(["--help"], tmp_path)
    assert proc.returncode == 0
    for code in ("2 ", "3 ", "130", "143", "1 "):
        assert f"\n  {code}" in proc.stdout


@pytest.mark.parametrize("args, needle, help_of", [
    (["solve", "--bogus"], "unrecognized arguments: --bogus", "paraflux solve --help"),
    (["solv"], "invalid choice: 'solv'", "paraflux --help"),
    (["solve", "--size", "many"], "argument --size: invalid int value: 'many'", "paraflux solve --help"),
    (["solve", "--case", "bar", "--out", ""], "argument --out: needs a path", "paraflux solve --help"),
    (["color", "open-slot", "--method", "rainbow"], "argument --method", "paraflux color --help"),
    (["bench", "ebe", "--diameters", "1"], "unrecognized arguments: --diameters 1", "paraflux bench ebe --help"),
    (["bench", "sweeps", "--gpus", "-1"], "argument --gpus: needs a whole number of at least 0",
     "paraflux bench sweeps --help"),
])
def test_usage_errors_are_one_line_naming_the_option_and_the_help(tmp_path, args, needle, help_of):
    proc = run(args, tmp_path)
    assert proc.returncode == 2
    line = one_line(proc)
    assert needle in line and f"(see '{help_of}')" in line
    assert list(tmp_path.iterdir()) == []


def test_a_folder_given_as_the_problem_file(tmp_path):
    (tmp_path / "folder").mkdir()
    proc = run(["solve", "folder", "--out", "out"], tmp_path)
    assert proc.returncode == 2 and one_line(proc) == "paraflux: error: folder is a folder, not a problem file"


@pytest.mark.parametrize("text, needle", [
    ('[problem]\nkind = "truncation"\ncase = "sphere-in-box"\nfrequency = 6e8\n[random_sources]\ncount = '
     + "9" * 401 + "\n", "random_sources.count = an integer of about 402 digits is too large"),
    ('[problem]\nkind = "elasticity"\nx = ' + "9" * 5000 + "\n", "an integer of more than 4,300 digits"),
    ('[problem]\nkind = "elasticity"\nx = ' + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
    ('[problem]\nkind = "elasticity"\ncase = "cantilever"\n[regions.steel]\nyoung = 2e11\npoisson = 0.3\n'
     '[boundaries.load]\ntype = "traction"\nvalue = [0.0, 0.0, 1e300]\n',
     "boundaries.load.value[2] = 1e+300 is too large"),
    ('[problem]\nkind = "elasticity"\ncase = "cantilever"\n[case]\nelements = ' + "1" * 30 + "\n",
     "case.elements = an integer of about 30 digits is too large"),
])
def test_numbers_out_of_range_are_named_by_key(tmp_path, text, needle):
    (tmp_path / "p.toml").write_text(text)
    proc = run(["solve", "p.toml", "--out", "a/b/c", "--quiet"], tmp_path)
    assert proc.returncode == 2
    assert needle in one_line(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]


def test_bench_render_of_a_nan_leaves_no_folder(tmp_path):
    (tmp_path / "r.json").write_text('{"benchmark": "ebe", "rows": [NaN]}')
    proc = run(["bench", "ebe", "--render", "r.json", "--out", "x/y"], tmp_path)
    assert proc.returncode == 2 and "it holds NaN, not a finite number" in one_line(proc)
    assert not (tmp_path / "x").exists()


def test_a_failed_solve_exits_3(tmp_path):
    (tmp_path / "p.toml").write_text(textwrap.dedent("""
        [problem]
        kind = "magnetostatic"
        formulation = "planar"
        potential = "scalar"
        case = "open-slot"
        [case]
        elements = 60
        [regions.air]
        [boundaries.AB]
        value = 700.0
        [boundaries.CDE]
        value = 0.0
        [solver]
        max_iterations = 2
        """))
    proc = run(["solve", "p.toml", "--out", "a/b", "--quiet", "--backend", "numpy"], tmp_path)
    assert proc.returncode == 3 and "did not converge" in one_line(proc)
    assert not (tmp_path / "a").exists()


SIGNAL_AT_FIRST_STEP = """
import os, signal, sys
from paraflux.engine.run_control import RunControl
from paraflux.engine.cli import main
original = RunControl.report
def report(self, fraction, message):
    os.kill(os.getpid(), signal.{name})  # Ctrl-C or kill while a long phase runs
    return original(self, fraction, message)
RunControl.report = report
sys.exit(main(["solve", "--case", "open-slot", "--size", "60", "--out", "a/b", "--quiet", "--backend", "numpy"]))
"""


@pytest.mark.parametrize("name, code, line", [("SIGINT", 130, "paraflux: interrupted"),
                                              ("SIGTERM", 143, "paraflux: terminated")])
def test_signals_during_a_long_phase(tmp_path, name, code, line):
    proc = subprocess.run([sys.executable, "-c", SIGNAL_AT_FIRST_STEP.format(name=name)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == code and one_line(proc) == line
    assert list(tmp_path.iterdir()) == []


def test_a_defect_exits_1_with_one_line(tmp_path):
    script = ("import sys, paraflux.engine.cli as cli\n"
              "def broken(args):\n    raise ZeroDivisionError('a defect')\n"
              "cli._cmd_cases = broken\nsys.exit(cli.main(['cases']))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert one_line(proc) == ("paraflux: internal error: ZeroDivisionError: a defect (rerun with --debug for "
                              "the traceback)")


def test_a_closed_pipe_ends_quietly(tmp_path):
    cases = subprocess.Popen([*CLI, "cases"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    cases.stdout.readline()
    cases.stdout.close()  # `| head -1`
    assert cases.wait(timeout=120) == 0
    assert cases.stderr.read() == b""


def numba_system_error() -> SystemError:
    """What a compiled loop stopped by Ctrl-C may raise: a SystemError whose cause is the interrupt."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise SystemError("<numba function> returned a result with an exception set") from interrupt
    except SystemError as exc:
        return exc


@pytest.mark.parametrize("exc, code", [
    (ProblemError("x"), 2), (MeshError("x"), 2), (OSError("x"), 2), (SolverError("x"), 3), (MemoryError(), 3),
    (KeyboardInterrupt(), 130), (Cancelled("x"), 130), (numba_system_error(), 130), (Terminated(), 143),
    (RuntimeError("x"), 1),
])
def test_every_ending_has_its_code(exc, code):
    assert outcome(exc)[0] == code


def test_the_numba_pair_integrals_in_chunks_equal_one_call(monkeypatch):
    """The chunked calls (so that Ctrl-C is seen between them) give the one-call result bit for bit."""
    import numpy as np

    from paraflux.engine.bem import pair_kernel

    rng = np.random.default_rng(1)
    corners = rng.uniform(0, 1, (5, 3, 3))
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    areas = 0.5 * np.linalg.norm(normals, axis=1)
    normals /= 2 * areas[:, None]
    x = rng.uniform(2, 3, (7, 3))
    p, e = np.repeat(np.arange(7), 5), np.tile(np.arange(5), 7)
    rules = pair_kernel.stacked_rules([(np.full((1, 3), 1 / 3), np.ones(1))])
    args = (x, corners, normals, areas, p, e, np.zeros(35, dtype=np.int64), *rules, 80e9, 0.3)
    whole = pair_kernel.pair_integrals(*args)
    monkeypatch.setattr(pair_kernel, "CHUNK", 4)
    chunked = pair_kernel.chunked_pair_integrals(*args)
    assert all(np.array_equal(a, b) for a, b in zip(whole, chunked))


SIGNAL_IN_PAIR_INTEGRALS = """
import os, signal, sys
from paraflux.engine.bem import pair_kernel
from paraflux.engine.cli import main
compiled = pair_kernel.pair_integrals
def pair_integrals(*args):  # the signal arrives as a compiled chunk starts: seen when the chunk returns
    os.kill(os.getpid(), signal.{name})
    return compiled(*args)
pair_kernel.pair_integrals = pair_integrals
sys.exit(main(["solve", "--case", "bar", "--out", "a/b", "--quiet", "--backend", "numpy", "--method", "direct"]))
"""


@pytest.mark.parametrize("name, code, line", [("SIGINT", 130, "paraflux: interrupted"),
                                              ("SIGTERM", 143, "paraflux: terminated")])
def test_signals_inside_the_numba_pair_integrals(tmp_path, name, code, line):
    """Ctrl-C inside the BEM's compiled pair integrals ended in "SystemError" and exit 1 (6 of 11 tries)."""
    proc = subprocess.run([sys.executable, "-c", SIGNAL_IN_PAIR_INTEGRALS.format(name=name)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == code and one_line(proc) == line
    assert list(tmp_path.iterdir()) == []
