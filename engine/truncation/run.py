"""The truncation study's pipeline as data: surfaces, dipole excitations on S', the operator by a loop
strategy, errors against the exact field on S."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import ProblemError
from ..run_control import RunControl
from .fields import dipole_fields, wavenumber
from .loops import CPU_LOOPS, apply_cpu, private_copy_bytes
from .operator import currents, flops_per_pair_rhs
from .surfaces import TriSurface, check_inside, quadrature, winding_number


@dataclass(frozen=True)
class Dipole:
    position: tuple[float, float, float]  # m
    moment: tuple[complex, complex, complex]  # I l, A m


@dataclass(frozen=True, eq=False)
class TruncationSetup:
    inner: TriSurface  # S', outward
    outer: TriSurface  # S, outward
    frequency: float  # Hz
    quadrature: int  # points per triangle on S' and S
    sources: tuple[Dipole, ...]
    loop: str = "cpu-s"


@dataclass(frozen=True, eq=False)
class TruncationResult:
    setup: TruncationSetup
    points: np.ndarray  # (n_S, 3) quadrature points of S, m
    e: np.ndarray  # (n_rhs, n_S, 3) complex, V/m
    curl_e: np.ndarray  # (n_rhs, n_S, 3) complex, V/m^2
    e_exact: np.ndarray
    curl_exact: np.ndarray
    relative_error: float
    relative_error_curl: float
    flops: int
    timings: dict = field(default_factory=dict)

    @property
    def gflops(self) -> float:
        return self.flops / self.timings["operator"] / 1e9


def check_setup(setup: TruncationSetup) -> None:
    if not setup.frequency > 0:
        raise ProblemError(f"frequency must be positive, got {setup.frequency:g} Hz")
    if not setup.sources:
        raise ProblemError("give at least one dipole source")
    if setup.loop not in CPU_LOOPS:
        raise ProblemError(f"unknown loop '{setup.loop}'; choose one of: {', '.join(CPU_LOOPS)}")
    check_inside(setup.inner, setup.outer)
    inside = winding_number(setup.inner, np.array([s.position for s in setup.sources], dtype=float))
    for i, (src, w) in enumerate(zip(setup.sources, inside)):
        if w < 0.5:
            raise ProblemError(f"source {i + 1} at {list(src.position)} m lies outside the inner surface "
                               f"'{setup.inner.name}'")


def run_truncation(setup: TruncationSetup, control: RunControl | None = None) -> TruncationResult:
    """E and curl E on S's quadrature points from the exact dipole fields on S', by setup.loop."""
    control = control or RunControl()
    check_setup(setup)
    timings = {}
    t0 = time.perf_counter()
    k = wavenumber(setup.frequency)
    qi, qo = quadrature(setup.inner, setup.quadrature), quadrature(setup.outer, setup.quadrature)
    inner_fields = [dipole_fields(qi.points, s.position, s.moment, k) for s in setup.sources]
    cur = currents(qi.normals, qi.weights, np.stack([e for e, _ in inner_fields]),
                   np.stack([f for _, f in inner_fields]))
    timings["currents"] = time.perf_counter() - t0
    if setup.loop == "cpu-sprime":
        import numba  # noqa: PLC0415

        need = private_copy_bytes(len(setup.sources), len(qo.points), numba.get_num_threads())
        _check_memory(need)
    control.report(0.1, f"operator ({setup.loop}): {len(qi.points)} S' points x {len(qo.points)} S points x "
                        f"{len(setup.sources)} right-hand sides")
    t0 = time.perf_counter()
    e, f = apply_cpu(setup.loop, qo.points, qi.points, cur, k)
    timings["operator"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    exact = [dipole_fields(qo.points, s.position, s.moment, k) for s in setup.sources]
    ee, fe = np.stack([a for a, _ in exact]), np.stack([b for _, b in exact])
    timings["reference"] = time.perf_counter() - t0
    control.report(1.0, "done")
    flops = flops_per_pair_rhs() * len(qi.points) * len(qo.points) * len(setup.sources)
    return TruncationResult(setup, qo.points, e, f, ee, fe, float(np.linalg.norm(e - ee) / np.linalg.norm(ee)),
                            float(np.linalg.norm(f - fe) / np.linalg.norm(fe)), flops, timings)


def _check_memory(need: int) -> None:
    try:
        import os  # noqa: PLC0415

        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return
    if need > 0.8 * free:
        raise ProblemError(f"cpu-sprime needs {need / 2**30:.1f} GiB for its per-thread copies of the output, "
                           f"more than the {free / 2**30:.1f} GiB free; use cpu-s")
