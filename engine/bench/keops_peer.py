"""KeOps (pykeops, PyPI) as a second brute-force peer of `paraflux bench fmm`: the exact Laplace sum over all
N^2 pairs, potential and gradient, written as one KeOps reduction and compiled by KeOps itself (on the GPU
through NVRTC, on the CPU through the host's C++ compiler). Optional: where pykeops is not installed or its
compilation fails, the benchmark records why instead of a time."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KeopsRun:
    potential: np.ndarray  # (n,) sum_j q_j / |x_i - y_j| over j != i
    gradient: np.ndarray  # (n, 3) of that potential at x_i
    seconds: float  # both reductions, from points and charges in host memory to results in host memory
    device: str  # where KeOps ran, with its version


def direct(points: np.ndarray, charges: np.ndarray, backend: str = "GPU") -> KeopsRun:
    """The exact potential and gradient of charges (n,) at the points (n, 3) themselves by KeOps (backend "GPU"
    or "CPU"), the coincident pair skipped; ImportError or KeOps's own error where it cannot run."""
    if backend == "GPU":
        _load_nvrtc()
    import pykeops  # noqa: PLC0415
    from pykeops.numpy import LazyTensor  # noqa: PLC0415

    x = np.ascontiguousarray(points, dtype=np.float64)
    q = np.ascontiguousarray(charges, dtype=np.float64).reshape(-1, 1)
    t0 = time.perf_counter()
    xi, yj, qj = LazyTensor(x[:, None, :]), LazyTensor(x[None, :, :]), LazyTensor(q[None, :, :])
    d = xi - yj
    r2 = (d ** 2).sum(-1)
    inv = (-r2).ifelse(0.0, r2.rsqrt())  # KeOps's c.ifelse(a, b): a where c >= 0, so 0 for the point itself
    phi = (qj * inv).sum(1, backend=backend)
    grad = (-(qj * (inv * inv * inv)) * d).sum(1, backend=backend)  # not inv ** 3: KeOps's integer power
    # compiles to CUDA's powf, single precision even for float64 (gradient errors near 1e-6 on the GPU)
    return KeopsRun(phi[:, 0], grad, time.perf_counter() - t0, f"{backend} (KeOps {pykeops.__version__})")


def _load_nvrtc() -> None:
    """NVRTC loaded by CuPy before KeOps compiles: on the GPU machine KeOps's NVRTC binder crashed (a
    segmentation fault) in a process where nothing had loaded NVRTC yet, and ran where CuPy had compiled a
    kernel first, as in `paraflux bench fmm`."""
    import cupy  # noqa: PLC0415

    cupy.cuda.nvrtc.getVersion()


def timed(points: np.ndarray, charges: np.ndarray, sample: np.ndarray, ref_phi: np.ndarray,
          ref_grad: np.ndarray) -> dict:
    """KeOps on the GPU over all N points after a warm-up on 1,000 (its compilation), checked against the
    reference potential and gradient at the sampled points: seconds, device, errors; or why it did not run."""
    try:
        direct(points[:1000], charges[:1000])
        run = direct(points, charges)
    except Exception as exc:  # noqa: BLE001 - any failure to import, compile or run is the recorded outcome
        reason = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}".replace("|", "/")
        return {"available": False, "reason": reason}
    error = float(np.linalg.norm(run.potential[sample] - ref_phi) / np.linalg.norm(ref_phi))
    error_gradient = float(np.linalg.norm(run.gradient[sample] - ref_grad) / np.linalg.norm(ref_grad))
    return {"available": True, "seconds": run.seconds, "device": run.device, "error": error,
            "error_gradient": error_gradient}
