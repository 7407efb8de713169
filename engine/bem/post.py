"""Post-processing of a boundary element solution: stress on the surface from the traction and the surface
gradient of the displacement, von Mises, and displacement and stress at interior points by Somigliana's
representation u(x) = int U t - int T u, sigma(x) = int D t - int S u."""

from __future__ import annotations

import numpy as np

from .assembly import NEAR_RATIOS, elements_of, pair_levels, subdivided_rule
from .kelvin import kelvin_d, kelvin_s, kelvin_t, kelvin_u


def lame(young: float, poisson: float) -> tuple[float, float]:
    """(lambda, mu) in Pa."""
    mu = young / (2 * (1 + poisson))
    return 2 * mu * poisson / (1 - 2 * poisson), mu


def element_stress(points, triangles, displacement, traction, young, poisson) -> np.ndarray:
    """Stress (M, 3, 3) Pa per element: sigma n from the element's mean traction, the in-plane strains
    from its linear displacement, the normal strain from Hooke's law."""
    lam, mu = lame(young, poisson)
    el = elements_of(points, triangles)
    c = el.corners
    e1 = c[:, 1] - c[:, 0]
    e1 /= np.linalg.norm(e1, axis=1)[:, None]
    n = el.normals
    e2 = np.cross(n, e1)
    frame = np.stack([e1, e2, n], axis=1)  # (M, 3 local, 3 global)
    local = np.einsum("mag,mlg->mal", c - c[:, :1], frame)[:, :, :2]  # corners in (e1, e2)
    jac = np.stack([local[:, 1] - local[:, 0], local[:, 2] - local[:, 0]], axis=1)  # (M, 2 edges, 2)
    u = np.einsum("mag,mlg->mal", displacement[triangles], frame)  # local components
    du = np.stack([u[:, 1] - u[:, 0], u[:, 2] - u[:, 0]], axis=1)  # (M, 2 edges, 3)
    grad = np.linalg.solve(jac, du)  # (M, 2 in-plane directions, 3 components): d u_l / d s_a
    e11, e22 = grad[:, 0, 0], grad[:, 1, 1]
    e12 = 0.5 * (grad[:, 0, 1] + grad[:, 1, 0])
    t = np.einsum("mg,mlg->ml", traction.mean(axis=1), frame)  # sigma n = (s13, s23, s33)
    e33 = (t[:, 2] - lam * (e11 + e22)) / (lam + 2 * mu)
    trace = e11 + e22 + e33
    s = np.zeros((len(triangles), 3, 3))
    s[:, 0, 0], s[:, 1, 1] = lam * trace + 2 * mu * e11, lam * trace + 2 * mu * e22
    s[:, 0, 1] = s[:, 1, 0] = 2 * mu * e12
    s[:, :, 2] = s[:, 2, :] = t
    return np.einsum("mai,mab,mbj->mij", frame, s, frame)


def von_mises(stress: np.ndarray) -> np.ndarray:
    """Von Mises stress (...) of stress tensors (..., 3, 3)."""
    dev = stress - np.trace(stress, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) / 3
    return np.sqrt(1.5 * np.einsum("...ij,...ij->...", dev, dev))


def nodal_average(triangles, values: np.ndarray, areas: np.ndarray, n_nodes: int) -> np.ndarray:
    """Element values (M, ...) averaged onto nodes (N, ...) with area weights."""
    flat = values.reshape(len(values), -1)
    total = np.zeros((n_nodes, flat.shape[1]))
    weight = np.zeros(n_nodes)
    for a in range(3):
        np.add.at(total, triangles[:, a], areas[:, None] * flat)
        np.add.at(weight, triangles[:, a], areas)
    return (total / np.maximum(weight, 1e-300)[:, None]).reshape((n_nodes, *values.shape[1:]))


def interior_fields(points, triangles, displacement, traction, young, poisson, x) -> tuple[np.ndarray, np.ndarray]:
    """Displacement (P, 3) m and stress (P, 3, 3) Pa at interior points x (P, 3) m; elements near a point are
    integrated on sub-triangles as in the assembly (points closer than about an eighth of an element to the
    surface lose accuracy)."""
    lam, mu = lame(young, poisson)
    el = elements_of(points, triangles)
    x = np.atleast_2d(np.asarray(x, dtype=float))
    level_of = pair_levels(el, x)
    u_out = np.zeros((len(x), 3))
    s_out = np.zeros((len(x), 3, 3))
    for level in range(len(NEAR_RATIOS) + 1):
        p, e = np.nonzero(level_of == level)
        if not len(p):
            continue
        bary, weights = subdivided_rule(level)
        y = np.einsum("qa,eak->eqk", bary, el.corners[e])
        r = y - x[p][:, None]
        w = weights[None] * el.areas[e][:, None]
        u = np.einsum("qa,eak->eqk", bary, displacement[triangles[e]])
        t = np.einsum("qa,eak->eqk", bary, traction[e])
        n = el.normals[e][:, None]
        du = (np.einsum("eqlk,eqk,eq->el", kelvin_u(r, mu, poisson), t, w)
              - np.einsum("eqlk,eqk,eq->el", kelvin_t(r, n, poisson), u, w))
        ds = (np.einsum("eqkij,eqk,eq->eij", kelvin_d(r, poisson), t, w)
              - np.einsum("eqkij,eqk,eq->eij", kelvin_s(r, n, mu, poisson), u, w))
        np.add.at(u_out, p, du)
        np.add.at(s_out, p, ds)
    return u_out, s_out
