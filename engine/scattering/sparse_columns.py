"""A sparse matrix times many columns on every host thread. SciPy's CSR product runs on one thread, and the
scattering study's iteration applies its trace, flux and load matrices to every iterated column at each step
(a 360-incidence sweep: 37 columns); a Numba kernel parallel over the rows does the same sums. SciPy's
product is the reference (tests/test_scattering_block.py) and serves a single column. Columns on a GPU
(CuPy, where cuDSS leaves them) are multiplied there, by the matrix's copy on the device."""

from __future__ import annotations

import numba
import numpy as np

from ..backend import on_device

PARALLEL_FROM_COLUMNS = 2  # a single column: SciPy's product, as fast on one thread


@numba.njit(parallel=True, cache=True)
def _csr_times_columns(indptr, indices, data, x, out):  # pragma: no cover (compiled)
    for i in numba.prange(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            row = x[indices[k]]
            for c in range(x.shape[1]):
                out[i, c] += v * row[c]


def times_columns(a, x: np.ndarray) -> np.ndarray:
    """a @ x for a SciPy CSR matrix a (n, m) and dense columns x (m, r): for CuPy columns by a's copy on their
    GPU (backend.on_device), else on every host thread (Numba) from PARALLEL_FROM_COLUMNS columns, else
    SciPy's product; complex wherever either is."""
    if not isinstance(x, np.ndarray):
        return on_device(a) @ x.astype(np.complex128, copy=False)
    if x.ndim != 2 or x.shape[1] < PARALLEL_FROM_COLUMNS or a.format != "csr":
        return a @ x
    dtype = np.result_type(a.dtype, x.dtype, np.float64)
    out = np.zeros((a.shape[0], x.shape[1]), dtype=dtype)
    _csr_times_columns(a.indptr, a.indices, a.data.astype(dtype, copy=False), np.ascontiguousarray(x, dtype=dtype),
                       out)
    return out
