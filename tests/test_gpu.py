"""GPU kernels against their NumPy twins, and GPU solves against the NumPy solver (skipped without a GPU)."""

import math

import numpy as np
import pytest

from paraflux.engine.bench.registry import BENCHMARKS
from paraflux.engine.backend import get_backend
from paraflux.engine.magnetostatics import reductions
from paraflux.engine.magnetostatics.ebe_layout import matvec_packed, pack_system
from paraflux.engine.bench.systems import case_system
from paraflux.engine.magnetostatics.run import run_magnetostatic
from paraflux.engine.problems import load_case_problem

pytestmark = pytest.mark.gpu
SIZES = [1, 31, 32, 1025, 2**20 + 3, 2**26]
CASES = ["open-slot", "solenoid", "transformer"]


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


def test_cupy_backend_reports_a_device():
    b = get_backend("cupy")
    assert b.is_gpu and b.device
    assert get_backend("auto").name == "cupy"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("variant", ["adjacent", "sequential", "warp-shuffle", "library"])
def test_reduction_kernels_match_twin_and_exact_sum(cp, variant, n):
    from paraflux.engine.magnetostatics.gpu_ebe_pcg import DeviceReducer

    rng = np.random.default_rng(n + len(variant))
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    reducer = DeviceReducer(variant, n)
    out = cp.full(3, np.nan)  # poisoned: an unwritten result fails
    if variant != "library":
        for buffer in getattr(reducer, "scratch", ()) + ((reducer.partial,) if hasattr(reducer, "partial") else ()):
            buffer.fill(np.nan)
    reducer.dot(cp.asarray(a), cp.asarray(b), n, out[1:2])
    got = float(out[1].get())
    assert np.isnan(out[0].get()) and np.isnan(out[2].get())
    exact = math.fsum(a * b)
    assert abs(got - exact) <= 1e-15 * math.fsum(np.abs(a * b)) * max(1.0, math.log2(n))
    if variant != "library":
        assert got == reductions.TWINS[variant](a, b)  # bit for bit: same order of additions


@pytest.fixture(scope="module")
def system():
    return case_system("transformer", 20000)[2]


def test_fused_product_kernel_matches_twin(cp, system):
    from paraflux.engine.magnetostatics.gpu_ebe_pcg import BLOCK, kernel

    packed = pack_system(system)
    n, n_el = system.n_nodes, packed.conn.shape[1]
    p = np.random.default_rng(1).standard_normal(n + 1)
    p[n] = 0.0
    q_ref, energies = matvec_packed(packed, p)
    q = cp.zeros(n + 1)
    blocks = -(-n_el // BLOCK)
    partial, pq = cp.full(blocks, np.nan), cp.full(1, np.nan)  # poisoned
    kernel("ebe_pcg", "ebe_matvec_atomic_pap")((blocks,), (BLOCK,), (
        np.int32(n_el), np.int32(n), cp.asarray(packed.conn), cp.asarray(packed.ke), cp.asarray(p), q, partial))
    kernel("ebe_pcg", "sum_partials")((1,), (BLOCK,), (np.int32(blocks), partial, partial, pq, pq))
    assert np.allclose(q[:n].get(), q_ref, rtol=1e-12, atol=1e-12 * np.abs(q_ref).max())
    assert float(pq.get()[0]) == pytest.approx(reductions.sum_one_per_thread(energies), rel=1e-13)


def test_fused_update_kernel_matches_twin(cp):
    from paraflux.engine.magnetostatics.gpu_ebe_pcg import BLOCK, kernel

    n = 100_003
    rng = np.random.default_rng(2)
    x, r, p, q, inv_diag = (rng.standard_normal(n + 1) for _ in range(5))
    scalars = np.array([2.0, 3.0, np.nan])
    alpha = scalars[1] / scalars[0]
    r_new = r[:n] - alpha * q[:n]
    z_new = inv_diag[:n] * r_new
    blocks = -(-n // BLOCK)
    d = {k: cp.asarray(v) for k, v in dict(x=x, r=r, p=p, q=q, inv_diag=inv_diag, scalars=scalars).items()}
    z = cp.full(n + 1, np.nan)
    partial_rz, partial_rr, rr = cp.full(blocks, np.nan), cp.full(blocks, np.nan), cp.full(1, np.nan)
    kernel("ebe_pcg", "cg_update_xrz_dots")((blocks,), (BLOCK,), (
        np.int32(n), d["scalars"], np.int32(1), d["x"], d["r"], d["p"], d["q"], d["inv_diag"], z,
        partial_rz, partial_rr))
    kernel("ebe_pcg", "sum_partials")((2,), (BLOCK,), (np.int32(blocks), partial_rz, partial_rr,
                                                      d["scalars"][2:3], rr))
    assert np.allclose(z[:n].get(), z_new, rtol=1e-14)
    # r - alpha q may be contracted to a fused multiply-add on the GPU: equal to rounding, not bitwise
    assert float(d["scalars"][2].get()) == pytest.approx(reductions.sum_one_per_thread(r_new * z_new), rel=1e-12)
    assert float(rr.get()[0]) == pytest.approx(reductions.sum_one_per_thread(r_new * r_new), rel=1e-12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("reduction", ["adjacent", "sequential", "warp-shuffle", "library", "fused"])
def test_every_gpu_variant_matches_the_numpy_solver(case, reduction):
    problem = load_case_problem(case).with_solver(rtol=1e-13)
    cpu = run_magnetostatic(problem.with_solver(backend="numpy"))
    gpu = run_magnetostatic(problem.with_solver(backend="cupy", reduction=reduction))
    assert gpu.backend == "cupy" and gpu.reduction == reduction
    diff = np.linalg.norm(gpu.potential - cpu.potential) / np.linalg.norm(cpu.potential)
    assert diff < 1e-10
    assert gpu.energy == pytest.approx(cpu.energy, rel=1e-10)
    assert gpu.relative_residual <= 10 * max(cpu.relative_residual, 1e-13)


def test_gpu_solver_reports_non_convergence_cleanly():
    from paraflux.engine.errors import SolverError

    problem = load_case_problem("transformer").with_solver(backend="cupy", max_iterations=10, check_every=4)
    with pytest.raises(SolverError, match="did not converge"):
        run_magnetostatic(problem)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("reduction", ["warp-shuffle", "fused"])
def test_colored_gpu_solve_matches_and_is_bitwise_reproducible(case, reduction):
    problem = load_case_problem(case).with_solver(rtol=1e-13)
    cpu = run_magnetostatic(problem.with_solver(backend="numpy"))
    colored = problem.with_solver(backend="cupy", reduction=reduction, accumulate="colored")
    runs = [run_magnetostatic(colored) for _ in range(5)]
    diff = np.linalg.norm(runs[0].potential - cpu.potential) / np.linalg.norm(cpu.potential)
    assert diff < 1e-10
    assert all(np.array_equal(runs[0].potential, r.potential) for r in runs[1:])
    assert runs[0].n_colors > 0


def test_parallel_coloring_gpu_equals_numpy_twin():
    from paraflux.engine.coloring.parallel import color_parallel_gpu, color_parallel_numpy
    from paraflux.engine.mesh.cases import mesh_case

    mesh = mesh_case("transformer", elements=50000)
    gpu_colors, gpu_rounds = color_parallel_gpu(mesh.triangles, mesh.n_nodes)
    cpu_colors, cpu_rounds = color_parallel_numpy(mesh.triangles, mesh.n_nodes)
    assert np.array_equal(gpu_colors, cpu_colors) and gpu_rounds == cpu_rounds


def test_coloring_benchmark_runs_and_renders_on_a_small_size(cp, tmp_path):
    from paraflux.engine.bench import coloring as coloring_bench  # noqa: PLC0415
    from paraflux.engine.bench.coloring_report import METHODS  # noqa: PLC0415

    config = coloring_bench.ColoringBenchConfig(meshes=(("transformer", 3000),), repeats=1, solve_repeats=1,
                                                networkx_up_to=0)
    data = coloring_bench.run_coloring_benchmark(config, ["test"], lambda m: None)
    solve = data["meshes"][0]["solve"]
    atomic = solve["atomic"]["iterations"]
    assert atomic > 0 and set(solve["per_method"]) == set(METHODS)
    runs = [solve["colored"]] + [s[k] for s in solve["per_method"].values() for k in ("as_made", "balanced")]
    assert all(abs(r["iterations"] - atomic) <= 2 for r in runs)  # the same solve, summed in another order
    paths = BENCHMARKS['coloring'].write(data, tmp_path)
    assert [p.name for p in paths] == ["coloring.json", "coloring.md"]
    assert "## Coloured accumulation with each method's colour groups" in paths[1].read_text()
