"""The fast multipole boundary element solve on the GPU against the same solve on the CPU."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
E, NU = 200e9, 0.3


def test_gpu_fmm_solve_matches_the_cpu_solve():
    pytest.importorskip("cupy")
    from paraflux.engine.bem.cases import pressurised_octant
    from paraflux.engine.bem.fmm_solve import FmmSettings, solve_fmm

    s, _, data = pressurised_octant(300)
    cpu, cpu_report = solve_fmm(s.points, s.triangles, data, E, NU, FmmSettings(order=8, rtol=1e-10))
    gpu, gpu_report = solve_fmm(s.points, s.triangles, data, E, NU, FmmSettings(order=8, rtol=1e-10,
                                                                                backend="cupy"))
    assert np.linalg.norm(gpu.displacement - cpu.displacement) < 1e-10 * np.linalg.norm(cpu.displacement)
    assert abs(gpu_report.iterations - cpu_report.iterations) <= 1
