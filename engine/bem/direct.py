"""The dense (direct) boundary element solve: mixed conditions per element and component, one unknown per
node and component (its displacement, or its traction where the displacement is prescribed), and a traction
slot per extra node where prescribed displacements meet across a sharp edge (engine/bem/unknowns.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import SolverError
from .assembly import assemble
from .unknowns import UnknownLayout, unknown_layout


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
    """displacement (N, 3) m at the nodes; traction (M, 3, 3) Pa at the element nodes; double_nodes: the extra
    traction nodes at sharp edges between prescribed displacements."""

    displacement: np.ndarray
    traction: np.ndarray
    double_nodes: int = 0


def system_matrix(h, g, layout: UnknownLayout, mu: float) -> np.ndarray:
    """The columns of the unknowns (3T, 3T): H where a displacement is unknown, -mu G where a traction is (solved
    as t / mu), identity rows and columns at idle slots; h (3T, 3N), g (3T, 3T) dense."""
    n3 = h.shape[1]
    displacement = layout.displacement.reshape(-1)
    traction = layout.traction.reshape(-1)
    idle = layout.idle.reshape(-1)
    a = np.where(traction[None, :], -mu * g, 0.0)
    a[:, :n3] += np.where(displacement[None, :], h, 0.0)
    a[idle] = 0.0
    a[idle, idle] = 1.0
    return a


def solve_direct(points, triangles, data: BoundaryData, young: float, poisson: float,
                 check=lambda: None) -> BemSolution:
    """Assemble the dense system and solve it by LU; a rigid-body motion left free is a SolverError.
    check() runs between chunks of the assembly and before the factorisation (it raises to stop)."""
    mu = young / (2 * (1 + poisson))
    n = len(points)
    layout = unknown_layout(points, triangles, data.displacement_type)
    if layout.displacement.all():
        raise SolverError("no displacement is prescribed anywhere: the body is free to move as a rigid body")
    system = assemble(points, triangles, layout, data.displacement_type, data.traction, mu, poisson, check)
    a = system_matrix(system.h, system.g, layout, mu)
    check()
    u_known = np.where(layout.displacement, 0.0, data.displacement).reshape(-1)
    rhs = np.where(layout.idle.reshape(-1), 0.0, system.b_t - system.h @ u_known)
    lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
    if np.abs(np.diag(lu)).min() < 1e-12 * np.abs(np.diag(lu)).max():
        raise SolverError("the boundary element system is singular: the prescribed displacements leave a "
                          "rigid-body motion free")
    x = scipy.linalg.lu_solve((lu, piv), rhs, check_finite=False).reshape(-1, 3)
    return solution_of(x, layout, data, u_known.reshape(n, 3), triangles, mu)


def solution_of(x, layout: UnknownLayout, data: BoundaryData, u_known, triangles, mu) -> BemSolution:
    """Nodal displacements and element-node tractions from the solved slots x (T, 3) (tractions as t / mu)."""
    n = layout.n_nodes
    u = np.where(layout.displacement, x[:n], u_known)
    slots = np.where(layout.traction, mu * x, 0.0)
    return BemSolution(u, layout.element_traction(slots, data.displacement_type, data.traction),
                       len(layout.extra_node))
