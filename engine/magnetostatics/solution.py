"""The outcome of a linear solve, shared by the EBE-J-PCG and sparse direct solvers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class LinearSolution:
    """x: (n_nodes,) float64 on the host; residual_history: relative residual per iteration."""

    x: np.ndarray
    iterations: int
    relative_residual: float  # ||b - A x|| / ||b|| over free nodes, recomputed after the solve
    residual_history: np.ndarray
    loop_seconds: float = float("nan")  # time spent iterating (CUDA events on the GPU), set by iterative solvers
