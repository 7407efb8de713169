"""multi-gpu and multi-gpu-tiled: the S elements split across GPUs, each running one kernel of gpu_loops
(cuda-s or cuda-tiled) on its part, with no cross-device reduction.

MultiGpuOperator keeps each GPU's share of S's points and all S' points resident across applications (as
across FE-IIIEE iterations, where only the currents change). One host thread queues every device's work on
its own stream before waiting on any (the currents up from one pinned block, the kernels, the fields straight
into the host arrays E and F, pinned up to PINNED_BYTES): kernel launches and copies are asynchronous, and on
2 x H200 this took 0.4 ms less per application than a host thread per device, whose hand-offs and contention
for Python's interpreter lock the GPUs waited on. Each device's buffers are kept for the next application
with as many right-hand sides, and its kernel launches are captured once in a CUDA graph, so queuing a
device costs one copy, one graph launch and two events (13 to 48 us of host time on an H100's host, against 88
to 115 us for the launches one by one): that cost is the delay by which each device starts after the one
before."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .gpu_loops import compiled_module, kernel_calls
from .operator import Currents

PINNED_BYTES = 1 << 30  # E and F above this size come back into pageable memory instead
HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2  # cudaMemcpyKind


def split_elements(n_elem: int, parts: int) -> list[tuple[int, int]]:
    """Consecutive element ranges [lo, hi) of nearly equal size, one per device."""
    bounds = np.linspace(0, n_elem, parts + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class MultiGpuRun:
    """E, F (n_rhs, n_S, 3) complex on the host; the GPUs used and each one's kernel seconds (CUDA events,
    without the transfers)."""

    e: np.ndarray
    f: np.ndarray
    devices: int
    kernel_seconds: tuple[float, ...]


@dataclass(frozen=True)
class _Share:
    """One device's S points [lo, hi) (point indices) with its resident inputs and stream."""

    device: int
    lo: int
    hi: int
    targets: object  # (hi - lo, 3) float64 on the device
    sources: object  # (n_S', 3) float64 on the device
    stream: object


@dataclass(frozen=True)
class _Workspace:
    """One device's buffers for n_rhs right-hand sides: the currents (8 n_rhs n_S',) and fields E, F
    (n_rhs, hi - lo, 3) on the device, the CUDA graph of the kernel launches between them, the launches
    themselves (they hold the scratch the graph's kernels use) and two timing events."""

    n_rhs: int
    currents: object
    fields: tuple
    graph: object
    calls: list
    start: object
    end: object


class MultiGpuOperator:
    """The operator for fixed S points targets (n_S, 3) (q per element, elements kept whole on one GPU) and
    S' points sources (n_S', 3), split across the first `devices` GPUs (0: all); kernel: cuda-s or
    cuda-tiled. One application at a time (the devices' buffers are reused). Use as a context manager, or
    close() it, to release its device memory."""

    def __init__(self, targets, sources, k: float, q: int, devices: int = 0, kernel: str = "cuda-s"):
        import cupy as cp  # noqa: PLC0415

        self._cp, self.k, self.q, self.kernel = cp, float(k), int(q), kernel
        available = cp.cuda.runtime.getDeviceCount()
        self.devices = available if devices == 0 else min(devices, available)
        self.n_targets, self.n_sources = len(targets), len(sources)
        shares = []
        for device, (lo, hi) in enumerate(split_elements(self.n_targets // q, self.devices)):
            with cp.cuda.Device(device):
                stream = cp.cuda.Stream(non_blocking=True)
                with stream:
                    tgt = cp.asarray(targets[lo * q:hi * q], dtype=cp.float64)
                    src = cp.asarray(sources, dtype=cp.float64)
                stream.synchronize()
                compiled_module(cp)
            shares.append(_Share(device, lo * q, hi * q, tgt, src, stream))
        self._shares = [share for share in shares if share.hi > share.lo]
        self._workspaces: dict[int, _Workspace] = {}  # by device
        self._staged = np.empty(0, dtype=complex)  # the currents of every device's next upload, pinned

    def apply(self, cur: Currents) -> MultiGpuRun:
        """E, F (n_rhs, n_S, 3) complex128 on the host for the currents cur (host arrays)."""
        import cupyx  # noqa: PLC0415

        cp = self._cp
        n_rhs, n_s = cur.dot_e.shape
        if n_s != self.n_sources:
            raise ValueError(f"currents at {n_s} points for an operator built on {self.n_sources} S' points")
        if self._staged.size != 8 * n_rhs * n_s:  # the four currents, one pinned block kept across calls
            self._staged = cupyx.empty_pinned(8 * n_rhs * n_s, dtype=complex)
        staged = self._staged
        for view, part in zip(_currents_views(staged, n_rhs, n_s), (cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)):
            view[...] = part
        shape = (n_rhs, self.n_targets, 3)
        pinned = 2 * 16 * np.prod(shape) <= PINNED_BYTES
        e, f = ((cupyx.empty_pinned(shape, dtype=complex) if pinned else np.empty(shape, dtype=complex))
                for _ in range(2))

        queued = []
        try:
            for share in self._shares:  # every device's kernel queued before any copy back or wait
                ws = self._workspace(share, n_rhs, n_s)
                with cp.cuda.Device(share.device):
                    cp.cuda.runtime.memcpyAsync(ws.currents.data.ptr, staged.ctypes.data, staged.nbytes,
                                                HOST_TO_DEVICE, share.stream.ptr)  # asynchronous: staged is pinned
                    ws.start.record(share.stream)
                    ws.graph.launch(share.stream)
                    ws.end.record(share.stream)
                queued.append((share, ws))
            for share, ws in queued:
                with cp.cuda.Device(share.device):
                    for host, part in zip((e, f), ws.fields):
                        _rows_to_host(cp, host, part, share.lo, share.stream)
        finally:  # no copy may still run into (or from) pinned memory once this returns or raises, and staged
            # may be refilled by the next call
            for share in self._shares:
                share.stream.synchronize()
        seconds = tuple(cp.cuda.get_elapsed_time(ws.start, ws.end) / 1e3 for _, ws in queued)
        return MultiGpuRun(e, f, self.devices, seconds)

    def _workspace(self, share: _Share, n_rhs: int, n_s: int) -> _Workspace:
        """share's buffers and kernel graph for n_rhs right-hand sides, made when n_rhs changes."""
        ws = self._workspaces.get(share.device)
        if ws is None or ws.n_rhs != n_rhs:
            cp = self._cp
            self._workspaces.pop(share.device, None)  # its device memory back to the pool first
            with cp.cuda.Device(share.device), share.stream:
                currents = cp.empty(8 * n_rhs * n_s, dtype=cp.complex128)
                fields = tuple(cp.empty((n_rhs, share.hi - share.lo, 3), dtype=cp.complex128) for _ in range(2))
                calls = kernel_calls(cp, self.kernel, share.targets, share.sources,
                                     *_currents_views(currents, n_rhs, n_s), self.k, self.q, *fields)
                share.stream.begin_capture()
                try:
                    for call in calls:
                        call()
                finally:
                    graph = share.stream.end_capture()
                ws = _Workspace(n_rhs, currents, fields, graph, calls, cp.cuda.Event(), cp.cuda.Event())
            self._workspaces[share.device] = ws
        return ws

    def close(self) -> None:
        self._shares, self._workspaces, self._staged = [], {}, np.empty(0, dtype=complex)

    def __enter__(self) -> MultiGpuOperator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _currents_views(flat, n_rhs: int, n_s: int):
    """cross_e, cross_f (n_rhs, n_s, 3) and dot_e, dot_f (n_rhs, n_s): contiguous views of flat (8 n_rhs n_s,)."""
    m = n_rhs * n_s
    return (flat[:3 * m].reshape(n_rhs, n_s, 3), flat[3 * m:6 * m].reshape(n_rhs, n_s, 3),
            flat[6 * m:7 * m].reshape(n_rhs, n_s), flat[7 * m:].reshape(n_rhs, n_s))


def _rows_to_host(cp, host: np.ndarray, part, lo: int, stream) -> None:
    """Copy part (n_rhs, m, 3) on the device into host[:, lo:lo + m] with one strided copy on stream."""
    row = part.shape[1] * 3 * 16
    cp.cuda.runtime.memcpy2DAsync(host.ctypes.data + lo * 3 * 16, host.shape[1] * 3 * 16, part.data.ptr, row, row,
                                  part.shape[0], DEVICE_TO_HOST, stream.ptr)


def apply_multi_gpu(targets, sources, cur: Currents, k: float, q: int, devices: int = 0,
                    kernel: str = "cuda-s") -> MultiGpuRun:
    """One application by a MultiGpuOperator built for it (the geometry's upload included)."""
    with MultiGpuOperator(targets, sources, k, q, devices, kernel) as op:
        return op.apply(cur)
