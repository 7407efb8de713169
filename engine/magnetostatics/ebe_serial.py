"""Serial EBE-J-PCG on one CPU core, compiled with Numba: the papers' sequential baseline.

The same algorithm and stopping rule as solve_ebe_jpcg, one loop over elements per product
(packed symmetric element matrices, dummy Dirichlet node as on the GPU) and plain sequential sums.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from ..errors import SolverError
from .ebe_layout import pack_system
from .ebe_pcg import MAX_REPLACEMENTS, EbeOperator, default_max_iterations, lifted_right_hand_side
from .solution import LinearSolution
from .system import ElementSystem


def _product(conn, ke, p, q, n):
    """q = K p over packed symmetric element matrices ke (6, n_el); the dummy node n stays 0."""
    q[:] = 0.0
    for e in range(conn.shape[1]):
        a, b, c = conn[0, e], conn[1, e], conn[2, e]
        pa, pb, pc = p[a], p[b], p[c]
        ya = ke[0, e] * pa + ke[1, e] * pb + ke[2, e] * pc
        yb = ke[1, e] * pa + ke[3, e] * pb + ke[4, e] * pc
        yc = ke[2, e] * pa + ke[4, e] * pb + ke[5, e] * pc
        q[a] += ya
        q[b] += yb
        q[c] += yc
    q[n] = 0.0


def _dot(a, b, n):
    """The plain sequential sum of a[i] b[i] over the first n entries."""
    s = 0.0
    for i in range(n):
        s += a[i] * b[i]
    return s


@functools.lru_cache(maxsize=1)
def _kernels():
    """Compile the loops once per process (Numba is imported only when the serial solver runs)."""
    import numba  # noqa: PLC0415

    product, dot = (numba.njit(fastmath=False)(f) for f in (_product, _dot))

    @numba.njit(fastmath=False)
    def pcg(conn, ke, inv_diag, b, x, rtol, max_iterations, history):
        """Returns (iterations, relative recursive residual); x is updated in place."""
        n = b.shape[0]
        r = np.zeros(n + 1)
        z = np.zeros(n + 1)
        p = np.zeros(n + 1)
        q = np.zeros(n + 1)
        product(conn, ke, x, q, n)
        for i in range(n):
            r[i] = b[i] - q[i]
            z[i] = inv_diag[i] * r[i]
            p[i] = z[i]
        b_norm = math.sqrt(dot(b, b, n))
        gamma = dot(r, z, n)
        rel = math.sqrt(dot(r, r, n)) / b_norm
        it = 0
        while it < max_iterations:
            it += 1
            product(conn, ke, p, q, n)
            curvature = dot(p, q, n)
            if not curvature > 0.0:
                return -it, rel
            alpha = gamma / curvature
            for i in range(n):
                x[i] += alpha * p[i]
                r[i] -= alpha * q[i]
                z[i] = inv_diag[i] * r[i]
            rel = math.sqrt(dot(r, r, n)) / b_norm
            history[it - 1] = rel
            if rel <= rtol:
                break
            gamma_new = dot(r, z, n)
            beta = gamma_new / gamma
            for i in range(n):
                p[i] = z[i] + beta * p[i]
            gamma = gamma_new
        return it, rel

    # compile now on a one-element system, so that no timed solve includes compilation
    conn = np.zeros((3, 1), dtype=np.int32)
    ke = np.ones((6, 1))
    pcg(conn, ke, np.ones(1), np.ones(1), np.zeros(2), 1e-8, 1, np.zeros(1))
    return product, pcg


def solve_ebe_jpcg_serial(system: ElementSystem, rtol: float = 1e-8,
                          max_iterations: int | None = None) -> LinearSolution:
    """EBE-J-PCG on one core; raises SolverError when max_iterations is reached unconverged."""
    product, pcg = _kernels()
    op = EbeOperator(system)
    b, x_fixed = lifted_right_hand_side(system, op)
    b_norm = float(np.linalg.norm(b))
    if b_norm == 0.0:
        return LinearSolution(x_fixed, 0, 0.0, np.zeros(0))
    packed = pack_system(system)
    inv_diag = 1.0 / op.diagonal()
    max_iterations = max_iterations or default_max_iterations(int((~system.fixed_mask()).sum()))
    x = np.zeros(system.n_nodes + 1)
    history = np.zeros(max_iterations)
    q = np.zeros(system.n_nodes + 1)
    done, rel = 0, math.inf
    start = time.perf_counter()
    for attempt in range(MAX_REPLACEMENTS + 1):  # restarts from the true residual, as the other solvers
        it, rel = pcg(packed.conn, packed.ke, inv_diag, b, x, rtol, max_iterations - done, history[done:])
        if it < 0:
            raise SolverError("EBE-J-PCG broke down: the system is not positive definite")
        done += it
        product(packed.conn, packed.ke, x, q, system.n_nodes)
        rel = float(np.linalg.norm(b - q[:-1])) / b_norm
        if rel <= rtol or done >= max_iterations:
            break
    seconds = time.perf_counter() - start
    if rel > rtol and done >= max_iterations:
        raise SolverError(f"serial EBE-J-PCG did not converge: relative residual {rel:.3e} after {done} "
                          f"iterations (rtol {rtol:g})")
    return LinearSolution(x[:-1] + x_fixed, done, rel, history[:done].copy(), seconds)
