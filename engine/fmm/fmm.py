"""LaplaceFMM: potential and gradient of charges and dipoles, 1/|x - y| kernel, several densities at once.

The plan (plan.py: tree, lists, translation tables, the M2L scheme's work) is built once; apply() runs the
passes and can be called many times (GMRES).
Expansions are stored scaled by their box side h (multipoles M_n h^-n, locals L_n h^(n+1)) so one set
of M2M / M2L / L2L matrices serves every level.
"""

from __future__ import annotations

import time

import numpy as np

from ..backend import get_backend, to_host
from ..errors import ProblemError
from ..variants import M2L
from .m2l import SCHEMES
from .plan import FmmOptions, build_plan
from .tree import SEPARATIONS, Octree

M2L_SCHEMES = tuple(name for name in M2L.names if name != "auto")  # the schemes; auto picks one of them


def resolve_m2l(m2l: str, on_gpu: bool) -> str:
    """The scheme that runs for a choice of the registry's M2L axis: auto is standard on the GPU and
    batched-gemm on NumPy (the faster in each place, as measured)."""
    if m2l == "auto":
        return "standard" if on_gpu else "batched-gemm"
    if m2l not in M2L_SCHEMES:
        raise ProblemError(f"unknown m2l scheme '{m2l}'; choose one of: {', '.join(M2L.names)}")
    return m2l


MIN_ORDER, MAX_ORDER = 2, 20
LEAF_SIZE_HOST, LEAF_SIZE_GPU = 32, 256  # points per leaf by default (sources and targets counted together): on the
# GPU bench fmm's from-scratch runs at 1e5 to 1e7 points were fastest at 128-256 (H100), 32 taking up to 5x longer
FP32_TABLES_UP_TO = 1e-5  # the finest requested precision FP32 M2L tables are meant for (their ~1e-7 stays 100x below)


def order_for_precision(eps: float, separation: int = 1) -> int:
    """The expansion order that reaches a relative L2 error of about eps (potential and gradient) with the
    standard scheme and 32 points per leaf. Separation 1: the error falls by about 0.44 per order from 2.7e-2,
    plus one order of margin; separation 2: by 0.26 per order from 3.4e-2 (fitted, with no margin, to the worst
    of uniform and sphere points, the gradient on uniform points: p = 3 .. 10 gave 6.0e-4 .. 4.9e-8)."""
    if not 0 < eps < 1:
        raise ProblemError(f"the requested precision must lie between 0 and 1, got {eps:g}")
    if separation == 2:
        p = np.ceil(np.log(eps / 3.4e-2) / -1.344)
    else:
        p = np.ceil(np.log(eps / 2.7e-2) / np.log(0.44)) + 1
    return int(min(MAX_ORDER, max(MIN_ORDER, p)))


def _points(points, name: str) -> np.ndarray:
    """(n, 3) float64 points, n >= 1 (build_octree refuses non-finite ones); ProblemError otherwise."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) == 0:
        raise ProblemError(f"{name} must be an array of shape (n, 3) with n >= 1, got {points.shape}")
    return points


class LaplaceFMM:
    """FMM between fixed sources (n_s, 3) and targets (n_t, 3); order p in 2..20; leaf_size: points per leaf
    at most (None: LEAF_SIZE_HOST on NumPy, LEAF_SIZE_GPU on the GPU); m2l one of M2L_SCHEMES
    or auto (the default, see resolve_m2l; `paraflux bench fmm` compares all of them);
    tree: an octree already built for these points (build_octree), reused instead of building one;
    exponential_nodes: 8, 17 or 26, the plane-wave quadrature of the exponential scheme (about 3, 6, 9
    digits at best); separation: 1 or 2, boxes at most that many boxes apart along every axis interact directly,
    farther ones through M2L (2: about 4.6x the translations and the direct sum, a far smaller translation
    error per order; standard and batched-gemm only); fp32_tables: the same-level M2L table in FP32 (half its
    memory and the M2L's table traffic on the GPU; the expansions and the sums stay FP64), which adds about
    1e-7 relative to the result: for precisions of 1e-5 and coarser (FP32_TABLES_UP_TO)."""

    def __init__(self, sources, targets, order: int = 8, leaf_size: int | None = None, m2l: str = M2L.default,
                 backend: str = "numpy", tree: Octree | None = None, exponential_nodes: int = 17,
                 separation: int = 1, fp32_tables: bool = False):
        if isinstance(order, bool) or int(order) != order or not MIN_ORDER <= order <= MAX_ORDER:
            raise ProblemError(f"FMM order must be a whole number from {MIN_ORDER} to {MAX_ORDER}, got {order}")
        sources, targets = _points(sources, "sources"), _points(targets, "targets")
        self.backend = get_backend(backend)
        self.xp = self.backend.xp
        if separation not in SEPARATIONS:
            raise ProblemError(f"the FMM separation must be 1 or 2 boxes, got {separation}")
        if leaf_size is None:
            leaf_size = LEAF_SIZE_GPU if self.backend.is_gpu else LEAF_SIZE_HOST
        options = FmmOptions(int(order), leaf_size, resolve_m2l(m2l, self.backend.is_gpu), int(exponential_nodes),
                             separation, bool(fp32_tables))
        scheme = SCHEMES[options.scheme]
        scheme.check(options)
        self.plan = build_plan(sources, targets, options, self.backend, _passes(self.backend), scheme, tree)
        self.order, self.m2l, self.nodes, self.tree = (options.order, options.scheme, options.exponential_nodes,
                                                       self.plan.tree)
        self.p2p_reference = False  # True: the near field by the NumPy specification (tests compare the two)

    @property
    def source_order(self) -> np.ndarray:
        """(n_s,) host indices: the tree's i-th source is the caller's source_order[i]."""
        return to_host(self.plan.tree.src_order)

    @property
    def device_table_bytes(self) -> int:
        """Bytes of the cached translation tables this plan reads on the GPU (0 on the host): kept per order and
        separation across plans (the same-level M2L table and the cross-level schemes'), so a plan that found
        them there did not allocate them (its uncached M2M / L2L tables are its own allocations, not counted)."""
        return sum(getattr(self.plan.passes, "table_bytes", {}).values())

    @property
    def kept_harmonics_bytes(self) -> int:
        """Bytes of the P2M and L2P harmonics the host's passes keep between applications (host.KEPT_BYTES at
        most; 0 before the first application and on the GPU)."""
        return self.plan.kept_bytes

    def sorted_sources(self):
        """(n_s, 3) the sources in the tree's order, the plan's own array on the backend (not a copy)."""
        return self.plan.resident().src

    def apply(self, charges=None, dipoles=None, gradient: bool = False, timings: dict | None = None,
              in_tree_order: bool = False):
        """Potential (n_dens, n_t) and gradient (n_dens, n_t, 3) or None at the targets.

        charges: (n_dens, n_s) or (n_s,); dipoles: (n_dens, n_s, 3) or (n_s, 3); real. in_tree_order: the
        densities are given in the tree's source order (source_order), float64 arrays of the backend, and are
        read in place instead of copied into that order. timings: a dict that receives the seconds of each
        phase (upward, m2l, downward, p2p), device work waited for.
        """
        plan, passes, xp = self.plan, self.plan.passes, self.xp
        clock = _Clock(self.backend, timings)
        res = plan.resident()
        q, d = self._densities(charges, dipoles, None if in_tree_order else res.src_order)
        n_dens, levels = (q if q is not None else d).shape[0], range(1, len(plan.tree.levels))
        multipole = xp.zeros((int(plan.box_offset[-1]), n_dens, 2 * plan.n_coef))
        local = xp.zeros_like(multipole)
        passes.p2m(plan, res, q, d, multipole)
        for level in reversed(levels):
            passes.m2m(plan, level, multipole)
        clock.lap("upward")
        plan.m2l.apply(plan.m2l_work, multipole, local)
        clock.lap("m2l")
        for level in levels:
            passes.l2l(plan, level, local)
        phi = xp.zeros((n_dens, len(plan.targets)))
        grad = xp.zeros((n_dens, len(plan.targets), 3)) if gradient else None
        passes.l2p(plan, res, local, phi, grad)
        clock.lap("downward")
        passes.p2p(plan, res, q, d, phi, grad, self.p2p_reference)
        clock.lap("p2p")
        phi, grad = (None if a is None else _unsorted(a, res.tgt_order, xp) for a in (phi, grad))
        if (charges is not None and np.ndim(charges) == 1) or (dipoles is not None and np.ndim(dipoles) == 2):
            return phi[0], (None if grad is None else grad[0])
        return phi, grad

    def _densities(self, charges, dipoles, order):
        """Charges (n_dens, n_s) and dipoles (n_dens, n_s, 3) in the tree's source order (None where not
        given), on the backend: taken in that order (order, a permutation) or as they are (order None);
        ProblemError on a wrong shape."""
        if charges is None and dipoles is None:
            raise ProblemError("give charges, dipoles or both")
        n_s, xp = len(self.plan.sources), self.xp
        for name, value, shape in (("charges", charges, (n_s,)), ("dipoles", dipoles, (n_s, 3))):
            if value is not None and (np.ndim(value) not in (len(shape), len(shape) + 1)
                                      or tuple(np.shape(value)[-len(shape):]) != shape):
                raise ProblemError(f"{name} must have the shape {shape} or (n_densities, "
                                   f"{', '.join(map(str, shape))}) for {n_s} sources, got {tuple(np.shape(value))}")
        pick = slice(None) if order is None else order
        q = None if charges is None else xp.asarray(charges, dtype=xp.float64).reshape(-1, n_s)[:, pick]
        d = None if dipoles is None else xp.asarray(dipoles, dtype=xp.float64).reshape(-1, n_s, 3)[:, pick]
        return q, d


def _passes(backend):
    """The backend's implementation of the passes: the one place where host and GPU code part."""
    if backend.is_gpu:
        from .device import DevicePasses  # noqa: PLC0415 (needs CuPy)

        return DevicePasses(backend.xp)
    from .host import HostPasses  # noqa: PLC0415

    return HostPasses()


def _unsorted(values, tgt_order, xp):
    """Values (n_dens, n_t, ...) in the tree's target order back in the caller's order."""
    out = xp.empty_like(values)
    out[:, tgt_order] = values
    return out


class _Clock:
    """Phase timer: lap(name) adds the seconds since the last lap to timings[name] (if timings given)."""

    def __init__(self, backend, timings):
        self.backend, self.timings, self.now = backend, timings, time.perf_counter
        self.last = self.now()

    def lap(self, name: str) -> None:
        if self.timings is None:
            return
        self.backend.synchronize()
        t = self.now()
        self.timings[name] = self.timings.get(name, 0.0) + t - self.last
        self.last = t


def translations_per_box(tree: Octree, scheme: str) -> int:
    """The most M2L translations one box needs under a scheme: its interaction list (standard,
    batched-gemm, exponential: at most 189, 875 with separation 2); for parent-to-child the kept pairs plus
    the parents translated in their place (at most 119, 315 with separation 2); for child-to-parent, per
    family, the children's kept pairs plus the parent's translations, shared by its 8 child positions (at
    most 119, 315 with separation 2)."""
    return SCHEMES[scheme].translations_per_box(tree.on_host())
