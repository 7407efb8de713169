"""Multicolour ordering of block rows (engine/bem/multicolour.py), the GPU ILU(0)'s order."""

import numpy as np
import pytest
import scipy.sparse as sp

from paraflux.engine.bem.multicolour import greedy_colours, multicolour_order


def grid_blocks(m: int, block: int = 3) -> sp.csr_matrix:
    """A 5-point stencil on an m x m grid, each entry a dense block x block block: a mesh-like pattern."""
    line = sp.diags([1.0, 4.0, 1.0], [-1, 0, 1], shape=(m, m))
    stencil = sp.kron(sp.identity(m), line) + sp.kron(sp.diags([1.0, 1.0], [-1, 1], shape=(m, m)), sp.identity(m))
    return sp.kron(stencil, np.ones((block, block))).tocsr()


def chain_length(a: sp.csr_matrix) -> int:
    """Longest chain of dependent rows in the lower triangular solve of a's pattern."""
    level = np.zeros(a.shape[0], dtype=int)
    for i in range(a.shape[0]):
        earlier = a.indices[a.indptr[i]:a.indptr[i + 1]]
        earlier = earlier[earlier < i]
        level[i] = 1 + (level[earlier].max() if len(earlier) else 0)
    return int(level.max())


def test_greedy_colours_give_neighbours_different_colours():
    g = grid_blocks(20, 1)
    colours = greedy_colours(g.indptr.astype(np.int64), g.indices.astype(np.int64))
    coo = g.tocoo()
    off = coo.row != coo.col
    assert (colours[coo.row[off]] != colours[coo.col[off]]).all()
    assert colours.max() + 1 == 2  # the 5-point grid is bipartite, and row order finds it


def test_multicolour_order_keeps_blocks_and_shortens_the_triangular_chain():
    a = grid_blocks(30)
    perm = multicolour_order(a.indptr, a.indices, 3)
    assert np.array_equal(np.sort(perm), np.arange(a.shape[0]))
    assert np.array_equal(perm.reshape(-1, 3), perm.reshape(-1, 3)[:, :1] + np.arange(3))  # blocks whole, in order
    coloured = a[perm][:, perm].tocsr()
    assert chain_length(a) == 3 * (2 * 30 - 1)  # the mesh order: a wavefront across the grid
    assert chain_length(coloured) == 3 * 2  # two colours of three rows each


def test_multicolour_order_refuses_partial_blocks():
    a = grid_blocks(4, 1)
    with pytest.raises(ValueError, match="whole blocks of 3"):
        multicolour_order(a.indptr, a.indices, 3)


def test_block_pairs_taken_piece_by_piece_are_the_pattern_s_block_pairs():
    from paraflux.engine.bem.multicolour import _block_pairs  # noqa: PLC0415

    a = sp.random(30, 30, density=0.2, format="csr", random_state=1)  # blocks partly filled
    coo = a.tocoo()
    expected = np.unique((coo.row // 3) * 10 + coo.col // 3)
    for piece in (1, 7, 10_000):
        assert np.array_equal(_block_pairs(a.indptr, a.indices, 3, piece), expected)
