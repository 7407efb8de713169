"""The coarse level of the FMBEM preconditioner, added to the ILU of the near field (two-level, additive):
M^-1 r = ILU^-1 r + P Ac^-1 P^T r.

P (3T, C): one column per cluster of collocation points, component and kind of unknown (displacement or
traction), the indicator of its slots scaled to unit norm; the clusters come from recursive coordinate
bisection and k-means sweeps. Ac = P^T A P (Galerkin): the operator's near-field corrections and
rigid-body terms exactly (entry by entry), its plain-rule far field summed point by point where a quadrature
point lies within NEAR_RADII radii of the cluster's centre and, beyond, at the centre itself, weighted by the
cluster's size (second order in radius over distance: the centre is the points' mean). The ILU of the near field
leaves the smooth, far-coupled modes (the traction unknowns' single layer on the fixed faces above all) to
GMRES; the coarse level takes them (measured: `bench fmbem`, docs/studies/fmbem.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..backend import kernel_function, to_host
from ..errors import SolverError
from .coarse_rows import coarse_rows_host

TARGETS_PER_CLUSTER = 8  # collocation points per cluster (smaller clusters, fewer GMRES iterations: 37 with 16,
# 30 with 5 on a bracket of 19k DOFs), up to CLUSTERS_PER_ROOT sqrt(T) clusters: the coarse matrix (about 3.1
# unknowns per cluster, FP64) then holds about 1 KB per DOF (0.98 at 99,948 DOFs)
CLUSTERS_PER_ROOT = 6.0
NEAR_RADII = 4.0  # quadrature points within this many cluster radii of its centre: summed point by point
# (H100, bracket, GMRES to 1e-3, 8ad5841: 3 and 2 radii took 37 and 45 iterations instead of 35 at 100k DOFs; at
# 1M DOFs 41 and 41 instead of 42, with the coarse set-up 11.6 and 10.2 s instead of 14.2)
LLOYD_SWEEPS = 10  # k-means sweeps after the bisection (25 against 31 GMRES iterations on a 6k-DOF bracket)
PAIRS_PER_CHUNK = 1 << 19  # correction entries summed into the coarse matrix at once
COARSE_THREADS = 256  # kernels/coarse_galerkin.cu's block


def bisection_clusters(points: np.ndarray, n: int) -> np.ndarray:
    """Labels (P,) in [0, n) of points (P, 3): recursive coordinate bisection across each part's longest
    extent, the parts' sizes in proportion to the clusters they get (so every cluster holds P // n or one
    more)."""
    labels = np.empty(len(points), dtype=np.int64)
    stack = [(np.arange(len(points)), 0, n)]
    while stack:
        idx, first, count = stack.pop()
        if count == 1:
            labels[idx] = first
            continue
        x = points[idx]
        axis = int(np.argmax(x.max(axis=0) - x.min(axis=0)))
        left = count // 2
        k = len(idx) * left // count
        order = np.argpartition(x[:, axis], k) if 0 < k < len(idx) else np.arange(len(idx))
        stack += [(idx[order[:k]], first, left), (idx[order[k:]], first + left, count - left)]
    return labels


def compact_clusters(points: np.ndarray, n: int, sweeps: int = LLOYD_SWEEPS) -> np.ndarray:
    """Labels (P,) in [0, n') (n' <= n, none empty): bisection_clusters, then `sweeps` Lloyd (k-means) sweeps
    that move each point to its nearest centre, rounding the slabs that bisection leaves."""
    labels = bisection_clusters(points, n)
    for _ in range(sweeps):
        sizes = np.bincount(labels, minlength=n)
        centres = np.stack([np.bincount(labels, points[:, a], n) for a in range(3)], axis=1)[sizes > 0]
        labels = cKDTree(centres / sizes[sizes > 0, None]).query(points, workers=-1)[1]
        n = len(centres)
    return np.unique(labels, return_inverse=True)[1]


@dataclass(frozen=True, eq=False)
class CoarseBasis:
    """p (3T, C) host CSR; per coarse unknown its cluster, component and slot count (C,); per cluster its
    centre (n, 3) and radius (n,) m, members (n, m) target indices padded with -1; member_weight (n, m, 3, 2):
    P's value at the member's slot of component l and kind (displacement, traction), 0 elsewhere; row_of
    (n, 3, 2): the coarse unknown of (cluster, component, kind) or -1."""

    p: sp.csr_matrix
    cluster: np.ndarray
    component: np.ndarray
    count: np.ndarray
    centres: np.ndarray
    radius: np.ndarray
    members: np.ndarray
    member_weight: np.ndarray
    row_of: np.ndarray


def coarse_basis(targets: np.ndarray, kinds: np.ndarray, n_clusters: int) -> CoarseBasis:
    """The basis on at most n_clusters clusters (compact_clusters: its k-means sweeps may empty some) of the
    collocation points targets (T, 3) whose slots' kinds (T, 3) are 0 idle, 1 displacement, 2 traction unknown."""
    t = len(targets)
    labels = compact_clusters(targets, n_clusters)
    n_clusters = int(labels.max()) + 1
    key = np.where(kinds > 0, (labels[:, None] * 3 + np.arange(3)) * 2 + kinds - 1, -1).reshape(-1)
    busy = np.flatnonzero(key >= 0)
    keys, column, count = np.unique(key[busy], return_inverse=True, return_counts=True)
    value = 1.0 / np.sqrt(count[column])
    p = sp.csr_matrix((value, (busy, column)), shape=(3 * t, len(keys)))
    row_of = np.full((n_clusters, 3, 2), -1)
    row_of.reshape(-1)[keys] = np.arange(len(keys))
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=n_clusters)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    members = np.full((n_clusters, sizes.max()), -1)
    slot = np.empty(t, dtype=np.int64)  # each target's place in its cluster
    slot[order] = np.arange(t) - np.repeat(starts, sizes)
    members[labels, slot] = np.arange(t)
    member_weight = np.zeros((n_clusters, members.shape[1], 3, 2))
    i, l = np.divmod(busy, 3)
    member_weight[labels[i], slot[i], l, kinds[i, l] - 1] = value
    centres = np.stack([np.bincount(labels, targets[:, a], n_clusters) for a in range(3)], axis=1) / sizes[:, None]
    radius = np.zeros(n_clusters)
    np.maximum.at(radius, labels, np.linalg.norm(targets - centres[labels], axis=1))
    return CoarseBasis(p, keys // 6, keys // 2 % 3, count, centres, radius, members, member_weight, row_of)


def quadrature_columns(op) -> sp.csr_matrix:
    """(6Q, 3T) host CSR: the operator's unknowns seen from far-field quadrature point q, row 6q + k with the
    single layer's weights (-mu w N_a at traction unknowns, component k) and row 6q + 3 + k with the double
    layer's (w N_a at displacement unknowns): the plain-rule product at x is sum_q [U(y_q - x) | T(y_q - x)]
    rows(q)."""
    layout, tri = op.layout, op.triangles
    q = np.arange(len(op.src))
    e, s = np.divmod(q, len(op.bary))
    rows, cols, vals = [], [], []
    for a in range(3):
        w = op.src_w * op.bary[s, a]
        for k in range(3):
            on = op.disp[e, k]  # a traction unknown where the element prescribes the displacement
            rows.append((6 * q + k)[on])
            cols.append((3 * layout.traction_node[e, a, k] + k)[on])
            vals.append(-op.mu * w[on])
            on = layout.displacement[tri[e, a], k]
            rows.append((6 * q + 3 + k)[on])
            cols.append((3 * tri[e, a] + k)[on])
            vals.append(w[on])
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(6 * len(q), 3 * layout.n_targets))


def far_galerkin(op, basis: CoarseBasis, xp):
    """P^T A_plain P (C, C), an array of xp: A's plain-rule far field (the FMM's sum over every pair) at the
    cluster centres, summed point by point near them (Numba on the host, kernels/coarse_galerkin.cu on the GPU)."""
    cols = _to_xp(quadrature_columns(op) @ basis.p, xp)  # (6Q, C)
    if xp is not np:
        return _device_rows(op, basis, cols, xp)
    out = np.zeros((cols.shape[1], cols.shape[1]))
    coarse_rows_host(basis.centres, basis.radius, op.src, op.src_n, cols.indptr, cols.indices, cols.data,
                     basis.members, basis.member_weight, basis.row_of, _root_of(basis, np), op.targets, out,
                     NEAR_RADII, op.mu, op.nu)
    return out


def _device_rows(op, basis: CoarseBasis, cols, cp):
    """far_galerkin on the GPU: kernels/coarse_galerkin.cu, a block per cluster, in passes over the columns that
    the far sums' shared memory holds."""
    n_c = cols.shape[1]
    out = cp.zeros((n_c, n_c))
    kernel = kernel_function(Path(__file__).with_name("kernels") / "coarse_galerkin.cu", "coarse_rows")
    width = min(n_c, _shared_limit(cp) // 24)
    kernel.max_dynamic_shared_size_bytes = 24 * width
    args = [cp.asarray(a, dtype=np.float64) for a in (basis.centres, basis.radius, op.src, op.src_n)]
    args += [cols.indptr.astype(cp.int32), cols.indices.astype(cp.int32), cols.data,
             cp.asarray(basis.members), cp.asarray(basis.member_weight), cp.asarray(basis.row_of),
             _root_of(basis, cp), cp.asarray(op.targets), out]
    for col0 in range(0, n_c, width):
        kernel((len(basis.centres),), (COARSE_THREADS,), (*args, np.int32(len(op.src)), np.int32(len(op.bary)),
               np.int32(basis.members.shape[1]), np.int32(n_c), np.int32(col0), np.int32(min(n_c, col0 + width)),
               np.float64(NEAR_RADII), np.float64(op.mu), np.float64(op.nu)), shared_mem=24 * width)
    return out


def _shared_limit(cp) -> int:
    """Bytes of shared memory a block may opt in to on the current device."""
    return int(cp.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"])


def _root_of(basis: CoarseBasis, xp):
    """(n, 3, 2): sqrt of each (cluster, component, kind)'s slot count (0 where none): P^T's weight of a row
    summed at the centre."""
    root = np.zeros(basis.row_of.shape)
    has = basis.row_of >= 0
    root[has] = np.sqrt(basis.count[basis.row_of[has]])
    return xp.asarray(root)


def _to_xp(m: sp.spmatrix, xp):
    """A host sparse matrix as CSR of xp's sparse module."""
    if xp is np:
        return m.tocsr()
    import cupyx.scipy.sparse as csp  # noqa: PLC0415

    return csp.csr_matrix(m.tocsr())


def slot_kinds(layout) -> np.ndarray:
    """(T, 3): 0 idle, 1 displacement unknown, 2 traction unknown."""
    kinds = np.where(layout.traction, 2, 0)
    kinds[: layout.n_nodes][layout.displacement] = 1
    return kinds


def rigid_matrix(op) -> sp.csr_matrix:
    """(3T, 3T) host CSR: the operator's rigid-body terms on the displacement unknowns, diag (T, 3, 3) times the
    nodal displacements interpolated to the collocation points."""
    layout = op.layout
    near = layout.interpolation(op.triangles).tocoo()
    diag = to_host(op.dev["diag"])
    rows, cols, vals = [], [], []
    for k in range(3):
        on = layout.displacement[near.col, k]
        for l in range(3):
            rows.append(3 * near.row[on] + l)
            cols.append(3 * near.col[on] + k)
            vals.append(near.data[on] * diag[near.row[on], l, k])
    n3 = 3 * layout.n_targets
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n3, n3))


def galerkin_matrix(op, basis: CoarseBasis):
    """Ac = P^T A P (C, C), an array of the operator's module: far_galerkin plus the near-field corrections and
    the rigid-body terms."""
    xp = op.xp
    ac = far_galerkin(op, basis, xp)
    _add_galerkin(ac, op.correction, basis, xp)
    rigid = (basis.p.T @ (rigid_matrix(op) @ basis.p)).tocoo()  # a few entries per row: added as they are, no
    # dense (C, C) copy beside ac
    _scatter_add(xp, ac.reshape(-1), xp.asarray(rigid.row.astype(np.int64) * ac.shape[1] + rigid.col),
                 xp.asarray(rigid.data))
    return ac


def _add_galerkin(ac, m, basis: CoarseBasis, xp) -> None:
    """ac (C, C) += P^T m P for a matrix m (3T, 3T) of 3x3 blocks (SciPy's BSR on the host, a DeviceBsr on the
    GPU), entry by entry (P has one entry per row), in chunks of PAIRS_PER_CHUNK entries: no sparse-product
    workspace."""
    coarse = basis.p.tocoo()
    col_of, value = np.full(basis.p.shape[0], -1), np.zeros(basis.p.shape[0])
    col_of[coarse.row], value[coarse.row] = coarse.col, coarse.data
    col_of, value = xp.asarray(col_of), xp.asarray(value)
    flat, three = ac.reshape(-1), xp.arange(3)
    stored = int(m.indptr[-1])  # blocks
    for k0 in range(0, stored, PAIRS_PER_CHUNK // 9):
        k = xp.arange(k0, min(stored, k0 + PAIRS_PER_CHUNK // 9))
        row = 3 * (xp.searchsorted(m.indptr, k, side="right") - 1)[:, None, None] + three[None, :, None]
        col = 3 * m.indices[k].astype(xp.int64)[:, None, None] + three[None, None, :]
        r, c = col_of[row], col_of[col]
        keep = (r >= 0) & (c >= 0)
        _scatter_add(xp, flat, (r * ac.shape[1] + c)[keep], (value[row] * value[col] * m.data[k])[keep])


def _scatter_add(xp, a, where, values) -> None:
    """a[where] += values, repeated indices summed."""
    if xp is np:
        np.add.at(a, where, values)
    else:
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(a, where, values)


@dataclass(frozen=True, eq=False)
class CoarseCorrection:
    """r -> P Ac^-1 P^T r on arrays of the operator's module; size: coarse unknowns C; nbytes: its host bytes;
    lu_bytes: its LU's, host or device."""

    solve: Callable
    size: int
    nbytes: int
    lu_bytes: int = 0


def coarse_correction(op, n_clusters: int, dtype=np.float64) -> CoarseCorrection:
    """The coarse level for the FmmBemOperator op with n_clusters clusters (at most its collocation points);
    Ac's LU in dtype (float64, or float32 for half its memory: to a residual of 1e-12 that took a third more
    iterations). SolverError if Ac is singular."""
    xp = op.xp
    basis = coarse_basis(op.targets, slot_kinds(op.layout), min(n_clusters, len(op.targets)))
    ac = galerkin_matrix(op, basis)
    p = _to_xp(basis.p, xp)
    lu_factor, lu_solve = _lu(xp)
    ac = ac.T.astype(dtype, copy=False)  # Ac^T, Fortran-ordered: factorised in place (in FP32 a copy, so the
    # set-up holds 12 bytes per entry for a moment, the solve 4)
    lu = lu_factor(ac, overwrite_a=True, check_finite=False)
    pivots = xp.abs(xp.diagonal(lu[0]))
    if not float(pivots.min()) > 1e-12 * float(pivots.max()):
        raise SolverError("the coarse-level matrix of the FMBEM preconditioner is singular: the prescribed "
                          "displacements leave a rigid-body motion free")
    p_t = p.T.tocsr()

    def solve(r):
        return p @ lu_solve(lu, (p_t @ r).astype(dtype, copy=False), trans=1, check_finite=False).astype(r.dtype)

    nbytes = 0 if xp is not np else lu[0].nbytes + basis.p.data.nbytes * 3
    return CoarseCorrection(solve, len(basis.count), nbytes, int(lu[0].nbytes))


def _lu(xp):
    if xp is np:
        import scipy.linalg as sla  # noqa: PLC0415
    else:
        import cupyx.scipy.linalg as sla  # noqa: PLC0415
    return sla.lu_factor, sla.lu_solve


def cluster_count(n_targets: int) -> int:
    """The default number of clusters for n_targets collocation points: TARGETS_PER_CLUSTER points each, at most
    CLUSTERS_PER_ROOT sqrt(n_targets)."""
    return max(1, min(int(CLUSTERS_PER_ROOT * np.sqrt(n_targets)), n_targets // TARGETS_PER_CLUSTER))
