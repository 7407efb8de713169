"""Global system of the hierarchical hexahedra: sparse assembly with orientation signs, surface loads
(traction, pressure) and prescribed displacements, and the check that rigid-body motion is held."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import ProblemError
from ..mesh.hexmesh import HEX_FACES, HEX_REF_NODES, HexMesh, face_owners
from .basis import VERTEX, evaluate, gauss_legendre, hex_basis, quadrature_points_1d
from .dofs import DofMap
from .element_matrices import element_matrix_chunks
from .geometry import jacobians

# (axis, side) of each row of HEX_FACES: the reference coordinate that is constant on it, and its sign
FACE_AXIS_SIDE = np.array([[int(np.flatnonzero(np.ptp(HEX_REF_NODES[f], axis=0) == 0)[0]),
                            int(HEX_REF_NODES[f[0], np.flatnonzero(np.ptp(HEX_REF_NODES[f], axis=0) == 0)[0]] > 0)]
                           for f in HEX_FACES])


@dataclass(frozen=True, eq=False)
class BoundaryFaces:
    """The faces of one boundary as (element, reference axis, side 0 / 1) triples, each (k,) int."""

    elements: np.ndarray
    axis: np.ndarray
    side: np.ndarray


def boundary_faces(mesh: HexMesh, name: str) -> BoundaryFaces:
    owner, local = face_owners(mesh.hexes, mesh.boundary_faces(name))
    return BoundaryFaces(owner, FACE_AXIS_SIDE[local, 0], FACE_AXIS_SIDE[local, 1])


PENDING_ENTRIES = 1 << 24  # element-matrix entries gathered before a sparse sum (about 384 MB as COO)


def assemble_stiffness(coords, lam, mu, dofmap: DofMap, integration: str, xp=np, progress=None):
    """Global K (n_dofs, n_dofs) as a CSR matrix of xp (SciPy or CuPy sparse), and the seconds spent
    computing element matrices (device work waited for).

    coords: (m, 8, 3) metres; lam, mu: (m,) Pa. Element matrices come chunk by chunk from the chosen
    integration variant; progress(fraction) is called after each chunk.
    """
    sparse = _sparse(xp)
    dofs, signs = dofmap.vector()
    n = dofmap.n_dofs
    total = sparse.csr_matrix((n, n))
    pending: list[tuple] = []  # COO pieces of small chunks, added to total together (one sum per PENDING_ENTRIES)
    pending_entries = 0
    m = len(coords)
    chunks = element_matrix_chunks(coords, lam, mu, dofmap.order, integration, xp)
    seconds = 0.0

    def flush(total):
        values, rows, cols = (xp.concatenate(parts) for parts in zip(*pending))
        pending.clear()
        return total + sparse.coo_matrix((values, (rows, cols)), shape=(n, n)).tocsr()

    while True:
        t0 = time.perf_counter()
        try:
            start, stop, ke = next(chunks)
        except StopIteration:
            break
        _synchronize(ke)
        seconds += time.perf_counter() - t0
        ke = _to(xp, ke)
        s = xp.asarray(signs[start:stop])
        d = xp.asarray(dofs[start:stop])
        values = (ke * s[:, :, None] * s[:, None, :]).reshape(-1)
        index = np.int64 if xp is np else xp.int32  # cuSPARSE takes 32-bit indices
        rows = xp.broadcast_to(d[:, :, None], ke.shape).reshape(-1).astype(index)
        cols = xp.broadcast_to(d[:, None, :], ke.shape).reshape(-1).astype(index)
        pending.append((values, rows, cols))
        pending_entries += len(values)
        if pending_entries >= PENDING_ENTRIES:
            total, pending_entries = flush(total), 0
        if progress is not None:
            progress(stop / m)
    return (flush(total) if pending else total), seconds


def _synchronize(a) -> None:
    if not isinstance(a, np.ndarray):
        import cupy  # noqa: PLC0415

        cupy.cuda.get_current_stream().synchronize()


def _sparse(xp):
    if xp is np:
        import scipy.sparse as sparse  # noqa: PLC0415
    else:
        import cupyx.scipy.sparse as sparse  # noqa: PLC0415
    return sparse


def _to(xp, a):
    if xp is np:
        return a if isinstance(a, np.ndarray) else a.get()
    return xp.asarray(a)


def face_points(p: int, axis: int, side: int):
    """Gauss points (n, 3) on the reference face (axis, side) and their weights (n,)."""
    x, w = gauss_legendre(quadrature_points_1d(p))
    u, v = np.meshgrid(x, x, indexing="ij")
    pts = np.empty((u.size, 3))
    others = [k for k in range(3) if k != axis]
    pts[:, axis] = 2 * side - 1
    pts[:, others[0]], pts[:, others[1]] = u.reshape(-1), v.reshape(-1)
    return pts, np.outer(w, w).reshape(-1)


def surface_load(coords, dofmap: DofMap, faces: BoundaryFaces, traction=None, pressure=None) -> np.ndarray:
    """Consistent nodal forces (n_dofs,) in N of a uniform traction (3,) Pa or a pressure Pa.

    The area vector n dA = det J J^-T N dA_ref (Nanson) gives the outward normal; pressure pushes
    along the inward normal, i.e. traction = -pressure * n.
    """
    basis = hex_basis(dofmap.order)
    force = np.zeros(dofmap.n_dofs)
    for axis in range(3):
        for side in range(2):
            pick = (faces.axis == axis) & (faces.side == side)
            if not pick.any():
                continue
            elements = faces.elements[pick]
            pts, w = face_points(dofmap.order, axis, side)
            values, _ = evaluate(basis, pts)  # (n_pts, n_s)
            _, inv, det = jacobians(coords[elements], pts)
            normal_ref = np.zeros(3)
            normal_ref[axis] = 2 * side - 1
            area = det[..., None] * np.einsum("eqki,k->eqi", inv, normal_ref) * w[None, :, None]  # (k, q, 3)
            if pressure is not None:
                load = -pressure * area
            else:
                load = np.linalg.norm(area, axis=2)[..., None] * np.asarray(traction, dtype=float)
            local = np.einsum("qa,eqi->eai", values, load)  # (k, n_s, 3)
            sign = dofmap.sign[elements][..., None]
            gdof = 3 * dofmap.scalar[elements][..., None] + np.arange(3)
            force += np.bincount(gdof.reshape(-1), (local * sign).reshape(-1), minlength=dofmap.n_dofs)
    return force


def face_constraints(mesh_points, dofmap: DofMap, faces: BoundaryFaces, displacement) -> tuple[np.ndarray, np.ndarray]:
    """Constrained DOFs and their values on the faces.

    displacement: (3,) with None for a free component (a uniform value, metres), or a callable
    taking node coordinates (n, 3) metres and returning (n, 3) metres (a field the vertex functions
    represent exactly, e.g. linear in x). Vertex DOFs get the value at their node, all higher-order
    DOFs on the faces zero.
    """
    basis = hex_basis(dofmap.order)
    mask = basis.factors[:, faces.axis].T == faces.side[:, None]  # (k, n_s): nonzero on the face
    elems = np.repeat(faces.elements, mask.sum(axis=1))
    funcs = np.nonzero(mask)[1]
    scalar = dofmap.scalar[elems, funcs]
    is_vertex = basis.entity_kind[funcs] == VERTEX
    scalar, first = np.unique(scalar, return_index=True)
    is_vertex = is_vertex[first]
    values = np.zeros((len(scalar), 3))
    nodes = dofmap.node_of_vertex_dof[scalar[is_vertex]]
    if callable(displacement):
        values[is_vertex] = displacement(mesh_points[nodes])
        components = [0, 1, 2]
    else:
        components = [i for i in range(3) if displacement[i] is not None]
        for i in components:
            values[is_vertex, i] = displacement[i]
    dofs = (3 * scalar[:, None] + np.array(components)).reshape(-1)
    return dofs, values[:, components].reshape(-1)


def check_rigid_body_held(points, hexes, dofmap: DofMap, constrained: np.ndarray) -> None:
    """Raise ProblemError when the constrained DOFs leave a rigid-body motion free, of the body or of any
    part of it that shares no node with the rest (hexes (n_elements, 8) node indices)."""
    from scipy.sparse import coo_matrix  # noqa: PLC0415
    from scipy.sparse.csgraph import connected_components  # noqa: PLC0415

    edges = np.repeat(hexes[:, :1], hexes.shape[1], axis=1)  # every node joined to its element's first node
    graph = coo_matrix((np.ones(hexes.size), (edges.ravel(), hexes.ravel())), shape=(len(points),) * 2)
    _, part_of = connected_components(graph, directed=False)
    used = np.zeros(len(points), dtype=bool)
    used[hexes.ravel()] = True
    parts = np.unique(part_of[used])
    scalar, comp = constrained // 3, constrained % 3
    vertex = scalar < len(dofmap.node_of_vertex_dof)
    node, comp = dofmap.node_of_vertex_dof[scalar[vertex]], comp[vertex]
    for part in parts:
        on = part_of[node] == part
        free = _free_rigid_motions(points[node[on]], comp[on], points[(part_of == part) & used])
        if free:
            where = "" if len(parts) == 1 else (
                f" on one of the mesh's {len(parts)} disconnected parts ({int(((part_of == part) & used).sum())} "
                "nodes, sharing no node with the rest)")
            raise ProblemError(f"rigid-body motion left free{where}: the fixed and displacement boundaries hold "
                               f"only {6 - free} of its 6 rigid-body motions (3 translations, 3 rotations); "
                               "constrain more components")


def _free_rigid_motions(x, comp, body) -> int:
    """How many of the 6 rigid-body motions of body's points (m, 3) the held components comp (k,) at points x
    (k, 3) leave free."""
    x = (x - body.mean(axis=0)) / max(np.ptp(body, axis=0).max(), 1e-300)
    modes = np.zeros((len(comp), 6))
    modes[np.arange(len(comp)), comp] = 1.0
    for k in range(3):  # rotation about axis k: omega_k e_k x x
        rot = np.cross(np.eye(3)[k], x)
        modes[:, 3 + k] = rot[np.arange(len(comp)), comp]
    eig = np.linalg.eigvalsh(modes.T @ modes) if len(comp) else np.zeros(6)
    return int((eig < 1e-10 * max(eig.max(), 1.0)).sum())
