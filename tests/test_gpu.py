"""GPU runs of the backend-neutral EBE-J-PCG: the same answer as NumPy (skipped without a GPU)."""

import numpy as np
import pytest

from paraflux.engine.backend import get_backend
from paraflux.engine.magnetostatics.run import run_magnetostatic
from paraflux.engine.problems import load_case_problem


@pytest.mark.gpu
def test_cupy_backend_reports_a_device():
    b = get_backend("cupy")
    assert b.is_gpu and b.device
    assert get_backend("auto").name == "cupy"


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["open-slot", "solenoid", "transformer"])
def test_ebe_jpcg_on_cupy_matches_numpy(case):
    problem = load_case_problem(case).with_solver(rtol=1e-13)
    cpu = run_magnetostatic(problem.with_solver(backend="numpy"))
    gpu = run_magnetostatic(problem.with_solver(backend="cupy"))
    assert gpu.backend == "cupy"
    diff = np.linalg.norm(gpu.potential - cpu.potential) / np.linalg.norm(cpu.potential)
    assert diff < 1e-9
    assert abs(gpu.iterations - cpu.iterations) <= 2
