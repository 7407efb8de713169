"""The scattered-field FEM system: curl curl E - k^2 E = 0 between Gamma and S with n x E = -n x E_inc on
Gamma and n x curl E + jk n x (n x E) = U on S (outward n). Weak form, for test functions v vanishing
tangentially on Gamma:
    int (curl E . curl v - k^2 E . v) dV + jk int_S E_t . v_t dS = -int_S U . v dS.
Traces are matrices: the sparse maps from the unknowns to E and curl E at surface quadrature points, and
from values of U at S's points to the load vector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..backend import array_module, on_device
from ..errors import MeshError
from ..quadrature import dunavant
from .mesh import ScatteringMesh
from .nedelec import (FUNCTIONS, DofMap, Geometry, basis, dof_map, edge_crosses, face_functions, geometry,
                      reference_integrals)

CHUNK_ENTRIES = 1 << 23  # element matrix entries per assembly block (8M: 64 MiB per matrix)
TRACE_CHUNK = 1 << 20  # trace values (k q f 3 sides) per block of surface triangles (1M: 8 MiB per array)


@dataclass(frozen=True, eq=False)
class SurfaceTrace:
    """Quadrature on a mesh surface: points (p, 3) m, normals (p, 3) pointing away from the scatterer,
    weights (p,) m^2; value and curl: sparse (3p, n_dofs) maps from the unknowns to E and curl E (rows
    point-major, xyz), averaged over the two sides of an interior surface; mass: the tangential mass matrix."""

    points: np.ndarray
    normals: np.ndarray
    weights: np.ndarray
    value: sp.csr_matrix
    curl: sp.csr_matrix
    mass: sp.csr_matrix  # (n_dofs, n_dofs): int v_t . w_t dS, the tangential mass matrix


@dataclass(frozen=True, eq=False)
class Discretisation:
    mesh: ScatteringMesh
    dofs: DofMap
    geom: Geometry

    @property
    def order(self) -> int:
        return self.dofs.order


def discretise(mesh: ScatteringMesh, order: int) -> Discretisation:
    return Discretisation(mesh, dof_map(mesh.tets, order), geometry(mesh.points, mesh.tets))


def element_matrices(order: int, grads, volumes) -> tuple:
    """Curl-curl (1/m) and mass (m) matrices (m, n_f, n_f) of tetrahedra with barycentric gradients grads
    (m, 4, 3) and volumes (m,), exact: the reference integrals contracted with the dot products g_s . g_t and
    (g_t x g_s) . (g_u x g_v). NumPy or CuPy arrays in, the same out."""
    xp = array_module(grads)
    mass_ref, curl_ref = (xp.asarray(a) for a in reference_integrals(order))
    m, n = len(grads), FUNCTIONS[order]
    gram = grads @ grads.transpose(0, 2, 1)  # (m, 4, 4)
    crosses = edge_crosses(grads)
    cross_dots = crosses @ crosses.transpose(0, 2, 1)  # (m, 6, 6)
    stiffness = volumes[:, None] * (cross_dots.reshape(m, 36) @ curl_ref)
    mass = volumes[:, None] * (gram.reshape(m, 16) @ mass_ref)
    return stiffness.reshape(m, n, n), mass.reshape(m, n, n)


def volume_matrices(d: Discretisation, cells: np.ndarray | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Curl-curl K (1/m) and mass M (m) matrices, real symmetric (n_dofs, n_dofs), over the given
    tetrahedra (indices; None: all), summed a block of about CHUNK_ENTRIES element entries at a time."""
    cells = np.arange(len(d.mesh.tets)) if cells is None else cells
    n, f = d.dofs.n_dofs, FUNCTIONS[d.order]
    chunk = max(1, CHUNK_ENTRIES // (f * f))
    stiffness, mass = [], []
    for lo in range(0, len(cells), chunk):
        sl = cells[lo:lo + chunk]
        k_e, m_e = element_matrices(d.order, d.geom.grads[sl], d.geom.volumes[sl])
        dofs = d.dofs.cell_dofs[sl].astype(np.int32)
        rows = np.repeat(dofs, f, axis=1).ravel()
        cols = np.tile(dofs, (1, f)).ravel()
        stiffness.append(sp.csr_matrix((k_e.ravel(), (rows, cols)), shape=(n, n)))
        mass.append(sp.csr_matrix((m_e.ravel(), (rows, cols)), shape=(n, n)))
    return _summed(stiffness), _summed(mass)


def _summed(parts: list[sp.csr_matrix]) -> sp.csr_matrix:
    """The sum of sparse matrices, pairwise (each entry is added about log2(len(parts)) times, not len(parts))."""
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def face_keys(rows: np.ndarray, n: int) -> np.ndarray:
    """One int64 key per triangle (k, 3) of node numbers below n, independent of the vertex order."""
    rows = np.sort(rows, axis=1).astype(np.int64)
    return (rows[:, 0] * n + rows[:, 1]) * n + rows[:, 2]


def adjacent_tets(d: Discretisation, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each triangle (k, 3) of the mesh: its tetrahedra (k, 2) and how many (1 or 2, k)."""
    n = len(d.mesh.points)
    known = face_keys(d.dofs.faces, n)
    keys = face_keys(triangles, n)
    at = np.searchsorted(known, keys)
    at = np.minimum(at, len(known) - 1)
    if (known[at] != keys).any():
        raise MeshError(f"{int((known[at] != keys).sum())} surface triangles are not faces of the volume mesh")
    flat = d.dofs.tet_faces.ravel()
    order = np.argsort(flat, kind="stable")
    first = np.searchsorted(flat[order], at, side="left")
    count = np.searchsorted(flat[order], at, side="right") - first
    pair = np.stack([order[first], order[np.minimum(first + 1, len(order) - 1)]], axis=1) // 4
    pair[count == 1, 1] = pair[count == 1, 0]
    return pair, count


def _barycentric_in_tets(tets: np.ndarray, triangles: np.ndarray, face_bary: np.ndarray) -> np.ndarray:
    """Tetrahedron barycentrics (k, q, 4) of points given by triangle barycentrics face_bary (q, 3)."""
    lam = np.zeros((len(triangles), len(face_bary), 4))
    for corner in range(3):
        slot = np.argmax(tets == triangles[:, corner, None], axis=1)
        lam[np.arange(len(triangles)), :, slot] = face_bary[None, :, corner]
    return lam


def surface_trace(d: Discretisation, name: str) -> SurfaceTrace:
    """Quadrature and trace maps on surface `name` ("scatterer", "inner" or "outer"), built a block of about
    TRACE_CHUNK values of triangles at a time (the blocks' temporaries stay small enough for the C heap to
    reuse, rather than each mapped afresh from the system)."""
    triangles = d.mesh.surfaces[name]
    rule = dunavant(2 * d.order)  # exact for the tangential mass and load (degree 2 order)
    corners = d.mesh.points[triangles]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    area = 0.5 * np.linalg.norm(normal, axis=1)
    normal /= 2 * area[:, None]
    weights = area[:, None] * rule.weights  # (k, q)
    pair, count = adjacent_tets(d, triangles)
    sides = 1 if (count == 1).all() else 2  # the mean of the two tetrahedra's traces where there are two
    per = max(1, TRACE_CHUNK // (len(rule.weights) * FUNCTIONS[d.order] * 3 * sides))
    blocks = [_trace_block(d, triangles[lo:lo + per], pair[lo:lo + per, :sides], normal[lo:lo + per],
                           weights[lo:lo + per], rule.points) for lo in range(0, len(triangles), per)]
    n = d.dofs.n_dofs
    value, curl = (sp.vstack([b[i] for b in blocks], format="csr") if blocks else sp.csr_matrix((0, n))
                   for i in (0, 1))
    rows, cols, entries = (np.concatenate([b[2][i] for b in blocks] or [np.zeros(0)]) for i in range(3))
    mass = sp.csr_matrix((entries, (rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False))),
                         shape=(n, n))
    return SurfaceTrace(np.einsum("qi,tik->tqk", rule.points, corners).reshape(-1, 3),
                        np.repeat(normal, len(rule.weights), axis=0), weights.reshape(-1), value, curl, mass)


def _trace_block(d: Discretisation, triangles: np.ndarray, pair: np.ndarray, normal: np.ndarray,
                 weights: np.ndarray, points: np.ndarray) -> tuple:
    """Triangles (k, 3) with their tetrahedra on one or both sides (k, s), unit normals (k, 3), weights (k, q)
    and the rule's barycentric points (q, 3): the value and curl maps of their points (3 k q, n_dofs) and the
    tangential mass's entries (rows, columns, values) from one side (_tangential_mass)."""
    sides = []
    for side in range(pair.shape[1]):
        tets = pair[:, side]
        lam = _barycentric_in_tets(d.mesh.tets[tets], triangles, points)
        sides.append((*basis(d.order, lam, d.geom.grads[tets]), d.dofs.cell_dofs[tets]))  # (k, q, f, 3) each
    v, c, dofs = (np.concatenate(parts, axis=2 if i < 2 else 1) for i, parts in enumerate(zip(*sides)))
    if len(sides) > 1:
        v /= len(sides)
        c /= len(sides)
    value, curl = (_point_map(x, dofs, d.dofs.n_dofs) for x in (v, c))
    one_side_values, _, one_side_dofs = sides[0]
    tets = d.mesh.tets[pair[:, 0]]
    opposite = np.argmin((tets[:, :, None] == triangles[:, None, :]).any(axis=2), axis=1)  # the face's local index
    on_face = face_functions(d.order)[opposite]  # (k, m) the functions with a tangential trace there
    return value, curl, _tangential_mass(np.take_along_axis(one_side_values, on_face[:, None, :, None], axis=2),
                                         np.take_along_axis(one_side_dofs, on_face, axis=1), normal, weights)


def _index_dtype(*sizes: int):
    return np.int32 if max(sizes) < 2**31 else np.int64


def _point_map(vals: np.ndarray, cell_dofs: np.ndarray, n_dofs: int) -> sp.csr_matrix:
    """Sparse (3 k q, n_dofs): row (point, component) from the values (k, q, f, 3) of each cell's functions,
    built as CSR directly (f entries a row, in row order), duplicates summed."""
    k, q, f, _ = vals.shape
    index = _index_dtype(vals.size, n_dofs)
    indices = np.broadcast_to(cell_dofs[:, None, None, :].astype(index), (k, q, 3, f)).ravel()
    matrix = sp.csr_matrix((vals.transpose(0, 1, 3, 2).ravel(), indices, np.arange(0, vals.size + 1, f, dtype=index)),
                           shape=(k * q * 3, n_dofs))
    matrix.sum_duplicates()
    return matrix


def _tangential_mass(vals: np.ndarray, cell_dofs: np.ndarray, normals: np.ndarray, weights: np.ndarray) -> tuple:
    """The entries (rows, columns, values) of int v_t . w_t dS from one side's values (k, q, f, 3) of each
    triangle's tetrahedron's functions with a tangential trace on it (nedelec.face_functions) and their DOFs
    (k, f), unit normals (k, 3) and weights (k, q) m^2: a tangential trace is the same from both sides, so one
    side gives it exactly; one (f, f) product a triangle (duplicates summed when they become CSR)."""
    k, q, f, _ = vals.shape
    t = vals - np.einsum("tqfc,tc->tqf", vals, normals)[..., None] * normals[:, None, None, :]
    t = (t * np.sqrt(weights)[:, :, None, None]).transpose(0, 2, 1, 3).reshape(k, f, 3 * q)
    local = t @ t.transpose(0, 2, 1)  # (k, f, f)
    return np.repeat(cell_dofs, f, axis=1).ravel(), np.tile(cell_dofs, (1, f)).ravel(), local.ravel()


def tangential(values: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """v - (v . n) n for values (..., p, 3) and unit normals (p, 3), NumPy or CuPy (normals: NumPy, copied
    to the values' device)."""
    xp = array_module(values)
    n = normals if xp is np else on_device(normals)
    return values - xp.einsum("...pk,pk->...p", values, n)[..., None] * n


def normal_cross(normals: np.ndarray, values: np.ndarray) -> np.ndarray:
    """n x v for normals (p, 3) and values (..., p, 3), by components (about twice as fast as np.cross on the
    iteration's (columns, p, 3) arrays); NumPy or CuPy values (normals: NumPy, copied to their device)."""
    xp = array_module(values)
    n0, n1, n2 = (normals if xp is np else on_device(normals)).T
    v0, v1, v2 = values[..., 0], values[..., 1], values[..., 2]
    shape = np.broadcast_shapes(values.shape, normals.shape)
    out = xp.empty(shape, dtype=np.result_type(values.dtype, normals.dtype))
    out[..., 0] = n1 * v2 - n2 * v1
    out[..., 1] = n2 * v0 - n0 * v2
    out[..., 2] = n0 * v1 - n1 * v0
    return out


def load_map(trace: SurfaceTrace) -> sp.csr_matrix:
    """(n_dofs, 3p): -int U . v dS from U's values at the trace's points (point-major, xyz)."""
    return (-trace.value.T.multiply(np.repeat(trace.weights, 3)[None, :])).tocsr()
