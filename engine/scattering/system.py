"""The factorised FEM system of one frequency: A = K - k^2 M + jk B_S (complex symmetric), split into the
unknowns on Gamma (set by the incident field) and the free ones (factorised once, every right-hand side
solved against the one factorisation)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..backend import array_module, on_device
from ..sorted_sets import complement, unique_sorted
from .gpu_assembly import fem_blocks_on_device, rows_on_device
from .linear import Factorised, factorise, resolve
from .sparse_columns import times_columns
from .fem import Discretisation, SurfaceTrace, face_keys, load_map, surface_trace, tangential, volume_matrices


def _cupy():
    import cupy  # noqa: PLC0415

    return cupy


@dataclass(frozen=True, eq=False)
class System:
    """k (1/m); the traces on Gamma, S' (inner) and S (outer); the unknowns on Gamma and the free ones;
    factor: the free block's factorisation; project(F (n_gamma, r)) -> values on Gamma; load (n_dofs, 3 p_S);
    seconds: "factorisation" (the free block's), "assembly" (the rest, the surface mass matrices' small
    factorisations included) and "assembly phases" (its parts: surface traces, FEM blocks, surface masses,
    weak flux; the load map the rest); assembly_device:
    where the volume matrices were assembled ("host" or "GPU")."""

    k: float
    disc: Discretisation
    gamma: SurfaceTrace
    inner: SurfaceTrace
    outer: SurfaceTrace
    on_gamma: np.ndarray
    free: np.ndarray
    a_free_gamma: sp.csr_matrix
    factor: Factorised  # of the free-free block
    project: Callable
    load: sp.csr_matrix
    flux: Callable  # flux(u (n_dofs, r)) -> n' x curl E (r, p', 3) on S', recovered weakly
    seconds: dict = field(default_factory=dict)
    assembly_device: str = "host"

    @property
    def n_dofs(self) -> int:
        return self.disc.dofs.n_dofs

    @property
    def xp(self):
        """The array module of the per-column work (loads, back-substitutions, traces and fluxes): CuPy where
        the factor lives on the GPU (cuDSS), so the columns stay beside it, else NumPy."""
        return _cupy() if self.factor.device == "GPU" else np


def surface_dofs(disc: Discretisation, name: str) -> np.ndarray:
    """The unknowns whose functions have a tangential trace on a mesh surface: its edges' and faces'."""
    tri = np.sort(disc.mesh.surfaces[name], axis=1).astype(np.int64)
    d = disc.dofs
    n = len(disc.mesh.points)
    edge_keys = d.edges[:, 0] * n + d.edges[:, 1]
    on_edges = unique_sorted(np.concatenate([tri[:, a] * n + tri[:, b] for a, b in ((0, 1), (0, 2), (1, 2))]))
    edges = np.searchsorted(edge_keys, on_edges)
    faces = np.searchsorted(face_keys(d.faces, n), face_keys(tri, n))
    return d.trace_dofs(edges, faces)


def fem_blocks(disc: Discretisation, k: float, outer: SurfaceTrace, on_gpu: bool, check=lambda: None) -> tuple:
    """(A[free][:, free], A[free][:, on_gamma], on_gamma, free) of fem_matrix's A: assembled on the GPU
    (gpu_assembly.fem_blocks_on_device) where on_gpu, else on the host by fem_matrix and sliced."""
    if not on_gpu:
        a, on_gamma, free = fem_matrix(disc, k, outer, check)
        return a[free][:, free], a[free][:, on_gamma].tocsr(), on_gamma, free
    on_gamma = surface_dofs(disc, "scatterer")
    free = complement(disc.dofs.n_dofs, on_gamma)
    check()
    return (*fem_blocks_on_device(disc, k, 1j * k * outer.mass, free, on_gamma), on_gamma, free)


def fem_matrix(disc: Discretisation, k: float, outer: SurfaceTrace, check=lambda: None):
    """A = K - k^2 M + jk B_S (n_dofs, n_dofs) complex CSR at wavenumber k (1/m), assembled on the host, the
    unknowns on Gamma and the free ones (sorted index arrays)."""
    stiffness, mass = volume_matrices(disc)
    check()
    a = (stiffness - k * k * mass + 1j * k * outer.mass).tocsr()
    on_gamma = surface_dofs(disc, "scatterer")
    return a, on_gamma, complement(disc.dofs.n_dofs, on_gamma)


def _timed(seconds: dict, phase: str, fn, *args):
    """fn(*args), its wall seconds added to seconds[phase]."""
    t0 = time.perf_counter()
    out = fn(*args)
    seconds[phase] = seconds.get(phase, 0.0) + time.perf_counter() - t0
    return out


def build_system(disc: Discretisation, k: float, linear_solver: str = "auto", check=lambda: None) -> System:
    """Assemble and factorise at wavenumber k (1/m); the FEM blocks and the weak flux's rows on the GPU where
    the factorisation runs there (cuDSS)."""
    start, phases = time.perf_counter(), {}
    on_gpu = resolve(linear_solver) == "cudss"
    gamma, inner, outer = (_timed(phases, "surface traces", surface_trace, disc, name)
                           for name in ("scatterer", "inner", "outer"))
    a_free, a_coupling, on_gamma, free = _timed(phases, "FEM blocks", fem_blocks, disc, k, outer, on_gpu, check)
    check()
    lu = _timed(phases, "factorisation", factorise, a_free, linear_solver, "the FEM system")
    m_gamma = gamma.mass[on_gamma][:, on_gamma]
    projection = _timed(phases, "surface masses", factorise, m_gamma, linear_solver,
                        "the tangential mass matrix on the scatterer")
    flux = _timed(phases, "weak flux", weak_flux, disc, inner, k, linear_solver, on_gpu)
    factorisation_s = phases.pop("factorisation")
    seconds = {"assembly": time.perf_counter() - start - factorisation_s, "factorisation": factorisation_s,
               "assembly phases": phases}
    return System(k, disc, gamma, inner, outer, on_gamma, free, a_coupling, lu, projection.solve,
                  load_map(outer), flux, seconds, "GPU" if on_gpu else "host")


def weak_flux(disc: Discretisation, inner: SurfaceTrace, k: float, linear_solver: str,
              on_gpu: bool = False) -> Callable:
    """n' x curl E on S' from the FEM equations of the tetrahedra inside S': for every function v with a
    tangential trace on S', int_V0 (curl E . curl v - k^2 E . v) dV = -int_S' (n' x curl E) . v dS, solved in
    the tangential trace space of S' (a surface mass matrix). First-order elements' curl is constant per
    tetrahedron; this flux is as accurate as the solution's energy, not its pointwise curl."""
    cells, on = np.flatnonzero(disc.mesh.region == 0), surface_dofs(disc, "inner")
    if on_gpu:  # (k^2 M - K)[on] from the element entries of those rows alone
        rows = rows_on_device(disc, cells, -1.0, k * k, on)
    else:
        stiffness, mass = volume_matrices(disc, cells)
        rows = (k * k * mass - stiffness).tocsr()[on]
    surface_mass = factorise(inner.mass[on][:, on], linear_solver, "the tangential mass matrix on S'")
    value = inner.value[:, on].tocsr()
    normals = inner.normals

    def flux(u: np.ndarray) -> np.ndarray:  # NumPy or CuPy (n_dofs, r) -> the same kind (r, p', 3)
        coefficients = surface_mass.solve(times_columns(rows, u).astype(complex))
        g = times_columns(value, coefficients).T.reshape(u.shape[1], -1, 3)
        return tangential(g, normals)

    return flux


def gamma_load(system: System, phase: np.ndarray, polarization: np.ndarray) -> np.ndarray:
    """The right-hand sides (n_gamma, r) of n x E = -n x E_inc in the L2 sense on Gamma, for plane waves
    E_inc = phase (p_Gamma, r) times polarization (r, 3) at Gamma's quadrature points (waves.plane_waves);
    system.project of them gives the unknowns on Gamma. Point-major (p, 3, r), so the sparse product reads
    contiguous columns."""
    g = system.gamma
    xp = array_module(phase)  # NumPy, or CuPy for a phase on the GPU (the loads then stay there)
    n, w = (g.normals, g.weights) if xp is np else (on_device(g.normals), on_device(g.weights))
    pol = xp.asarray(polarization.T)  # (3, r)
    tangential_pol = pol[None] - n[:, :, None] * (n @ pol)[:, None, :]  # (p, 3, r) real: (I - n n^T) pol
    t = tangential_pol * (w[:, None] * phase)[:, None, :]
    return -times_columns(g.value[:, system.on_gamma].T.tocsr(), t.reshape(-1, phase.shape[1]))


def solve(system: System, u_gamma: np.ndarray, robin: np.ndarray) -> np.ndarray:
    """All unknowns (n_dofs, r) for Gamma's values (n_gamma, r) and U (r, p_S, 3) at S's points, NumPy or
    CuPy (both of one kind; CuPy for a factor on the GPU)."""
    xp = array_module(robin)
    free, on_gamma = (system.free, system.on_gamma) if xp is np else map(on_device, (system.free, system.on_gamma))
    load = times_columns(system.load, robin.reshape(len(robin), -1).T)[free]
    b = load - times_columns(system.a_free_gamma, u_gamma)
    u = xp.zeros((system.n_dofs, u_gamma.shape[1]), dtype=complex)
    u[on_gamma] = u_gamma
    u[free] = system.factor.solve(b)
    return u


def traces(trace: SurfaceTrace, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E and curl E (r, p, 3) at a trace's points from the unknowns (n_dofs, r), NumPy or CuPy."""
    r = u.shape[1]
    return times_columns(trace.value, u).T.reshape(r, -1, 3), times_columns(trace.curl, u).T.reshape(r, -1, 3)
