"""The truncation study's pipeline: surfaces, dipole excitations on S', the operator by a loop strategy,
errors against the exact field on S."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..backend import host_free_bytes
from ..errors import ProblemError
from ..mesh.checks import check_apart
from ..mesh.meshing_process import run_meshing
from ..run_control import RunControl
from .fields import dipole_fields, wavenumber
from .loops import private_copy_bytes
from .operator import currents, operator_flops, paper_flops
from .strategies import apply_operator
from .surfaces import INSIDE, TriSurface, check_inside, quadrature, read_surface, winding_number


@dataclass(frozen=True)
class Dipole:
    position: tuple[float, float, float]  # m
    moment: tuple[complex, complex, complex]  # I l, A m


@dataclass(frozen=True, eq=False)
class TruncationSetup:
    """Everything in SI units: surfaces (m), frequency (Hz), points per triangle, one dipole per
    right-hand side, the loop strategy and (multi-gpu-tiled) how many GPUs, 0 for all."""

    inner: TriSurface  # S', outward
    outer: TriSurface  # S, outward
    frequency: float
    quadrature: int
    sources: tuple[Dipole, ...]
    loop: str = "cpu-s"
    devices: int = 0
    precision: float = 1e-10  # loop fmm: requested relative precision


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
    flops: int  # operator_flops: the stated count
    paper_flops: float  # paper 003's Table 2 count for the same element counts
    backend: str
    device: str
    devices: int
    memory: dict
    timings: dict = field(default_factory=dict)
    problem: object = None  # the TruncationProblem it came from, if any

    @property
    def gflops(self) -> float:
        return self.flops / self.timings["operator"] / 1e9

    @property
    def mesh(self) -> TriSurface:
        """S, the surface the result lives on (the window's element counts)."""
        return self.setup.outer

    @property
    def n_rhs(self) -> int:
        return len(self.setup.sources)

    iterations = None  # the operator is applied once: there is no iteration to count
    residual_history = np.zeros(0)

    @property
    def solution(self) -> np.ndarray:
        """E and curl E of every right-hand side, flattened (what Compare differences)."""
        return np.concatenate([self.e.ravel(), self.curl_e.ravel()])

    @property
    def element_error(self) -> np.ndarray:
        """Per S triangle, first right-hand side: |E - E_exact| / max |E_exact| (the quadrature points'
        largest value)."""
        q = self.setup.quadrature
        err = np.linalg.norm(self.e[0] - self.e_exact[0], axis=1).reshape(-1, q).max(axis=1)
        return err / np.linalg.norm(self.e_exact[0], axis=1).max()

    @property
    def element_magnitude(self) -> np.ndarray:
        """Per S triangle, first right-hand side: |E| (V/m) averaged over its quadrature points."""
        return np.linalg.norm(self.e[0], axis=1).reshape(-1, self.setup.quadrature).mean(axis=1)


def check_setup(setup: TruncationSetup, check=lambda: None) -> None:
    """Frequency, sources, loop and surfaces of a run (ProblemError names the first fault); check() runs
    between chunks of the inside tests (it raises to stop)."""
    from ..variants import LOOP  # noqa: PLC0415

    if not setup.frequency > 0:
        raise ProblemError(f"frequency must be positive, got {setup.frequency:g} Hz")
    if not setup.sources:
        raise ProblemError("give at least one dipole source")
    if setup.loop not in LOOP.names:
        raise ProblemError(f"unknown loop '{setup.loop}'; choose one of: {', '.join(LOOP.names)}")
    check_inside(setup.inner, setup.outer)
    inside = winding_number(setup.inner, np.array([s.position for s in setup.sources], dtype=float), check)
    for i, (src, w) in enumerate(zip(setup.sources, inside)):
        if w < INSIDE:
            raise ProblemError(f"source {i + 1} at ({', '.join(f'{c:g}' for c in src.position)}) m lies outside the inner "
                               f"surface '{setup.inner.name}' or on it")


def run_truncation(setup: TruncationSetup, control: RunControl | None = None, problem=None) -> TruncationResult:
    """E and curl E on S's quadrature points from the exact dipole fields on S', by setup.loop."""
    control = control or RunControl()
    check_setup(setup, control.check)
    timings = {}
    t0 = time.perf_counter()
    k = wavenumber(setup.frequency)
    qi, qo = quadrature(setup.inner, setup.quadrature), quadrature(setup.outer, setup.quadrature)
    n_rhs = len(setup.sources)
    # E and curl E with their currents on S', the applied and the exact fields on S: complex (n_rhs, N, 3) each
    _check_memory(4 * n_rhs * (len(qi.points) + len(qo.points)) * 3 * 16,
                  f"{n_rhs:,} right-hand sides on {len(qi.points):,} S' and {len(qo.points):,} S points",
                  "use fewer dipoles or coarser surfaces")
    inner_fields = []
    for i, s in enumerate(setup.sources):
        if i % 1000 == 999:
            control.check()
        inner_fields.append(dipole_fields(qi.points, s.position, s.moment, k))
    cur = currents(qi.normals, qi.weights, np.stack([e for e, _ in inner_fields]),
                   np.stack([f for _, f in inner_fields]))
    timings["currents"] = time.perf_counter() - t0
    output = 2 * n_rhs * len(qo.points) * 3 * 16
    memory = {"output_bytes": output, "extra_bytes": 0}
    if setup.loop == "cpu-sprime":
        import numba  # noqa: PLC0415

        memory["extra_bytes"] = private_copy_bytes(n_rhs, len(qo.points), numba.get_num_threads())
        _check_memory(memory["extra_bytes"] + output, "cpu-sprime's per-thread copies of the output", "use cpu-s")
    control.check()
    control.report(0.1, f"operator ({setup.loop}): {len(qi.points):,} S' points x {len(qo.points):,} S points x "
                        f"{n_rhs} right-hand sides")
    t0 = time.perf_counter()
    applied = apply_operator(setup.loop, qo.points, qi.points, cur, k, setup.quadrature, setup.devices,
                             precision=setup.precision)
    timings["operator"] = time.perf_counter() - t0
    control.check()
    control.report(0.9, "exact field on S")
    t0 = time.perf_counter()
    exact = [dipole_fields(qo.points, s.position, s.moment, k) for s in setup.sources]
    ee, fe = np.stack([a for a, _ in exact]), np.stack([b for _, b in exact])
    timings["reference"] = time.perf_counter() - t0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        errors = (float(np.linalg.norm(applied.e - ee) / np.linalg.norm(ee)),
                  float(np.linalg.norm(applied.f - fe) / np.linalg.norm(fe)))
    if not (np.isfinite(errors).all() and np.isfinite(applied.e).all() and np.isfinite(applied.f).all()):
        raise ProblemError("the fields on S overflow double precision: a source moment or the frequency is too "
                          "large")
    control.report(1.0, "done")
    return TruncationResult(
        setup, qo.points, applied.e, applied.f, ee, fe, *errors,
        operator_flops(len(qi.points), len(qo.points), n_rhs),
        paper_flops(setup.inner.n_elements, setup.outer.n_elements, n_rhs),
        applied.backend, applied.device, applied.devices, memory, timings, problem)


def setup_from_problem(problem, control: RunControl | None = None) -> TruncationSetup:
    """Surfaces (read or meshed), dipoles in metres: a TruncationProblem made ready to run; control can
    stop the meshing and the placing of random dipoles."""
    control = control or RunControl()
    check = control.check
    scale = problem.length_scale
    inner, outer = surfaces_of(problem, control)
    sources = [Dipole(tuple(scale * np.asarray(s.position)), s.moment) for s in problem.sources]
    if problem.random_sources is not None:
        sources += random_dipoles(inner, problem.random_sources.count, problem.random_sources.seed, check)
    return TruncationSetup(inner, outer, problem.frequency, problem.quadrature, tuple(sources), problem.solver.loop,
                           problem.solver.devices, problem.solver.precision)


def surfaces_of(problem, control: RunControl | None = None) -> tuple[TriSurface, TriSurface]:
    """(S', S) of a TruncationProblem in metres: its case meshed (where control can cancel it), or its
    two files read."""
    from .cases import mesh_surface_case  # noqa: PLC0415

    if problem.case is not None:
        return run_meshing(mesh_surface_case, problem.case, problem.inner_elements, problem.case_elements,
                           control=control)
    scale = problem.length_scale
    inner = read_surface(problem.inner_path, scale, "inner_surface")
    outer = read_surface(problem.outer_path, scale, "outer_surface")
    check_apart(inner.points, inner.triangles, outer.points, outer.triangles, "the inner and outer surfaces")
    return inner, outer


def random_dipoles(inner: TriSurface, count: int, seed: int, check=lambda: None) -> list[Dipole]:
    """count dipoles inside S' (points of its bounding box pulled half-way to its centroid and kept when
    inside), unit moments in random directions with random phases; check() as in winding_number."""
    rng = np.random.default_rng(seed)
    centre = inner.points.mean(axis=0)
    lo, hi = inner.points.min(axis=0), inner.points.max(axis=0)
    found = np.zeros((0, 3))
    for _ in range(50):
        trial = centre + 0.5 * (rng.uniform(lo, hi, (max(64, 2 * count), 3)) - centre)
        found = np.vstack([found, trial[winding_number(inner, trial, check) > INSIDE]])
        if len(found) >= count:
            break
    if len(found) < count:
        raise ProblemError(f"could not place {count} random dipoles inside the inner surface '{inner.name}'")
    direction = rng.standard_normal((count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    phase = np.exp(2j * np.pi * rng.uniform(size=(count, 1)))
    return [Dipole(tuple(p), tuple(m)) for p, m in zip(found[:count], direction * phase)]


def run_problem(problem, control: RunControl | None = None) -> TruncationResult:
    """The study's run: a TruncationProblem to a TruncationResult."""
    control = control or RunControl()
    control.report(0.0, "surfaces")
    t0 = time.perf_counter()
    setup = setup_from_problem(problem, control)
    seconds = time.perf_counter() - t0
    result = run_truncation(setup, control, problem)
    later = dict(result.timings)
    result.timings.clear()
    result.timings.update(surfaces=seconds, **later)
    return result


def _check_memory(need: int, what: str, hint: str) -> None:
    """ProblemError when need bytes of host memory exceed 80 % of what is free (unknown free: no check)."""
    free = host_free_bytes()
    if free is not None and need > 0.8 * free:
        raise ProblemError(f"{what} needs {need / 2**30:.1f} GiB, more than the {free / 2**30:.1f} GiB free; {hint}")


@dataclass(frozen=True, eq=False)
class SurfacePair:
    """S' and S of a problem, for a preview."""

    inner: TriSurface
    outer: TriSurface

    @property
    def n_elements(self) -> int:
        return self.inner.n_elements + self.outer.n_elements

    @property
    def n_nodes(self) -> int:
        return self.inner.n_nodes + self.outer.n_nodes


def load_surfaces(problem, control: RunControl | None = None) -> SurfacePair:
    """The problem's surfaces, checked (closed, outward, S' inside S); its sources are not placed."""
    inner, outer = surfaces_of(problem, control)
    check_inside(inner, outer)
    return SurfacePair(inner, outer)
