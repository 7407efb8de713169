"""First-order triangle element matrices and vectors for 2D magnetostatics.

Formulations (unknown per node):
- planar vector potential A_z:      -div(nu grad A) = J,               B = (dA/dy, -dA/dx)
- axisymmetric vector potential, unknown u = A_phi / r (tends to B_z / 2 on the axis),
  B_r = -r du/dz, B_z = 2u + r du/dr; the energy functional is integrated over 2 pi r dr dz
- magnetic scalar potential phi:    -div(mu grad phi) = 0,              B = -mu grad phi
All arrays are float64 in SI units; coords: (n_elements, 3, 2) metres.
"""

from __future__ import annotations

import numpy as np

from ..quadrature import dunavant

MU0 = 4e-7 * np.pi  # H/m (the classical value; ParaFlux's SI reference)
_AXI_RULE = dunavant(4)  # exact for the cubic integrands of the axisymmetric matrices


def shape_gradients(coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Areas (n_elements,) m^2 and constant P1 shape-function gradients (n_elements, 3, 2) 1/m."""
    x, y = coords[..., 0], coords[..., 1]
    b = np.stack([y[:, 1] - y[:, 2], y[:, 2] - y[:, 0], y[:, 0] - y[:, 1]], axis=1)
    c = np.stack([x[:, 2] - x[:, 1], x[:, 0] - x[:, 2], x[:, 1] - x[:, 0]], axis=1)
    twice_area = x[:, 0] * b[:, 0] + x[:, 1] * b[:, 1] + x[:, 2] * b[:, 2]
    grads = np.stack([b, c], axis=2) / twice_area[:, None, None]
    return 0.5 * twice_area, grads


def planar_stiffness(coords: np.ndarray, coefficient: np.ndarray) -> np.ndarray:
    """(n_elements, 3, 3) matrices of integral(coefficient grad N_i . grad N_j) dA.

    coefficient: (n_elements,) nu = 1/mu (vector potential, m/H) or mu (scalar potential, H/m).
    """
    area, grads = shape_gradients(coords)
    return (coefficient * area)[:, None, None] * np.einsum("eik,ejk->eij", grads, grads)


def planar_load(coords: np.ndarray, current_density: np.ndarray) -> np.ndarray:
    """(n_elements, 3) vectors integral(J N_i) dA for J (n_elements,) A/m^2."""
    area, _ = shape_gradients(coords)
    return np.repeat((current_density * area / 3.0)[:, None], 3, axis=1)


def _axi_operators(coords: np.ndarray, bary: np.ndarray):
    """At barycentric points bary (n_q, 3): radius r (n_elements, n_q) and the maps from nodal u
    to B_r and B_z, each (n_elements, n_q, 3)."""
    _, grads = shape_gradients(coords)
    r = np.einsum("qk,ek->eq", bary, coords[..., 0])
    br = -r[..., None] * grads[:, None, :, 1]
    bz = 2.0 * bary[None, :, :] + r[..., None] * grads[:, None, :, 0]
    return r, br, bz


def axisymmetric_stiffness(coords: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """(n_elements, 3, 3) matrices of 2 pi integral(nu (B_r,i B_r,j + B_z,i B_z,j) r) dr dz, unknown u = A_phi / r."""
    area, _ = shape_gradients(coords)
    r, br, bz = _axi_operators(coords, _AXI_RULE.points)
    weight = 2 * np.pi * (nu * area)[:, None] * _AXI_RULE.weights[None, :] * r
    return np.einsum("eq,eqi,eqj->eij", weight, br, br) + np.einsum("eq,eqi,eqj->eij", weight, bz, bz)


def axisymmetric_load(coords: np.ndarray, current_density: np.ndarray) -> np.ndarray:
    """(n_elements, 3) vectors 2 pi integral(J_phi r N_i r) dr dz, the work of J on A_phi = r u."""
    area, _ = shape_gradients(coords)
    r = np.einsum("qk,ek->eq", _AXI_RULE.points, coords[..., 0])
    weight = 2 * np.pi * (current_density * area)[:, None] * _AXI_RULE.weights[None, :] * r * r
    return np.einsum("eq,qi->ei", weight, _AXI_RULE.points)


def axisymmetric_scalar_stiffness(coords: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """(n_elements, 3, 3) matrices of 2 pi integral(mu grad N_i . grad N_j r) dr dz (exact: r at the centroid)."""
    r_centroid = coords[..., 0].mean(axis=1)
    return planar_stiffness(coords, 2 * np.pi * mu * r_centroid)


def flux_density_at(formulation: str, potential: str, coords: np.ndarray, nodal: np.ndarray,
                    bary: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """B (n_elements, 2) tesla at one barycentric point per element (bary: (n_elements, 3)).

    nodal: (n_elements, 3) element values of the unknown (A_z, u = A_phi / r, or phi).
    Returns (Bx, By) for planar, (B_r, B_z) for axisymmetric.
    """
    _, grads = shape_gradients(coords)
    if potential == "scalar":
        return -mu[:, None] * np.einsum("ei,eik->ek", nodal, grads)
    if formulation == "planar":
        g = np.einsum("ei,eik->ek", nodal, grads)
        return np.stack([g[:, 1], -g[:, 0]], axis=1)
    r = np.einsum("ek,ek->e", bary, coords[..., 0])
    g = np.einsum("ei,eik->ek", nodal, grads)
    u = np.einsum("ei,ei->e", nodal, bary)
    return np.stack([-r * g[:, 1], 2.0 * u + r * g[:, 0]], axis=1)
