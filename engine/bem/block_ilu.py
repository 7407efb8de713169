"""ILU(0) of the FMBEM's near system as 3x3 blocks on the GPU: the blocks listed in a multicolour order
(multicolour.colour_order), factored colour by colour and solved by sync-free triangular solves
(kernels/block_ilu.cu), 4.4 bytes an entry in FP32 and 8.4 in FP64 where CSR took 8 and 12. Block ILU(0)
with the diagonal blocks factored whole is scalar ILU(0) on the same pattern of full blocks: L U equals the
matrix on its pattern. The reference is block_ilu0_reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backend import kernel_module
from ..errors import SolverError
from .block_sparse import DeviceBsr
from .multicolour import colour_order

WARPS = 4  # block rows (a warp each) per CUDA block of the factorisation and the solves, as in block_ilu.cu


def _module(dtype) -> object:
    options = ("-DLU_T=float",) if np.dtype(dtype) == np.float32 else ()
    return kernel_module(Path(__file__).with_name("kernels") / "block_ilu.cu", options)


def permuted_bsr(a: DeviceBsr, order, dtype) -> DeviceBsr:
    """P a P^T of a square DeviceBsr as one of dtype: block row i is a's block row order[i], block columns
    relabelled alike and sorted."""
    import cupy as cp  # noqa: PLC0415

    n = len(a.indptr) - 1
    inverse = cp.empty(n, dtype=cp.int32)
    inverse[order] = cp.arange(n, dtype=cp.int32)
    rows = inverse[_block_rows(a)]
    cols = inverse[a.indices]
    by = cp.argsort(rows.astype(cp.int64) * n + cols)
    del inverse
    indptr = cp.zeros(n + 1, dtype=cp.int32)
    cp.cumsum(cp.bincount(rows, minlength=n), out=indptr[1:])
    return DeviceBsr(a.data[by].astype(dtype, copy=False), cols[by], indptr, a.shape)


class DeviceBlockIlu0:
    """The ILU(0) factors of a square DeviceBsr a (or a function handing it over, so that it goes once
    permuted) in its own pattern, its block rows in a multicolour order (factor block row i is a's block row
    order[i]); solve(r) applies a's ILU(0) inverse to a CuPy vector (3n,). dtype: the factors' (float64, or
    float32 for about half their memory; the solves sum in float64). A singular diagonal block is a
    SolverError."""

    def __init__(self, a, dtype=np.float64):
        import cupy as cp  # noqa: PLC0415

        a = a() if callable(a) else a
        self.order, starts = colour_order(a.indptr, a.indices)
        self.order = self.order.astype(cp.int32)
        self.lu = permuted_bsr(a, self.order, dtype)
        del a  # a handed-over matrix goes here, before the factors are worked on
        self.n, self.dtype = len(self.lu.indptr) - 1, self.lu.data.dtype
        self.diag = _diagonal_positions(self.lu)
        bad = cp.zeros(1, dtype=cp.int32)
        factor = _module(self.dtype).get_function("block_ilu0_colour")
        for lo, hi in zip(starts[:-1], starts[1:]):
            factor((-(-int(hi - lo) // WARPS),), (32 * WARPS,), (self.lu.indptr, self.lu.indices, self.lu.data,
                                                                  self.diag, np.int32(lo), np.int32(hi - lo), bad))
        if int(bad[0]) or not bool(cp.isfinite(self.lu.data).all()):
            raise SolverError("the incomplete LU has a singular or non-finite diagonal block")
        self._flags = cp.empty(self.n + 1, dtype=cp.int32)  # ready flags, then the row counter

    @property
    def nbytes(self) -> int:
        return int(self.lu.nbytes + self.diag.nbytes)

    def _sweep(self, name, rhs, *extra):
        import cupy as cp  # noqa: PLC0415

        out = cp.empty_like(rhs)
        self._flags.fill(0)
        lu = self.lu
        _module(self.dtype).get_function(name)((-(-self.n // WARPS),), (32 * WARPS,), (
            lu.indptr, lu.indices, lu.data, *extra, rhs, out, self._flags[:-1], self._flags[-1:], np.int32(self.n)))
        return out

    def solve(self, r):
        """The ILU(0) inverse applied to a CuPy vector r (3n,)."""
        import cupy as cp  # noqa: PLC0415

        x = cp.ascontiguousarray(r.reshape(-1, 3)[self.order].reshape(-1), dtype=cp.float64)
        z = self._sweep("block_upper_solve", self._sweep("block_lower_solve", x), self.diag)
        out = cp.empty_like(z)
        out.reshape(-1, 3)[self.order] = z.reshape(-1, 3)
        return out


def _diagonal_positions(a: DeviceBsr):
    """(n,) int32: the position of each block row's diagonal block; SolverError where one is missing."""
    import cupy as cp  # noqa: PLC0415

    n = len(a.indptr) - 1
    at = cp.flatnonzero(a.indices == _block_rows(a)).astype(cp.int32)
    if len(at) != n:
        raise SolverError("the incomplete LU has a block row without a diagonal block")
    return at


def _block_rows(a: DeviceBsr):
    """(B,) int32: each block's block row."""
    import cupy as cp  # noqa: PLC0415

    return (cp.searchsorted(a.indptr, cp.arange(len(a.indices), dtype=cp.int32), side="right") - 1).astype(cp.int32)


def block_ilu0_reference(indptr, cols, blocks) -> np.ndarray:
    """The factors' blocks (B, 3, 3) of block_ilu.cu for a block-sparse matrix in NumPy (indptr (n + 1,), cols
    (B,) sorted in each row, every diagonal block present), row by row in the given order."""
    lu = np.array(blocks, dtype=np.float64)
    diag = [int(np.flatnonzero(cols[indptr[i]:indptr[i + 1]] == i)[0]) + indptr[i] for i in range(len(indptr) - 1)]
    for i in range(len(indptr) - 1):
        where = {int(c): p for p, c in zip(range(indptr[i], indptr[i + 1]), cols[indptr[i]:indptr[i + 1]])}
        for p in range(indptr[i], indptr[i + 1]):
            k = int(cols[p])
            if k >= i:
                break
            lu[p] = lu[p] @ lu[diag[k]]
            for r in range(diag[k] + 1, indptr[k + 1]):
                if int(cols[r]) in where:
                    lu[where[int(cols[r])]] -= lu[p] @ lu[r]
        lu[diag[i]] = np.linalg.inv(lu[diag[i]])
    return lu
