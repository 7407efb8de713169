"""Square sparse matrices of 3x3 blocks whose pattern is known before their values: the FMBEM's near field is
listed once (its pattern), then integrated chunk by chunk, each chunk's blocks written into place, so that
building the matrix holds the matrix and one chunk's scratch, not every chunk's blocks and the matrix.

On the GPU both are DeviceBsr (CuPy has no BSR): int32 block columns, 8.4 bytes an entry in FP64 where CSR
takes 12; the correction matrix is multiplied by kernels/block_spmv.cu (the reference: SciPy's bsr_matrix,
which the host uses itself), the near matrix factored by block_ilu.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..backend import array_module, kernel_module

WARPS = 8  # block rows per CUDA block of 256 threads (block_spmv.cu)


class DeviceBsr:
    """data (B, 3, 3) float64 (float32 for a matrix that is only factored: block_ilu.py), indices (B,) int32
    block columns, indptr (R + 1,) int32 CuPy arrays, named as SciPy's bsr_matrix names them: block row r holds
    blocks indptr[r]:indptr[r + 1], sorted by column; shape (3R, 3C)."""

    def __init__(self, data, indices, indptr, shape: tuple[int, int]):
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.indices.nbytes + self.indptr.nbytes)

    def __matmul__(self, x):
        """A x (3R,) for a CuPy vector x (3C,), float64 (the matrix too: TypeError otherwise)."""
        import cupy as cp  # noqa: PLC0415

        if self.data.dtype != cp.float64:
            raise TypeError(f"the block product reads float64 blocks, these are {self.data.dtype}")

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
    alike), whose values (of dtype) come later, piece by piece in that order (write); matrix() once all are in:
    SciPy's BSR on the host, a DeviceBsr on the GPU."""

    def __init__(self, rows, cols, n_block_rows: int, dtype=np.float64):
        xp = self.xp = array_module(rows)
        self.n, self.done = n_block_rows, 0
        self.data = xp.empty((len(rows), 3, 3), dtype=dtype)
        self.indices = cols
        self.indptr = xp.zeros(n_block_rows + 1, dtype=xp.int32)
        xp.cumsum(xp.bincount(rows, minlength=n_block_rows), out=self.indptr[1:])

    def write(self, piece) -> None:
        """The next len(piece) blocks (b, 3, 3)."""
        lo, hi = self.done, self.done + len(piece)
        if hi > len(self.data):
            raise ValueError(f"{hi} blocks written to a pattern of fewer")
        self.data[lo:hi] = piece
        self.done = hi

    def matrix(self):
        """The matrix, every block written (ValueError otherwise)."""
        if self.done != len(self.data):
            raise ValueError(f"{self.done} blocks written to a pattern of {len(self.data)}")
        shape = (3 * self.n, 3 * self.n)
        if self.xp is np:
            return sp.bsr_matrix((self.data, self.indices, self.indptr), shape=shape)
        return DeviceBsr(self.data, self.indices, self.indptr, shape)
