"""The FMM on the GPU (CuPy: batched GEMMs, the paper's M2L kernel, the P2P kernel) against the CPU path."""

import numpy as np
import pytest

from paraflux.engine.bench.registry import BENCHMARKS
from paraflux.engine.fmm.fmm import M2L_SCHEMES, LaplaceFMM
from paraflux.engine.fmm.m2l import SCHEMES

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("separation", [1, 2])
@pytest.mark.parametrize("scheme", M2L_SCHEMES)
@pytest.mark.parametrize("order", [4, 9])
def test_gpu_matches_cpu(cp, scheme, order, separation):
    if separation not in SCHEMES[scheme].separations:
        pytest.skip(f"{scheme} takes separation {SCHEMES[scheme].separations} only")
    rng = np.random.default_rng(order)
    src, tgt = rng.uniform(0, 1, (3000, 3)) ** 2, rng.uniform(0, 1, (2500, 3))
    q, d = rng.standard_normal((2, 3000)), rng.standard_normal((2, 3000, 3))
    fmm = [LaplaceFMM(src, tgt, order, 32, scheme, b, separation=separation) for b in ("numpy", "cupy")]
    (cpu, cpu_grad), (gpu, gpu_grad) = (f.apply(q, d, gradient=True) for f in fmm)
    assert np.abs(gpu.get() - cpu).max() < 1e-12 * np.abs(cpu).max()
    assert np.abs(gpu_grad.get() - cpu_grad).max() < 1e-12 * np.abs(cpu_grad).max()


@pytest.mark.parametrize("nodes", [8, 26])
def test_gpu_exponential_scheme_matches_cpu_for_every_node_count(cp, nodes):
    rng = np.random.default_rng(nodes)
    src, tgt = rng.uniform(0, 1, (3000, 3)) ** 2, rng.uniform(0, 1, (2500, 3))
    q = rng.standard_normal((2, 3000))
    cpu, _ = LaplaceFMM(src, tgt, 9, 32, "exponential", "numpy", exponential_nodes=nodes).apply(q)
    gpu, _ = LaplaceFMM(src, tgt, 9, 32, "exponential", "cupy", exponential_nodes=nodes).apply(q)
    assert np.abs(gpu.get() - cpu).max() < 1e-12 * np.abs(cpu).max()


def test_gpu_many_densities_and_self_interaction(cp):
    rng = np.random.default_rng(9)
    pts = rng.uniform(0, 1, (4000, 3))
    q = rng.standard_normal((11, 4000))  # 11 column chunks of the tiled list kernel
    cpu, _ = LaplaceFMM(pts, pts, 6, 32, "standard", "numpy").apply(q)
    timings = {}
    gpu, _ = LaplaceFMM(pts, pts, 6, 32, "standard", "cupy").apply(q, timings=timings)
    assert np.abs(gpu.get() - cpu).max() < 1e-12 * np.abs(cpu).max()
    assert set(timings) == {"upward", "m2l", "downward", "p2p"}


def test_gpu_leaf_expansions_at_the_highest_order_and_past_one_launch_of_densities(cp):
    from paraflux.engine.fmm.fmm import MAX_ORDER  # noqa: PLC0415

    rng = np.random.default_rng(20)
    src, tgt = rng.uniform(0, 1, (700, 3)), rng.uniform(0, 1, (600, 3)) ** 2
    q, d = rng.standard_normal((19, 700)), rng.standard_normal((2, 700, 3))  # 19: three P2M launches at p = 20
    for charges, dipoles in ((q, None), (None, d)):
        cpu = LaplaceFMM(src, tgt, MAX_ORDER, 16, "standard", "numpy").apply(charges, dipoles, gradient=True)
        gpu = LaplaceFMM(src, tgt, MAX_ORDER, 16, "standard", "cupy").apply(charges, dipoles, gradient=True)
        for a, b in zip(gpu, cpu):
            assert np.abs(a.get() - b).max() < 1e-12 * np.abs(b).max()


def test_fmm_benchmark_runs_and_renders_on_a_small_size(cp, tmp_path):
    from paraflux.engine.bench import fmm as fmm_bench  # noqa: PLC0415

    config = fmm_bench.FmmBenchConfig(sizes=(3000,), orders=(4, 6), repeats=1, sample=100)
    data = fmm_bench.run_fmm_benchmark(config, ["test"], lambda m: None)
    assert all(r["error"] < 1e-2 for c in data["cases"] for r in c["runs"])
    paths = BENCHMARKS['fmm'].write(data, tmp_path)
    assert "## Targets" in paths[1].read_text()


@pytest.mark.parametrize("separation", [1, 2])
def test_the_tree_built_on_the_gpu_is_the_host_tree(cp, separation):
    from paraflux.engine.fmm.tree import build_octree  # noqa: PLC0415

    rng = np.random.default_rng(separation)
    src, tgt = rng.uniform(0, 1, (6000, 3)) ** 3, rng.uniform(0, 1, (5000, 3))
    host = build_octree(src, tgt, 24, separation=separation)
    device = build_octree(cp.asarray(src), tgt, 24, separation=separation, xp=cp)
    assert device.xp is cp and host.stats() == device.stats()
    back = device.on_host()
    assert np.array_equal(back.corner, host.corner) and back.side == host.side
    assert np.array_equal(back.src_order, host.src_order) and np.array_equal(back.tgt_order, host.tgt_order)
    for a, b in zip(back.levels, host.levels):
        for field in ("coords", "src_range", "tgt_range", "leaf", "parent", "children"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
    for rows_a, rows_b in ((back.m2l, host.m2l), (back.near, host.near)):
        assert all(np.array_equal(x, y) for ra, rb in zip(rows_a, rows_b) for x, y in zip(ra, rb))


def test_standard_plans_on_the_gpu_and_a_gpu_tree_serves_the_host_planned_schemes(cp):
    from paraflux.engine.fmm.tree import build_octree  # noqa: PLC0415

    rng = np.random.default_rng(3)
    pts, q = rng.uniform(0, 1, (5000, 3)), rng.standard_normal(5000)
    cpu, cpu_grad = LaplaceFMM(pts, pts, 7, 32, "standard", "numpy").apply(q, gradient=True)
    standard = LaplaceFMM(pts, pts, 7, 32, "standard", "cupy")
    assert standard.plan.tree.xp is cp and isinstance(standard.plan.near_csr[0], cp.ndarray)
    gemm = LaplaceFMM(pts, pts, 7, 32, "batched-gemm", "cupy", tree=build_octree(pts, pts, 32, xp=cp))
    assert gemm.plan.tree.xp is np
    for fmm in (standard, gemm):
        phi, grad = fmm.apply(q, gradient=True)
        assert np.abs(phi.get() - cpu).max() < 1e-12 * np.abs(cpu).max()
        assert np.abs(grad.get() - cpu_grad).max() < 1e-12 * np.abs(cpu_grad).max()


@pytest.mark.parametrize("cuda_cores", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("width, n_dens", [(12, 1), (56, 1), (110, 5), (132, 3), (240, 1), (462, 2)])
def test_gpu_tiled_list_kernel_matches_its_numpy_twin(cp, width, n_dens, dtype, cuda_cores):
    """kernels/fmm.cu's m2l_tiles against host.tiles_reference, on the tensor cores and on the CUDA cores: each
    rows-per-thread choice (3 to 6), several row chunks, several column chunks (64 slots x n_dens > 64), widths
    not a multiple of the staged chunk, tiles left partly empty and targets spread over many tables."""
    from paraflux.engine.fmm.gpu_m2l import m2l_tiles_gpu  # noqa: PLC0415
    from paraflux.engine.fmm.host import tiles_reference  # noqa: PLC0415
    from paraflux.engine.fmm.plan import TileWork, by_tile  # noqa: PLC0415

    rng = np.random.default_rng(width)
    tgt, off = np.divmod(rng.choice(300 * 40, 3000, replace=False), 40)  # (target, table) unique
    src = rng.integers(0, 500, len(tgt))
    table, source = rng.standard_normal((40, width, width)).astype(dtype), rng.standard_normal((500, n_dens, width))
    arrays = by_tile(tgt, src, off)
    expected = rng.standard_normal((500, n_dens, width))
    dest = cp.asarray(expected)
    tiles_reference(source, expected, arrays, table)
    work = TileWork(*(cp.asarray(a) for a in arrays), cp.asarray(np.ascontiguousarray(table.transpose(0, 2, 1))))
    m2l_tiles_gpu(cp.asarray(source), dest, work, cuda_cores)
    assert np.abs(dest.get() - expected).max() < 1e-12 * np.abs(expected).max()


def test_gpu_fp32_tables_give_the_hosts_fp32_result(cp):
    rng = np.random.default_rng(12)
    pts, q = rng.uniform(0, 1, (5000, 3)), rng.standard_normal(5000)
    cpu, cpu_grad = LaplaceFMM(pts, pts, 6, 32, "standard", "numpy", separation=2, fp32_tables=True).apply(
        q, gradient=True)
    gpu, gpu_grad = LaplaceFMM(pts, pts, 6, 32, "standard", "cupy", separation=2, fp32_tables=True).apply(
        q, gradient=True)
    assert np.abs(gpu.get() - cpu).max() < 1e-12 * np.abs(cpu).max()
    assert np.abs(gpu_grad.get() - cpu_grad).max() < 1e-12 * np.abs(cpu_grad).max()


def test_gpu_translation_tables_are_kept_on_the_device_between_plans_within_their_budget(cp, monkeypatch):
    from paraflux.engine.fmm import device  # noqa: PLC0415

    monkeypatch.setattr(device, "_device_tables", device.OrderedDict())
    monkeypatch.setattr(device, "DEVICE_TABLE_BYTES", 3 * 8 * 4 * 4 * 4)  # three of the tables below
    passes, built = device.DevicePasses(cp), []

    def make(k):
        built.append(k)
        return np.full((4, 4, 4), float(k))

    first = passes.table(lambda: make(0), ("t", 0))
    assert passes.table(lambda: make(0), ("t", 0)) is first and built == [0]  # read again, not rebuilt
    assert float(first[1, 2, 3]) == 0.0 and first.flags.c_contiguous
    for k in (1, 2, 3):
        passes.table(lambda k=k: make(k), ("t", k))
    assert [key[0][1] for key in device._device_tables] == [1, 2, 3]  # the oldest dropped past the budget
    passes.table(np.ones((2, 4, 4)))  # a table without a key: not cached, the plan's own allocation
    assert sum(passes.table_bytes.values()) == 4 * 4 * 4 * 4 * 8  # each cached table the plan holds, once


def test_gpu_default_leaf_size_is_the_gpus(cp):
    from paraflux.engine.fmm.fmm import LEAF_SIZE_GPU  # noqa: PLC0415

    pts = np.random.default_rng(15).uniform(0, 1, (5000, 3))
    assert LaplaceFMM(pts, pts, 4, backend="cupy").tree.leaf_size == LEAF_SIZE_GPU


def test_gpu_keops_peer_gives_our_direct_sum(cp, tmp_path):
    """bench fmm's second brute-force peer on the GPU, where pykeops (the peers extra) is there and compiles.
    KeOps runs in a fresh process, where nothing has loaded NVRTC before it: there its compiler crashed (a
    segmentation fault) until keops_peer loaded NVRTC through CuPy first."""
    import subprocess
    import sys

    pytest.importorskip("pykeops")
    from paraflux.engine.fmm.gpu_direct import direct_sum_gpu  # noqa: PLC0415

    rng = np.random.default_rng(16)
    pts, q = rng.uniform(0, 1, (5000, 3)), rng.standard_normal(5000)
    np.savez(tmp_path / "in.npz", pts=pts, q=q)
    script = ("import sys, numpy as np; from paraflux.engine.bench import keops_peer; d = np.load(sys.argv[1]); "
              "r = keops_peer.direct(d['pts'], d['q'], backend='GPU'); "
              "np.savez(sys.argv[2], phi=r.potential, grad=r.gradient)")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    run = np.load(tmp_path / "out.npz")
    phi, grad = (a.get() for a in direct_sum_gpu(pts, q, pts))
    assert np.abs(run["phi"] - phi).max() < 1e-12 * np.abs(phi).max()
    assert np.abs(run["grad"] - grad).max() < 1e-12 * np.abs(grad).max()
