"""Preconditioned conjugate gradients, written once for the engine's symmetric positive definite solves on
NumPy or CuPy arrays (EBE-J-PCG's element-by-element operator, the assembled elasticity matrix)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import SolverError


@dataclass(frozen=True)
class PcgSpec:
    """How one solver's CG reads and reports: its name in progress lines, the breakdown message (A not
    positive definite on p), the advice appended when the iteration limit is reached, how many times the
    recursive residual may be replaced by the true one b - A x once it claims convergence (0: trusted),
    and iterations between progress reports."""

    name: str
    breakdown: str
    advice: str
    max_replacements: int = 0
    report_every: int = 50


@dataclass(frozen=True, eq=False)
class PcgResult:
    x: object  # (n,) on the arrays' backend
    iterations: int
    relative_residual: float
    history: np.ndarray  # relative residual per iteration (host)


def pcg(apply_a: Callable, b, precondition: Callable, rtol: float, max_iterations: int, spec: PcgSpec,
        dot: Callable | None = None, step: Callable | None = None, progress: Callable | None = None,
        check: Callable[[], None] = lambda: None) -> PcgResult:
    """Solve A x = b from x = 0 until ||r|| <= rtol ||b||; SolverError on breakdown or no convergence.

    apply_a(p) -> A p; precondition(r) -> M^-1 r; dot(a, b) -> float (default a @ b); step(p) -> (A p,
    p . A p) where the curvature is formed otherwise (e.g. a sum of element energies; default apply_a
    and dot); progress(fraction, message) every spec.report_every iterations; check() every iteration
    (raises to cancel).
    """
    dot = dot or (lambda u, v: float(u @ v))
    step = step or (lambda p: (lambda q: (q, dot(p, q)))(apply_a(p)))
    b_norm = math.sqrt(dot(b, b))
    if b_norm == 0.0:
        return PcgResult(b * 0.0, 0, 0.0, np.zeros(0))
    x, r = b * 0.0, b.copy()
    p = precondition(r)
    gamma = dot(r, p)
    history, replacements = [], 0
    for it in range(1, max_iterations + 1):
        q, p_a_p = step(p)
        if not p_a_p > 0.0:
            raise SolverError(spec.breakdown)
        alpha = gamma / p_a_p
        x += alpha * p
        r -= alpha * q
        rel = math.sqrt(dot(r, r)) / b_norm
        history.append(rel)
        if rel <= rtol:
            if spec.max_replacements == 0:
                return PcgResult(x, it, rel, np.asarray(history))
            # the recursive residual drifts from b - A x in floating point: check the true one and, if it
            # is still above rtol, restart the recurrences from it (residual replacement); after the last
            # replacement the result is at the accuracy floating point allows, reported as is
            r = b - apply_a(x)
            rel = math.sqrt(dot(r, r)) / b_norm
            if rel <= rtol or replacements == spec.max_replacements:
                return PcgResult(x, it, rel, np.asarray(history))
            replacements += 1
            p = precondition(r)
            gamma = dot(r, p)
            continue
        check()
        if progress is not None and it % spec.report_every == 0:
            progress(min(1.0, math.log(max(rel, 1e-300)) / math.log(rtol)),
                     f"{spec.name} iteration {it}, residual {rel:.2e}")
        z = precondition(r)
        gamma_new = dot(r, z)
        p = z + (gamma_new / gamma) * p
        gamma = gamma_new
    raise SolverError(f"{spec.name} did not converge: relative residual {history[-1]:.3e} after "
                      f"{max_iterations} iterations (rtol {rtol:g}); {spec.advice}")
