"""The one place that picks the array module (NumPy or CuPy), reports the device, moves arrays to the host and
compiles CUDA kernels (each .cu file once per device and process)."""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import re
import sys
import threading
import weakref
from pathlib import Path
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from .errors import BackendError, OutOfMemory, ProblemError
from .gpu_probe import cupy_probe, gpu_count  # noqa: F401 (gpu_count: part of this module's interface)
from .variants import BACKEND



@dataclass(frozen=True)
class Backend:
    """An array module with the facts a user wants to see about where it runs."""

    name: str  # "numpy" or "cupy"
    xp: ModuleType
    device: str  # human-readable device description

    @property
    def is_gpu(self) -> bool:
        return self.name == "cupy"

    def synchronize(self) -> None:
        """Wait for the device's queued work (for honest wall-clock timings); a no-op on NumPy."""
        if self.is_gpu:
            self.xp.cuda.Device().synchronize()

    def scatter_add(self, target, index, values) -> None:
        """target[index] += values with repeated indices summed (np.add.at in order; cupyx.scatter_add, atomic)."""
        if self.is_gpu:
            import cupyx  # noqa: PLC0415

            cupyx.scatter_add(target, index, values)
        else:
            np.add.at(target, index, values)


def memory_pool(cp):
    """The CuPy memory pool that allocates now: the one set with cupy.cuda.set_allocator where that is a
    MemoryPool's malloc, else CuPy's default pool."""
    pool = getattr(cp.cuda.get_allocator(), "__self__", None)
    return pool if isinstance(pool, cp.cuda.MemoryPool) else cp.get_default_memory_pool()


class DeviceMemory:
    """What a computation holds in CuPy's memory pool (memory_pool), this thread's allocations (zeros for NumPy).
    Inside `with`: in_use_peak, the most bytes its arrays held at once (a memory hook). mark() where a phase
    ends: the pool only grows within a phase, so its size then is the phase's largest; mark() notes it in
    pool_peak and frees the pool's cached blocks that nothing uses, so that a phase's freed scratch is not
    carried into the next one (pool_peak exceeds in_use_peak by what the pool could not reuse). mark(phase)
    also notes in phases[phase] the most bytes in use since the previous mark."""

    def __init__(self, xp: ModuleType):
        self.xp, self.in_use, self.in_use_peak, self.pool_peak = xp, 0, 0, 0
        self.phase_peak, self.phases = 0, {}
        self._hook = None

    def __enter__(self) -> DeviceMemory:
        if self.xp is not np:
            self._hook = _counting_hook(self)
            self._hook.__enter__()
        self.mark()
        return self

    def __exit__(self, *exc) -> None:
        if self._hook is not None:
            self._hook.__exit__(*exc)
            self._hook = None
        self.mark()

    def mark(self, phase: str | None = None) -> int:
        """Note the pool's size (and the phase's peak in use), free its unused blocks; pool_peak so far in
        bytes."""
        if phase is not None:
            self.phases[phase] = max(self.phases.get(phase, 0), self.phase_peak)
        self.phase_peak = self.in_use
        if self.xp is not np:
            pool = memory_pool(self.xp)
            self.pool_peak = max(self.pool_peak, int(pool.total_bytes()))
            pool.free_all_blocks()
        return self.pool_peak


def _counting_hook(memory: DeviceMemory):
    """A CuPy memory hook adding this thread's pool allocations, and frees of those allocations (not of
    memory allocated before), into memory.in_use(_peak)."""
    from cupy.cuda.memory_hook import MemoryHook  # noqa: PLC0415

    class Counting(MemoryHook):
        name = "paraflux-device-memory"

        def __init__(self):
            self.sizes = {}  # pointer -> bytes of the allocations made inside the window

        def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
            self.sizes[mem_ptr] = mem_size
            memory.in_use += mem_size
            memory.in_use_peak = max(memory.in_use_peak, memory.in_use)
            memory.phase_peak = max(memory.phase_peak, memory.in_use)

        def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id):
            memory.in_use -= self.sizes.pop(mem_ptr, 0)

    return Counting()


def _loaded_cupy():
    """CuPy where this process has imported it and a device answers (nothing to give back otherwise), else None."""
    cp = sys.modules.get("cupy")
    if cp is None or cupy_probe()[0] is None:
        return None
    return cp


def release_device_memory() -> None:
    """Give the devices back what CuPy's pools hold but no array uses: the current allocator's pool and the default
    one on every visible device, and the pinned host pool, so that a long session's device memory returns to
    its baseline between jobs (release_job_memory); arrays still referenced stay. A no-op where CuPy was never
    imported."""
    cp = _loaded_cupy()
    if cp is None:
        return
    pools = {id(pool): pool for pool in (memory_pool(cp), cp.get_default_memory_pool())}
    for device in range(gpu_count()):
        with cp.cuda.Device(device):
            for pool in pools.values():
                pool.free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


def release_host_memory() -> None:
    """Give the system back the free pages of the C heap (glibc's malloc_trim, every arena): the freed arrays of
    a large solve otherwise stay resident, and the process's memory follows its largest job, not what it holds.
    A no-op where the C library has no malloc_trim."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_job_memory() -> None:
    """Where a job ends (the window's job thread, a sweep point): its cached device memory and the host heap's
    free pages go back to the system (release_device_memory, release_host_memory)."""
    release_device_memory()
    release_host_memory()


@dataclass(frozen=True)
class DeviceUse:
    """Device memory in bytes, summed over the visible devices: pool_used and pool_held, what arrays use and
    what CuPy's default pool holds (used + cached); device_used, total minus free as the driver reports it
    (every process's, CUDA contexts and libraries' workspaces included)."""

    pool_used: int
    pool_held: int
    device_used: int


def device_memory_use() -> DeviceUse | None:
    """The devices' memory now (DeviceUse), or None where CuPy was never imported or no device answers."""
    cp = _loaded_cupy()
    if cp is None:
        return None
    pool, use = cp.get_default_memory_pool(), np.zeros(3, dtype=np.int64)
    for device in range(gpu_count()):
        with cp.cuda.Device(device):  # a pool's counts are the current device's
            free, total = cp.cuda.runtime.memGetInfo()
            use += (pool.used_bytes(), pool.total_bytes(), total - free)
    return DeviceUse(*(int(n) for n in use))


def host_free_bytes() -> int | None:
    """Host memory free now in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def out_of_memory(exc: BaseException, what: str, advice: str) -> OutOfMemory | None:
    """The one check for running out of memory: for CuPy's OutOfMemoryError (a MemoryError subclass) or
    a host MemoryError, a SolverError saying where (GPU or host), what ran out (`what`: 'the FMM solve of
    3,000 DOFs'), the bytes asked for and the bytes free, then `advice`; None for any other exception."""
    if not isinstance(exc, MemoryError):
        return None
    gpu = type(exc).__name__ == "OutOfMemoryError"
    text = str(exc)
    asked = re.search(r"allocating ([\d,]+) bytes", text)
    if asked:
        needed = _gib(int(asked.group(1).replace(",", "")))
    else:
        asked = re.search(r"allocate ([\d.]+ [KMGT]?i?B)", text)
        needed = asked.group(1) if asked else "more"
    free = _device_free() if gpu else (_gib(host_free_bytes()) + " free" if host_free_bytes() else "")
    return OutOfMemory(f"the {'GPU' if gpu else 'host'} ran out of memory for {what}: it needed {needed}"
                       f"{f' with {free}' if free else ''}; {advice}", "GPU" if gpu else "host")


def with_cpu_fallback(run, apply_variants):
    """run(problem, control) for a study with a backend axis: where the problem's backend is "auto" and
    the GPU runs out of memory, the run starts again on the CPU (backend "numpy"), said through
    control.report; a problem the CPU cannot run (a GPU-only variant) keeps the GPU's error."""
    def run_or_fall_back(problem, *args, **kwargs):
        try:
            return run(problem, *args, **kwargs)
        except OutOfMemory as exc:
            if exc.where != "GPU" or getattr(getattr(problem, "solver", None), "backend", None) != "auto":
                raise
            try:
                on_cpu = apply_variants(problem, {"backend": "numpy"})
            except ProblemError:
                raise exc from None
            control = args[0] if args else kwargs.get("control")
            if control is not None:
                control.report(0.0, f"{exc}; running on the CPU instead")
            return run(on_cpu, *args, **kwargs)
    return run_or_fall_back


def _gib(n: int) -> str:
    """n bytes in GiB, or in MiB below one GiB."""
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def _device_free() -> str:
    """'X GiB free of Y GiB on the device (Z GiB held by CuPy's pool)', or '' where CuPy cannot say."""
    try:
        import cupy as cp  # noqa: PLC0415

        free, total = cp.cuda.runtime.memGetInfo()
        limit = memory_pool(cp).get_limit()
        held = f", the pool limited to {_gib(limit)}" if limit else ""
        return f"{_gib(free)} free of {_gib(total)} on the device{held}"
    except Exception:  # noqa: BLE001 (a device that cannot even report its memory)
        return ""


def to_host(a) -> np.ndarray:
    """Return a NumPy array for a NumPy or CuPy array (or anything array-like)."""
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        return a.get()
    return np.asarray(a)


def array_module(a) -> ModuleType:
    """NumPy for a NumPy array (or anything not on a device), CuPy for a CuPy array."""
    if isinstance(a, np.ndarray) or not hasattr(a, "get"):
        return np
    import cupy  # noqa: PLC0415

    return cupy


_DEVICE_COPIES: dict = {}  # id(host array or matrix) -> its CuPy copy, dropped when the host object is collected


def on_device(a):
    """A CuPy copy of a NumPy array or a SciPy sparse matrix (CSR on the device, complex128: every product it
    takes part in is with complex columns), made once and kept while a lives."""
    key = id(a)
    if key not in _DEVICE_COPIES:
        import cupy  # noqa: PLC0415

        if isinstance(a, np.ndarray):
            copy = cupy.asarray(a)
        else:
            from cupyx.scipy import sparse  # noqa: PLC0415

            copy = sparse.csr_matrix(a.tocsr().astype(np.complex128))
        _DEVICE_COPIES[key] = copy
        weakref.finalize(a, _DEVICE_COPIES.pop, key, None)
    return _DEVICE_COPIES[key]


def gpu_available() -> bool:
    """True when CuPy imports and a CUDA GPU runs a kernel."""
    return cupy_probe()[0] is not None


def gpu_unavailable_reason() -> str:
    """Why the GPU backend cannot be used ('' when it can)."""
    module, info = cupy_probe()
    return "" if module is not None else info


def _cpu_description() -> str:
    name = platform.processor() or platform.machine()
    return f"CPU {name}, {os.cpu_count()} cores, NumPy {np.__version__}"


def get_backend(name: str = "auto") -> Backend:
    """Pick the array backend: 'numpy', 'cupy' (error if no usable GPU) or 'auto' (CuPy when usable)."""
    if name not in BACKEND.names:
        raise BackendError(f"unknown backend '{name}'; choose one of {', '.join(BACKEND.names)}")
    if name == "numpy":
        return Backend("numpy", np, _cpu_description())
    module, info = cupy_probe()
    if module is not None:
        return Backend("cupy", module, info)
    if name == "cupy":
        raise BackendError(f"backend 'cupy' is not available: {info}")
    return Backend("numpy", np, _cpu_description())


_modules: dict = {}
_modules_lock = threading.Lock()


def kernel_source(cu_file: Path) -> str:
    """A .cu file with its local #include "name" lines replaced by those headers' text (so CuPy's compile
    cache, keyed by source, sees header changes too)."""
    lines = []
    for line in Path(cu_file).read_text().splitlines():
        if line.startswith('#include "'):
            lines.append((Path(cu_file).parent / line.split('"')[1]).read_text())
        else:
            lines.append(line)
    return "\n".join(lines)


def kernel_module(cu_file: Path, options: tuple[str, ...] = ()):
    """The cupy.RawModule of a kernel file (local includes inlined), compiled once per device and options
    and loaded on the current device; thread-safe, for the several-GPU loops."""
    import cupy  # noqa: PLC0415

    key = (str(cu_file), tuple(options), cupy.cuda.Device().id)
    with _modules_lock:
        if key not in _modules:
            _modules[key] = cupy.RawModule(code=kernel_source(cu_file), options=tuple(options))
        return _modules[key]


def kernel_function(cu_file: Path, name: str, options: tuple[str, ...] = ()):
    """One kernel of a .cu file (see kernel_module), loaded on the current device."""
    return kernel_module(cu_file, options).get_function(name)
