"""The fast multipole boundary element solve on the GPU against the same solve on the CPU: the CUDA pair
kernel against the Numba one, the device near field against the host one, the whole solve."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
E, NU = 200e9, 0.3
MU = E / (2 * (1 + NU))


def test_cuda_pair_kernel_matches_the_numba_kernel():
    cp = pytest.importorskip("cupy")
    from paraflux.engine.bem.assembly import DUFFY, _rules, elements_of
    from paraflux.engine.bem.pair_kernel import device_pair_integrals, pair_integrals
    from paraflux.engine.truncation.surfaces import uv_sphere

    points, triangles = uv_sphere(6, 1.0)
    el = elements_of(points, triangles)
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.5, 0.5, (40, 3))
    p, e = rng.integers(0, 40, 300), rng.integers(0, len(triangles), 300)
    rule = rng.integers(0, DUFFY + 2, 300)  # every rule, the Duffy ones included
    h, g = pair_integrals(x, el.corners, el.normals, el.areas, p, e, rule, *_rules(), MU, NU)
    dev = [cp.asarray(a) for a in (x, el.corners, el.normals, el.areas, p, e, rule)]
    h_gpu, g_gpu = device_pair_integrals(*dev, *_rules(cp), MU, NU)
    assert np.abs(h_gpu.get() - h).max() < 1e-13 * np.abs(h).max()
    assert np.abs(g_gpu.get() - g).max() < 1e-13 * np.abs(g).max()


def _box_with_a_sharp_fixed_edge():
    """A box fixed at x = 0, on rollers along x at y = 0 (double nodes of one component), loaded at x = 1."""
    from paraflux.engine.bem.shapes import BOX_FACES, box_surface

    s, face = box_surface((1.0, 0.5, 0.5), (6, 3, 3))
    disp = np.zeros((len(s.triangles), 3), dtype=bool)
    disp[face == BOX_FACES.index("x0")] = True
    disp[face == BOX_FACES.index("y0"), 0] = True
    traction = np.zeros((len(s.triangles), 3, 3))
    traction[face == BOX_FACES.index("x1")] = [1e6, 2e5, -3e5]
    return s, disp, traction


@pytest.mark.parametrize("reach", [None, 6.0, 1.5])
def test_gpu_near_field_and_operator_match_the_host_ones(reach):
    cp = pytest.importorskip("cupy")
    from paraflux.engine.bem.fmm_operator import FmmBemOperator
    from paraflux.engine.bem.unknowns import unknown_layout

    s, disp, traction = _box_with_a_sharp_fixed_edge()
    layout = unknown_layout(s.points, s.triangles, disp)
    assert len(layout.extra_node) > 0
    u_known = np.random.default_rng(1).standard_normal((len(s.points), 3))  # read where prescribed
    ops = [FmmBemOperator(s.points, s.triangles, layout, disp, traction, MU, NU, order=8, backend=b, leaf_size=32,
                          precondition_ratio=reach, known_displacement=u_known) for b in ("numpy", "cupy")]
    for name in ("correction", "near"):
        host, dev = getattr(ops[0], name).toarray(), getattr(ops[1], name).get()
        assert isinstance(getattr(ops[1], name).data, cp.ndarray) and dev.format == "bsr"
        dev = dev.toarray()
        assert np.abs(dev - host).max() < 1e-12 * np.abs(host).max(), name
    kc = ops[0].known_correction
    assert np.abs(ops[1].known_correction - kc).max() < 1e-12 * np.abs(kc).max()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((layout.n_targets, 3))
    host, dev = ops[0].apply(x), ops[1].apply(x).get()
    assert np.linalg.norm(dev - host) < 1e-10 * np.linalg.norm(host)


def test_gpu_coarse_level_matches_the_host_one(monkeypatch):
    """The coarse level's Galerkin matrix (kernels/coarse_galerkin.cu, in one pass over the columns and in
    passes of 7) and its correction on the GPU against the host's, on the sharp-edged box (extra traction
    nodes, both kinds of unknown in some clusters)."""
    cp = pytest.importorskip("cupy")
    from paraflux.engine.bem import coarse
    from paraflux.engine.bem.fmm_operator import FmmBemOperator
    from paraflux.engine.bem.unknowns import unknown_layout

    s, disp, traction = _box_with_a_sharp_fixed_edge()
    layout = unknown_layout(s.points, s.triangles, disp)
    ops = [FmmBemOperator(s.points, s.triangles, layout, disp, traction, MU, NU, order=12, backend=b, leaf_size=32,
                          separation=2) for b in ("numpy", "cupy")]
    basis = coarse.coarse_basis(ops[0].targets, coarse.slot_kinds(layout), 30)
    host, dev = (coarse.galerkin_matrix(op, basis) for op in ops)
    assert isinstance(dev, cp.ndarray)
    assert np.linalg.norm(dev.get() - host) < 1e-9 * np.linalg.norm(host)
    monkeypatch.setattr(coarse, "_shared_limit", lambda cp: 24 * 7)  # shared memory for 7 columns a pass
    passes = coarse.galerkin_matrix(ops[1], basis).get()
    assert np.linalg.norm(passes - host) < 1e-9 * np.linalg.norm(host)
    r = np.random.default_rng(2).standard_normal(3 * layout.n_targets)
    want = coarse.coarse_correction(ops[0], 30).solve(r)
    double = coarse.coarse_correction(ops[1], 30)
    got = double.solve(cp.asarray(r)).get()
    assert np.linalg.norm(got - want) < 1e-8 * np.linalg.norm(want)
    single = coarse.coarse_correction(ops[1], 30, np.float32)  # half the LU, FP32's rounding
    assert 2 * single.lu_bytes == double.lu_bytes
    assert 1e-10 < np.linalg.norm(single.solve(cp.asarray(r)).get() - want) / np.linalg.norm(want) < 1e-3


@pytest.mark.parametrize("case, reach", [("octant", None), ("sharp-edged box", None), ("octant", 6.0)])
def test_gpu_fmm_solve_matches_the_cpu_solve(case, reach):
    pytest.importorskip("cupy")
    from paraflux.engine.bem.cases import pressurised_octant
    from paraflux.engine.bem.direct import BoundaryData
    from paraflux.engine.bem.fmm_solve import FmmSettings, solve_fmm

    if case == "octant":
        s, _, data = pressurised_octant(300)
    else:
        s, disp, traction = _box_with_a_sharp_fixed_edge()
        data = BoundaryData(disp, np.zeros_like(s.points), traction)
    same = {"order": 8, "rtol": 1e-12, "precondition_ratio": reach, "leaf_size": 32}  # one octree on both
    cpu, cpu_report = solve_fmm(s.points, s.triangles, data, E, NU, FmmSettings(**same))
    gpu, gpu_report = solve_fmm(s.points, s.triangles, data, E, NU, FmmSettings(**same, backend="cupy"))
    assert gpu_report.relative_residual < 1e-12 and cpu_report.relative_residual < 1e-12
    assert np.linalg.norm(gpu.displacement - cpu.displacement) < 1e-10 * np.linalg.norm(cpu.displacement)
    assert np.linalg.norm(gpu.traction - cpu.traction) < 1e-10 * np.linalg.norm(cpu.traction)
    memory = gpu_report.memory
    assert 0 < memory["device_bytes"] <= memory["device_pool_bytes"] and cpu_report.memory["device_bytes"] == 0
    phases = memory["device_phase_bytes"]
    assert {"FMM set-up", "near-field integrals", "preconditioner", "coarse level", "GMRES"} <= set(phases)
    assert gpu_report.coarse_size == cpu_report.coarse_size > 0
    assert 0.9 * memory["device_bytes"] <= max(phases.values()) <= memory["device_bytes"]
    _, fp64_report = solve_fmm(s.points, s.triangles, data, E, NU, FmmSettings(**same, backend="cupy",
                                                                                 preconditioner_fp32=False))
    assert abs(fp64_report.iterations - gpu_report.iterations) <= 2  # FP32 factors precondition as well


def _block_matrix(n: int, seed: int):
    """A random (3n, 3n) matrix of 3x3 blocks with a heavy diagonal, about 12 blocks a row and every 20th row
    about 100 (longer than a warp's 32 lanes): (indptr, cols, blocks) on the host."""
    rng = np.random.default_rng(seed)
    pattern = (rng.random((n, n)) < 12 / n) | np.eye(n, dtype=bool)
    pattern[::20] |= rng.random((len(pattern[::20]), n)) < 90 / n
    rows, cols = np.nonzero(pattern)
    blocks = rng.standard_normal((len(rows), 3, 3)) + 300 * np.eye(3) * (rows == cols)[:, None, None]
    return np.r_[0, np.cumsum(np.bincount(rows, minlength=n))].astype(np.int32), cols.astype(np.int32), blocks


def _device_bsr(indptr, cols, blocks):
    import cupy as cp

    from paraflux.engine.bem.block_sparse import DeviceBsr

    n = len(indptr) - 1
    return DeviceBsr(cp.asarray(blocks), cp.asarray(cols), cp.asarray(indptr), (3 * n, 3 * n))


def test_block_ilu0_on_the_gpu_matches_its_reference_and_its_solves_scipy_s():
    cp = pytest.importorskip("cupy")
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve, spsolve_triangular

    from paraflux.engine.bem.block_ilu import DeviceBlockIlu0, block_ilu0_reference
    from paraflux.engine.errors import SolverError

    indptr, cols, blocks = _block_matrix(1000, 1)
    n = len(indptr) - 1
    assert np.diff(indptr).max() > 64  # rows the lanes' loops go round more than once
    ilu = DeviceBlockIlu0(_device_bsr(indptr, cols, blocks))
    order = ilu.order.get()
    assert np.array_equal(np.sort(order), np.arange(n))
    a = sp.bsr_matrix((blocks, cols, indptr), shape=(3 * n, 3 * n))
    scalar = (3 * order[:, None] + np.arange(3)).reshape(-1)
    pa = sp.bsr_matrix(a.tocsr()[scalar][:, scalar], blocksize=(3, 3))  # a in the factors' order
    pa.sort_indices()
    lu = ilu.lu.get()
    assert np.array_equal(lu.indptr, pa.indptr) and np.array_equal(lu.indices, pa.indices)
    want = block_ilu0_reference(pa.indptr, pa.indices, pa.data)
    assert np.abs(lu.data - want).max() < 1e-12 * np.abs(want).max()
    rows = np.repeat(np.arange(n), np.diff(pa.indptr))
    lower = sp.bsr_matrix((np.where((pa.indices < rows)[:, None, None], want, 0.0), pa.indices, pa.indptr),
                          shape=a.shape).tocsr() + sp.identity(3 * n, format="csr")
    on_diagonal = (pa.indices == rows)[:, None, None]
    upper_blocks = np.where(pa.indices > rows, 1.0, 0.0)[:, None, None] * want
    upper_blocks[on_diagonal[:, 0, 0]] = np.linalg.inv(want[on_diagonal[:, 0, 0]])
    upper = sp.bsr_matrix((upper_blocks, pa.indices, pa.indptr), shape=a.shape).tocsr()
    r = np.random.default_rng(2).standard_normal(3 * n)
    expected = np.empty(3 * n)
    # U's diagonal blocks are full: block upper triangular, not scalar, so a general sparse solve
    expected[scalar] = spsolve(upper.tocsc(), spsolve_triangular(lower, r[scalar], lower=True))
    for _ in range(3):  # the flags reset between calls
        assert np.abs(ilu.solve(cp.asarray(r)).get() - expected).max() < 1e-12 * np.abs(expected).max()
    single = DeviceBlockIlu0(_device_bsr(indptr, cols, blocks), np.float32)  # FP32 factors, FP64 sums
    assert single.lu.data.dtype == np.float32 and np.array_equal(single.order.get(), order)
    assert single.nbytes < 0.56 * ilu.nbytes
    assert np.abs(single.solve(cp.asarray(r)).get() - expected).max() < 1e-5 * np.abs(expected).max()
    singular = blocks.copy()
    singular[indptr[5]:indptr[6]] = 0.0  # block row 5, its diagonal block included
    with pytest.raises(SolverError, match="singular"):
        DeviceBlockIlu0(_device_bsr(indptr, cols, singular))


def test_device_memory_counts_the_peak_in_use_and_frees_the_pool_s_cache(own_gpu_pool):
    cp = pytest.importorskip("cupy")
    from paraflux.engine.backend import DeviceMemory

    pool = own_gpu_pool
    before = cp.ones(1 << 10)  # allocated before the window: its free does not count
    with DeviceMemory(cp) as memory:
        del before
        kept = cp.ones(1 << 20)  # 8 MiB still in use after the phase
        scratch = cp.ones(1 << 24)  # 128 MiB freed within it
        del scratch
        assert memory.in_use == kept.nbytes
        held = pool.total_bytes()
        assert memory.mark("first") >= (1 << 27) + (1 << 23)
        assert pool.total_bytes() <= held - (1 << 27)  # the cached scratch went back
        more = cp.ones(1 << 21)  # 16 MiB on top of the kept 8 in the second phase
        del more
        memory.mark("second")
    assert memory.in_use_peak == (1 << 27) + (1 << 23)
    assert memory.phases == {"first": (1 << 27) + (1 << 23), "second": (1 << 23) + (1 << 24)}
    assert DeviceMemory(np).mark() == 0


def test_device_bsr_product_matches_scipy_bsr():
    cp = pytest.importorskip("cupy")
    import scipy.sparse as sp

    from paraflux.engine.bem.block_sparse import BlockFiller

    rng = np.random.default_rng(5)
    n = 700  # block rows, some empty, some longer than a warp
    counts = rng.integers(0, 70, n)
    counts[::50] = 0
    rows = np.repeat(np.arange(n), counts)
    cols = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts])
    blocks = rng.standard_normal((len(rows), 3, 3))
    filler = BlockFiller(cp.asarray(rows, dtype=cp.int32), cp.asarray(cols, dtype=cp.int32), n)
    for piece in np.array_split(blocks, 7):  # written one by one
        filler.write(cp.asarray(piece))
    a = filler.matrix()
    expected = sp.bsr_matrix((blocks, cols, np.r_[0, np.cumsum(counts)]), shape=a.shape)
    x = rng.standard_normal(3 * n)
    assert np.abs((a @ cp.asarray(x)).get() - expected @ x).max() < 1e-13 * np.abs(expected @ x).max()
    assert np.array_equal(a.get().toarray(), expected.toarray()) and a.nbytes < 0.71 * 12 * 9 * len(rows)


@pytest.mark.parametrize("densities", [range(7), range(0, 3), range(3, 5), range(6, 7)])
def test_far_densities_kernel_matches_its_reference(densities):
    cp = pytest.importorskip("cupy")
    from paraflux.engine.bem.far_densities import far_densities, far_densities_reference

    rng = np.random.default_rng(8)
    n_nodes, n_elements, q, n_rule = 300, 500, 1500, 3
    points = {"q_source": rng.integers(0, n_elements * n_rule, q).astype(np.int32),
              "tri": rng.integers(0, n_nodes, (n_elements, 3)), "normal": rng.standard_normal((n_elements, 3)),
              "area": rng.random(n_elements), "bary": rng.random((n_rule, 3)), "rule_weight": rng.random(n_rule),
              "y": rng.standard_normal((q, 3))}
    u, t = rng.standard_normal((n_nodes, 3)), rng.standard_normal((n_elements, 3, 3))
    host = far_densities_reference(u, t, points, MU, NU, densities)
    dev = far_densities(cp, cp.asarray(u), cp.asarray(t), {k: cp.asarray(v) for k, v in points.items()}, MU, NU,
                        densities)
    for h, d in zip(host, dev):
        assert d.shape == h.shape == (len(densities), q, 3)[:h.ndim]
        assert np.abs(d.get() - h).max() <= 1e-14 * np.abs(h).max()
