"""The FE-IIIEE iteration over the Robin data U on S: from the FEM solution, E and curl E on S', the
truncation operator gives E and curl E on S and U = n x curl E + jk n x (n x E) there; U = 0 is the
first-order absorbing condition (iteration 0). The map U -> U' is affine, U' = L U + f, and the iteration
solves U = L U + f for every incidence at once: one block back-substitution and one operator application
per step. Two accelerations: fixed-point (U <- L U + f) and GMRES on (I - L) U = f."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..truncation.operator import Currents
from ..truncation.strategies import apply_operator, make_zgemm
from ..backend import get_backend
from .system import System, solve, traces

ACCELERATIONS = ("fixed-point", "gmres")


@dataclass
class Iterated:
    """Solution (n_dofs, r), U (r, p_S, 3), per incidence: converged, iterations and residual history."""

    u: np.ndarray
    robin: np.ndarray
    converged: np.ndarray
    iterations: np.ndarray
    history: list = field(default_factory=list)  # per step: residual per incidence (r,)
    backend: str = "numpy"


class RobinMap:
    """U -> (solution, U') for a system, Gamma's values and a loop strategy of the operator."""

    def __init__(self, system: System, u_gamma: np.ndarray, loop: str):
        self.system, self.u_gamma, self.loop = system, u_gamma, loop
        self.zgemm = None
        if loop == "zgemm":
            self.zgemm = make_zgemm(system.outer.points, system.inner.points, system.k, get_backend("auto"))
        self.q = len(system.outer.weights) // max(1, len(system.disc.mesh.surfaces["outer"]))
        self.backend = "numpy"

    def solution(self, robin: np.ndarray) -> np.ndarray:
        """The unknowns (n_dofs, r) for U (r, p_S, 3): one block back-substitution."""
        return solve(self.system, self.u_gamma, robin)

    def __call__(self, robin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = self.system
        u = self.solution(robin)
        cur = sprime_currents(s, u)
        applied = apply_operator(self.loop, s.outer.points, s.inner.points, cur, s.k, self.q, zgemm=self.zgemm)
        self.backend = applied.backend
        n = s.outer.normals[None]
        return u, np.cross(n, applied.f) + 1j * s.k * np.cross(n, np.cross(n, applied.e))


def sprime_currents(system: System, u: np.ndarray) -> Currents:
    """The operator's currents on S' from the unknowns (n_dofs, r): n' x E and n' . E, n' . curl E from the
    traces, n' x curl E from the weak flux."""
    e, f = traces(system.inner, u)
    n, w = system.inner.normals, system.inner.weights
    return Currents(w[None, :, None] * np.cross(n[None], e), w[None, :, None] * system.flux(u),
                    w * np.einsum("pk,rpk->rp", n, e), w * np.einsum("pk,rpk->rp", n, f))


def _norms(x: np.ndarray) -> np.ndarray:
    return np.sqrt((np.abs(x.reshape(len(x), -1)) ** 2).sum(axis=1))


def fixed_point(step: RobinMap, n_rhs: int, shape, tol: float, max_iterations: int,
                progress: Callable[[int, np.ndarray], None]) -> Iterated:
    """U_{n+1} = L U_n + f from U_0 = 0 until |U_{n+1} - U_n| <= tol |U_{n+1}| for every incidence."""
    robin = np.zeros((n_rhs,) + shape, dtype=complex)
    history, iterations = [], np.zeros(n_rhs, dtype=int)
    converged = np.zeros(n_rhs, dtype=bool)
    for it in range(1, max_iterations + 1):
        _, new = step(robin)
        change = _norms(new - robin) / np.maximum(_norms(new), 1e-300)
        robin = new
        history.append(change)
        iterations[~converged] = it
        converged |= change <= tol
        progress(it, change)
        if converged.all():
            break
    return Iterated(step.solution(robin), robin, converged, iterations, history, step.backend)


def gmres(step: RobinMap, n_rhs: int, shape, tol: float, max_iterations: int,
          progress: Callable[[int, np.ndarray], None]) -> Iterated:
    """GMRES (no restart) on (I - L) U = f, every incidence its own Krylov space, the products batched;
    residual |f - (I - L) U| / |f| per incidence."""
    _, f = step(np.zeros((n_rhs,) + shape, dtype=complex))
    rhs = f.reshape(n_rhs, -1)
    beta = np.maximum(_norms(rhs), 1e-300)
    basis = [rhs / beta[:, None]]
    h = np.zeros((n_rhs, max_iterations + 1, max_iterations), dtype=complex)
    history, iterations = [], np.zeros(n_rhs, dtype=int)
    converged = np.zeros(n_rhs, dtype=bool)
    y = np.zeros((n_rhs, 0), dtype=complex)
    for j in range(max_iterations):
        _, image = step(basis[j].reshape((n_rhs,) + shape))
        w = basis[j] - (image.reshape(n_rhs, -1) - rhs)  # (I - L) v
        for i in range(j + 1):  # modified Gram-Schmidt
            h[:, i, j] = np.einsum("rn,rn->r", basis[i].conj(), w)
            w = w - h[:, i, j, None] * basis[i]
        h[:, j + 1, j] = _norms(w)
        basis.append(w / np.maximum(h[:, j + 1, j].real, 1e-300)[:, None])
        y, residual = _least_squares(h[:, :j + 2, :j + 1], beta)
        history.append(residual)
        iterations[~converged] = j + 1
        converged |= residual <= tol
        progress(j + 1, residual)
        if converged.all():
            break
    robin = np.einsum("rj,jrn->rn", y, np.array(basis[:y.shape[1]])).reshape((n_rhs,) + shape)
    return Iterated(step.solution(robin), robin, converged, iterations, history, step.backend)


def _least_squares(h: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per incidence, y minimising |beta e1 - H y| for H (r, j + 1, j), and that minimum over beta."""
    r, m1, m = h.shape
    ys, res = np.zeros((r, m), dtype=complex), np.zeros(r)
    for i in range(r):
        e1 = np.zeros(m1, dtype=complex)
        e1[0] = beta[i]
        ys[i] = np.linalg.lstsq(h[i], e1, rcond=None)[0]
        res[i] = np.linalg.norm(e1 - h[i] @ ys[i]) / beta[i]
    return ys, res
