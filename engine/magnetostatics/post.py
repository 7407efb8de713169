"""Post-processing: flux density per element, flux-line values, magnetic energy and probes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProblemError
from ..mesh.trimesh import TriMesh
from ..mesh.locate import PointLocator
from .elements import flux_density_at, shape_gradients

_CENTROID = np.full(3, 1.0 / 3.0)


@dataclass(frozen=True)
class ProbeValue:
    """A at the probe (A_z or A_phi in Wb/m, or phi in A) and B = (Bx, By) or (B_r, B_z) in T."""

    name: str
    point: tuple[float, float]  # in the problem's length unit
    potential: float
    flux_density: tuple[float, float]


def element_flux_density(formulation, potential, mesh: TriMesh, unknown, mu) -> np.ndarray:
    """(n_elements, 2) B at element centroids, tesla."""
    bary = np.broadcast_to(_CENTROID, (mesh.n_elements, 3))
    return flux_density_at(formulation, potential, mesh.element_coords(), unknown[mesh.triangles], bary, mu)


def flux_function_from_b(formulation: str, mesh: TriMesh, b: np.ndarray) -> np.ndarray:
    """(n_nodes,) flux function psi whose contours are the flux lines of a per-element B (n_elements, 2) T.

    Planar: B = (d psi/dy, -d psi/dx), psi in Wb/m (like A_z); axisymmetric: B = (-d psi/dz, d psi/dr) / r,
    psi = r A_phi in Wb/rad. A scalar potential gives B but no psi: psi is the P1 field whose gradient is
    closest to the one B prescribes in the area-weighted least-squares sense (a Neumann Poisson solve, psi = 0
    at node 0); for a divergence-free B it is exact up to the discretisation.
    """
    import scipy.sparse as sp  # noqa: PLC0415
    import scipy.sparse.linalg as spla  # noqa: PLC0415

    area, grads = shape_gradients(mesh.element_coords())
    if formulation == "axisymmetric":
        r = mesh.element_coords()[:, :, 0].mean(axis=1)
        target = np.column_stack([r * b[:, 1], -r * b[:, 0]])
    else:
        target = np.column_stack([-b[:, 1], b[:, 0]])
    tri = mesh.triangles
    k = area[:, None, None] * np.einsum("eik,ejk->eij", grads, grads)
    f = area[:, None] * np.einsum("eik,ek->ei", grads, target)
    rows, cols = np.repeat(tri, 3, axis=1).ravel(), np.tile(tri, (1, 3)).ravel()
    stiffness = sp.csr_matrix((k.ravel(), (rows, cols)), shape=(mesh.n_nodes, mesh.n_nodes))
    load = np.bincount(tri.ravel(), weights=f.ravel(), minlength=mesh.n_nodes)
    free = np.arange(1, mesh.n_nodes)
    psi = np.zeros(mesh.n_nodes)
    psi[free] = spla.spsolve(stiffness[free][:, free].tocsc(), load[free])
    return psi


def magnetic_energy(element_matrices: np.ndarray, connectivity: np.ndarray, unknown: np.ndarray) -> float:
    """(1/2) sum_e x_e^T K_e x_e: J/m for planar problems, J for axisymmetric ones (2 pi included)."""
    xe = unknown[connectivity]
    return 0.5 * float(np.einsum("ei,eij,ej->", xe, element_matrices, xe))


def fields_at(points, formulation, potential, mesh: TriMesh, unknown, mu, nodal_potential):
    """At points (n, 2) metres: containing element (n,) (-1 outside), potential (n,) interpolated
    linearly, and B (n, 2) exact in the element (NaN outside)."""
    element, bary = PointLocator(mesh).locate(np.atleast_2d(np.asarray(points, dtype=np.float64)))
    inside = element >= 0
    e = np.where(inside, element, 0)
    nodes = mesh.triangles[e]
    b = flux_density_at(formulation, potential, mesh.points[nodes], unknown[nodes], bary, mu[e])
    values = np.einsum("ni,ni->n", bary, nodal_potential[nodes])
    return element, np.where(inside, values, np.nan), np.where(inside[:, None], b, np.nan)


def probe_values(probes, length_scale, formulation, potential, mesh: TriMesh, unknown, mu,
                 nodal_potential) -> tuple[ProbeValue, ...]:
    """Evaluate the potential and B at each probe (points in the problem's length unit)."""
    if not probes:
        return ()
    points = np.array([p.point for p in probes], dtype=np.float64) * length_scale
    element, values, b = fields_at(points, formulation, potential, mesh, unknown, mu, nodal_potential)
    for probe, e in zip(probes, element):
        if e < 0:
            raise ProblemError(f"probe '{probe.name}' at {list(probe.point)} lies outside the mesh")
    return tuple(ProbeValue(probe.name, probe.point, float(v), (float(bb[0]), float(bb[1])))
                 for probe, v, bb in zip(probes, values, b))


def evaluate_at(result, point) -> tuple[float, tuple[float, float]] | None:
    """(A, B) of a magnetostatic result at point (x, y) metres, or None outside the mesh."""
    p = result.problem
    element, values, b = fields_at(point, p.formulation, p.potential, result.mesh, result.unknown,
                                   result.permeability, result.potential)
    if element[0] < 0:
        return None
    return float(values[0]), (float(b[0, 0]), float(b[0, 1]))
