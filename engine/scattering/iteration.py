"""The FE-IIIEE iteration over the Robin data U on S: from the FEM solution, E and curl E on S', the
truncation operator gives E and curl E on S and U = n x curl E + jk n x (n x E) there; U = 0 is the
first-order absorbing condition (iteration 0). The map U -> U' is affine, U' = L U + f, with f linear in the
values on Gamma: every incidence's iterates are the same combination of the iterates of a basis of its
data (incidences.py), so fixed-point iterates the basis columns (one block back-substitution and one
operator application per step) and keeps every incidence's solution as their combination. GMRES on
(I - L) U = f is not linear in f: every incidence keeps its own Krylov space, the products of the incidences
still iterating batched."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..truncation.operator import Currents
from ..truncation.strategies import apply_operator, prepare
from ..backend import array_module, gpu_unavailable_reason, on_device, to_host
from ..variants import SCATTERING_LOOP
from .incidences import Solutions, combine, combined_norms, solutions
from .fem import normal_cross, tangential
from .system import System, solve, traces
from .waves import far_field

ACCELERATIONS = ("fixed-point", "gmres")
PHASES = ("back-substitution", "currents on S'", "operator")  # RobinMap.seconds' keys


@dataclass
class Iterated:
    """Solution per incidence (r of them), each at the step where it stopped; per incidence: converged,
    iterations, and the residual of every step (held at its last value once the incidence stopped)."""

    u: Solutions
    converged: np.ndarray
    iterations: np.ndarray
    history: list = field(default_factory=list)  # per step: residual per incidence (r,)
    backend: str = "numpy"


class RobinMap:
    """(U, Gamma's values) -> (solution, U') for a system and a loop strategy of the operator (auto: what
    variants.SCATTERING_LOOP picks here); seconds: wall time spent in each of PHASES so far; device: where the
    operator's last application ran and by which loop, e.g. "4 GPUs (multi-gpu-tiled)"."""

    def __init__(self, system: System, loop: str):
        self.system = system
        self.loop = SCATTERING_LOOP.resolve(loop, on_gpu=not gpu_unavailable_reason())
        self.q = len(system.outer.weights) // max(1, len(system.disc.mesh.surfaces["outer"]))
        self.prepared = prepare(self.loop, system.outer.points, system.inner.points, system.k, self.q)
        self.backend, self.device = "numpy", ""
        self.seconds = dict.fromkeys(PHASES, 0.0)

    def _timed(self, phase: str, fn, *args):
        """fn(*args), its seconds added to phase's: on a GPU once the device has finished it (CuPy's calls
        return before their work is done, which would count it in the next phase that waits)."""
        t0 = time.perf_counter()
        out = fn(*args)
        if self.system.xp is not np:
            self.system.xp.cuda.Device().synchronize()
        self.seconds[phase] += time.perf_counter() - t0
        return out

    def solution(self, robin: np.ndarray, u_gamma: np.ndarray):
        """The unknowns (n_dofs, r) for U (r, p_S, 3) and Gamma's values (n_gamma, r): one block
        back-substitution, on the factor's device (system.xp: a CuPy array for a factor on the GPU)."""
        xp = self.system.xp
        return self._timed("back-substitution", solve, self.system, xp.asarray(u_gamma), xp.asarray(robin))

    def __call__(self, robin: np.ndarray, u_gamma: np.ndarray) -> tuple[object, object]:
        """(The unknowns (n_dofs, r), U' (r, p_S, 3)): CuPy arrays where the factor and the operator (zgemm) are
        on the GPU, else U' NumPy (and the unknowns where solution leaves them)."""
        s = self.system
        u = self.solution(robin, u_gamma)
        cur = self._timed("currents on S'", sprime_currents, s, u)
        if self.loop != "zgemm":  # the other loops take the currents from the host
            cur = self._timed("currents on S'", map_currents, cur, to_host)
        applied = self._timed("operator", apply_operator, self.loop, s.outer.points, s.inner.points, cur, s.k,
                              self.q, 0, self.prepared)
        self.backend = applied.backend
        where = f"{applied.devices} GPUs" if applied.devices > 1 else ("GPU" if applied.devices else "host")
        self.device = f"{where} ({self.loop})"
        n = s.outer.normals  # unit: n x (n x E) = -(E - (E . n) n)
        return u, normal_cross(n, applied.f) - 1j * s.k * tangential(applied.e, n)

    def linear(self, robin: np.ndarray) -> np.ndarray:
        """L U (r, p_S, 3) NumPy: the map with zero values on Gamma."""
        n_gamma = len(self.system.on_gamma)
        return to_host(self(robin, np.zeros((n_gamma, len(robin)), dtype=complex))[1])


def sprime_currents(system: System, u) -> Currents:
    """The operator's currents on S' from the unknowns (n_dofs, r), NumPy or CuPy (the currents then on the
    same device): n' x E and n' . E, n' . curl E from the traces, n' x curl E from the weak flux."""
    inner = system.inner
    e, f = traces(inner, u)
    xp = array_module(u)
    n, w = (inner.normals, inner.weights) if xp is np else (on_device(inner.normals), on_device(inner.weights))
    return Currents(w[None, :, None] * normal_cross(inner.normals, e), w[None, :, None] * system.flux(u),
                    w * xp.einsum("pk,rpk->rp", n, e), w * xp.einsum("pk,rpk->rp", n, f))


def map_currents(cur: Currents, move) -> Currents:
    """The currents with move applied to each of their four arrays (to_host: NumPy copies of CuPy ones;
    xp.asarray: on xp's device)."""
    return Currents(*(move(a) for a in (cur.cross_e, cur.cross_f, cur.dot_e, cur.dot_f)))


def far_patterns(system: System, u: Solutions, directions: np.ndarray, xp=np) -> np.ndarray:
    """The far-field patterns F (r, n_dir, 3) complex V of every incidence of the solutions along unit
    directions (n_dir, 3) shared by all or (r, n_dir, 3) each its own: the far field (by the array module xp)
    of the currents on S' of the columns the solutions combine, then combined per incidence, so that no
    incidence's currents are formed (360 incidences of a sweep are a few dozen columns)."""
    out = np.zeros((u.count, directions.shape[-2], 3), dtype=complex)
    for columns, coefficients, incidences in u.parts:
        cur = sprime_currents(system, columns)
        cur = cur if xp is not np else map_currents(cur, to_host)
        if directions.ndim == 2:
            out[incidences] = combine(far_field(directions, system.inner.points, cur, system.k, xp), coefficients)
            continue
        own = directions[incidences]  # (r_k, n_dir, 3): the columns' fields at every direction these ask for
        f = far_field(own.reshape(-1, 3), system.inner.points, cur, system.k, xp).reshape(-1, *own.shape)
        out[incidences] = np.einsum("ji,jidk->idk", coefficients, f)
    return out


def _norms(x: np.ndarray) -> np.ndarray:
    return np.sqrt((np.abs(x.reshape(len(x), -1)) ** 2).sum(axis=1))


def fixed_point(step: RobinMap, u_gamma: np.ndarray, coefficients: np.ndarray, first: np.ndarray, tol: float,
                max_iterations: int, progress: Callable[[int, np.ndarray], None]) -> Iterated:
    """U_{n+1} = L U_n + f from U_0 = 0 for the m columns of Gamma's values u_gamma (n_gamma, m), whose
    combinations by coefficients (m, r) are the r incidences; first: U_1 = f (m, p_S, 3), NumPy or CuPy as
    step gives it. Incidence i stops
    at the first n with |U_{n+1} - U_n| <= tol |U_{n+1}| (norms of its combination) and keeps the solution
    for U_{n+1}, as it would iterated alone; the columns go on until every incidence has stopped."""
    r = coefficients.shape[1]
    robin, new = array_module(first).zeros_like(first), first  # on the GPU where RobinMap leaves U there
    history, iterations = [], np.zeros(r, dtype=int)
    converged, stopped = np.zeros(r, dtype=bool), np.zeros(r, dtype=bool)
    held = np.zeros(r)
    parts = []
    for it in range(1, max_iterations + 1):
        change = combined_norms(new - robin, coefficients) / np.maximum(combined_norms(new, coefficients), 1e-300)
        robin = new
        held[~stopped] = change[~stopped]
        history.append(held.copy())
        iterations[~stopped] = it
        converged |= ~stopped & (change <= tol)
        stopped |= _keep(step, u_gamma, robin, coefficients, converged & ~stopped, parts)
        progress(it, held)
        if stopped.all() or it == max_iterations:
            break
        _, new = step(robin, u_gamma)
    _keep(step, u_gamma, robin, coefficients, ~stopped, parts)
    return Iterated(Solutions(tuple(parts), r), converged, iterations, history, step.backend)


def _keep(step: RobinMap, u_gamma, robin, coefficients, which: np.ndarray, parts: list) -> np.ndarray:
    """The incidences `which` (r,) bool stop at U = robin (m, p_S, 3): one block back-substitution of the m
    columns, appended to parts with those incidences' coefficients; returns which."""
    if which.any():
        incidences = np.flatnonzero(which)
        parts.append((step.solution(robin, u_gamma), coefficients[:, incidences], incidences))
    return which


def gmres(step: RobinMap, u_gamma: np.ndarray, rhs: np.ndarray, tol: float, max_iterations: int,
          progress: Callable[[int, np.ndarray], None]) -> Iterated:
    """GMRES (no restart) on (I - L) U = f for Gamma's values u_gamma (n_gamma, r) and f = rhs (r, p_S, 3),
    every incidence its own Krylov space; the residual |f - (I - L) U| / |f| per incidence, and an incidence
    leaves the batch of products once it is below tol."""
    r, shape = len(rhs), rhs.shape[1:]
    flat = rhs.reshape(r, -1)
    beta = np.maximum(_norms(flat), 1e-300)
    basis = [flat / beta[:, None]]
    h = np.zeros((r, max_iterations + 1, max_iterations), dtype=complex)
    y = np.zeros((r, max_iterations), dtype=complex)
    history, iterations = [], np.zeros(r, dtype=int)
    converged, held = np.zeros(r, dtype=bool), np.zeros(r)
    for j in range(max_iterations):
        a = np.flatnonzero(~converged)
        v = basis[j][a]
        w = v - step.linear(v.reshape((len(a),) + shape)).reshape(len(a), -1)  # (I - L) v
        basis.append(_arnoldi(basis, a, w, h, j))
        y[a, :j + 1], held[a] = _least_squares(h[a, :j + 2, :j + 1], beta[a])
        history.append(held.copy())
        iterations[a] = j + 1
        converged |= held <= tol
        progress(j + 1, held)
        if converged.all():
            break
    robin = np.zeros_like(flat)
    for j in range(int(iterations.max(initial=0))):
        robin += y[:, j, None] * basis[j]
    u = step.solution(robin.reshape((r,) + shape), u_gamma)
    return Iterated(solutions(u, np.eye(r, dtype=complex)), converged, iterations, history, step.backend)


def _arnoldi(basis: list, a: np.ndarray, w: np.ndarray, h: np.ndarray, j: int) -> np.ndarray:
    """Orthogonalise w (len(a), n) against basis[0..j] for the incidences a (modified Gram-Schmidt), writing
    column j of their Hessenberg matrices h (r, m + 1, m); the next basis vectors (r, n), zero outside a."""
    for i in range(j + 1):
        h[a, i, j] = np.einsum("rn,rn->r", basis[i][a].conj(), w)
        w = w - h[a, i, j, None] * basis[i][a]
    h[a, j + 1, j] = _norms(w)
    out = np.zeros_like(basis[0])
    out[a] = w / np.maximum(h[a, j + 1, j].real, 1e-300)[:, None]
    return out


def _least_squares(h: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per incidence, y (r, j) minimising |beta e1 - H y| for H (r, j + 1, j) of full rank, and that minimum
    over beta (r,): one batched QR."""
    q, upper = np.linalg.qr(h)
    y = np.linalg.solve(upper, (beta[:, None] * q[:, 0, :].conj())[..., None])[..., 0]
    target = np.zeros(h.shape[:2], dtype=complex)
    target[:, 0] = beta
    return y, _norms(target - np.einsum("rij,rj->ri", h, y)) / beta
