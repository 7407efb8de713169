"""The seven Laplace densities through which one FMM application gives the FMBEM's far field H u - G t
(fmm_operator.far): charges (7, Q) and dipoles (7, Q, 3) at the Q quadrature points, written in the FMM's tree
order. On the GPU one kernel (kernels/far_densities.cu) writes them with no scratch; the host runs the
reference, far_densities_reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backend import array_module, kernel_function

THREADS = 256


def coefficients(mu: float, nu: float) -> tuple[float, float]:
    """(cu, ct): the Kelvin solution's displacement and traction factors, 1 / (16 pi mu (1 - nu)) and
    1 / (8 pi (1 - nu)), mu in Pa."""
    return 1 / (16 * np.pi * mu * (1 - nu)), 1 / (8 * np.pi * (1 - nu))


def far_densities(xp, u, t, points: dict, mu: float, nu: float):
    """(charges (7, Q), dipoles (7, Q, 3)) of nodal displacements u (N, 3) m and element tractions t (M, 3, 3)
    Pa [element, node, component], arrays of xp; points: the quadrature points' q_nodes (Q, 3) int32,
    q_element (Q,) int32, q_weight (Q, 3) (barycentric times quadrature weight, m^2), n (Q, 3) unit normals and
    y (Q, 3) m, arrays of xp."""
    if xp is np:
        return far_densities_reference(u, t, points, mu, nu)
    cu, ct = coefficients(mu, nu)
    q = len(points["y"])
    charges, dipoles = xp.empty((7, q)), xp.empty((7, q, 3))
    kernel = kernel_function(Path(__file__).with_name("kernels") / "far_densities.cu", "far_densities")
    kernel((-(-q // THREADS),), (THREADS,), (
        xp.ascontiguousarray(u, dtype=xp.float64), xp.ascontiguousarray(t, dtype=xp.float64), points["q_nodes"],
        points["q_element"], points["q_weight"], points["n"], points["y"], np.float64(cu), np.float64(ct),
        np.float64(nu), charges, dipoles, np.int32(q)))
    return charges, dipoles


def far_densities_reference(u, t, points: dict, mu: float, nu: float):
    """far_densities in array operations (NumPy or CuPy), one (Q, 3) slice at a time."""
    xp = array_module(u)
    cu, ct = coefficients(mu, nu)
    n, y, weight = points["n"], points["y"], points["q_weight"]
    uq, tq = xp.zeros((len(y), 3)), xp.zeros((len(y), 3))  # u and t at the points, times the weights
    for a in range(3):
        uq += weight[:, a, None] * u[points["q_nodes"][:, a]]
        tq += weight[:, a, None] * t[points["q_element"], a]
    charges, dipoles = xp.empty((7, len(y))), xp.empty((7, len(y), 3))
    for k in range(3):
        charges[k] = -(3 - 4 * nu) * cu * tq[:, k]
        charges[3 + k] = -cu * tq[:, k]
        dipoles[k] = ((1 - 2 * nu) * ct) * uq[:, k, None] * n
        dipoles[k] += (2 * (1 - nu) * ct) * n[:, k, None] * uq
        dipoles[3 + k] = ct * uq[:, k, None] * n
    charges[6] = ct * (1 - 2 * nu) * (n * uq).sum(axis=1) - cu * (y * tq).sum(axis=1)
    dipoles[6] = ct * (y * uq).sum(axis=1)[:, None] * n
    return charges, dipoles
