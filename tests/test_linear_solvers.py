"""The scattering study's sparse direct solvers (variants.LINEAR_SOLVER, each choice that can run here):
a singular matrix is the one SolverError sentence, a block of right-hand sides solves as its columns do."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from paraflux.engine.backend import gpu_unavailable_reason
from paraflux.engine.errors import SolverError
from paraflux.engine.scattering.linear import factorise, upper_triangle
from paraflux.engine.variants import LINEAR_SOLVER

SENTENCE = (r"^the FEM system is singular \(.+\); the frequency may be a resonance of the cavity between the "
            r"scatterer and S, or the mesh is broken$")


def installed(name: str) -> str:
    """The solver's name, or a skip saying why it cannot run here."""
    why = LINEAR_SOLVER.choice(name).unavailable(gpu_unavailable_reason())
    if why:
        pytest.skip(why)
    return name


def complex_symmetric(n: int, seed: int = 0) -> sp.csr_matrix:
    """A sparse complex symmetric (not Hermitian) indefinite matrix (n, n), diagonally dominant."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=4.0 / n, random_state=rng) * (1 + 0.5j)
    a = a + a.T
    signs = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    return (a + sp.diags(signs * (abs(a).sum(axis=1).A1 + 1.0) * (1 - 0.2j))).tocsr()


def singular_matrices() -> dict[str, sp.csr_matrix]:
    """A zero row and column; two equal rows (rank one short, every diagonal entry nonzero)."""
    a = complex_symmetric(40).tolil()
    a[7, :] = 0.0
    a[:, 7] = 0.0
    b = complex_symmetric(40, seed=1).tolil()
    b[:2, :] = 0.0
    b[:, :2] = 0.0
    b[:2, :2] = np.array([[1.0 + 1j, 1.0 + 1j], [1.0 + 1j, 1.0 + 1j]])
    return {"zero row": a.tocsr(), "rank deficient": b.tocsr()}


@pytest.mark.parametrize("solver", LINEAR_SOLVER.concrete)
@pytest.mark.parametrize("case", ["zero row", "rank deficient"])
def test_a_singular_matrix_is_the_one_solver_error_sentence(solver, case):
    with pytest.raises(SolverError, match=SENTENCE):
        factorise(singular_matrices()[case], installed(solver), "the FEM system")


@pytest.mark.parametrize("solver", LINEAR_SOLVER.concrete)
def test_a_block_of_right_hand_sides_solves_as_its_columns(solver):
    a = complex_symmetric(300)
    rng = np.random.default_rng(3)
    b = rng.standard_normal((300, 6)) + 1j * rng.standard_normal((300, 6))
    factor = factorise(a, installed(solver), "the FEM system")
    block = factor.solve(b)
    columns = np.hstack([factor.solve(b[:, [j]]) for j in range(6)])
    assert block.shape == b.shape and np.abs(block - columns).max() <= 1e-12 * np.abs(columns).max()
    assert np.linalg.norm(a @ block - b) <= 1e-12 * np.linalg.norm(b)


def test_pardiso_reads_the_upper_triangle_with_every_diagonal_entry_stored():
    a = complex_symmetric(30).tolil()
    a[4, 4] = 0.0
    upper = upper_triangle(a.tocsr())
    assert sp.tril(upper, k=-1).nnz == 0 and upper.has_sorted_indices
    assert np.all(np.diff(upper.indptr) > 0) and 4 in upper.indices[upper.indptr[4]:upper.indptr[5]]
    np.testing.assert_array_equal((upper + sp.triu(upper, k=1).T).toarray(), a.toarray())


def test_the_upper_triangle_of_a_matrix_with_its_diagonal_is_picked_in_place_and_sorted():
    a = complex_symmetric(40)
    unsorted = sp.csr_matrix((a.data[::-1].copy(), a.indices[::-1].copy(), a.indptr[-1] - a.indptr[::-1]), shape=a.shape)
    for matrix in (a, sp.csr_matrix(a[::-1][:, ::-1]), unsorted):
        upper = upper_triangle(matrix)
        assert upper.has_sorted_indices and np.all(np.diff(upper.indptr) > 0)
        np.testing.assert_array_equal(upper.toarray(), np.triu(matrix.toarray()))
