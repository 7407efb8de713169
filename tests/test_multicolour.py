"""Multicolour ordering of block rows (engine/bem/multicolour.py), the GPU block ILU(0)'s order."""

import numpy as np
import scipy.sparse as sp

from paraflux.engine.bem.multicolour import colour_order, greedy_colours


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


def test_colour_order_lists_uncoupled_rows_together_and_shortens_the_triangular_chain():
    a = grid_blocks(30, 1)
    order, starts = colour_order(a.indptr, a.indices)
    assert np.array_equal(np.sort(order), np.arange(a.shape[0])) and starts[0] == 0 and starts[-1] == a.shape[0]
    coloured = a[order][:, order].tocsr()
    for lo, hi in zip(starts[:-1], starts[1:]):  # no entry couples two rows of one colour
        inside = coloured[lo:hi, lo:hi].tocoo()
        assert (inside.row == inside.col).all()
    assert chain_length(a) == 2 * 30 - 1  # the mesh order: a wavefront across the grid
    assert chain_length(coloured) == 2 == len(starts) - 1  # two colours
