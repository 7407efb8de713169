"""Laplace FMM: solid harmonics, exact translations, the octree's invariants, and the FMM against
direct summation on uniform, clustered and surface-like points for every M2L scheme."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paraflux.engine.errors import ProblemError
from paraflux.engine.fmm.fmm import M2L_SCHEMES, LaplaceFMM
from paraflux.engine.fmm.harmonics import degree_order, full_order, irregular, regular
from paraflux.engine.fmm.operators import (direct, l2l_matrices, l2p, m2m_matrices, p2m, to_complex,
                                           to_real)
from paraflux.engine.fmm.tree import build_octree


def test_solid_harmonics_match_scipy_and_expand_the_kernel():
    from scipy.special import factorial, lpmv  # noqa: PLC0415

    x = np.array([[1.3, -0.7, 2.1], [0.2, 0.5, -0.3]])
    p = 8
    deg, order = degree_order(p)
    r, ct, ph = np.linalg.norm(x, axis=1), x[:, 2] / np.linalg.norm(x, axis=1), np.arctan2(x[:, 1], x[:, 0])
    leg = np.array([lpmv(m, n, ct) * (-1.0) ** m for n, m in zip(deg, order)]).T  # no Condon-Shortley phase
    phase = 1j ** order * np.exp(1j * order * ph[:, None])
    assert np.allclose(regular(x, p), r[:, None] ** deg * leg * phase / factorial(deg + order), rtol=1e-13, atol=0)
    assert np.allclose(irregular(x, p), factorial(deg - order) * leg * phase / r[:, None] ** (deg + 1),
                       rtol=1e-13, atol=0)
    y = np.array([[0.2, 0.3, -0.25]])
    series = (np.conj(full_order(regular(y, 30), 30)) * full_order(irregular(x[:1], 30), 30)).sum()
    assert series.real == pytest.approx(1 / np.linalg.norm(x[0] - y[0]), rel=1e-14)


def test_m2m_and_l2l_are_exact_for_truncated_expansions():
    rng = np.random.default_rng(0)
    p = 7
    ys = rng.uniform(-0.5, 0.5, (20, 3))
    q = rng.standard_normal((1, 1, 20))
    about = lambda c: p2m(ys[None], q, None, np.asarray(c, float)[None], p)[0]  # noqa: E731
    shift = np.array([0.25, -0.25, 0.25])
    moved = to_complex(to_real(about([0, 0, 0])) @ m2m_matrices(p, -shift[None])[0].T)
    assert np.abs(moved - about(shift)).max() < 1e-13 * np.abs(about(shift)).max()
    local = rng.standard_normal((1, len(degree_order(p)[0]))) + 0j
    x = rng.uniform(-0.2, 0.2, (5, 3))
    phi, _ = l2p(local[None], x[None], np.zeros((1, 3)), p, False)
    local2 = to_complex(to_real(local) @ l2l_matrices(p, shift[None])[0].T)
    phi2, _ = l2p(local2[None], x[None], shift[None], p, False)
    assert np.abs(phi - phi2).max() < 1e-13 * np.abs(phi).max()


def distributions(n, rng):
    direction = rng.standard_normal((n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    plummer = direction / np.sqrt(rng.uniform(0.02, 0.95, (n, 1)) ** (-2 / 3) - 1)  # Plummer radii, clipped tails
    sphere = rng.standard_normal((n, 3))
    sphere /= np.linalg.norm(sphere, axis=1, keepdims=True)
    plate = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.uniform(0, 0.01, n)])
    return {"uniform": rng.uniform(0, 1, (n, 3)), "plummer": plummer, "sphere": sphere, "plate": plate}


@pytest.mark.parametrize("name, scheme", [(name, "auto") for name in ("plummer", "sphere", "plate")]
                         + [("uniform", scheme) for scheme in M2L_SCHEMES])
def test_fmm_error_falls_geometrically_with_the_order(name, scheme):
    """Every scheme (exponential with its 26-node rule, whose accuracy is below these orders' errors)."""
    rng = np.random.default_rng(2)
    pts = distributions(3000, rng)[name]
    q = rng.standard_normal((2, 3000))
    d = rng.standard_normal((2, 3000, 3))
    sample = rng.choice(3000, 300, replace=False)
    ref, ref_grad = direct(pts, pts[sample], q, d, gradient=True)
    errors = []
    for p in (3, 6, 9, 12):
        phi, grad = LaplaceFMM(pts, pts, p, 32, scheme, exponential_nodes=26).apply(q, d, gradient=True)
        errors.append((np.linalg.norm(phi[:, sample] - ref) / np.linalg.norm(ref),
                       np.linalg.norm(grad[:, sample] - ref_grad) / np.linalg.norm(ref_grad)))
    for (e_phi, e_grad), (f_phi, f_grad) in zip(errors, errors[1:]):
        assert f_phi < 0.5 * e_phi and f_grad < 0.5 * e_grad, errors
    assert errors[-1][0] < 1e-5 and errors[-1][1] < 1e-5, errors


@pytest.mark.parametrize("scheme", M2L_SCHEMES)
def test_every_scheme_matches_standard_to_its_accuracy(scheme):
    rng = np.random.default_rng(3)
    src, tgt = rng.uniform(0, 1, (2000, 3)), rng.uniform(0, 1, (1500, 3))
    q = rng.standard_normal(2000)
    ref, _ = direct(src, tgt, q[None])
    base, _ = LaplaceFMM(src, tgt, 8, 16, "standard").apply(q)
    phi, _ = LaplaceFMM(src, tgt, 8, 16, scheme).apply(q)
    error = lambda x: np.linalg.norm(x - ref[0]) / np.linalg.norm(ref)  # noqa: E731
    assert error(base) < 1e-4 and error(phi) < 1e-4
    if scheme == "batched-gemm":  # the same translations as standard, applied differently
        assert np.abs(phi - base).max() < 1e-12 * np.abs(base).max()
    elif scheme != "standard":  # cross-level translations converge a little slower (paper 001, Table 1)
        assert error(phi) < 4 * error(base)


def test_translations_per_box_follow_the_paper_on_a_uniform_tree():
    from paraflux.engine.fmm.fmm import translations_per_box  # noqa: PLC0415

    g = (np.arange(16) + 0.5) / 16
    pts = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)  # one point per finest box
    tree = build_octree(pts, pts, leaf_size=2, root_pad=0.0)  # the points' own cube: a uniform tree
    assert len(tree.levels) == 5
    assert translations_per_box(tree, "standard") == 189
    assert translations_per_box(tree, "parent-to-child") == 119
    assert translations_per_box(tree, "child-to-parent") == 119


def test_coincident_sources_and_targets_exclude_the_self_interaction():
    rng = np.random.default_rng(4)
    pts = rng.uniform(0, 1, (800, 3))
    q = rng.standard_normal(800)
    phi, _ = LaplaceFMM(pts, pts, 10, 32).apply(q)
    ref, _ = direct(pts, pts, q[None])
    assert np.isfinite(phi).all()
    assert np.abs(phi - ref[0]).max() < 1e-5 * np.abs(ref).max()


@pytest.mark.parametrize("bad, message", [
    ({"order": 1}, "order"), ({"order": 21}, "order"), ({"m2l": "fastest"}, "unknown m2l scheme"),
])
def test_bad_settings_are_refused(bad, message):
    pts = np.random.default_rng(0).uniform(0, 1, (10, 3))
    with pytest.raises(ProblemError, match=message):
        LaplaceFMM(pts, pts, **{"order": 6, **bad})


def test_nan_coordinates_are_refused():
    pts = np.random.default_rng(0).uniform(0, 1, (10, 3))
    pts[3, 1] = np.nan
    with pytest.raises(ProblemError, match="NaN or infinite"):
        LaplaceFMM(pts, pts, 6)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 400), leaf=st.integers(1, 40), seed=st.integers(0, 2**16), cluster=st.booleans())
def test_tree_invariants(n, leaf, seed, cluster):
    rng = np.random.default_rng(seed)
    pts = rng.uniform(0, 1, (n, 3)) ** (4 if cluster else 1)
    tree = build_octree(pts, pts[: max(1, n // 2)], leaf)
    # every point in exactly one leaf
    owned = np.zeros(n, dtype=int)
    for lv in tree.levels:
        for b in np.flatnonzero(lv.leaf):
            owned[lv.src_range[b, 0]:lv.src_range[b, 1]] += 1
            count = np.diff(lv.src_range[b]) + np.diff(lv.tgt_range[b])
            assert count <= leaf or lv is tree.levels[-1]
    assert (owned == 1).all()
    for level, (t, s, _) in enumerate(tree.m2l):
        if len(t):
            assert np.bincount(t).max() <= 189
            delta = tree.levels[level].coords[s] - tree.levels[level].coords[t]
            assert (np.abs(delta).max(axis=1) >= 2).all()
            pairs = set(zip(t.tolist(), s.tolist()))  # symmetric: sources and targets share the tree
            assert all((b, a) in pairs for a, b in pairs)
    from paraflux.engine.fmm.fmm import translations_per_box  # noqa: PLC0415

    assert translations_per_box(tree, "parent-to-child") <= 119
    assert translations_per_box(tree, "child-to-parent") <= 119


@pytest.mark.parametrize("name", ["uniform", "sphere"])
def test_against_fmm3d_at_the_same_requested_precision(name):
    """Both ParaFlux and FMM3D's lfmm3d (which scales by 1/(4 pi)) meet 1e-5 against the direct sum."""
    fmm3dpy = pytest.importorskip("fmm3dpy")
    from paraflux.engine.fmm.fmm import order_for_precision  # noqa: PLC0415

    rng = np.random.default_rng(5)
    pts = distributions(4000, rng)[name]
    q, d = rng.standard_normal(4000), rng.standard_normal((4000, 3))
    eps = 1e-5
    ref, ref_grad = direct(pts, pts, q[None], d[None], gradient=True)
    ours, ours_grad = LaplaceFMM(pts, pts, order_for_precision(eps)).apply(q, d, gradient=True)
    theirs = fmm3dpy.lfmm3d(eps=eps, sources=pts.T.copy(), charges=q, dipvec=d.T.copy(), pg=2)
    rel = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b)  # noqa: E731
    errors = {"paraflux": (rel(ours, ref[0]), rel(ours_grad, ref_grad[0])),
              "fmm3d": (rel(4 * np.pi * theirs.pot, ref[0]), rel(4 * np.pi * theirs.grad.T, ref_grad[0]))}
    print(f"{name}: relative errors (potential, gradient) at eps = {eps:g}: {errors}")
    assert max(errors["paraflux"]) < eps and max(errors["fmm3d"]) < eps, errors


def test_exponential_quadratures_reach_their_digits_on_their_domain():
    from scipy.special import j0  # noqa: PLC0415

    from paraflux.engine.fmm.exponential import RHO_MAX, quadrature  # noqa: PLC0415

    z, rho = np.meshgrid(np.linspace(1, 4, 31), np.linspace(0, RHO_MAX, 41), indexing="ij")
    exact = 1 / np.hypot(z, rho)
    for nodes, digits in ((8, 2.5e-3), (17, 1e-5), (26, 1e-6)):
        q = quadrature(nodes)
        approx = np.einsum("k,zrk->zr", q.weight * q.angles,
                           np.exp(-z[..., None] * q.lam) * j0(rho[..., None] * q.lam))
        assert np.abs(approx / exact - 1).max() < digits, nodes


@pytest.mark.parametrize("nodes, level", [(8, 5e-3), (17, 3e-5), (26, 3e-6)])
def test_exponential_scheme_levels_off_at_its_quadrature_accuracy(nodes, level):
    rng = np.random.default_rng(6)
    pts = rng.uniform(0, 1, (3000, 3))
    q = rng.standard_normal(3000)
    sample = rng.choice(3000, 300, replace=False)
    ref, _ = direct(pts, pts[sample], q[None])
    errors = []
    for p in (10, 16):
        phi, _ = LaplaceFMM(pts, pts, p, 32, "exponential", exponential_nodes=nodes).apply(q)
        errors.append(np.linalg.norm(phi[sample] - ref[0]) / np.linalg.norm(ref))
    standard, _ = LaplaceFMM(pts, pts, 16, 32, "standard").apply(q)
    e_standard = np.linalg.norm(standard[sample] - ref[0]) / np.linalg.norm(ref)
    assert errors[1] < level, errors
    if nodes == 8:  # the quadrature, not the order, bounds it: more terms do not help
        assert errors[1] > 0.3 * errors[0] and errors[1] > 10 * e_standard, (errors, e_standard)


def test_compiled_near_field_matches_its_numpy_specification():
    rng = np.random.default_rng(8)
    pts = rng.uniform(0, 1, (3000, 3)) ** 2
    q, d = rng.standard_normal((2, 3000)), rng.standard_normal((2, 3000, 3))
    fmm = LaplaceFMM(pts, pts, 5)
    fast, fast_grad = fmm.apply(q, d, gradient=True)
    fmm.p2p_reference = True
    ref, ref_grad = fmm.apply(q, d, gradient=True)
    assert np.abs(fast - ref).max() < 1e-13 * np.abs(ref).max()
    assert np.abs(fast_grad - ref_grad).max() < 1e-13 * np.abs(ref_grad).max()


@pytest.mark.parametrize("points, message", [
    (np.zeros((10, 2)), r"sources must be an array of shape \(n, 3\)"),
    (np.zeros((0, 3)), r"shape \(n, 3\) with n >= 1"),
])
def test_bad_points_are_named(points, message):
    with pytest.raises(ProblemError, match=message):
        LaplaceFMM(points, points)


def test_densities_of_the_wrong_shape_are_named():
    pts = np.random.default_rng(0).uniform(size=(50, 3))
    fmm = LaplaceFMM(pts, pts, 4, 8)
    with pytest.raises(ProblemError, match=r"charges must have the shape \(50,\) .* got \(49,\)"):
        fmm.apply(np.ones(49))
    with pytest.raises(ProblemError, match=r"dipoles must have the shape \(50, 3\) .* got \(50, 2\)"):
        fmm.apply(dipoles=np.ones((50, 2)))
    assert fmm.apply(np.ones((2, 50)))[0].shape == (2, 50) and fmm.apply(dipoles=np.ones((50, 3)))[0].shape == (50,)


def test_auto_picks_batched_gemm_on_numpy_and_standard_on_the_gpu():
    from paraflux.engine.fmm.fmm import resolve_m2l
    from paraflux.engine.variants import M2L

    assert M2L.default == "auto" and "auto" not in M2L_SCHEMES
    assert resolve_m2l("auto", on_gpu=False) == "batched-gemm" and resolve_m2l("auto", on_gpu=True) == "standard"
    assert all(resolve_m2l(s, on_gpu) == s for s in M2L_SCHEMES for on_gpu in (False, True))
    pts = np.random.default_rng(1).uniform(size=(300, 3))
    assert LaplaceFMM(pts, pts, 4, 16).m2l == "batched-gemm"
    with pytest.raises(ProblemError, match="unknown m2l scheme 'fast'; choose one of: auto, standard"):
        LaplaceFMM(pts, pts, 4, 16, "fast")


def test_fmm3d_built_from_source_meets_its_precision_and_reports_its_threads():
    """The benchmark's CPU peer (scripts/build-fmm3d.sh, through ctypes): the direct sum to its eps, at the
    thread count asked, as its own OpenMP runtime reports it."""
    from paraflux.engine.bench.fmm3d_peer import load  # noqa: PLC0415

    library = load()
    if library is None:
        pytest.skip("FMM3D not built (scripts/build-fmm3d.sh)")
    rng = np.random.default_rng(7)
    pts, q = rng.uniform(0, 1, (3000, 3)), rng.standard_normal(3000)
    ref, ref_grad = direct(pts, pts, q[None], None, True)
    for threads in sorted({1, library.max_threads()}):
        run = library.charges(pts, q, 1e-6, threads)
        assert run.threads == threads
        assert np.linalg.norm(run.potential - ref[0]) < 1e-6 * np.linalg.norm(ref[0])
        assert np.linalg.norm(run.gradient - ref_grad[0]) < 1e-6 * np.linalg.norm(ref_grad[0])


def test_every_registered_m2l_scheme_has_one_implementation():
    from paraflux.engine.fmm.m2l import SCHEMES  # noqa: PLC0415

    assert tuple(SCHEMES) == M2L_SCHEMES


def test_separation_two_translates_boxes_three_apart_and_covers_every_leaf_pair_once():
    """On a uniform 8^3 tree: M2L only between boxes at least 3 apart (875 per box at most), and the M2L
    pairs (expanded to their leaves) with the near pairs hold every (target, source) leaf pair exactly once."""
    from paraflux.engine.fmm.fmm import translations_per_box  # noqa: PLC0415

    g = (np.arange(8) + 0.5) / 8
    pts = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    tree = build_octree(pts, pts, leaf_size=2, root_pad=0.0, separation=2)
    finest = len(tree.levels) - 1
    leaf_id = np.full((8, 8, 8), -1)
    leaf_id[tuple(tree.levels[finest].coords.T)] = np.arange(tree.levels[finest].n_boxes)
    count = np.zeros((512, 512), dtype=int)
    for level, (t, s, _) in enumerate(tree.m2l):
        coords = tree.levels[level].coords
        assert (np.abs(coords[s] - coords[t]).max(axis=1) >= 3).all()
        k = 2 ** (finest - level)
        inner = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
        for a, b in zip(t, s):
            ta, sb = leaf_id[tuple((coords[a] * k + inner).T)], leaf_id[tuple((coords[b] * k + inner).T)]
            count[np.ix_(ta, sb)] += 1
    near_t, near_s = tree.near[finest]
    np.add.at(count, (near_t, near_s), 1)
    assert (count == 1).all() and translations_per_box(tree, "standard") <= 875
    assert translations_per_box(tree, "child-to-parent") <= 315 and translations_per_box(tree, "parent-to-child") <= 315


@pytest.mark.parametrize("scheme", ["standard", "batched-gemm", "child-to-parent", "parent-to-child"])
def test_separation_two_is_more_accurate_at_the_same_order(scheme):
    """Measured on 3,000 sphere points: 15x (p = 4) and 40x (p = 6) smaller errors than separation 1."""
    rng = np.random.default_rng(11)
    pts = rng.standard_normal((3000, 3))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    q, d = rng.standard_normal(3000), rng.standard_normal((3000, 3))
    ref, ref_grad = direct(pts, pts, q[None], d[None], gradient=True)
    for order in (4, 6):
        errors = []
        for separation in (1, 2):
            phi, grad = LaplaceFMM(pts, pts, order, 32, scheme, separation=separation).apply(q, d, gradient=True)
            errors.append((np.linalg.norm(phi - ref[0]) / np.linalg.norm(ref),
                           np.linalg.norm(grad - ref_grad[0]) / np.linalg.norm(ref_grad)))
        assert errors[1][0] < 0.2 * errors[0][0] and errors[1][1] < 0.2 * errors[0][1], (order, errors)


def test_the_exponential_scheme_made_for_adjacent_near_boxes_refuses_separation_two():
    pts = np.random.default_rng(0).uniform(0, 1, (50, 3))
    with pytest.raises(ProblemError, match="the exponential M2L scheme takes separation 1, not 2"):
        LaplaceFMM(pts, pts, 4, 8, "exponential", separation=2)


def test_a_bad_separation_or_a_tree_of_another_is_refused():
    pts = np.random.default_rng(0).uniform(0, 1, (50, 3))
    with pytest.raises(ProblemError, match="separation must be 1 or 2 boxes, got 3"):
        LaplaceFMM(pts, pts, 4, 8, "standard", separation=3)
    with pytest.raises(ProblemError, match="built for separation 1, the FMM asks for 2"):
        LaplaceFMM(pts, pts, 4, 8, "standard", tree=build_octree(pts, pts, 8), separation=2)


def test_m2l_tables_are_kept_on_disk_between_processes(tmp_path, monkeypatch):
    """A table built once is read back bitwise without being built again (a new process: the in-process
    cache cleared); a truncated file is built again; a folder that cannot be written only means no cache."""
    from paraflux.engine.fmm import operators
    from paraflux.engine.fmm.table_cache import cache_dir

    monkeypatch.setenv("PARAFLUX_CACHE_DIR", str(tmp_path / "cache"))
    operators.standard_m2l_table.cache_clear()
    built = operators.standard_m2l_table(5, 2)
    (path,) = cache_dir().glob("m2l-p5-s2-*.npy")
    operators.standard_m2l_table.cache_clear()
    real = operators.m2l_matrices
    monkeypatch.setattr(operators, "m2l_matrices", lambda *a: pytest.fail("built again"))
    assert np.array_equal(operators.standard_m2l_table(5, 2), built)
    path.write_bytes(path.read_bytes()[:1000])
    operators.standard_m2l_table.cache_clear()
    monkeypatch.setattr(operators, "m2l_matrices", real)
    assert np.array_equal(operators.standard_m2l_table(5, 2), built)
    assert path.stat().st_size > 1000 and not list(cache_dir().glob(".partial-*"))
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("PARAFLUX_CACHE_DIR", str(tmp_path / "file" / "cache"))
    operators.standard_m2l_table.cache_clear()
    assert np.array_equal(operators.standard_m2l_table(5, 2), built)
    operators.standard_m2l_table.cache_clear()


@pytest.mark.parametrize("separation", [1, 2])
@pytest.mark.parametrize("scheme", ["child-to-parent", "parent-to-child"])
def test_cross_level_tables_cover_every_code_a_tree_uses_and_are_kept_on_disk(scheme, separation, tmp_path,
                                                                               monkeypatch):
    """A uniform tree deep enough uses every code of cross_m2l_codes (80 with separation 1, 640 with 2); the
    table of all of them is built once and read back from the disk cache in a new process."""
    from paraflux.engine.fmm import m2l, operators

    monkeypatch.setenv("PARAFLUX_CACHE_DIR", str(tmp_path))
    pts = np.random.default_rng(0).random((8_000, 3))
    tree = build_octree(pts, pts, 2, separation=separation)
    used = np.unique(np.concatenate([operators.cross_level_split(tree, lv, t, s, scheme)[0][4]
                                     for lv, t, s, _ in m2l._level_pairs(tree)]))
    assert np.array_equal(used, operators.cross_m2l_codes(separation))
    assert len(used) == {1: 80, 2: 640}[separation]
    operators.cross_m2l_tables.cache_clear()
    built = operators.cross_m2l_tables(3, scheme, separation)
    operators.cross_m2l_tables.cache_clear()
    monkeypatch.setattr(operators, "m2l_matrices", lambda *a: pytest.fail("built again"))
    assert np.array_equal(operators.cross_m2l_tables(3, scheme, separation), built)
    operators.cross_m2l_tables.cache_clear()


@pytest.mark.parametrize("separation", [1, 2])
def test_the_array_split_of_child_pairs_matches_the_compiled_loop(separation, monkeypatch):
    """The split the GPU tree runs (array operations, here on NumPy, in small chunks) against the Numba loop
    of the host tree: the same pairs in the same order, every level."""
    from paraflux.engine.fmm import tree as tree_mod  # noqa: PLC0415

    rng = np.random.default_rng(separation)
    pts = np.concatenate([rng.uniform(0, 1, (3000, 3)), rng.normal(0.3, 0.02, (1000, 3))])
    tree = build_octree(pts, pts, 16, separation=separation)
    monkeypatch.setattr(tree_mod, "CHUNK_PAIRS", 7)
    checked = 0
    for lv, below in zip(tree.levels, tree.levels[1:]):
        split = np.flatnonzero(~lv.leaf)
        a, c = np.meshgrid(split, split, indexing="ij")
        a, c = a.ravel()[:5000], c.ravel()[:5000]
        compiled = tree_mod._children_pairs(lv.children[a], lv.children[c], below.coords, separation)
        arrays = tree_mod._children_pairs_arrays(lv.children[a], lv.children[c], below.coords, separation)
        for x, y in zip(compiled, arrays):
            assert np.array_equal(x, y)
        checked += len(compiled[0]) + len(compiled[3])
    assert checked > 10_000


def test_segment_ids_repeat_each_index_by_its_count():
    from paraflux.engine.fmm.plan import segment_ids  # noqa: PLC0415

    counts = np.array([2, 0, 3, 0, 0, 1])
    assert np.array_equal(segment_ids(counts), np.repeat(np.arange(6), counts))
    assert len(segment_ids(np.zeros(0, dtype=np.int64))) == 0


@pytest.mark.parametrize("separation", [1, 2])
@pytest.mark.parametrize("eps", [1e-3, 1e-6])
def test_the_order_for_a_precision_reaches_it_with_either_separation(separation, eps):
    """order_for_precision(eps, separation) meets eps (potential and gradient, relative L2 against the direct
    sum) on uniform points, where the gradient's error is the largest."""
    from paraflux.engine.fmm.fmm import order_for_precision  # noqa: PLC0415

    rng = np.random.default_rng(8)
    pts, q = rng.uniform(0, 1, (20000, 3)), rng.standard_normal(20000)
    check = rng.choice(20000, 400, replace=False)
    ref, ref_grad = direct(pts, pts[check], q[None], None, gradient=True)
    p = order_for_precision(eps, separation)
    phi, grad = LaplaceFMM(pts, pts, p, 32, "standard", separation=separation).apply(q, gradient=True)
    errors = (np.linalg.norm(phi[check] - ref[0]) / np.linalg.norm(ref[0]),
              np.linalg.norm(grad[check] - ref_grad[0]) / np.linalg.norm(ref_grad[0]))
    assert max(errors) < eps, (p, errors)


@pytest.mark.parametrize("separation", [1, 2])
def test_tiles_of_the_gpu_list_kernel_hold_every_pair_once_and_sum_as_the_lists(separation):
    """by_tile's grouping of real interaction lists (every level, same-octant tiles): every pair in exactly one segment,
    one table per segment, no slot twice in a segment, and its sums (host.tiles_reference, the kernel's NumPy
    twin) equal to the per-target Numba loop's."""
    from paraflux.engine.fmm.host import tiles_reference  # noqa: PLC0415
    from paraflux.engine.fmm.m2l import all_level_pairs  # noqa: PLC0415
    from paraflux.engine.fmm.plan import TILE_SLOTS, by_target, by_tile  # noqa: PLC0415
    from paraflux.engine.fmm.standard_m2l import m2l_lists_numba  # noqa: PLC0415

    rng = np.random.default_rng(separation)
    pts = np.concatenate([rng.uniform(0, 1, (3000, 3)), rng.normal(0.3, 0.02, (1000, 3))])
    plan = LaplaceFMM(pts, pts, 4, 16, "standard", separation=separation).plan
    tgt, src, off, key = all_level_pairs(plan)
    arrays = by_tile(tgt, src, off, key)
    tile_target, tile_segments, segment_table, segment_pairs, pair_slot, pair_source = arrays
    rows = []
    for tile in range(len(tile_segments) - 1):
        for seg in range(tile_segments[tile], tile_segments[tile + 1]):
            slots = pair_slot[segment_pairs[seg]:segment_pairs[seg + 1]]
            assert len(np.unique(slots)) == len(slots)
            rows += [(tile_target[tile * TILE_SLOTS + k], s, segment_table[seg])
                     for k, s in zip(slots, pair_source[segment_pairs[seg]:segment_pairs[seg + 1]])]
    assert sorted(rows) == sorted(zip(tgt, src, off))
    n, width = int(plan.box_offset[-1]), 12
    table, source = rng.standard_normal((off.max() + 1, width, width)), rng.standard_normal((n, 3, width))
    tiled, listed = np.zeros_like(source), np.zeros_like(source)
    tiles_reference(source, tiled, arrays, table)
    m2l_lists_numba(source, listed, *by_target(tgt, src, off), table)
    assert np.allclose(tiled, listed, rtol=1e-13, atol=1e-12)


def test_the_gpu_families_planned_for_all_levels_at_once_give_each_levels_m2m_and_l2l():
    """DevicePasses.families plans every level's M2M and L2L in one by_tile call each (levels as groups) and
    slices them per level; run by the kernel's NumPy twin, each level's slice gives the host's M2M and L2L."""
    from paraflux.engine.fmm.device import DevicePasses  # noqa: PLC0415
    from paraflux.engine.fmm.host import tiles_reference  # noqa: PLC0415

    rng = np.random.default_rng(4)
    pts = np.concatenate([rng.uniform(0, 1, (3000, 3)), rng.normal(0.3, 0.02, (1000, 3))])
    plan = LaplaceFMM(pts, pts, 4, 16, "standard").plan
    families = DevicePasses(np).families(plan)
    assert len(families) == len(plan.tree.levels) and families[0] == ()
    n, width = int(plan.box_offset[-1]), plan.m2m.shape[1]
    for level in range(1, len(plan.tree.levels)):
        for which, table, host_pass in ((0, plan.m2m, plan.passes.m2m), (1, plan.l2l, plan.passes.l2l)):
            work = families[level][which]
            assert np.all(work.tile_target[::64] >= 0)
            source = rng.standard_normal((n, 2, width))
            expected, tiled = source.copy(), source.copy()
            host_pass(plan, level, expected)
            tiles_reference(tiled, tiled, (work.tile_target, work.tile_segments, work.segment_table,
                                           work.segment_pairs, work.pair_slot, work.pair_source), table)
            assert np.allclose(tiled, expected, rtol=1e-13, atol=1e-12), (level, which)


def test_fp32_tables_change_the_result_by_about_their_rounding_and_every_table_scheme_reads_them():
    """The same-level M2L table in FP32 (expansions and sums in FP64): the result moves by 1e-9 .. 1e-6
    relative (the tables' rounding, far below the 1e-5 they are meant for), standard and batched-gemm read the
    same FP32 table (equal to 1e-12), and the exponential scheme, which has no such table, refuses it."""
    rng = np.random.default_rng(11)
    pts, q = rng.uniform(0, 1, (6000, 3)), rng.standard_normal(6000)
    exact, _ = LaplaceFMM(pts, pts, 6, 32, "standard", separation=2).apply(q)
    single, _ = LaplaceFMM(pts, pts, 6, 32, "standard", separation=2, fp32_tables=True).apply(q)
    moved = np.linalg.norm(single - exact) / np.linalg.norm(exact)
    assert 1e-9 < moved < 1e-6, moved
    batched, _ = LaplaceFMM(pts, pts, 6, 32, "batched-gemm", separation=2, fp32_tables=True).apply(q)
    assert np.abs(batched - single).max() < 1e-12 * np.abs(single).max()
    with pytest.raises(ProblemError, match="FP32 tables"):
        LaplaceFMM(pts, pts, 6, 32, "exponential", fp32_tables=True)


def test_keops_brute_force_peer_gives_the_direct_sum_or_says_why_it_did_not_run(monkeypatch):
    """KeOps's reduction (the bench's second GPU brute-force peer) equals operators.direct, run here on KeOps's
    CPU backend where pykeops is installed (the `peers` extra); a KeOps that cannot run is recorded with its
    reason, not a time."""
    from paraflux.engine.bench import keops_peer  # noqa: PLC0415

    rng = np.random.default_rng(13)
    pts, q = rng.uniform(0, 1, (1500, 3)), rng.standard_normal(1500)
    sample = np.arange(0, 1500, 7)
    ref, ref_grad = (a[0] for a in direct(pts, pts[sample], q[None], None, gradient=True))

    def broken(*args, **kwargs):
        raise RuntimeError("[KeOps] nvrtc | not found\nmore")

    monkeypatch.setattr(keops_peer, "direct", broken)
    assert keops_peer.timed(pts, q, sample, ref, ref_grad) == {"available": False,
                                                                 "reason": "RuntimeError: [KeOps] nvrtc / not found"}
    monkeypatch.undo()
    pytest.importorskip("pykeops")
    run = keops_peer.direct(pts, q, backend="CPU")
    assert np.abs(run.potential[sample] - ref).max() < 1e-12 * np.abs(ref).max()
    assert np.abs(run.gradient[sample] - ref_grad).max() < 1e-12 * np.abs(ref_grad).max()
    assert run.device.startswith("CPU (KeOps ")


def test_the_default_leaf_size_is_the_backends():
    from paraflux.engine.fmm.fmm import LEAF_SIZE_HOST  # noqa: PLC0415

    pts = np.random.default_rng(14).uniform(0, 1, (500, 3))
    assert LaplaceFMM(pts, pts, 4).tree.leaf_size == LEAF_SIZE_HOST == 32
    assert LaplaceFMM(pts, pts, 4, leaf_size=8).tree.leaf_size == 8


def test_tiles_refuse_two_targets_under_one_key():
    from paraflux.engine.fmm.plan import by_tile  # noqa: PLC0415

    tgt, src, off = np.array([3, 4]), np.array([0, 1]), np.array([0, 1])
    with pytest.raises(ValueError, match="share a key"):
        by_tile(tgt, src, off, key=np.array([7, 7]))
    assert len(by_tile(tgt, src, off, key=np.array([7, 8]))[0]) == 64


def test_densities_given_in_the_tree_s_order_give_the_same_fields_without_a_copy():
    rng = np.random.default_rng(3)
    src, tgt = rng.random((600, 3)), rng.random((200, 3))
    q, d = rng.standard_normal((2, 600)), rng.standard_normal((2, 600, 3))
    fmm = LaplaceFMM(src, tgt, order=6)
    order = fmm.source_order
    assert np.array_equal(fmm.sorted_sources(), src[order])
    phi, grad = fmm.apply(q, d, gradient=True)
    phi_t, grad_t = fmm.apply(q[:, order], d[:, order], gradient=True, in_tree_order=True)
    assert np.array_equal(phi, phi_t) and np.array_equal(grad, grad_t)
    assert not np.array_equal(order, np.arange(600))  # the orders differ: the test compares something
