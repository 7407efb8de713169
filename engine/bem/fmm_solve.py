"""The fast multipole boundary element solve: restarted GMRES (engine/bem/gmres.py, where the FMM runs) on the
FmmBemOperator, preconditioned by an incomplete LU of the near-field matrix plus a coarse level
(engine/bem/coarse.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse.linalg as sla
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..backend import DeviceMemory, get_backend, out_of_memory, to_host
from ..errors import SolverError
from ..fmm.fmm import resolve_m2l
from ..fmm.m2l import SCHEMES
from .coarse import CoarseCorrection, cluster_count, coarse_correction
from .direct import BemSolution, BoundaryData, solution_of
from .fmm_operator import CORRECTION_RATIO, FmmBemOperator, far_points_for
from .gmres import gmres
from .block_ilu import DeviceBlockIlu0
from .unknowns import unknown_layout

COARSE_FP32_FROM = 1e-3  # the coarse LU in FP32 (with the ILU) only for tolerances this coarse: on the bracket
# at 100k DOFs (H100) it took 35 GMRES iterations against FP64's 34 to 1e-3, but 65 against 51 to 1e-6 and 96
# against 61 to 1e-8 (at 20k DOFs: 36/35, 66/52, 99/62)
ILU_DROP, ILU_FILL = 1e-3, 2  # spilu of the near-field matrix (1e-5 and 8 took as many GMRES iterations)


@dataclass(frozen=True)
class FmmSettings:
    order: int = 10  # multipole order p (docs/studies/fmbem.md: the FMM solve's error per order)
    leaf_size: int | None = None  # None: LaplaceFMM's default for the backend (32 on NumPy, 256 on the GPU)
    m2l: str = "auto"  # see fmm.resolve_m2l
    backend: str = "numpy"
    rtol: float = 1e-8  # GMRES relative residual
    restart: int = 200  # Krylov vectors kept (3N doubles each); restarting every 50 stalled on the bracket
    max_iterations: int = 1000  # GMRES iterations in all (inner, over the restarts)
    far_points: int | None = None  # FMM sources per element (Dunavant rule of 1, 3, 6, 7 or 12 points); None:
    # fmm_operator.far_points_for(order), 3 below p = 10 and 6 from there
    correction_ratio: float = CORRECTION_RATIO  # near field out to this many element sizes
    precondition_ratio: float | None = None  # the ILU's matrix out to this many element sizes, from 1 (plain rule
    # beyond the corrections; short of them, fewer entries); None: as far as the corrections
    exponential_nodes: int = 17  # plane-wave quadrature of the exponential M2L (8, 17 or 26)
    preconditioner_fp32: bool = True  # on the GPU, the near matrix and its ILU(0) factors in FP32 (about half
    # their memory as 3x3 blocks, as many iterations), and the coarse level's LU where rtol >= COARSE_FP32_FROM
    # (half its memory); the operator, GMRES's products and residuals stay FP64
    separation: int | None = None  # the FMM's near boxes, 1 (adjacent) or 2; None: the widest the M2L scheme takes
    # (2 for standard and batched-gemm: docs/studies/fmbem.md, the solve's error per order and separation)
    fp32_tables: bool = False  # the FMM's same-level M2L table in FP32 (LaplaceFMM: about 1e-7 relative, for
    # precisions of 1e-5 and coarser; the densities, expansions and sums stay FP64)
    far_passes: int = 1  # FMM applications per far-field product, the seven densities split among them (1-7):
    # more passes, less device memory, more time (fmm_operator.FmmBemOperator)
    coarse_clusters: int | None = None  # the preconditioner's coarse level (engine/bem/coarse.py): clusters of
    # collocation points; None: coarse.cluster_count (8 points each, at most 6 sqrt(T)), 0: none (ILU alone)


@dataclass(frozen=True, eq=False)
class GmresReport:
    iterations: int
    residuals: tuple[float, ...]  # relative residual ||b - A x|| / ||b|| after each iteration
    relative_residual: float  # ||b - A x|| / ||b|| of the returned solution, unpreconditioned
    timings: dict = field(default_factory=dict)  # s: near and far setup, preconditioner, GMRES
    near_pairs: int = 0
    memory: dict = field(default_factory=dict)  # bytes: host (near field, ILU, Krylov basis); parts: the correction
    # matrix's, the ILU factors', the coarse LU's and the Krylov basis's, host or device; device: the most in
    # use at once in CuPy's pool (device_bytes) and the most the pool held (device_pool_bytes), DeviceMemory;
    # fmm_table_bytes: the FMM's translation tables on the GPU, in device_bytes only where this solve built
    # them (they are cached per order and separation across solves)
    right_hand_side: np.ndarray | None = None  # b = G t - H u of the prescribed data (3T,), by the FMM
    extra_nodes: int = 0  # double nodes K at sharp edges between prescribed displacements (3K more unknowns)
    coarse_size: int = 0  # unknowns of the preconditioner's coarse level (0: none)


@dataclass(frozen=True, eq=False)
class Preconditioner:
    solve: Callable  # r -> M^-1 r on arrays of the FMM's module
    nbytes: int  # its host bytes (device bytes are in the memory pool)
    factor_bytes: int = 0  # its factors' bytes, host or device


def near_field_preconditioner(op: FmmBemOperator, fp32: bool) -> Preconditioner:
    """Incomplete LU of the near-field system matrix (the operator's near blocks, taken): with the FMM on the
    host a threshold ILU in reverse Cuthill-McKee order (SuperLU), on the GPU ILU(0) there in a multicolour
    order of its 3x3 blocks (DeviceBlockIlu0; a node's or slot's components), its factors in FP32 where fp32."""
    singular = ("the near-field preconditioner is singular ({}): the prescribed displacements leave a rigid-body "
                "motion free")
    if op.xp is not np:  # the near matrix (with the rigid-body terms and the idle identity) handed over
        try:
            ilu = DeviceBlockIlu0(op.take_near, np.float32 if fp32 else np.float64)
            return Preconditioner(ilu.solve, 0, ilu.nbytes)
        except SolverError as exc:
            raise SolverError(singular.format(exc)) from None
    a = op.take_near().tocsr()
    order = reverse_cuthill_mckee(a, symmetric_mode=False)  # a banded order: 2-3x faster than COLAMD
    back = np.argsort(order)
    try:
        ilu = sla.spilu(a[order][:, order].tocsc(), drop_tol=ILU_DROP, fill_factor=ILU_FILL, permc_spec="NATURAL")
    except RuntimeError as exc:
        raise SolverError(singular.format(exc)) from None
    factors = int((ilu.L.nnz + ilu.U.nnz) * 12 + 2 * (a.shape[0] + 1) * 4)
    return Preconditioner(lambda r: ilu.solve(r[order])[back], factors, factors)


def solve_fmm(points, triangles, data: BoundaryData, young: float, poisson: float,
              settings: FmmSettings = FmmSettings()) -> tuple[BemSolution, GmresReport]:
    """Solve the mixed problem with the FMM operator; SolverError if GMRES does not reach settings.rtol."""
    mu = young / (2 * (1 + poisson))
    n = len(points)
    layout = unknown_layout(points, triangles, data.displacement_type)
    if layout.displacement.all():
        raise SolverError("no displacement is prescribed anywhere: the body is free to move as a rigid body")
    try:
        return _solve(points, triangles, data, mu, poisson, layout, settings)
    except MemoryError as exc:
        raise out_of_memory(exc, f"the FMM solve of {3 * n:,} DOFs",
                            "use a coarser mesh, a lower order, fewer far-field points or near_field = 3") from None


def separation_of(settings: FmmSettings) -> int:
    """settings.separation, or where None the widest separation its M2L scheme takes."""
    if settings.separation is not None:
        return settings.separation
    return max(SCHEMES[resolve_m2l(settings.m2l, get_backend(settings.backend).is_gpu)].separations)


def _solve(points, triangles, data, mu, poisson, layout, settings):
    with DeviceMemory(get_backend(settings.backend).xp) as memory:
        solution, report = _solve_counted(points, triangles, data, mu, poisson, layout, settings, memory)
    report.memory.update(device_bytes=memory.in_use_peak, device_pool_bytes=memory.pool_peak,
                         device_phase_bytes=dict(memory.phases))
    return solution, report


def _solve_counted(points, triangles, data, mu, poisson, layout, settings, memory):
    n3 = 3 * layout.n_targets
    op = FmmBemOperator(points, triangles, layout, data.displacement_type, data.traction, mu, poisson,
                        settings.order, settings.leaf_size, settings.m2l, settings.backend,
                        settings.far_points or far_points_for(settings.order),
                        settings.correction_ratio, memory, settings.exponential_nodes, separation_of(settings),
                        settings.precondition_ratio, known_displacement=data.displacement,
                        near_dtype=_preconditioner_dtype(settings), far_passes=settings.far_passes,
                        fp32_tables=settings.fp32_tables)
    timings = dict(op.timings)
    xp = op.xp
    b = xp.asarray(op.known_part())
    t0 = time.perf_counter()
    m = near_field_preconditioner(op, settings.preconditioner_fp32)
    op.memory.mark("preconditioner")
    timings["preconditioner"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    coarse = _coarse_level(op, settings)
    op.memory.mark("coarse level")
    timings["coarse"] = time.perf_counter() - t0
    solve = m.solve if coarse is None else lambda r: m.solve(r) + coarse.solve(r)
    t0 = time.perf_counter()
    restart = min(settings.restart, settings.max_iterations)  # max_iterations counts inner iterations
    # right preconditioning, A M^-1 y = b, x = M^-1 y: GMRES minimises and tests the true residual
    result = gmres(op.apply, solve, b, settings.rtol, restart, settings.max_iterations)
    timings["gmres"] = time.perf_counter() - t0
    op.memory.mark("GMRES")
    residuals, relative = result.residuals, float(result.relative_residual)
    if not result.converged or not np.isfinite(relative):
        raise SolverError(f"GMRES did not converge: relative residual {relative:.2e} after {len(residuals)} "
                          f"iterations (asked {settings.rtol:g}); raise the order or the iteration limit")
    x = to_host(result.x)
    solution = solution_of(x.reshape(-1, 3), layout, data, op.u_known, triangles, mu)
    c = op.correction  # (the near blocks went into m)
    parts = {"correction": int(c.data.nbytes + c.indices.nbytes + c.indptr.nbytes), "ilu": m.factor_bytes,
             "coarse_lu": coarse.lu_bytes if coarse else 0, "krylov": result.basis_rows * n3 * 8,
             "fmm_harmonics": op.fmm.kept_harmonics_bytes}
    host = (parts["correction"] + m.nbytes + parts["krylov"] + (coarse.nbytes if coarse else 0)
            + parts["fmm_harmonics"]) if xp is np else 0
    # (else all in the device pool)
    return solution, GmresReport(len(residuals), tuple(map(float, residuals)), relative, timings, op.near_pairs,
                                 {"host_bytes": int(host), "parts": parts,
                                  "fmm_table_bytes": op.fmm.device_table_bytes}, to_host(b), len(layout.extra_node),
                                 coarse.size if coarse else 0)


def _coarse_level(op: FmmBemOperator, settings: FmmSettings) -> CoarseCorrection | None:
    """The preconditioner's coarse level (settings.coarse_clusters), or None where 0."""
    clusters = cluster_count(len(op.targets)) if settings.coarse_clusters is None else settings.coarse_clusters
    if clusters <= 0:
        return None
    return coarse_correction(op, clusters, coarse_dtype(settings))


def _preconditioner_dtype(settings: FmmSettings):
    """The near matrix's and ILU(0) factors' dtype: float32 on the GPU where asked, else float64."""
    return np.float32 if settings.preconditioner_fp32 and get_backend(settings.backend).is_gpu else np.float64


def coarse_dtype(settings: FmmSettings):
    """The coarse LU's dtype: the ILU's where the tolerance is COARSE_FP32_FROM or coarser, else float64."""
    return _preconditioner_dtype(settings) if settings.rtol >= COARSE_FP32_FROM else np.float64
