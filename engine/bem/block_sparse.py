"""Square sparse matrices of 3x3 blocks whose pattern is known before their values: the FMBEM's near field is
listed once (its pattern), then integrated chunk by chunk, each chunk's blocks written into place, so that
building the matrix holds the matrix and one chunk's scratch, not every chunk's blocks and the matrix.

On the GPU the correction matrix is a DeviceBsr (CuPy has no BSR): FP64 blocks, int32 block columns, 8.4 bytes
an entry where CSR takes 12, multiplied by kernels/block_spmv.cu (the reference: SciPy's bsr_matrix, which the
host uses itself)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..backend import array_module, kernel_module

WARPS = 8  # block rows per CUDA block of 256 threads (block_spmv.cu)


class DeviceBsr:
    """data (B, 3, 3) float64, indices (B,) int32 block columns, indptr (R + 1,) int32 CuPy arrays, named as
    SciPy's bsr_matrix names them: block row r holds blocks indptr[r]:indptr[r + 1], sorted by column;
    shape (3R, 3C)."""

    def __init__(self, data, indices, indptr, shape: tuple[int, int]):
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.indices.nbytes + self.indptr.nbytes)

    def __matmul__(self, x):
        """A x (3R,) for a CuPy vector x (3C,), float64."""
        import cupy as cp  # noqa: PLC0415

        rows = len(self.indptr) - 1
        y = cp.empty(3 * rows)
        kernel = kernel_module(Path(__file__).with_name("kernels") / "block_spmv.cu").get_function("block_spmv")
        kernel((-(-rows // WARPS),), (32 * WARPS,), (self.indptr, self.indices, self.data,
                                                     cp.ascontiguousarray(x, dtype=cp.float64), y, np.int32(rows)))
        return y

    def get(self) -> sp.bsr_matrix:
        """The same matrix in host memory, as SciPy's BSR."""
        return sp.bsr_matrix((self.data.get(), self.indices.get(), self.indptr.get()), shape=self.shape)


class BlockFiller:
    """A (3R, 3R) matrix of 3x3 blocks at block rows and columns (B,) int32 (sorted by row, then column; no two
    alike), whose values come later, piece by piece in that order (write). form "bsr": SciPy's BSR on the host,
    a DeviceBsr on the GPU (float64); "csr": CSR (the GPU's ILU takes it; SciPy's on the host), scalar row 3 r + l
    holding row l of each block of block row r in column order. dtype: the values'. matrix() once all are in."""

    def __init__(self, rows, cols, n_block_rows: int, dtype=np.float64, form: str = "bsr"):
        xp = self.xp = array_module(rows)
        self.form, self.n, self.done = form, n_block_rows, 0
        count = xp.bincount(rows, minlength=n_block_rows)
        if form == "bsr":
            self.data = xp.empty((len(rows), 3, 3), dtype=dtype)
            self.indices, self.rows = cols, None
            self.indptr = xp.zeros(n_block_rows + 1, dtype=xp.int32)
            xp.cumsum(count, out=self.indptr[1:])
            return
        self.rows, self.cols = rows, cols
        self.start = (xp.cumsum(count) - count).astype(xp.int64)  # each block row's first block
        self.count = count.astype(xp.int64)
        self.indptr = xp.empty(3 * n_block_rows + 1, dtype=xp.int32)  # cuSPARSE's int32 indices
        three = xp.arange(3)
        self.indptr[:-1] = (9 * self.start[:, None] + 3 * self.count[:, None] * three[None, :]).reshape(-1)
        self.indptr[-1] = 9 * len(rows)
        self.data = xp.empty(9 * len(rows), dtype=dtype)
        self.indices = xp.empty(9 * len(rows), dtype=xp.int32)

    def write(self, piece) -> None:
        """The next len(piece) blocks (b, 3, 3)."""
        lo, hi = self.done, self.done + len(piece)
        if hi > len(self.data if self.form == "bsr" else self.rows):
            raise ValueError(f"{hi} blocks written to a pattern of fewer")
        self.done = hi
        if self.form == "bsr":
            self.data[lo:hi] = piece
            return
        xp, three = self.xp, self.xp.arange(3)
        r = self.rows[lo:hi]
        first = 6 * self.start[r] + 3 * xp.arange(lo, hi)  # 9 start + 3 (the block's place in its block row)
        at = (first[:, None, None] + (3 * self.count[r])[:, None, None] * three[None, :, None]
              + three[None, None, :]).reshape(-1)
        self.data[at] = piece.reshape(-1)
        column = 3 * self.cols[lo:hi][:, None, None] + three.astype(xp.int32)[None, None, :]
        self.indices[at] = xp.broadcast_to(column, piece.shape).reshape(-1)

    def matrix(self):
        """The matrix, every block written (ValueError otherwise)."""
        total = len(self.data) if self.form == "bsr" else len(self.rows)
        if self.done != total:
            raise ValueError(f"{self.done} blocks written to a pattern of {total}")
        shape = (3 * self.n, 3 * self.n)
        if self.form == "csr":
            self.rows = self.cols = None
            if self.xp is np:
                return sp.csr_matrix((self.data, self.indices, self.indptr), shape=shape)
            from cupyx.scipy.sparse import csr_matrix  # noqa: PLC0415

            return csr_matrix((self.data, self.indices, self.indptr), shape=shape)
        if self.xp is np:
            return sp.bsr_matrix((self.data, self.indices, self.indptr), shape=shape)
        return DeviceBsr(self.data, self.indices, self.indptr, shape)
