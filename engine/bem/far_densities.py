"""The seven Laplace densities through which the FMM gives the FMBEM's far field H u - G t
(fmm_operator.far): charges (7, Q) and dipoles (7, Q, 3) at the Q quadrature points, written in the FMM's tree
order, all seven or a range of them (an application in several passes holds one range at a time). On the GPU
one kernel (kernels/far_densities.cu) writes them with no scratch; the host runs the reference,
far_densities_reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backend import array_module, kernel_function

THREADS = 256
N_DENSITIES = 7


def coefficients(mu: float, nu: float) -> tuple[float, float]:
    """(cu, ct): the Kelvin solution's displacement and traction factors, 1 / (16 pi mu (1 - nu)) and
    1 / (8 pi (1 - nu)), mu in Pa."""
    return 1 / (16 * np.pi * mu * (1 - nu)), 1 / (8 * np.pi * (1 - nu))


def far_densities(xp, u, t, points: dict, mu: float, nu: float, densities: range = range(N_DENSITIES)):
    """(charges (D, Q), dipoles (D, Q, 3)) of the D = len(densities) densities (a contiguous range of 0..6) of
    nodal displacements u (N, 3) m and element tractions t (M, 3, 3) Pa [element, node, component], arrays of
    xp. points (arrays of xp): q_source (Q,) int32, each point's quadrature point e * n_rule + r (element e,
    rule point r); tri (M, 3) int64 (the kernel reads 64-bit node indices); normal (M, 3) unit normals;
    area (M,) m^2; bary (n_rule, 3) and rule_weight (n_rule,), the rule; y (Q, 3) m, the points."""
    if xp is np:
        return far_densities_reference(u, t, points, mu, nu, densities)
    cu, ct = coefficients(mu, nu)
    q, count = len(points["y"]), len(densities)
    charges, dipoles = xp.empty((count, q)), xp.empty((count, q, 3))
    kernel = kernel_function(Path(__file__).with_name("kernels") / "far_densities.cu", "far_densities")
    kernel((-(-q // THREADS),), (THREADS,), (
        xp.ascontiguousarray(u, dtype=xp.float64), xp.ascontiguousarray(t, dtype=xp.float64), points["q_source"],
        points["tri"], points["normal"], points["area"], points["bary"], points["rule_weight"],
        np.int32(len(points["rule_weight"])), points["y"], np.float64(cu), np.float64(ct), np.float64(nu),
        np.int32(densities.start), np.int32(count), charges, dipoles, np.int32(q)))
    return charges, dipoles


def far_densities_reference(u, t, points: dict, mu: float, nu: float, densities: range = range(N_DENSITIES)):
    """far_densities in array operations (NumPy or CuPy), one (Q, 3) slice at a time, only the densities asked."""
    xp = array_module(u)
    cu, ct = coefficients(mu, nu)
    element, rule_point = xp.divmod(points["q_source"], len(points["rule_weight"]))
    weight = points["bary"][rule_point] * (points["rule_weight"][rule_point] * points["area"][element])[:, None]
    n, y, nodes = points["normal"][element], points["y"], points["tri"][element]
    uq, tq = xp.zeros((len(y), 3)), xp.zeros((len(y), 3))  # u and t at the points, times the weights
    for a in range(3):
        uq += weight[:, a, None] * u[nodes[:, a]]
        tq += weight[:, a, None] * t[element, a]
    charges, dipoles = xp.empty((len(densities), len(y))), xp.empty((len(densities), len(y), 3))
    for i, d in enumerate(densities):
        k = d % 3
        if d < 3:
            charges[i] = -(3 - 4 * nu) * cu * tq[:, k]
            dipoles[i] = ((1 - 2 * nu) * ct) * uq[:, k, None] * n + (2 * (1 - nu) * ct) * n[:, k, None] * uq
        elif d < 6:
            charges[i] = -cu * tq[:, k]
            dipoles[i] = ct * uq[:, k, None] * n
        else:
            charges[i] = ct * (1 - 2 * nu) * (n * uq).sum(axis=1) - cu * (y * tq).sum(axis=1)
            dipoles[i] = ct * (y * uq).sum(axis=1)[:, None] * n
    return charges, dipoles
