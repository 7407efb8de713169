"""multi-gpu-tiled: the operator on several GPUs, each running cuda-tiled on its part, with no cross-device
reduction. The work splits one of two ways (plan): by S's elements ("points": every GPU all right-hand
sides on its share of S) or by right-hand sides ("incidences": every GPU all of S for its share of the
incidences' columns). apply_split_reference is the NumPy twin of the split, staging and gathering.

MultiGpuOperator keeps all S and S' points resident on each GPU across applications (as across
FE-IIIEE iterations, where only the currents change). One host thread queues every device's work on its own
stream before waiting on any (its currents up from one pinned block, the kernels, its fields straight into
the host arrays E and F, pinned up to PINNED_BYTES): kernel launches and copies are asynchronous, and on
2 x H200 this took 0.4 ms less per application than a host thread per device, whose hand-offs and contention
for Python's interpreter lock the GPUs waited on. Each device's buffers are kept for the next application
with as many right-hand sides, and its kernel launches are captured once in a CUDA graph, so queuing a
device costs one copy, one graph launch and two events (13 to 48 us of host time on an H100's host, against 88
to 115 us for the launches one by one): that cost is the delay by which each device starts after the one
before.

The untiled loop that split S the same way with cuda-s on each GPU (`multi-gpu`) was retired: cuda-s runs a
thread per S element over every S' point, and S's 32,422 elements fill one wave of one GPU, so a split
shortened no thread's loop (1.49x on 2 GPUs, 1.5x from 2 to 4); cuda-tiled chunks S' until each GPU is full."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .gpu_loops import compiled_module, kernel_calls
from .operator import Currents, apply_reference

PINNED_BYTES = 1 << 30  # E and F above this size come back into pageable memory instead
HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2  # cudaMemcpyKind
SPLITS = ("points", "incidences")
INCIDENCES_PER_GPU = 8  # cuda-tiled reuses each coupling for 4 right-hand sides at a time. On 4 x H200
# (docs/benchmarks/truncation.md, wall time, numS 1,472 to 32,422), split by incidences against by points: 10
# columns over 4 GPUs (2 or 3 each) up to 1.46x slower; 37 columns over 2 GPUs 0.6 to 12 % faster, over 3 or 4
# from 4.5 % slower to 24 % faster
VECTOR_BYTES = 3 * 16  # one complex 3-vector


def split_for(n_rhs: int, devices: int) -> str:
    """The split "auto" stands for: by incidences once every GPU gets INCIDENCES_PER_GPU right-hand sides,
    else by S's points."""
    return "incidences" if n_rhs >= INCIDENCES_PER_GPU * devices else "points"


def split_elements(n: int, parts: int) -> list[tuple[int, int]]:
    """Consecutive ranges [lo, hi) of n items (elements or right-hand sides), nearly equal, one per device."""
    bounds = np.linspace(0, n, parts + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class Part:
    """One device's piece of an application: S points [lo, hi), right-hand sides [first, last)."""

    device: int  # index among the operator's devices
    lo: int
    hi: int
    first: int
    last: int

    @property
    def columns(self) -> int:
        return self.last - self.first


def plan(n_elem: int, q: int, n_rhs: int, devices: int, split: str) -> list[Part]:
    """The non-empty parts of S's n_elem elements (q points each, kept whole) x n_rhs right-hand sides over
    `devices` devices, split by "points" or "incidences"."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got '{split}'")
    if split == "points":
        parts = [Part(d, a * q, b * q, 0, n_rhs) for d, (a, b) in enumerate(split_elements(n_elem, devices))]
    else:
        parts = [Part(d, 0, n_elem * q, a, b) for d, (a, b) in enumerate(split_elements(n_rhs, devices))]
    return [p for p in parts if p.hi > p.lo and p.last > p.first]


def stage(cur: Currents, parts: list[Part], out: np.ndarray) -> list[int]:
    """Write each part's columns of the currents into out (8 n_rhs n_S',) complex, laid out as currents_views
    reads them, once for parts with the same columns; returns each part's offset (complex elements) into out."""
    n_s, at, placed = cur.dot_e.shape[1], 0, {}
    for p in parts:
        if (p.first, p.last) not in placed:
            size = 8 * p.columns * n_s
            views = currents_views(out[at:at + size], p.columns, n_s)
            for view, whole in zip(views, (cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)):
                view[...] = whole[p.first:p.last]
            placed[p.first, p.last] = at
            at += size
    return [placed[p.first, p.last] for p in parts]


def currents_views(flat, n_rhs: int, n_s: int):
    """cross_e, cross_f (n_rhs, n_s, 3) and dot_e, dot_f (n_rhs, n_s): contiguous views of flat (8 n_rhs n_s,)."""
    m = n_rhs * n_s
    return (flat[:3 * m].reshape(n_rhs, n_s, 3), flat[3 * m:6 * m].reshape(n_rhs, n_s, 3),
            flat[6 * m:7 * m].reshape(n_rhs, n_s), flat[7 * m:].reshape(n_rhs, n_s))


def apply_split_reference(targets, sources, cur: Currents, k: float, q: int, devices: int, split: str):
    """E, F (n_rhs, n_S, 3) as MultiGpuOperator computes them, every part by operator.apply_reference from its
    staged currents and gathered into place (the NumPy twin of the split; entries no part writes stay NaN)."""
    n_rhs, n_s = cur.dot_e.shape
    parts = plan(len(targets) // q, q, n_rhs, devices, split)
    staged = np.empty(8 * n_rhs * n_s, dtype=complex)
    e, f = (np.full((n_rhs, len(targets), 3), np.nan, dtype=complex) for _ in range(2))
    for p, at in zip(parts, stage(cur, parts, staged)):
        own = Currents(*currents_views(staged[at:at + 8 * p.columns * n_s], p.columns, n_s))
        e[p.first:p.last, p.lo:p.hi], f[p.first:p.last, p.lo:p.hi] = apply_reference(targets[p.lo:p.hi], sources,
                                                                                      own, k)
    return e, f


@dataclass(frozen=True)
class MultiGpuRun:
    """E, F (n_rhs, n_S, 3) complex on the host; the GPUs the operator spans and each working one's kernel
    seconds (CUDA events, without the transfers)."""

    e: np.ndarray
    f: np.ndarray
    devices: int
    kernel_seconds: tuple[float, ...]


@dataclass(frozen=True)
class _Share:
    """One device's resident inputs: all S and S' points (float64, on the device) and its stream."""

    device: int
    targets: object
    sources: object
    stream: object


@dataclass(frozen=True)
class _Workspace:
    """One device's buffers for one part (key: its columns, lo, hi): the currents (8 columns n_S',) and fields
    E, F (columns, hi - lo, 3) on the device, the CUDA graph of the kernel launches between them, the launches
    themselves (they hold the scratch the graph's kernels use) and two timing events."""

    key: tuple[int, int, int]
    currents: object
    fields: tuple
    graph: object
    calls: list
    start: object
    end: object


class MultiGpuOperator:
    """The operator for fixed S points targets (n_S, 3) (q per element, elements kept whole on one GPU) and
    S' points sources (n_S', 3) on the first `devices` GPUs (0: all), each holding every point, the work
    split by `split` ("points", "incidences", or "auto": split_for's pick per application; apply may name
    another). One application at a time (the devices' buffers are reused). Use as a context manager, or
    close() it, to release its device memory."""

    def __init__(self, targets, sources, k: float, q: int, devices: int = 0, split: str = "points"):
        import cupy as cp  # noqa: PLC0415

        if split != "auto":
            plan(1, 1, 1, 1, split)  # refuses an unknown split
        self._cp, self.k, self.q, self.split = cp, float(k), int(q), split
        available = cp.cuda.runtime.getDeviceCount()
        self.devices = available if devices == 0 else min(devices, available)
        self.n_targets, self.n_sources = len(targets), len(sources)
        self._shares = [self._share(device, targets, sources) for device in range(self.devices)]
        self._workspaces: dict[int, _Workspace] = {}  # by device
        self._staged = np.empty(0, dtype=complex)  # the currents of every device's next upload, pinned

    def _share(self, device: int, targets, sources) -> _Share:
        cp = self._cp
        with cp.cuda.Device(device):
            stream = cp.cuda.Stream(non_blocking=True)
            with stream:
                tgt = cp.asarray(targets, dtype=cp.float64)
                src = cp.asarray(sources, dtype=cp.float64)
            stream.synchronize()
            compiled_module(cp)
        return _Share(device, tgt, src, stream)

    def apply(self, cur: Currents, split: str | None = None) -> MultiGpuRun:
        """E, F (n_rhs, n_S, 3) complex128 on the host for the currents cur (host arrays), the work split by
        split (None: the operator's)."""
        import cupyx  # noqa: PLC0415

        cp = self._cp
        n_rhs, n_s = cur.dot_e.shape
        if n_s != self.n_sources:
            raise ValueError(f"currents at {n_s} points for an operator built on {self.n_sources} S' points")
        split = split or self.split
        parts = plan(self.n_targets // self.q, self.q, n_rhs, self.devices,
                     split_for(n_rhs, self.devices) if split == "auto" else split)
        if self._staged.size != 8 * n_rhs * n_s:  # one pinned block kept across calls
            self._staged = cupyx.empty_pinned(8 * n_rhs * n_s, dtype=complex)
        offsets = stage(cur, parts, self._staged)
        shape = (n_rhs, self.n_targets, 3)
        pinned = 2 * 16 * np.prod(shape) <= PINNED_BYTES
        e, f = ((cupyx.empty_pinned(shape, dtype=complex) if pinned else np.empty(shape, dtype=complex))
                for _ in range(2))
        queued = []
        try:
            for part, at in zip(parts, offsets):  # every device's kernel queued before any copy back or wait
                share = self._shares[part.device]
                ws = self._workspace(share, part, n_s)
                with cp.cuda.Device(share.device):
                    cp.cuda.runtime.memcpyAsync(ws.currents.data.ptr, self._staged.ctypes.data + 16 * at,
                                                ws.currents.nbytes, HOST_TO_DEVICE, share.stream.ptr)
                    ws.start.record(share.stream)
                    ws.graph.launch(share.stream)
                    ws.end.record(share.stream)
                queued.append((part, share, ws))
            for part, share, ws in queued:
                with cp.cuda.Device(share.device):
                    for host, block in zip((e, f), ws.fields):
                        _block_to_host(cp, host, block, part, share.stream)
        finally:  # no copy may still run into (or from) pinned memory once this returns or raises, and the
            # staged block may be refilled by the next call
            for share in self._shares:
                share.stream.synchronize()
        seconds = tuple(cp.cuda.get_elapsed_time(ws.start, ws.end) / 1e3 for _, _, ws in queued)
        return MultiGpuRun(e, f, self.devices, seconds)

    def _workspace(self, share: _Share, part: Part, n_s: int) -> _Workspace:
        """share's buffers and kernel graph for part, made when its columns or S points change."""
        ws = self._workspaces.get(share.device)
        key = (part.columns, part.lo, part.hi)
        if ws is None or ws.key != key:
            cp = self._cp
            self._workspaces.pop(share.device, None)  # its device memory back to the pool first
            with cp.cuda.Device(share.device), share.stream:
                currents = cp.empty(8 * part.columns * n_s, dtype=cp.complex128)
                fields = tuple(cp.empty((part.columns, part.hi - part.lo, 3), dtype=cp.complex128)
                               for _ in range(2))
                calls = kernel_calls(cp, "cuda-tiled", share.targets[part.lo:part.hi], share.sources,
                                     *currents_views(currents, part.columns, n_s), self.k, self.q, *fields)
                share.stream.begin_capture()
                try:
                    for call in calls:
                        call()
                finally:
                    graph = share.stream.end_capture()
                ws = _Workspace(key, currents, fields, graph, calls, cp.cuda.Event(), cp.cuda.Event())
            self._workspaces[share.device] = ws
        return ws

    def close(self) -> None:
        self._shares, self._workspaces, self._staged = [], {}, np.empty(0, dtype=complex)

    def __enter__(self) -> MultiGpuOperator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _block_to_host(cp, host: np.ndarray, block, part: Part, stream) -> None:
    """Copy block (columns, hi - lo, 3) on the device into host[first:last, lo:hi] with one strided copy."""
    row = block.shape[1] * VECTOR_BYTES
    cp.cuda.runtime.memcpy2DAsync(host.ctypes.data + (part.first * host.shape[1] + part.lo) * VECTOR_BYTES,
                                  host.shape[1] * VECTOR_BYTES, block.data.ptr, row, row, block.shape[0],
                                  DEVICE_TO_HOST, stream.ptr)


def apply_multi_gpu(targets, sources, cur: Currents, k: float, q: int, devices: int = 0,
                    split: str = "points") -> MultiGpuRun:
    """One application by a MultiGpuOperator built for it (the geometry's upload included)."""
    with MultiGpuOperator(targets, sources, k, q, devices, split) as op:
        return op.apply(cur)
