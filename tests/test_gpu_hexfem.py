"""GPU element matrices (AI, AII, and gemm / sumfact on CuPy) against the CPU variants, GPU elasticity
solves against the direct CPU solve, and the hex benchmark on a small size (skipped without a GPU)."""

import numpy as np
import pytest

from paraflux.engine.bench.registry import BENCHMARKS
from paraflux.engine.hexfem.element_matrices import element_matrices, stiffness_gemm
from paraflux.engine.hexfem.run import run_elasticity
from paraflux.engine.problems import load_case_problem
from tests.test_hexfem_elements import distorted_hex, steel

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("p", range(1, 11))
@pytest.mark.parametrize("variant", ["ai", "aii", "gemm", "mma", "sumfact"])
def test_gpu_element_matrices_match_the_cpu(cp, variant, p):
    if variant == "ai" and p > 7:
        pytest.skip("AI (a thread per element) takes minutes above p = 7; the benchmark runs it up to p = 6")
    n = 37 if p <= 6 else 2  # not a multiple of the block size
    coords = distorted_hex(p + 100, n)
    lam, mu = steel(n)
    reference = stiffness_gemm(coords, lam, mu, p)
    k = element_matrices(cp.asarray(coords), cp.asarray(lam), cp.asarray(mu), p, variant, cp)
    assert isinstance(k, cp.ndarray)
    assert np.abs(k.get() - reference).max() < 1e-12 * np.abs(reference).max()


@pytest.mark.parametrize("integration", ["ai", "aii", "gemm", "mma", "sumfact", "numpy"])
def test_gpu_cg_solve_matches_the_direct_cpu_solve(cp, integration):
    base = load_case_problem("cantilever").with_order(4)
    direct = run_elasticity(base.with_solver(method="sparse-direct", backend="numpy"))
    gpu = run_elasticity(base.with_solver(method="cg", backend="cupy", integration=integration, rtol=1e-12))
    assert gpu.backend == "cupy"
    assert np.abs(gpu.coefficients - direct.coefficients).max() < 1e-9 * np.abs(direct.coefficients).max()
    assert gpu.strain_energy == pytest.approx(direct.strain_energy, rel=1e-10)


def test_hex_benchmark_runs_and_renders_on_a_small_size(cp, tmp_path):
    from paraflux.engine.bench import hex as hex_bench  # noqa: PLC0415
    from paraflux.engine.bench.hex_report import render_markdown  # noqa: PLC0415

    config = hex_bench.HexBenchConfig(elements=200, orders=(1, 3), repeats=1, cpu_seconds=0.1, check_elements=4)
    data = hex_bench.run_hex_benchmark(config, ["test"], lambda m: None)
    assert all(max(r["max_relative_difference_from_gemm"].values()) < 1e-12 for r in data["orders"])
    later = hex_bench.run_hex_benchmark(hex_bench.HexBenchConfig(elements=200, orders=(2,), repeats=1,
                                                                 cpu_seconds=0.1, check_elements=4),
                                        ["test2"], lambda m: None)
    merged = hex_bench.merge(later, data)
    assert [r["order"] for r in merged["orders"]] == [1, 2, 3]
    markdown = render_markdown(merged)
    assert "## Targets" in markdown and "| 3 |" in markdown
    paths = BENCHMARKS['hex'].write(merged, tmp_path)
    assert [p.name for p in paths] == ["hex.json", "hex.md"]
