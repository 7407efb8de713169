"""NGSolve (PyPI `ngsolve`) as the peer of the scattering study: the PEC sphere by Nedelec (HCurl) elements
with a radial PML, the scattered field with n x E = -n x E_inc on the sphere, one sparse direct
factorisation on NGSolve's TaskManager threads, and the far field from E and curl E on a closed sphere in
the air, both taken from the volume. Time convention e^{+jwt}, as the study's: E_inc = p exp(-jk k^.x) and
the PML stretches with -j alpha so the outgoing exp(-jkr) decays in it."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..scattering.waves import far_field, rcs, unit_vectors
from ..truncation.operator import currents


@dataclass(frozen=True)
class NgsolveLayout:
    """Radii from the sphere's surface in wavelengths: the far-field surface, where the PML starts, and the
    PML's thickness; the PML's stretching alpha; the sparse direct solver by NGSolve's name."""

    sprime_gap: float = 0.25
    pml_gap: float = 0.5
    pml_thickness: float = 0.4
    alpha: float = 1.5
    inverse: str = "sparsecholesky"


@dataclass(frozen=True)
class NgsolveRun:
    """One NGSolve solve: sigma_theta, sigma_phi (n_dir,) m^2 at the requested directions; unknowns (all and
    free), tetrahedra, the threads NGSolve reported inside its TaskManager, seconds per phase."""

    sigma_theta: np.ndarray
    sigma_phi: np.ndarray
    dofs: int
    free_dofs: int
    elements: int
    threads: int
    seconds: dict


def _geometry(radius: float, wavelength: float, layout: NgsolveLayout):
    """Netgen's CSG: air between the PEC sphere ("scatterer") and the far-field sphere ("sprime"), air
    again up to the PML ("pmlstart"), the PML up to "outer"; radii in metres."""
    from netgen.csg import CSGeometry, Pnt, Sphere  # noqa: PLC0415

    radii = np.array([0.0, layout.sprime_gap, layout.pml_gap, layout.pml_gap + layout.pml_thickness])
    names = ("scatterer", "sprime", "pmlstart", "outer")
    spheres = [Sphere(Pnt(0, 0, 0), radius + g * wavelength).bc(n) for g, n in zip(radii, names)]
    geometry = CSGeometry()
    for inner, outer, material in zip(spheres, spheres[1:], ("air", "air", "pml")):
        geometry.Add((outer - inner).mat(material))
    return geometry


def _incident(ngsolve, k: float, theta_deg: float, phi_deg: float, polarization: str):
    """E_inc as an NGSolve coefficient: the study's plane wave arriving from (theta, phi)."""
    r, th, ph = unit_vectors([theta_deg], [phi_deg])
    pol = th[0] if polarization == "theta" else ph[0]
    x, y, z = ngsolve.x, ngsolve.y, ngsolve.z
    phase = ngsolve.exp(1j * k * (r[0, 0] * x + r[0, 1] * y + r[0, 2] * z))
    return ngsolve.CF(tuple(complex(c) for c in pol)) * phase


def surface_samples(ngsolve, mesh, field, order: int):
    """Points, outward unit normals, quadrature weights (m^2), E and curl E, each (n, 3) or (n,), at a Gauss
    rule on the "sprime" boundary elements; E and curl E from the volume elements (BoundaryFromVolumeCF:
    on a boundary, curl of an HCurl field alone is its surface curl)."""
    rule = ngsolve.IntegrationRule(ngsolve.TRIG, 2 * order + 4)
    points = mesh.MapToAllElements(rule, mesh.Boundaries("sprime"))
    xyz = ngsolve.CF((ngsolve.x, ngsolve.y, ngsolve.z))(points)
    normal = ngsolve.specialcf.normal(3)(points)
    normal *= np.sign(np.einsum("pk,pk->p", normal, xyz))[:, None]  # away from the sphere's centre
    jac = ngsolve.specialcf.JacobianMatrix(3, 2)(points).reshape(-1, 3, 2)
    weights = np.tile(np.array(list(rule.weights)), len(xyz) // len(rule))
    weights *= np.linalg.norm(np.cross(jac[:, :, 0], jac[:, :, 1]), axis=1)
    e = ngsolve.BoundaryFromVolumeCF(field)(points)
    curl_e = ngsolve.BoundaryFromVolumeCF(ngsolve.curl(field))(points)
    return xyz, normal, weights, e, curl_e


def _far_field_rcs(k, samples, theta_deg, phi_deg):
    """sigma_theta, sigma_phi (n_dir,) m^2 from the surface samples by the study's far-field formula."""
    xyz, normal, weights, e, curl_e = samples
    pattern = far_field(unit_vectors(theta_deg, phi_deg)[0], xyz, currents(normal, weights, e[None], curl_e[None]), k)
    sigma_theta, sigma_phi = rcs(pattern, theta_deg, phi_deg)
    return sigma_theta[0], sigma_phi[0]


def solve_sphere(radius: float, wavelength: float, order: int, maxh: float, theta_deg, phi_deg,
                 layout: NgsolveLayout = NgsolveLayout(), threads: int = 1,
                 incidence=(0.0, 0.0, "theta")) -> NgsolveRun:
    """The PEC sphere of radius (m) at this wavelength (m) by HCurl elements of this order on a mesh of
    largest edge maxh (wavelengths), curved to the order; RCS at angles theta_deg, phi_deg (n_dir,) degrees
    for the incidence (theta, phi, polarisation) the study names the same way."""
    import ngsolve  # noqa: PLC0415

    k = 2 * np.pi / wavelength
    ngsolve.SetNumThreads(threads)
    seconds = {}
    with ngsolve.TaskManager():
        used = ngsolve.GetNumThreads()
        t0 = time.perf_counter()
        mesh = ngsolve.Mesh(_geometry(radius, wavelength, layout).GenerateMesh(maxh=maxh * wavelength))
        mesh.Curve(order)
        rad = radius + layout.pml_gap * wavelength
        mesh.SetPML(ngsolve.pml.Radial(origin=(0, 0, 0), rad=rad, alpha=-1j * layout.alpha), "pml")
        seconds["mesh"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        space = ngsolve.HCurl(mesh, order=order, complex=True, dirichlet="scatterer|outer")
        u, v = space.TnT()
        form = ngsolve.BilinearForm(space, symmetric=True)
        form += (ngsolve.curl(u) * ngsolve.curl(v) - k * k * u * v) * ngsolve.dx
        form.Assemble()
        field = ngsolve.GridFunction(space)
        field.Set(-_incident(ngsolve, k, *incidence), ngsolve.BND, definedon=mesh.Boundaries("scatterer"))
        rhs = (-form.mat * field.vec).Evaluate()
        seconds["assembly"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        inverse = form.mat.Inverse(space.FreeDofs(), inverse=layout.inverse)
        field.vec.data += inverse * rhs
        seconds["factorisation and solve"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sigma = _far_field_rcs(k, surface_samples(ngsolve, mesh, field, order), theta_deg, phi_deg)
        seconds["far field"] = time.perf_counter() - t0
    return NgsolveRun(*sigma, space.ndof, sum(space.FreeDofs()), mesh.ne, used, seconds)
