"""NumPy twins of the CUDA reductions and of the packed EBE product; every reduction in the CPU solver."""

import collections
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from paraflux.engine.magnetostatics import reductions
from paraflux.engine.magnetostatics.ebe_layout import bytes_per_iteration, matvec_packed, pack_system
from paraflux.engine.magnetostatics.ebe_pcg import REDUCTIONS, EbeOperator
from paraflux.engine.bench.systems import case_system
from paraflux.engine.magnetostatics.run import run_magnetostatic
from paraflux.engine.problems import load_case_problem

AWKWARD = [1, 31, 32, 1025, 2**20 + 3]


@pytest.mark.parametrize("n", AWKWARD)
@pytest.mark.parametrize("name", list(reductions.TWINS))
def test_twins_equal_an_exact_sum_to_rounding(name, n):
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    exact = math.fsum(a * b)
    scale = math.fsum(np.abs(a * b))
    assert abs(reductions.TWINS[name](a, b) - exact) <= 1e-15 * scale * max(1.0, math.log2(n))


def test_one_per_thread_sum_matches_exact_sum():
    v = np.random.default_rng(7).standard_normal(100_003)
    assert reductions.sum_one_per_thread(v) == pytest.approx(math.fsum(v), abs=1e-12)


def test_adjacent_and_sequential_orders_differ_but_both_are_trees():
    v = np.array([1e16, 1.0, -1e16, 1.0])  # order matters in float64
    a = reductions.dot_adjacent(v, np.ones(4))  # (1e16 + 1) + (-1e16 + 1)
    s = reductions.dot_sequential(v, np.ones(4))  # (1e16 - 1e16) + (1 + 1)
    assert s == 2.0 and a != s


@pytest.fixture(scope="module")
def transformer_system():
    return case_system("transformer", 3000)[2]


def test_packed_product_matches_the_element_operator(transformer_system):
    system = transformer_system
    packed = pack_system(system)
    p = np.random.default_rng(0).standard_normal(system.n_nodes + 1)
    p[system.n_nodes] = 0.0
    p[:-1][~packed.free] = 0.0
    q, energies = matvec_packed(packed, p)
    op = EbeOperator(system)
    assert np.allclose(q, op(p[:-1]), rtol=1e-12, atol=1e-12 * np.abs(q).max())
    assert energies.sum() == pytest.approx(p[:-1] @ op(p[:-1]), rel=1e-12)
    assert bytes_per_iteration(10, 5) == 10 * 60 + 5 * 112


@pytest.mark.parametrize("case", ["open-slot", "solenoid", "transformer"])
def test_every_reduction_gives_the_same_solution_on_the_cpu(case, monkeypatch):
    calls = collections.Counter()  # which reduction really summed the inner products
    for name, twin in list(reductions.TWINS.items()):
        monkeypatch.setitem(reductions.TWINS, name,
                            lambda a, b, twin=twin, name=name: calls.update([name]) or twin(a, b))
    one_per_thread = reductions.sum_one_per_thread
    monkeypatch.setattr(reductions, "sum_one_per_thread", lambda v: calls.update(["fused"]) or one_per_thread(v))
    problem = load_case_problem(case).with_solver(backend="numpy", rtol=1e-13)
    reference = run_magnetostatic(problem.with_solver(reduction="library"))
    for reduction in REDUCTIONS:
        calls.clear()
        result = run_magnetostatic(problem.with_solver(reduction=reduction))
        assert result.reduction == reduction and set(calls) == {reduction}, (reduction, calls)
        diff = np.linalg.norm(result.potential - reference.potential) / np.linalg.norm(reference.potential)
        assert diff < 1e-10, reduction
    calls.clear()
    assert run_magnetostatic(problem.with_solver(reduction="auto")).reduction == "library"
    assert set(calls) == {"library"}


def test_numpy_runs_never_import_cupy(tmp_path):
    """With a stand-in cupy importable (so the test can fail on machines without CuPy too)."""
    (tmp_path / "standin" / "cupy").mkdir(parents=True)
    (tmp_path / "standin" / "cupy" / "__init__.py").write_text('"""Stand-in: importing it is the failure."""\n')
    code = ("import sys; from paraflux.engine.cli import main; "
            f"rc = main(['solve', '--case', 'open-slot', '--size', '500', '--backend', 'numpy', '--quiet', "
            f"'--out', r'{tmp_path / 'out'}']); assert rc == 0; assert 'cupy' not in sys.modules, 'cupy imported'")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "standin"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    probe = "import cupy; print(cupy.__doc__)"  # the stand-in is what `import cupy` finds
    assert "Stand-in" in subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                        env=env).stdout


@pytest.mark.parametrize("case", ["open-slot", "solenoid", "transformer"])
def test_serial_numba_solver_matches_numpy_solver(case):
    from paraflux.engine.magnetostatics.ebe_pcg import solve_ebe_jpcg
    from paraflux.engine.magnetostatics.ebe_serial import solve_ebe_jpcg_serial

    system = case_system(case)[2]
    serial = solve_ebe_jpcg_serial(system, 1e-12)
    reference = solve_ebe_jpcg(system, 1e-12)
    assert np.linalg.norm(serial.x - reference.x) / np.linalg.norm(reference.x) < 1e-9
    # away from the rounding floor (no residual replacement) both take the same iterations
    assert abs(solve_ebe_jpcg_serial(system, 1e-8).iterations - solve_ebe_jpcg(system, 1e-8).iterations) <= 2
    from paraflux.engine.errors import SolverError
    with pytest.raises(SolverError, match="did not converge"):
        solve_ebe_jpcg_serial(system, 1e-12, max_iterations=5)


def test_kernel_sources_inline_their_headers():
    from paraflux.engine.backend import kernel_source
    from paraflux.engine.magnetostatics.gpu_ebe_pcg import KERNELS

    for name in ("reductions", "ebe_pcg"):
        source = kernel_source(KERNELS / f"{name}.cu")
        assert "#include" not in source and "__device__ __forceinline__ double block_sum" in source
