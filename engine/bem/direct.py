"""The dense (direct) boundary element solve: mixed conditions per element and component, one unknown per
node and component (its displacement, or its traction where the displacement is prescribed)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import SolverError
from .assembly import assemble


@dataclass(frozen=True, eq=False)
class BoundaryData:
    """displacement_type (M, 3) bool: component k of element e is a prescribed displacement; displacement
    (N, 3) m: the prescribed nodal values (read where a node's component is prescribed on any of its
    elements); traction (M, 3, 3) Pa: known traction at element node a, component k (read elsewhere)."""

    displacement_type: np.ndarray
    displacement: np.ndarray
    traction: np.ndarray


@dataclass(frozen=True, eq=False)
class BemSolution:
    """displacement (N, 3) m at the nodes; traction (M, 3, 3) Pa at the element nodes."""

    displacement: np.ndarray
    traction: np.ndarray


def prescribed_nodes(triangles: np.ndarray, displacement_type: np.ndarray, n_nodes: int) -> np.ndarray:
    """(N, 3) bool: the node's component is a prescribed displacement on at least one of its elements."""
    fixed = np.zeros((n_nodes, 3), dtype=bool)
    for a in range(3):
        np.logical_or.at(fixed, triangles[:, a], displacement_type)
    return fixed


def solve_direct(points, triangles, data: BoundaryData, young: float, poisson: float) -> BemSolution:
    """Assemble the dense system and solve it by LU; a rigid-body motion left free is a SolverError."""
    mu = young / (2 * (1 + poisson))
    n = len(points)
    fixed = prescribed_nodes(triangles, data.displacement_type, n).reshape(-1)
    if not fixed.any():
        raise SolverError("no displacement is prescribed anywhere: the body is free to move as a rigid body")
    system = assemble(points, triangles, data.displacement_type, data.traction, mu, poisson)
    a = np.where(fixed[None, :], -mu * system.g_u, system.h)  # traction unknowns scaled to t / mu
    u_known = np.where(fixed, data.displacement.reshape(-1), 0.0)
    rhs = system.b_t - system.h @ u_known
    lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
    if np.abs(np.diag(lu)).min() < 1e-12 * np.abs(np.diag(lu)).max():
        raise SolverError("the boundary element system is singular: the prescribed displacements leave a "
                          "rigid-body motion free")
    x = scipy.linalg.lu_solve((lu, piv), rhs, check_finite=False)
    u = np.where(fixed, u_known, x).reshape(n, 3)
    t_nodes = np.where(fixed, mu * x, 0.0).reshape(n, 3)
    traction = np.where(data.displacement_type[:, None, :], t_nodes[triangles], data.traction)
    return BemSolution(u, traction)
