"""Sparse direct factorisation on the GPU by NVIDIA cuDSS through nvmath-python's bindings (the optional
extra paraflux[gpu]): LDL^T of a symmetric matrix, real or complex (cuDSS's SYMMETRIC type: A = A^T, not
Hermitian), from its upper triangle; the factor stays on the device and any number of right-hand sides are
solved against it in one call. cuDSS's analysis estimates the factorisation's device memory before any is
taken: a factor that would not fit is refused with one line (ProblemError)."""

from __future__ import annotations

import os
import sys
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..errors import ProblemError, SolverError

THREADING_LAYER = "libcudss_mtlayer_gomp.so.0"  # cuDSS's OpenMP layer for its host-side reordering


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def check_fits(need_bytes: int, free_bytes: int, nonzeros: int, what: str) -> None:
    """ProblemError (one line) where a factorisation needing need_bytes of device memory at its peak
    (cuDSS's estimate, factor nonzeros) cannot have them of free_bytes."""
    if need_bytes > free_bytes:
        raise ProblemError(
            f"the GPU factorisation of {what} needs {_gib(need_bytes)} of GPU memory at its peak (cuDSS's "
            f"estimate, {nonzeros:,} factor nonzeros), more than the {_gib(free_bytes)} free; use linear_solver "
            "= \"pardiso\" or \"umfpack\" (on the host) or fewer elements per wavelength")


def device_free_bytes(cp) -> int:
    """What the device has free for a factorisation: the driver's free memory once CuPy's pool has returned
    its cached blocks, capped by CuPy's pool limit where one is set (CUPY_GPU_MEMORY_LIMIT or set_limit),
    which ParaFlux reads as the GPU memory a run may use."""
    from ..backend import memory_pool  # noqa: PLC0415

    pool = memory_pool(cp)
    pool.free_all_blocks()
    free = int(cp.cuda.runtime.memGetInfo()[0])
    limit = int(pool.get_limit())
    return min(free, limit - int(pool.used_bytes())) if limit else free


def threading_layer() -> str | None:
    """cuDSS's OpenMP threading layer beside the cuDSS library of an installed wheel (or $CUDSS_THREADING_LIB)."""
    named = os.environ.get("CUDSS_THREADING_LIB")
    if named:
        return named if os.path.isfile(named) else None
    for folder in sys.path:
        for cuda in ("cu13", "cu12"):
            path = Path(folder) / "nvidia" / cuda / "lib" / THREADING_LAYER
            if path.is_file():
                return str(path)
    return None


class _Factor:
    """cuDSS's handle, configuration, data and matrix objects for one factorised matrix, with the device arrays
    they point into; released when the factor is collected."""

    def __init__(self, cp, cudss, upper: sp.csr_matrix):
        from nvmath.internal.typemaps import NAME_TO_DATA_TYPE  # noqa: PLC0415

        self.cp, self.cudss = cp, cudss
        self.n = upper.shape[0]
        self.dtype = upper.dtype
        self.value_type = NAME_TO_DATA_TYPE[upper.dtype.name]
        index_type = NAME_TO_DATA_TYPE["int32"]
        self.arrays = (cp.asarray(upper.indptr, dtype=cp.int32), cp.asarray(upper.indices, dtype=cp.int32),
                       cp.asarray(upper.data))
        self.handle = cudss.create()
        self.config = cudss.config_create()
        self.data = cudss.data_create(self.handle)
        self.matrix = cudss.matrix_create_csr(
            self.n, self.n, upper.nnz, self.arrays[0].data.ptr, 0, self.arrays[1].data.ptr, self.arrays[2].data.ptr,
            index_type, index_type, self.value_type, cudss.MatrixType.SYMMETRIC, cudss.MatrixViewType.UPPER,
            cudss.IndexBase.ZERO)
        layer = threading_layer()
        if layer:
            cudss.set_threading_layer(self.handle, layer)
        self._release = weakref.finalize(self, _release, cudss, self.handle, self.config, self.data, self.matrix)

    def execute(self, phase, x, b) -> None:
        """One cuDSS phase with dense x and b (n, r) Fortran-ordered device arrays of the factor's dtype."""
        cudss, r = self.cudss, x.shape[1]
        xm = cudss.matrix_create_dn(self.n, r, self.n, x.data.ptr, self.value_type, cudss.Layout.COL_MAJOR)
        bm = cudss.matrix_create_dn(self.n, r, self.n, b.data.ptr, self.value_type, cudss.Layout.COL_MAJOR)
        try:
            cudss.execute(self.handle, phase, self.config, self.data, self.matrix, xm, bm)
        finally:
            cudss.matrix_destroy(xm)
            cudss.matrix_destroy(bm)
        self.cp.cuda.Device().synchronize()

    def get(self, name: str, out: np.ndarray) -> np.ndarray:
        """A cuDSS data parameter (DataParam name) read into out."""
        written = np.zeros(1, dtype=np.uint64)
        self.cudss.data_get(self.handle, self.data, getattr(self.cudss.DataParam, name), out.ctypes.data,
                            out.nbytes, written.ctypes.data)
        return out

    def scalar(self, name: str) -> int:
        """An integer cuDSS data parameter (INFO, LU_NNZ)."""
        param = getattr(self.cudss.DataParam, name)
        return int(self.get(name, np.zeros(1, dtype=self.cudss.get_data_param_dtype(param)))[0])

    def memory_estimates(self) -> dict:
        """cuDSS's memory estimates after the analysis, bytes: permanent (the factor) and peak, device and host."""
        values = self.get("MEMORY_ESTIMATES", np.zeros(16, dtype=np.int64))
        return {"permanent_device_bytes": int(values[0]), "peak_device_bytes": int(values[1]),
                "permanent_host_bytes": int(values[2]), "peak_host_bytes": int(values[3])}

    def solve(self, b):
        """X (n,) or (n, r) for B of that shape, NumPy (answered on the host) or CuPy (on the device)."""
        cp = self.cp
        host = isinstance(b, np.ndarray)
        columns = cp.asarray(b).reshape(self.n, -1)
        split = np.iscomplexobj(columns) and self.dtype.kind != "c"
        if split:  # a real factor: real and imaginary parts as columns of one solve
            columns = cp.concatenate([columns.real, columns.imag], axis=1)
        rhs = cp.asfortranarray(columns, dtype=self.dtype)
        x = cp.empty_like(rhs, order="F")
        self.execute(self.cudss.Phase.SOLVE, x, rhs)
        if split:
            half = x.shape[1] // 2
            x = x[:, :half] + 1j * x[:, half:]
        x = x.reshape(b.shape)
        return cp.asnumpy(x) if host else x


def _release(cudss, handle, config, data, matrix) -> None:
    cudss.matrix_destroy(matrix)
    cudss.data_destroy(handle, data)
    cudss.config_destroy(config)
    cudss.destroy(handle)


@dataclass(frozen=True, eq=False)
class CudssFactor:
    """solve(B (n, r) or (n,), NumPy or CuPy) -> X of B's shape and kind; the factor's nonzeros; info: cuDSS's
    status after the factorisation (0: no zero pivot); details: its memory estimates (bytes), the factor's
    bytes and the two phases' seconds."""

    solve: Callable
    nonzeros: int
    info: int
    details: dict


def factorise_cudss(upper: sp.csr_matrix, what: str) -> CudssFactor:
    """The factorisation of a symmetric matrix (n, n), real or complex, from its upper triangle (CSR, every
    diagonal entry stored) by cuDSS on the GPU: analysis (reordering and symbolic factorisation, on the host's
    threads), a refusal where the estimated peak does not fit (ProblemError), numeric factorisation."""
    import cupy as cp  # noqa: PLC0415
    from nvmath.bindings import cudss  # noqa: PLC0415

    dtype = np.complex128 if np.iscomplexobj(upper.data) else np.float64
    factor = _Factor(cp, cudss, upper.astype(dtype))
    placeholder = cp.zeros((factor.n, 1), dtype=dtype, order="F")
    start = time.perf_counter()
    factor.execute(cudss.Phase.ANALYSIS, placeholder, placeholder.copy(order="F"))
    analysis_s = time.perf_counter() - start
    memory = factor.memory_estimates()
    nonzeros = factor.scalar("LU_NNZ")
    check_fits(memory["peak_device_bytes"], device_free_bytes(cp), nonzeros, what)
    start = time.perf_counter()
    try:
        factor.execute(cudss.Phase.FACTORIZATION, placeholder, placeholder.copy(order="F"))
    except cudss.cuDSSError as exc:
        raise SolverError(f"cuDSS could not factorise {what} ({exc})") from None
    numeric_s = time.perf_counter() - start
    nonzeros = factor.scalar("LU_NNZ")
    details = {**memory, "analysis_s": analysis_s, "numeric_s": numeric_s,
               "factor_bytes": nonzeros * np.dtype(dtype).itemsize}
    return CudssFactor(factor.solve, nonzeros, factor.scalar("INFO"), details)
