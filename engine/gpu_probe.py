"""Whether CuPy imports and a CUDA GPU runs a kernel, and how many GPUs there are: asked once per process.
Its own module so that the variant registry (engine/variants.py) can ask without importing the backend layer."""

from __future__ import annotations

import functools
import os
from types import ModuleType


@functools.lru_cache(maxsize=1)
def cupy_probe() -> tuple[ModuleType | None, str]:
    """Import CuPy and touch the GPU once; return (module or None, reason or device name)."""
    if os.environ.get("PARAFLUX_DISABLE_GPU"):
        return None, "GPU disabled by PARAFLUX_DISABLE_GPU"
    try:
        import cupy  # noqa: PLC0415 (optional dependency)
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        return None, f"CuPy is not installed ({type(exc).__name__}); install paraflux[gpu]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            return None, "no CUDA GPU is present"
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        cupy.zeros(1).sum()  # fails here if the driver cannot run kernels
    except Exception as exc:
        return None, f"no usable CUDA GPU ({type(exc).__name__}: {exc})"
    mem = props.get("totalGlobalMem", 0) / 2**30
    return cupy, f"{name} ({mem:.0f} GiB), CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}"


def gpu_count() -> int:
    """How many CUDA GPUs CuPy sees (0 where none is usable)."""
    module = cupy_probe()[0]
    return 0 if module is None else int(module.cuda.runtime.getDeviceCount())
