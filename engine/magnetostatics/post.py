"""Post-processing: flux density per element, flux-line values, magnetic energy and probes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProblemError
from ..mesh.trimesh import TriMesh
from ..mesh.locate import PointLocator
from .elements import flux_density_at

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


def magnetic_energy(element_matrices: np.ndarray, connectivity: np.ndarray, unknown: np.ndarray) -> float:
    """(1/2) sum_e x_e^T K_e x_e: J/m for planar problems, J for axisymmetric ones (2 pi included)."""
    xe = unknown[connectivity]
    return 0.5 * float(np.einsum("ei,eij,ej->", xe, element_matrices, xe))


def probe_values(probes, length_scale, formulation, potential, mesh: TriMesh, unknown, mu,
                 nodal_potential) -> tuple[ProbeValue, ...]:
    """Evaluate the potential (linear interpolation) and B (exact in the element) at each probe."""
    if not probes:
        return ()
    points = np.array([p.point for p in probes], dtype=np.float64) * length_scale
    element, bary = PointLocator(mesh).locate(points)
    out = []
    for probe, e, lam in zip(probes, element, bary):
        if e < 0:
            raise ProblemError(f"probe '{probe.name}' at {list(probe.point)} lies outside the mesh")
        nodes = mesh.triangles[e]
        b = flux_density_at(formulation, potential, mesh.points[nodes][None], unknown[nodes][None],
                            lam[None], mu[e:e + 1])[0]
        out.append(ProbeValue(probe.name, probe.point, float(lam @ nodal_potential[nodes]),
                              (float(b[0]), float(b[1]))))
    return tuple(out)
