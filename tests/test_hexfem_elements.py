"""Hierarchical hexahedra: basis sizes, element matrices of every CPU variant, scikit-fem at p = 1."""

import meshio
import numpy as np
import pytest

from paraflux.engine.errors import ProblemError
from paraflux.engine.hexfem.basis import (HEX_VERTICES, check_order, evaluate, hex_basis, lobatto_1d,
                                          quadrature_points_1d, reference_tables, slides_points_1d)
from paraflux.engine.hexfem.element_matrices import (INTEGRATIONS, element_matrices, lame, stiffness_gemm,
                                                     stiffness_numpy, textbook_flops)
from paraflux.engine.variants import INTEGRATION

CPU_VARIANTS = [name for name, (_, where) in INTEGRATIONS.items() if where != "gpu"]
TABLE_1 = [24, 60, 96, 150, 222, 315, 432, 576, 750, 957]


def distorted_hex(seed: int = 0, n: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return HEX_VERTICES * 0.5 + 0.08 * rng.standard_normal((n, 8, 3)) + np.array([1.0, 2.0, 0.5])


def steel(n: int):
    return lame(np.full(n, 210e9), np.full(n, 0.3))


def test_registry_lists_every_implemented_variant():
    assert set(INTEGRATION.names) == set(INTEGRATIONS)


def test_dofs_per_element_match_table_1():
    assert [hex_basis(p).n_dofs for p in range(1, 11)] == TABLE_1


def test_quadrature_counts_follow_the_slides_except_where_rank_deficient():
    assert [slides_points_1d(p) ** 3 for p in range(1, 6)] == [8, 8, 64, 125, 343]  # Table 3's n_G
    assert [quadrature_points_1d(p) for p in range(1, 11)] == [2, 3, 4, 5, 7, 8, 10, 11, 13, 14]


def test_orders_outside_1_to_10_are_refused():
    for bad in (0, 11, 2.5, True):
        with pytest.raises(ProblemError, match="order"):
            check_order(bad)


def test_integrated_legendre_functions_vanish_at_the_ends_and_have_legendre_derivatives():
    x = np.linspace(-1, 1, 7)
    values, derivs = lobatto_1d(10, x)
    assert np.abs(values[2:, [0, -1]]).max() < 1e-14
    h = 1e-6
    vp, _ = lobatto_1d(10, x + h)
    vm, _ = lobatto_1d(10, x - h)
    assert np.allclose((vp - vm) / (2 * h), derivs, atol=1e-7)


def test_vertex_functions_are_a_partition_of_unity_and_gradients_match_differences():
    basis = hex_basis(5)
    rst = np.random.default_rng(1).uniform(-1, 1, (20, 3))
    values, grads = evaluate(basis, rst)
    assert np.allclose(values[:, :8].sum(axis=1), 1.0)
    h = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = h
        fd = (evaluate(basis, rst + step)[0] - evaluate(basis, rst - step)[0]) / (2 * h)
        assert np.allclose(fd, grads[:, :, k], atol=1e-6)


@pytest.mark.parametrize("p", range(1, 7))
def test_element_matrix_symmetric_with_six_rigid_modes_and_variants_agree(p):
    coords = distorted_hex(p, 2)
    lam, mu = steel(2)
    reference = stiffness_numpy(coords, lam, mu, p)
    scale = np.abs(reference).max()
    assert np.abs(reference - reference.transpose(0, 2, 1)).max() < 1e-13 * scale
    eig = np.linalg.eigvalsh(reference[0])
    assert (np.abs(eig) < 1e-10 * eig.max()).sum() == 6 and eig.min() > -1e-10 * eig.max()
    for name in CPU_VARIANTS:
        assert np.abs(element_matrices(coords, lam, mu, p, name) - reference).max() < 1e-12 * scale, name


@pytest.mark.parametrize("p", range(7, 11))
def test_high_orders_symmetric_with_six_rigid_modes_and_variants_agree(p):
    coords = distorted_hex(p)
    lam, mu = steel(1)
    reference = stiffness_gemm(coords, lam, mu, p)  # the textbook variant agrees at p <= 6 (above)
    scale = np.abs(reference).max()
    eig = np.linalg.eigvalsh(reference[0])
    assert (np.abs(eig) < 1e-10 * eig.max()).sum() == 6
    for name in ("serial", "sumfact", "gemm"):
        k = element_matrices(coords, lam, mu, p, name)
        assert np.abs(k - k.transpose(0, 2, 1)).max() < 1e-13 * scale, name
        assert np.abs(k - reference).max() < 1e-12 * scale, name


def test_rigid_body_motions_have_zero_energy():
    coords = distorted_hex(7)
    lam, mu = steel(1)
    k = stiffness_numpy(coords, lam, mu, 4)[0]
    x = coords[0]
    n_s = hex_basis(4).n_functions
    for omega in np.eye(3):
        u = np.zeros((n_s, 3))
        u[:8] = np.cross(omega, x)  # vertex functions interpolate; higher coefficients vanish
        assert np.abs(k @ u.reshape(-1)).max() < 1e-12 * np.abs(k).max()


def test_slides_quadrature_at_p2_leaves_spurious_zero_energy_modes():
    """Why p = 2 uses 3^3 points: with the slides' 2^3 the element matrix has 12 zero eigenvalues."""
    from paraflux.engine.hexfem.element_matrices import physical_gradients  # noqa: PLC0415

    coords = distorted_hex(2)
    lam, mu = steel(1)
    grads, wdet = physical_gradients(coords, reference_tables(2, slides_points_1d(2)))
    gram = np.einsum("eqai,eq,eqbj->eaibj", grads, wdet, grads)[0]
    k = lam[0] * gram + mu[0] * gram.transpose(0, 3, 2, 1) + mu[0] * np.einsum(
        "akbk,ij->aibj", gram, np.eye(3))
    eig = np.linalg.eigvalsh(k.reshape(60, 60))
    assert (np.abs(eig) < 1e-10 * eig.max()).sum() == 12


def test_p1_matches_scikit_fem_trilinear_hexahedron():
    skfem = pytest.importorskip("skfem")
    from skfem.io.meshio import from_meshio  # noqa: PLC0415
    from skfem.models.elasticity import linear_elasticity  # noqa: PLC0415

    coords = distorted_hex(3)
    mesh = from_meshio(meshio.Mesh(coords[0], [("hexahedron", np.arange(8)[None])]))
    assert np.array_equal(mesh.p.T, coords[0])
    lam, mu = steel(1)
    basis = skfem.Basis(mesh, skfem.ElementVector(skfem.ElementHex1()), intorder=3)  # 2 x 2 x 2 Gauss
    theirs = linear_elasticity(lam[0], mu[0]).assemble(basis).toarray()
    perm = np.array([basis.nodal_dofs[i, v] for v in range(8) for i in range(3)])
    ours = element_matrices(coords, lam, mu, 1)[0]
    assert np.abs(theirs[np.ix_(perm, perm)] - ours).max() < 1e-12 * np.abs(ours).max()


def test_textbook_flop_count():
    # n_G (12 N_e^2 + 72 N_e) at p = 5: 343 points, N_e = 222
    assert textbook_flops(5) == 343 * (12 * 222 ** 2 + 72 * 222)


@pytest.mark.parametrize("p", range(1, 11))
def test_mma_tiles_cover_every_block_of_k_once_and_count_only_real_entries(p):
    from paraflux.engine.hexfem.gpu_element_matrices import mma_flops, mma_tile, mma_tile_pairs  # noqa: PLC0415

    t = reference_tables(p)
    ns, n_g = t.basis.n_functions, len(t.weights)
    tile = mma_tile(ns)
    assert tile <= 32 and -(-ns // tile) == -(-ns // 32)  # as few tiles as at most 32 functions allow
    covered = np.zeros((ns, ns), dtype=int)
    for a, b in mma_tile_pairs(ns):
        assert a <= b
        covered[a * tile:(a + 1) * tile, b * tile:(b + 1) * tile] += 1
        if a != b:  # written mirrored
            covered[b * tile:(b + 1) * tile, a * tile:(a + 1) * tile] += 1
    assert (covered == 1).all()
    upper = sum(min(tile, ns - a * tile) * min(tile, ns - b * tile) for a, b in mma_tile_pairs(ns).tolist())
    assert mma_flops(ns, n_g) == 2 * n_g * 9 * upper
    whole = 2 * n_g * (3 * ns) ** 2  # the whole Gram matrix: one tile computes it, several skip ta > tb
    assert mma_flops(ns, n_g) == whole if len(mma_tile_pairs(ns)) == 1 else mma_flops(ns, n_g) <= 0.75 * whole
