"""The FEM system's blocks that the solve uses, assembled on the GPU: the element matrices by
fem.element_matrices (backend-neutral) over CuPy arrays, each entry renumbered and filtered on the device,
summed into CSR by cupyx and copied to the host as SciPy matrices; the whole matrix is never formed, added
to or sliced on the host (system.fem_matrix, which does, is the reference)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .fem import Discretisation, element_matrices
from .nedelec import FUNCTIONS

CHUNK_ENTRIES = 1 << 25  # element matrix entries per block on the device (32M: 256 MiB per matrix)


def fem_blocks_on_device(d: Discretisation, k: float, boundary: sp.spmatrix, free: np.ndarray,
                         on_gamma: np.ndarray, xp=None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(A[free][:, free], A[free][:, on_gamma]) of A = K - k^2 M + boundary (n_dofs, n_dofs) at wavenumber k
    (1/m), complex CSR on the host: each element entry's row and column mapped to its place among the free
    and Gamma unknowns on the GPU (xp = CuPy, the default; NumPy runs the same steps on the host, the tests'
    twin), the rows on Gamma dropped, one COO-to-CSR sum per block."""
    xp = xp or _cupy()
    n, nf = d.dofs.n_dofs, len(free)
    row_of, col_of = _places(n, free, xp), _places(n, np.concatenate([free, on_gamma]), xp)
    b = boundary.tocoo()
    rows, cols, values = (xp.concatenate(p) for p in zip(
        *_element_entries(d, np.arange(len(d.mesh.tets)), 1.0, -k * k, row_of, col_of, xp),
        _kept(row_of[xp.asarray(b.row)], col_of[xp.asarray(b.col)], xp.asarray(b.data, dtype=complex))))
    return (_csr(rows, cols, values, cols < nf, (nf, nf), 0, xp),
            _csr(rows, cols, values, cols >= nf, (nf, len(on_gamma)), nf, xp))


def rows_on_device(d: Discretisation, cells: np.ndarray, stiffness: float, mass: float,
                   rows: np.ndarray, xp=None) -> sp.csr_matrix:
    """(stiffness K + mass M)[rows] over the tetrahedra cells, (len(rows), n_dofs) complex CSR on the host,
    assembled on the GPU (xp as for fem_blocks_on_device) from the element entries of those rows alone."""
    xp = xp or _cupy()
    n = d.dofs.n_dofs
    row_of, col_of = _places(n, rows, xp), xp.arange(n, dtype=xp.int32)
    r, c, v = (xp.concatenate(p) for p in zip(*_element_entries(d, cells, stiffness, mass, row_of, col_of, xp)))
    return _csr(r, c, v, slice(None), (len(rows), n), 0, xp)


def _cupy():
    import cupy  # noqa: PLC0415

    return cupy


def _places(n: int, dofs: np.ndarray, xp):
    """(n,) int32 on xp's device: each unknown's index in dofs, -1 for the others."""
    place = np.full(n, -1, dtype=np.int32)
    place[dofs] = np.arange(len(dofs), dtype=np.int32)
    return xp.asarray(place)


def _element_entries(d: Discretisation, cells: np.ndarray, stiffness: float, mass: float, row_of, col_of,
                     xp) -> list:
    """Per block of cells, the (rows, cols, values) triplets (xp arrays) of stiffness K_e + mass M_e whose row
    and column map (row_of, col_of) to a place >= 0, at their places."""
    f = FUNCTIONS[d.order]
    chunk = max(1, CHUNK_ENTRIES // (f * f))
    parts = []
    for lo in range(0, len(cells), chunk):
        sl = cells[lo:lo + chunk]
        k_e, m_e = element_matrices(d.order, xp.asarray(d.geom.grads[sl]), xp.asarray(d.geom.volumes[sl]))
        dofs = xp.asarray(d.dofs.cell_dofs[sl], dtype=xp.int32)
        parts.append(_kept(row_of[xp.repeat(dofs, f, axis=1).ravel()], col_of[xp.tile(dofs, (1, f)).ravel()],
                           (stiffness * k_e + mass * m_e).ravel().astype(complex)))
    return parts


def _kept(rows, cols, values) -> tuple:
    """The entries whose row and column map to a place (>= 0)."""
    keep = (rows >= 0) & (cols >= 0)
    return rows[keep], cols[keep], values[keep]


def _csr(rows, cols, values, pick, shape: tuple[int, int], first_col: int, xp) -> sp.csr_matrix:
    """The picked entries (pick a mask or a slice) as a SciPy CSR matrix of shape, their columns shifted by
    -first_col, duplicates summed on xp's device (cupyx there)."""
    if xp is np:
        return sp.coo_matrix((values[pick], (rows[pick], cols[pick] - first_col)), shape=shape).tocsr()
    import cupyx.scipy.sparse as csp  # noqa: PLC0415

    return csp.coo_matrix((values[pick], (rows[pick], cols[pick] - first_col)), shape=shape).tocsr().get()
