"""A square sparse matrix of 3x3 blocks on the GPU (CuPy has no BSR): the blocks (B, 3, 3) float64, their
block columns (B,) int32 and block-row starts, 8.4 bytes an entry where CSR takes 12, and its product by a
kernel (kernels/block_spmv.cu; the reference is SciPy's bsr_matrix, which the host path uses itself)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..backend import kernel_module

WARPS = 8  # block rows per CUDA block of 256 threads


class DeviceBsr:
    """blocks (B, 3, 3), cols (B,) int32, indptr (R + 1,) int32 CuPy arrays: block row r holds blocks
    indptr[r]:indptr[r + 1], sorted by column; shape (3R, 3C)."""

    def __init__(self, blocks, cols, indptr, shape: tuple[int, int]):
        self.blocks, self.cols, self.indptr, self.shape = blocks, cols, indptr, shape

    @property
    def nbytes(self) -> int:
        return int(self.blocks.nbytes + self.cols.nbytes + self.indptr.nbytes)

    def __matmul__(self, x):
        """A x for a CuPy vector x (3C,) float64: (3R,)."""
        import cupy as cp  # noqa: PLC0415

        rows = len(self.indptr) - 1
        y = cp.empty(3 * rows)
        kernel = kernel_module(Path(__file__).with_name("kernels") / "block_spmv.cu").get_function("block_spmv")
        kernel((-(-rows // WARPS),), (32 * WARPS,), (self.indptr, self.cols, self.blocks,
                                                     cp.ascontiguousarray(x, dtype=cp.float64), y, np.int32(rows)))
        return y

    def get(self) -> sp.bsr_matrix:
        """The same matrix in host memory, as SciPy's BSR."""
        return sp.bsr_matrix((self.blocks.get(), self.cols.get(), self.indptr.get()), shape=self.shape)

    def toarray(self) -> np.ndarray:
        return self.get().toarray()


def device_bsr(rows, cols, pieces, shape: tuple[int, int]) -> DeviceBsr:
    """DeviceBsr of 3x3 blocks at block rows and columns (B,) (CuPy, sorted by row then column, no two alike),
    the blocks given as consecutive pieces (an iterable of (b, 3, 3) arrays), each copied in and let go."""
    import cupy as cp  # noqa: PLC0415

    blocks = cp.empty((len(rows), 3, 3))
    lo = 0
    for piece in pieces:
        blocks[lo:lo + len(piece)] = piece
        lo += len(piece)
    if lo != len(rows):
        raise ValueError(f"{lo} blocks for {len(rows)} block positions")
    indptr = cp.zeros(shape[0] // 3 + 1, dtype=cp.int32)
    cp.cumsum(cp.bincount(rows, minlength=shape[0] // 3), dtype=cp.int32, out=indptr[1:])
    return DeviceBsr(blocks, cols.astype(cp.int32), indptr, shape)
