"""Element-by-element Jacobi-preconditioned conjugate gradients (EBE-J-PCG) on the CPU with NumPy.

No global matrix is formed: each product is a batched element matrix-vector product on the
gathered element vectors, accumulated onto shared nodes; the Jacobi preconditioner is the
element diagonals accumulated the same way (papers 000 and 002). Inner products use the named
reduction's NumPy twin, so every variant runs, and is tested, without a GPU.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import SolverError
from ..pcg import PcgSpec, pcg
from ..variants import SOLVER_REDUCTIONS
from ..run_control import RunControl
from . import reductions
from .solution import LinearSolution
from .system import ElementSystem

MAX_REPLACEMENTS = 3
REDUCTIONS = SOLVER_REDUCTIONS
EBE_JPCG = PcgSpec("EBE-J-PCG", "EBE-J-PCG broke down: the system is not positive definite (check that every "
                   "mu_r is positive)", "raise [solver] max_iterations or loosen rtol", MAX_REPLACEMENTS)


class EbeOperator:
    """y = sum_e Q_e^T K_e Q_e x, with rows and columns of fixed nodes removed.

    xp: the array module holding the element data (NumPy here; the GPU solver builds its
    right-hand side and preconditioner with the same code on CuPy arrays).
    """

    def __init__(self, system: ElementSystem, xp=np, groups=None):
        self.xp = xp
        self.groups = groups  # ColorGroups: accumulate colour by colour instead of all at once
        if groups is not None:
            permutation = xp.asarray(groups.permutation)
            self.color_members = [permutation[a:b] for a, b in zip(groups.offsets[:-1], groups.offsets[1:])]
        self.n = system.n_nodes
        self.conn = xp.asarray(system.connectivity)
        self.flat_conn = self.conn.ravel()
        self.ke = xp.asarray(system.element_matrices)
        self.free = xp.asarray(~system.fixed_mask()).astype(xp.float64)

    def accumulate(self, element_values):
        """(n_elements, k) element contributions summed onto their nodes -> (n_nodes,)."""
        if self.groups is None:
            return self.xp.bincount(self.flat_conn, weights=element_values.ravel(), minlength=self.n)
        out = self.xp.zeros(self.n)
        for members in self.color_members:  # no node twice within a group: a plain indexed add is exact
            out[self.conn[members]] += element_values[members]
        return out

    def element_products(self, x):
        """Gathered x_e (n_elements, k) and K_e x_e (n_elements, k)."""
        xe = x[self.conn]
        return xe, self.xp.matmul(self.ke, xe[..., None])[..., 0]

    def full_product(self, x: np.ndarray) -> np.ndarray:
        """K x with no Dirichlet masking."""
        return self.accumulate(self.element_products(x)[1])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.free * self.full_product(x)

    def diagonal(self):
        """Jacobi preconditioner: element diagonals accumulated over shared nodes, 1 on fixed nodes."""
        d = self.accumulate(self.xp.diagonal(self.ke, axis1=1, axis2=2))
        return self.free * d + (1.0 - self.free)


def default_max_iterations(n_free: int) -> int:
    """A generous cap for Jacobi-PCG on 2D Laplace-type systems (iterations grow like sqrt(n))."""
    return int(1000 + 50 * math.sqrt(max(n_free, 1)))


def lifted_right_hand_side(system: ElementSystem, op: EbeOperator):
    """(b, x_fixed) in op's array module: the load with the Dirichlet values moved to the right-hand
    side, zero on fixed nodes."""
    x_fixed = op.xp.asarray(system.lifted_values())
    load = op.accumulate(op.xp.asarray(system.element_vectors))
    return op.free * (load - op.full_product(x_fixed)), x_fixed


def solve_ebe_jpcg(system: ElementSystem, rtol: float = 1e-8, max_iterations: int | None = None,
                   reduction: str = "library", control: RunControl | None = None,
                   groups=None) -> LinearSolution:
    """Solve the system by EBE-J-PCG on the CPU; stop when ||b - Ax|| <= rtol ||b|| on free nodes.

    reduction names how inner products are summed (see reductions.py); "fused" takes (p, Ap) as
    the sum of the element energies p_e . K_e p_e. Raises SolverError when the iteration limit is
    reached or the operator is not positive definite. groups: ColorGroups for coloured accumulation.
    """
    if reduction not in REDUCTIONS:
        raise SolverError(f"unknown reduction '{reduction}'; choose one of: {', '.join(REDUCTIONS)}")
    control = control or RunControl()
    dot = reductions.TWINS.get(reduction) or (lambda a, b: reductions.sum_one_per_thread(a * b))
    op = EbeOperator(system, groups=groups)
    n_free = int(system.n_nodes - system.fixed_nodes.size)
    max_iterations = max_iterations or default_max_iterations(n_free)

    b, x_fixed = lifted_right_hand_side(system, op)
    inv_diag = 1.0 / op.diagonal()

    def fused_step(p):  # (A p, p . A p as the sum of the element energies p_e . K_e p_e)
        pe, qe = op.element_products(p)
        return op.free * op.accumulate(qe), reductions.sum_one_per_thread(np.einsum("ei,ei->e", pe, qe))

    start = time.perf_counter()
    solved = pcg(op, b, lambda r: inv_diag * r, rtol, max_iterations, EBE_JPCG, dot,
                 fused_step if reduction == "fused" else None, control.report, control.check)
    return LinearSolution(solved.x + x_fixed, solved.iterations, solved.relative_residual, solved.history,
                          time.perf_counter() - start)
