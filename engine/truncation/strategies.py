"""One entry point for every loop strategy of the truncation operator (variants.LOOP): where it runs,
what it needs, and the call."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import array_module, get_backend, gpu_unavailable_reason, host_free_bytes, out_of_memory, to_host
from ..errors import BackendError
from ..variants import LOOP
from .fmm_loop import DEFAULT_PRECISION, apply_fmm
from .loops import apply_cpu
from .operator import Currents

GPU_LOOPS = ("cuda-s", "cuda-rhs", "cuda-tiled", "cuda-tiled-fp32")
ZGEMM_CACHE_FRACTION = 0.4  # of the free device (or host) memory kept as coupling tiles


@dataclass(frozen=True)
class Applied:
    """E, F (n_rhs, n_S, 3) complex128, where they were computed and on how many GPUs: NumPy arrays, or CuPy
    where zgemm ran on the GPU from currents already there (the caller keeps its columns on the device)."""

    e: np.ndarray
    f: np.ndarray
    backend: str  # "numpy" or "cupy"
    device: str
    devices: int  # GPUs used (0 on the CPU)


def _on_gpu(loop: str):
    """The CuPy backend for a GPU loop (BackendError naming the CPU loops when no GPU is usable)."""
    reason = gpu_unavailable_reason()
    if reason:
        raise BackendError(f"loop '{loop}' runs on a CUDA GPU: {reason}; pick serial, cpu-s, cpu-sprime, "
                           "cpu-rhs or zgemm")
    return get_backend("cupy")


def _cpu_loop(loop, targets, sources, cur, k, q, devices, prepared, precision) -> Applied:
    e, f = apply_cpu(loop, targets, sources, cur, k)
    return Applied(e, f, "numpy", get_backend("numpy").device, 0)


def _fmm_loop(loop, targets, sources, cur, k, q, devices, prepared, precision) -> Applied:
    return Applied(*apply_fmm(targets, sources, cur, k, precision), "numpy", get_backend("numpy").device, 0)


def _zgemm_loop(loop, targets, sources, cur, k, q, devices, prepared, precision) -> Applied:
    backend = get_backend("auto")
    op = prepared or make_zgemm(targets, sources, k, backend)
    e, f = op.apply(cur)
    stay = array_module(cur.dot_e) is not np  # currents on the GPU: the fields stay there too
    return Applied(*(a if stay else to_host(a) for a in (e, f)), backend.name, backend.device, int(backend.is_gpu))


def _gpu_loop(loop, targets, sources, cur, k, q, devices, prepared, precision) -> Applied:
    backend = _on_gpu(loop)
    from .gpu_loops import apply_gpu  # noqa: PLC0415

    e, f = apply_gpu(loop, targets, sources, cur, k, q)
    return Applied(e, f, "cupy", backend.device, 1)


def _multi_gpu_loop(loop, targets, sources, cur, k, q, devices, prepared, precision) -> Applied:
    backend = _on_gpu(loop)
    if prepared is not None:
        run = prepared.apply(cur)
    else:
        from .multi_gpu import apply_multi_gpu  # noqa: PLC0415

        run = apply_multi_gpu(targets, sources, cur, k, q, devices)
    return Applied(run.e, run.f, "cupy", f"{run.devices} x {backend.device}", run.devices)


# every choice of the LOOP axis and the function that runs it (a test checks that the two lists agree)
IMPLEMENTATIONS = {"serial": _cpu_loop, "cpu-sprime": _cpu_loop, "cpu-s": _cpu_loop, "cpu-rhs": _cpu_loop,
                   "zgemm": _zgemm_loop, "cuda-s": _gpu_loop, "cuda-rhs": _gpu_loop, "cuda-tiled": _gpu_loop,
                   "cuda-tiled-fp32": _gpu_loop, "multi-gpu-tiled": _multi_gpu_loop, "fmm": _fmm_loop}


def apply_operator(loop: str, targets, sources, cur: Currents, k: float, q: int, devices: int = 0,
                   prepared=None, precision: float = DEFAULT_PRECISION) -> Applied:
    """Apply the operator by `loop`; targets (n_S, 3) are S's quadrature points element by element, q per
    element. prepared: prepare(loop, ...)'s operator for these points to reuse (zgemm's coupling cache,
    multi-gpu-tiled's resident points and buffers), else one is built here; precision: the
    fmm loop's requested relative precision. Out of memory is backend.out_of_memory's OutOfMemory naming the sizes."""
    LOOP.choice(loop)
    try:
        return IMPLEMENTATIONS[loop](loop, targets, sources, cur, k, q, devices, prepared, precision)
    except MemoryError as exc:
        raise out_of_memory(exc, f"applying '{loop}' to {len(sources):,} S' points x {len(targets):,} S points x "
                            f"{cur.dot_e.shape[0]} right-hand sides",
                            "use fewer right-hand sides or points, or multi-gpu-tiled") from None


def make_zgemm(targets, sources, k: float, backend):
    """A ZgemmOperator on the backend's device, its coupling cache sized to a share of free memory."""
    from .zgemm import ZgemmOperator  # noqa: PLC0415

    free = backend.xp.cuda.runtime.memGetInfo()[0] if backend.is_gpu else host_free_bytes() or 0
    return ZgemmOperator(targets, sources, k, backend.xp, int(ZGEMM_CACHE_FRACTION * free))



def prepare(loop: str, targets, sources, k: float, q: int, devices: int = 0):
    """The operator apply_operator reuses across applications for these points (targets q per S element):
    a ZgemmOperator for zgemm, a MultiGpuOperator on `devices` GPUs (0: all) splitting the work by points or
    incidences as multi_gpu.split_for picks per application for multi-gpu-tiled, None for the other loops
    (they keep nothing)."""
    if loop == "zgemm":
        return make_zgemm(targets, sources, k, get_backend("auto"))
    if loop == "multi-gpu-tiled":
        _on_gpu(loop)
        from .multi_gpu import MultiGpuOperator  # noqa: PLC0415

        return MultiGpuOperator(targets, sources, k, q, devices, "auto")
    return None
