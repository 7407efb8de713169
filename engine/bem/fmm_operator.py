"""The boundary element operator applied through the Laplace fast multipole engine (engine/fmm).

Far field: every element's quadrature points (Dunavant, 12 by default) are FMM sources, the nodes its targets. With
r = y - x, Phi[q] = sum q / r and Psi[d] = -sum d . r / r^3 (the engine's charge and dipole potentials,
derivatives taken at the target x), H u - G t at node x is, per component l,
    V_l + d_l Z - x_m d_l W_m,
    V_l = -(3 - 4 nu) C_U Phi[t_l] + C_T Psi[(1 - 2 nu) u_l n + 2 (1 - nu) n_l u],
    W_m = -C_U Phi[t_m] + C_T Psi[u_m n],
    Z   = C_T (1 - 2 nu) Phi[n . u] - C_U Phi[y . t] + C_T Psi[(y . u) n],
C_U = 1 / (16 pi mu (1 - nu)), C_T = 1 / (8 pi (1 - nu)): seven densities, potential and gradient, in one
FMM application. Near field: where a node lies within CORRECTION_RATIO element sizes of an element's
centroid (or is its vertex) the plain-rule part is replaced by the accurate integral (sub-triangles,
Duffy), as sparse node-space corrections; the rigid-body diagonal comes from three FMM applications
of unit translations."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..fmm.fmm import LaplaceFMM
from ..quadrature import dunavant
from ..truncation.surfaces import POINTS_TO_DEGREE
from .assembly import accurate_pair_integrals, elements_of, levels_of, plain_pair_integrals

CORRECTION_RATIO = 2.0  # centroid distance / element size below which the near correction applies
PAIR_CHUNK = 200_000  # near pairs integrated per block


class FmmBemOperator:
    """H u - G t for nodal displacements u (N, 3) and element-node tractions t (M, 3, 3); far_points: the
    FMM sources per element (a Dunavant rule of 1, 3, 6, 7 or 12 points), correction_ratio: how far out
    (centroid distance over element size) the near field replaces that rule. With sparse near
    corrections in node space for the traction components prescribed as displacements (displacement_type
    (M, 3) bool); known tractions' corrections are folded into `known_correction`. h_near and g_near hold
    the accurate near-field blocks themselves (node space, without the rigid-body diagonal): the
    preconditioner's matrix."""

    def __init__(self, points, triangles, displacement_type, known_traction, mu, nu, order=8, leaf_size=32,
                 m2l="standard", backend="numpy", far_points=12, correction_ratio=CORRECTION_RATIO):
        self.centre = points.mean(axis=0)
        self.points = points - self.centre  # shifted: the x_m d_l W_m term cancels less
        self.triangles = triangles
        self.mu, self.nu = mu, nu
        self.n = len(points)
        self.el = elements_of(self.points, triangles)
        rule = dunavant(POINTS_TO_DEGREE[far_points])
        self.bary, w = rule.points, rule.weights
        self.correction_ratio = correction_ratio
        self.src = np.einsum("qa,eak->eqk", self.bary, self.el.corners).reshape(-1, 3)
        self.src_w0 = w
        self.src_w = (w[None] * self.el.areas[:, None]).reshape(-1)
        self.src_n = np.repeat(self.el.normals, len(w), axis=0)
        self.fmm = LaplaceFMM(self.src, self.points, order=order, leaf_size=leaf_size, m2l=m2l, backend=backend)
        self.disp = np.asarray(displacement_type, dtype=bool)
        self._near(known_traction)
        self.diag = self._rigid_body_diagonal()

    # ---------------------------------------------------------------- near field
    def _near(self, known_traction):
        el, tri, n = self.el, self.triangles, self.n
        tree = cKDTree(el.centroids)
        lists = tree.query_ball_point(self.points, self.correction_ratio * el.sizes.max())
        p = np.repeat(np.arange(n), [len(a) for a in lists])
        e = np.concatenate([np.asarray(a, dtype=np.int64) for a in lists])
        keep = (np.linalg.norm(el.centroids[e] - self.points[p], axis=1) < self.correction_ratio * el.sizes[e]) | (
            tri[e] == p[:, None]).any(axis=1)
        p, e = p[keep], e[keep]
        known = known_traction * ~self.disp[:, None, :]
        h_rows, h_cols, h_vals, g_rows, g_cols, g_vals = [], [], [], [], [], []
        a_vals, a_g, g_masks = [], [], []
        self.known_correction = np.zeros(3 * n)
        for s in range(0, len(p), PAIR_CHUNK):
            pp, ee = p[s:s + PAIR_CHUNK], e[s:s + PAIR_CHUNK]
            level = levels_of(np.linalg.norm(el.centroids[ee] - self.points[pp], axis=1) / el.sizes[ee])
            h_acc, g_acc = accurate_pair_integrals(self.points, np.arange(n), el, tri, pp, ee, level, self.mu,
                                                   self.nu)
            h_base, g_base = plain_pair_integrals(self.points, el, pp, ee, self.mu, self.nu, (self.bary, self.src_w0))
            dh, dg = h_acc - h_base, g_acc - g_base
            a_vals.append(h_acc), a_g.append(g_acc)
            nodes = tri[ee]  # (pairs, 3)
            rows = 3 * pp[:, None, None, None] + np.arange(3)[None, :, None, None]  # (pairs, l, 1, 1)
            cols = 3 * nodes[:, None, None, :] + np.arange(3)[None, None, :, None]  # (pairs, 1, k, a)
            rows, cols = np.broadcast_arrays(rows, cols)
            h_rows.append(rows.reshape(-1)), h_cols.append(cols.reshape(-1)), h_vals.append(dh.reshape(-1))
            mask = self.disp[ee][:, None, :, None]  # traction component k unknown on this element
            gu = np.broadcast_to(mask, dg.shape)
            g_rows.append(rows[gu]), g_cols.append(cols[gu]), g_vals.append(dg[gu])
            g_masks.append(gu)
            np.add.at(self.known_correction, (3 * pp[:, None] + np.arange(3)).reshape(-1),
                      np.einsum("plka,pak->pl", dg, known[ee]).reshape(-1))
        shape = (3 * n, 3 * n)
        self.h_corr = sp.csr_matrix((np.concatenate(h_vals), (np.concatenate(h_rows), np.concatenate(h_cols))),
                                    shape=shape)
        self.g_corr = sp.csr_matrix((np.concatenate(g_vals), (np.concatenate(g_rows), np.concatenate(g_cols))),
                                    shape=shape)
        rows, cols = np.concatenate(h_rows), np.concatenate(h_cols)
        self.h_near = sp.csr_matrix((np.concatenate([v.reshape(-1) for v in a_vals]), (rows, cols)), shape=shape)
        gu = np.concatenate([m.reshape(-1) for m in g_masks])
        self.g_near = sp.csr_matrix((np.concatenate([v.reshape(-1) for v in a_g])[gu], (rows[gu], cols[gu])),
                                    shape=shape)
        self.near_pairs = len(p)

    # ---------------------------------------------------------------- far field
    def far(self, u: np.ndarray, t: np.ndarray) -> np.ndarray:
        """H u - G t (3N,) by the plain rule on every pair, through one FMM application."""
        mu, nu = self.mu, self.nu
        cu, ct = 1 / (16 * np.pi * mu * (1 - nu)), 1 / (8 * np.pi * (1 - nu))
        uq = np.einsum("qa,eak->eqk", self.bary, u[self.triangles]).reshape(-1, 3) * self.src_w[:, None]
        tq = np.einsum("qa,eak->eqk", self.bary, t).reshape(-1, 3) * self.src_w[:, None]
        n, y = self.src_n, self.src
        charges = np.empty((7, len(y)))
        dipoles = np.empty((7, len(y), 3))
        charges[:3] = -(3 - 4 * nu) * cu * tq.T
        dipoles[:3] = ct * ((1 - 2 * nu) * uq.T[:, :, None] * n[None] + 2 * (1 - nu) * n.T[:, :, None] * uq[None])
        charges[3:6] = -cu * tq.T
        dipoles[3:6] = ct * uq.T[:, :, None] * n[None]
        charges[6] = ct * (1 - 2 * nu) * np.einsum("sk,sk->s", n, uq) - cu * np.einsum("sk,sk->s", y, tq)
        dipoles[6] = ct * np.einsum("sk,sk->s", y, uq)[:, None] * n
        pot, grad = self.fmm.apply(charges=charges, dipoles=dipoles, gradient=True)
        pot, grad = _host(pot), _host(grad)
        out = pot[:3].T + grad[6] - np.einsum("nm,mnl->nl", self.points, grad[3:6])
        return out.reshape(-1)

    def _rigid_body_diagonal(self) -> np.ndarray:
        """(N, 3, 3): H_pp = -(sum of the off-diagonal H blocks of row p), from unit translations."""
        diag = np.zeros((self.n, 3, 3))
        zero_t = np.zeros((len(self.triangles), 3, 3))
        for k in range(3):
            u = np.zeros((self.n, 3))
            u[:, k] = 1.0
            row_sum = self.far(u, zero_t) + self.h_corr @ u.reshape(-1)
            diag[:, :, k] = -row_sum.reshape(self.n, 3)
        return diag

    def apply(self, u: np.ndarray, t_nodes: np.ndarray) -> np.ndarray:
        """H u - G t (3N,): u (N, 3) nodal displacements, t_nodes (N, 3) the nodal tractions of the components
        prescribed as displacements (used on elements where they are), m and Pa."""
        t = np.where(self.disp[:, None, :], t_nodes[self.triangles], 0.0)
        out = self.far(u, t) + self.h_corr @ u.reshape(-1) - self.g_corr @ t_nodes.reshape(-1)
        return out + np.einsum("nlk,nk->nl", self.diag, u).reshape(-1)

    def known_part(self, u_known: np.ndarray, known_traction: np.ndarray) -> np.ndarray:
        """G t_known - H u_known (3N,): the right-hand side from the prescribed data."""
        t = known_traction * ~self.disp[:, None, :]
        hu = self.h_corr @ u_known.reshape(-1) + np.einsum("nlk,nk->nl", self.diag, u_known).reshape(-1)
        return self.known_correction - self.far(u_known, t) - hu  # far is H u - G t on the plain rule


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)
