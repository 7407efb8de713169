"""The truncation operator's CUDA strategies (cuda-s, cuda-rhs, cuda-tiled, cuda-tiled-fp32, zgemm on cuBLAS,
multi-gpu-tiled) against the NumPy specification, and the study on the GPU against the CPU."""

import numpy as np
import pytest

from paraflux.engine.bench.registry import BENCHMARKS
from paraflux.engine.truncation.operator import Currents, apply_reference

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


def random_case(n_rhs, n_s=300, n_elem=70, q=3, seed=0):
    rng = np.random.default_rng(seed)
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    cur = Currents(cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s), cplx(n_rhs, n_s))
    return cur, 0.3 * rng.standard_normal((n_s, 3)), rng.standard_normal((n_elem * q, 3)) + 2.0


@pytest.mark.parametrize("loop", ["cuda-s", "cuda-rhs", "cuda-tiled", "zgemm", "multi-gpu-tiled"])
@pytest.mark.parametrize("n_rhs", [1, 5, 40])
def test_gpu_strategy_matches_the_specification(cp, loop, n_rhs):
    from paraflux.engine.truncation.strategies import apply_operator  # noqa: PLC0415

    cur, sources, targets = random_case(n_rhs)  # 300 S' points: two shared-memory tiles and a remainder
    e_ref, f_ref = apply_reference(targets, sources, cur, 6.0)
    applied = apply_operator(loop, targets, sources, cur, 6.0, 3)
    assert applied.backend == "cupy" and applied.devices >= 1
    assert np.abs(applied.e - e_ref).max() < 1e-12 * np.abs(e_ref).max()
    assert np.abs(applied.f - f_ref).max() < 1e-12 * np.abs(f_ref).max()


@pytest.mark.parametrize("split", ["points", "incidences"])
def test_multi_gpu_splits_the_work_over_every_device(cp, split):
    from paraflux.engine.truncation.multi_gpu import apply_multi_gpu, split_elements  # noqa: PLC0415

    count = cp.cuda.runtime.getDeviceCount()
    cur, sources, targets = random_case(count + 2, n_elem=101)
    e_ref, _ = apply_reference(targets, sources, cur, 6.0)
    run = apply_multi_gpu(targets, sources, cur, 6.0, 3, 0, split)
    assert run.devices == len(run.kernel_seconds) == count
    assert all(t > 0 for t in run.kernel_seconds)
    assert np.abs(run.e - e_ref).max() < 1e-12 * np.abs(e_ref).max()
    assert split_elements(101, 4) == [(0, 25), (25, 50), (50, 76), (76, 101)]


@pytest.mark.parametrize(("pinned_bytes", "split"), [(0, "points"), (1 << 30, "points"), (1 << 30, "incidences")])
def test_multi_gpu_operator_reuses_its_resident_points_across_currents(cp, monkeypatch, pinned_bytes, split):
    from paraflux.engine.truncation import multi_gpu  # noqa: PLC0415

    monkeypatch.setattr(multi_gpu, "PINNED_BYTES", pinned_bytes)  # fields into pageable, then pinned memory
    _, sources, targets = random_case(1, n_elem=101)
    runs = []
    with multi_gpu.MultiGpuOperator(targets, sources, 6.0, 3, 0, split) as op:
        for seed, n_rhs in ((1, 2), (2, 5), (3, 5), (4, 2)):  # new buffers, then the same ones for new currents
            cur = random_case(n_rhs, seed=seed)[0]
            run = op.apply(cur)
            runs.append((cur, run.e.copy(), run))
            e_ref, f_ref = apply_reference(targets, sources, cur, 6.0)
            assert run.e.shape == (n_rhs, len(targets), 3)
            assert np.abs(run.e - e_ref).max() < 1e-12 * np.abs(e_ref).max()
            assert np.abs(run.f - f_ref).max() < 1e-12 * np.abs(f_ref).max()
        with pytest.raises(ValueError, match="S' points"):
            op.apply(random_case(1, n_s=len(sources) + 1)[0])
    assert all(np.array_equal(e, run.e) for _, e, run in runs)  # each application's fields are its own


@pytest.fixture()
def two_gpus(cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs at least 2 GPUs")


@pytest.mark.parametrize("split", ["points", "incidences"])
@pytest.mark.parametrize("n_rhs", [1, 3, 37])
def test_several_gpus_share_the_work_and_equal_one(cp, two_gpus, split, n_rhs):
    from paraflux.engine.truncation.multi_gpu import MultiGpuOperator, apply_split_reference  # noqa: PLC0415

    count = cp.cuda.runtime.getDeviceCount()
    cur, sources, targets = random_case(n_rhs, n_s=500, n_elem=257, seed=n_rhs)
    with MultiGpuOperator(targets, sources, 6.0, 3, 1, split) as one, \
            MultiGpuOperator(targets, sources, 6.0, 3, 0, split) as every:
        alone, shared = one.apply(cur), every.apply(cur)
    working = min(count, n_rhs) if split == "incidences" else count
    assert shared.devices == count and len(shared.kernel_seconds) == working and len(alone.kernel_seconds) == 1
    e_twin, f_twin = apply_split_reference(targets, sources, cur, 6.0, 3, count, split)
    for got, want in ((shared.e, alone.e), (shared.f, alone.f), (shared.e, e_twin), (shared.f, f_twin)):
        assert np.abs(got - want).max() < 1e-12 * np.abs(want).max()


@pytest.mark.parametrize("loop", ["cuda-s", "cuda-tiled"])
def test_cuda_launches_refuse_S_points_that_are_not_whole_elements(cp, loop):
    from paraflux.engine.truncation.gpu_loops import launch  # noqa: PLC0415

    cur, sources, targets = random_case(1, n_elem=5)
    dev = [cp.asarray(a) for a in (targets[:-1], sources, cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)]
    with pytest.raises(ValueError, match="not whole elements"):
        launch(cp, loop, *dev, 6.0, 3)


@pytest.mark.parametrize("n_s", [100, 3000])
def test_cuda_tiled_with_one_and_many_S_prime_chunks(cp, n_s):
    from paraflux.engine.truncation.gpu_loops import BLOCK, launch, multiprocessors, s_chunks  # noqa: PLC0415

    cur, sources, targets = random_case(2, n_s=n_s)
    chunks = s_chunks(multiprocessors(cp), -(-len(targets) // BLOCK), n_s, 2 * len(targets))
    assert (chunks == 1) == (n_s < 256)
    dev = [cp.asarray(a) for a in (targets, sources, cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)]
    e, f = (a.get() for a in launch(cp, "cuda-tiled", *dev, 6.0, 3))
    e_ref, f_ref = apply_reference(targets, sources, cur, 6.0)
    assert np.abs(e - e_ref).max() < 1e-12 * np.abs(e_ref).max()
    assert np.abs(f - f_ref).max() < 1e-12 * np.abs(f_ref).max()


@pytest.mark.parametrize("n_rhs", [1, 5])
def test_cuda_tiled_fp32_is_within_single_precision_of_the_specification_ten_wavelengths_across(cp, n_rhs):
    """S' and S on spheres of 10 and 10.4 wavelengths (k d up to 65), random currents (whose sum cancels
    more than a scattered field's), many tiles and S' chunks: the single-precision pairs stay within 3e-5 of
    the double-precision specification in the norm, 1e-4 at any point."""
    from paraflux.engine.truncation.strategies import apply_operator  # noqa: PLC0415

    rng = np.random.default_rng(4)
    sphere = lambda n, r: r * (v := rng.standard_normal((n, 3))) / np.linalg.norm(v, axis=1)[:, None]  # noqa: E731
    cur, _, _ = random_case(n_rhs, n_s=4000, seed=5)
    sources, targets = sphere(4000, 5.0), sphere(2700, 5.2)
    e_ref, f_ref = apply_reference(targets, sources, cur, 2 * np.pi)
    applied = apply_operator("cuda-tiled-fp32", targets, sources, cur, 2 * np.pi, 3)
    for got, ref in ((applied.e, e_ref), (applied.f, f_ref)):
        norm_error = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        point_error = np.abs(got - ref).max() / np.abs(ref).max()
        assert norm_error < 3e-5 and point_error < 1e-4, (norm_error, point_error)
        assert norm_error > 1e-9  # single precision did run


def test_sum_chunks_kernel_matches_numpy(cp):
    from paraflux.engine.truncation.gpu_loops import compiled_module  # noqa: PLC0415

    rng = np.random.default_rng(4)
    pe, pf = (rng.standard_normal((7, 2, 301, 3)) + 1j * rng.standard_normal((7, 2, 301, 3)) for _ in range(2))
    e, f = cp.empty(pe.shape[1:], dtype=complex), cp.empty(pe.shape[1:], dtype=complex)
    n = 2 * e.size
    compiled_module(cp).get_function("sum_chunks")((-(-n // 256),), (256,), (cp.asarray(pe), cp.asarray(pf),
                                                                            np.int64(n), np.int32(7), e, f))
    np.testing.assert_allclose(e.get(), pe.sum(axis=0), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(f.get(), pf.sum(axis=0), rtol=1e-14, atol=1e-14)


def test_study_on_the_gpu_matches_the_cpu(cp):
    from dataclasses import replace  # noqa: PLC0415

    from paraflux.engine.problems import load_case_problem  # noqa: PLC0415
    from paraflux.engine.studies import STUDIES  # noqa: PLC0415

    study = STUDIES["truncation"]
    problem = replace(load_case_problem("sphere-in-box"), case_elements=400)
    cpu = study.run(study.with_variants(problem, {"loop": "cpu-s"}))
    for loop in ("cuda-tiled", "zgemm"):
        gpu = study.run(study.with_variants(problem, {"loop": loop}))
        assert gpu.backend == "cupy"
        assert np.linalg.norm(gpu.solution - cpu.solution) < 1e-12 * np.linalg.norm(cpu.solution)
    assert cpu.relative_error < 1e-6


def test_truncation_benchmark_runs_and_renders_on_a_small_size(cp, tmp_path):
    from paraflux.engine.bench import truncation as bench  # noqa: PLC0415

    config = bench.TruncationBenchConfig(inner_elements=200, outer_elements=(150, 300), rhs=(1, 4), repeats=1,
                                         cpu_pair_budget=200_000)
    data = bench.run_truncation_benchmark(config, ["test"], lambda m: None)
    assert all(r["check"] < 1e-12 for c in data["cases"] for r in c["gpu"])
    assert all(r["check"] < 1e-12 for r in data["cpu"]["rows"])
    paths = BENCHMARKS['truncation'].write(data, tmp_path)
    assert "## Targets" in paths[1].read_text()
