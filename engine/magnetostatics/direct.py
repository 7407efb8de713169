"""Assembled sparse direct solve (SciPy SuperLU): the reference for the EBE solvers."""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from ..errors import SolverError
from .solution import LinearSolution
from .system import ElementSystem, assemble_sparse, assemble_vector


def solve_sparse_direct(system: ElementSystem) -> LinearSolution:
    """Assemble the global matrix, eliminate the Dirichlet nodes and factorise the rest."""
    a = assemble_sparse(system)
    x = system.lifted_values()
    b = assemble_vector(system) - a @ x
    free = ~system.fixed_mask()
    a_ff = a[free][:, free].tocsc()
    b_f = b[free]
    try:
        x_f = spla.splu(a_ff).solve(b_f)
    except RuntimeError as exc:  # SuperLU reports an exactly singular factor this way
        raise SolverError(f"sparse direct solve failed: {exc}") from None
    if not np.all(np.isfinite(x_f)):
        raise SolverError("sparse direct solve produced non-finite values (singular system)")
    x[free] = x_f
    b_norm = np.linalg.norm(b_f)
    rel = float(np.linalg.norm(b_f - a_ff @ x_f) / b_norm) if b_norm > 0 else 0.0
    return LinearSolution(x, 0, rel, np.zeros(0))
