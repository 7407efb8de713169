"""FMM3D built from source with OpenMP (scripts/build-fmm3d.sh) called through its C interface with ctypes: the
CPU peer of `paraflux bench fmm`, run at a thread count it reports itself (omp_get_max_threads)."""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BUILD = Path(__file__).resolve().parents[2] / "build" / "peers" / "fmm3d" / "lib"
RUNTIME = ("libquadmath.so.0", "libgfortran.so.5", "libgomp.so.1")  # carried beside the library, loaded first


@dataclass(frozen=True)
class Fmm3dRun:
    potential: np.ndarray  # (n,) sum_j q_j / |x_i - y_j| over j != i (FMM3D's 1 / (4 pi) removed)
    gradient: np.ndarray  # (n, 3) of that potential at x_i
    seconds: float  # the library call alone (points and charges already in host memory)
    threads: int  # omp_get_max_threads() inside the library's OpenMP runtime during the call


class Fmm3dLibrary:
    """libfmm3d.so of a build folder (default: build/peers/fmm3d/lib); OSError if it is not there."""

    def __init__(self, folder: Path = BUILD):
        self.runtime = [ctypes.CDLL(str(folder / name), mode=ctypes.RTLD_GLOBAL) for name in RUNTIME]
        self.lib = ctypes.CDLL(str(folder / "libfmm3d.so"))
        self.gomp = self.lib  # omp_* looked up from the library's handle: the OpenMP runtime it is bound to, which
        # is another process-wide libgomp.so.1 where one was loaded first (KeOps's binder loads one; then the
        # carried copy's omp_set_num_threads had no effect and FMM3D ran on every thread while asked for 1)

    def max_threads(self) -> int:
        """omp_get_max_threads: the count the last omp_set_num_threads asked for (OMP_NUM_THREADS's at first)."""
        return int(self.gomp.omp_get_max_threads())

    def all_threads(self) -> int:
        """The threads a default run uses: OMP_NUM_THREADS where set, else the processors OpenMP sees (not
        max_threads, which an earlier one-thread run leaves at 1 for the whole process)."""
        return int((os.environ.get("OMP_NUM_THREADS") or "").split(",")[0] or self.gomp.omp_get_num_procs())

    def charges(self, points: np.ndarray, charges: np.ndarray, eps: float, threads: int) -> Fmm3dRun:
        """Potential and gradient of charges (n,) at the points (n, 3) themselves, to FMM3D's eps, on `threads`
        OpenMP threads (lfmm3d_s_c_g)."""
        self.gomp.omp_set_num_threads(ctypes.c_int(threads))
        src = np.ascontiguousarray(points, dtype=np.float64)  # (n, 3) row-major: Fortran's (3, n)
        q = np.ascontiguousarray(charges, dtype=np.float64)
        pot, grad = np.zeros(len(src)), np.zeros((len(src), 3))
        ier = ctypes.c_int64(0)
        ptr = lambda a: a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))  # noqa: E731
        t0 = time.perf_counter()
        self.lib.lfmm3d_s_c_g_(ctypes.byref(ctypes.c_double(eps)), ctypes.byref(ctypes.c_int64(len(src))), ptr(src),
                               ptr(q), ptr(pot), ptr(grad), ctypes.byref(ier))
        seconds = time.perf_counter() - t0
        if ier.value:
            raise RuntimeError(f"FMM3D's lfmm3d_s_c_g returned ier = {ier.value}")
        return Fmm3dRun(4 * np.pi * pot, 4 * np.pi * grad, seconds, self.max_threads())


def load() -> Fmm3dLibrary | None:
    """The built library, or None where scripts/build-fmm3d.sh has not been run."""
    try:
        return Fmm3dLibrary()
    except OSError:
        return None
