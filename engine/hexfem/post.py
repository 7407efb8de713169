"""Post-processing: displacement and von Mises stress on a sub-grid of each element, and at probes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProblemError
from .basis import evaluate, hex_basis
from .dofs import DofMap
from .geometry import jacobians, vertex_gradients

MAX_SAMPLE_POINTS = 2_000_000


@dataclass(frozen=True, eq=False)
class SampledField:
    """points: (n, 3) metres; cells: (k, 8) VTK hexahedra over points; displacement (n, 3) m;
    von_mises (n,) Pa; element (k,) the mesh element each sub-cell lies in."""

    points: np.ndarray
    cells: np.ndarray
    displacement: np.ndarray
    von_mises: np.ndarray
    element: np.ndarray
    per_edge: int


def element_coefficients(u: np.ndarray, dofmap: DofMap, elements=slice(None)) -> np.ndarray:
    """(k, n_functions, 3) local coefficients of the reference functions (orientation signs applied)."""
    return u.reshape(-1, 3)[dofmap.scalar[elements]] * dofmap.sign[elements][..., None]


def fields_at(coords, coeffs, lam, mu, p: int, rst: np.ndarray):
    """Position, displacement and von Mises stress at reference points rst (n, 3) of elements.

    coords: (k, 8, 3) m; coeffs: (k, n_functions, 3) m; lam, mu: (k,) Pa. Returns (k, n, 3) positions,
    (k, n, 3) displacements and (k, n) von Mises stresses.
    """
    values, ref_grads = evaluate(hex_basis(p), rst)
    _, inv, _ = jacobians(coords, rst)
    x = np.einsum("qv,evi->eqi", values[:, :8], coords)
    u = np.einsum("qa,eai->eqi", values, coeffs)
    grad = np.einsum("qak,eqkj,eai->eqij", ref_grads, inv, coeffs)  # du_i / dx_j
    strain = 0.5 * (grad + grad.transpose(0, 1, 3, 2))
    trace = np.trace(strain, axis1=2, axis2=3)
    stress = 2 * mu[:, None, None, None] * strain + (lam[:, None] * trace)[..., None, None] * np.eye(3)
    dev = stress - np.trace(stress, axis1=2, axis2=3)[..., None, None] * np.eye(3) / 3
    return x, u, np.sqrt(1.5 * np.einsum("eqij,eqij->eq", dev, dev))


def sample(coords, u, dofmap: DofMap, lam, mu) -> SampledField:
    """Evaluate on (s - 1)^3 sub-cells per element, s = p + 1 points per edge (fewer on huge meshes)."""
    m, p = len(coords), dofmap.order
    s = p + 1
    while s > 2 and m * s ** 3 > MAX_SAMPLE_POINTS:
        s -= 1
    t = np.linspace(-1, 1, s)
    rst = np.stack(np.meshgrid(t, t, t, indexing="ij"), axis=-1).reshape(-1, 3)
    xs, us, vms = [], [], []
    step = max(1, 200_000 // len(rst))
    for start in range(0, m, step):
        sl = slice(start, min(start + step, m))
        x, disp, vm = fields_at(coords[sl], element_coefficients(u, dofmap, sl), lam[sl], mu[sl], p, rst)
        xs.append(x.reshape(-1, 3))
        us.append(disp.reshape(-1, 3))
        vms.append(vm.reshape(-1))
    idx = np.arange(s ** 3).reshape(s, s, s)  # [i_r, i_s, i_t]
    c = idx[:-1, :-1, :-1]
    corners = np.stack([c, c + s * s, c + s * s + s, c + s, c + 1, c + s * s + 1, c + s * s + s + 1, c + s + 1],
                       axis=-1).reshape(-1, 8)
    cells = (np.arange(m)[:, None, None] * s ** 3 + corners[None]).reshape(-1, 8)
    element = np.repeat(np.arange(m), len(corners))
    return SampledField(np.concatenate(xs), cells, np.concatenate(us), np.concatenate(vms), element, s)


def locate(coords, point: np.ndarray, tol: float = 1e-9):
    """(element, rst) of the element of coords (m, 8, 3) containing point (3,), or None."""
    lo, hi = coords.min(axis=1), coords.max(axis=1)
    pad = 1e-9 * (hi - lo).max()
    candidates = np.flatnonzero(((point >= lo - pad) & (point <= hi + pad)).all(axis=1))
    for e in candidates:
        rst = np.zeros(3)
        for _ in range(30):  # Newton on the trilinear map
            values = evaluate(hex_basis(1), rst[None])[0][0]
            x = values @ coords[e]
            jac = coords[e].T @ vertex_gradients(rst[None])[0]
            step = np.linalg.solve(jac, point - x)
            rst += step
            if np.abs(step).max() < 1e-14 or np.abs(rst).max() > 3:
                break
        if np.abs(rst).max() <= 1 + tol:
            return int(e), np.clip(rst, -1, 1)
    return None


@dataclass(frozen=True)
class ProbeValue:
    name: str
    point: tuple[float, float, float]  # metres
    displacement: tuple[float, float, float]  # metres
    von_mises: float  # Pa


def probe_values(probes, scale: float, coords, u, dofmap: DofMap, lam, mu) -> tuple[ProbeValue, ...]:
    out = []
    for probe in probes:
        point = np.asarray(probe.point, dtype=float) * scale
        found = locate(coords, point)
        if found is None:
            raise ProblemError(f"probe '{probe.name}' at {list(probe.point)} lies outside the mesh")
        e, rst = found
        _, disp, vm = fields_at(coords[e:e + 1], element_coefficients(u, dofmap, slice(e, e + 1)),
                                lam[e:e + 1], mu[e:e + 1], dofmap.order, rst[None])
        out.append(ProbeValue(probe.name, tuple(point.tolist()), tuple(disp[0, 0].tolist()), float(vm[0, 0])))
    return tuple(out)
