"""LaplaceFMM: potential and gradient of charges and dipoles, 1/|x - y| kernel, several densities at once.

The tree and the translation matrices are built once; apply() can be called many times (GMRES).
Expansions are stored scaled by their box side h (multipoles M_n h^-n, locals L_n h^(n+1)) so one set
of M2M / M2L / L2L matrices serves every level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import get_backend
from ..errors import ProblemError
from ..variants import M2L
from .harmonics import degree_order, n_coefficients
from .operators import child_tables, cross_level_split, cross_m2l_table, l2p, p2m, standard_m2l_table
from .tree import Octree, build_octree

M2L_SCHEMES = tuple(name for name in M2L.names if name != "auto")  # the schemes; auto picks one of them


def resolve_m2l(m2l: str, on_gpu: bool) -> str:
    """The scheme that runs for a choice of the registry's M2L axis: auto is standard on the GPU and
    batched-gemm on NumPy (the faster in each place, as measured)."""
    if m2l == "auto":
        return "standard" if on_gpu else "batched-gemm"
    if m2l not in M2L_SCHEMES:
        raise ProblemError(f"unknown m2l scheme '{m2l}'; choose one of: {', '.join(M2L.names)}")
    return m2l


MIN_ORDER, MAX_ORDER = 2, 20


def order_for_precision(eps: float) -> int:
    """The expansion order that reaches a relative L2 error of about eps with the standard scheme and
    32 points per leaf: the error falls by about 0.44 per order from 2.7e-2 (fitted to uniform and
    surface points, potential and gradient), plus one order of margin."""
    if not 0 < eps < 1:
        raise ProblemError(f"the requested precision must lie between 0 and 1, got {eps:g}")
    return int(min(MAX_ORDER, max(MIN_ORDER, np.ceil(np.log(eps / 2.7e-2) / np.log(0.44)) + 1)))


@dataclass(frozen=True, eq=False)
class _Leaves:
    """Leaves holding targets (or sources) as padded index arrays into the sorted points."""

    level: np.ndarray   # (n,) level of each leaf
    box: np.ndarray     # (n,) box index in its level
    start: np.ndarray   # (n,) first sorted point
    index: np.ndarray   # (n, L) sorted point indices, -1 where padded


def _leaves(tree: Octree, kind: str) -> _Leaves:
    rows = []
    for lv_i, lv in enumerate(tree.levels):
        rng = lv.tgt_range if kind == "tgt" else lv.src_range
        ids = np.flatnonzero(lv.leaf & (rng[:, 1] > rng[:, 0]))
        rows += [(lv_i, b, rng[b, 0], rng[b, 1]) for b in ids]
    rows.sort(key=lambda r: r[2])
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    width = int((a[:, 3] - a[:, 2]).max()) if len(a) else 1
    offs = np.arange(width)
    index = np.where(offs[None, :] < (a[:, 3] - a[:, 2])[:, None], a[:, 2:3] + offs[None, :], -1)
    return _Leaves(a[:, 0], a[:, 1], a[:, 2], index)


def _points(points, name: str) -> np.ndarray:
    """(n, 3) float64 points, n >= 1 (build_octree refuses non-finite ones); ProblemError otherwise."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) == 0:
        raise ProblemError(f"{name} must be an array of shape (n, 3) with n >= 1, got {points.shape}")
    return points


class LaplaceFMM:
    """FMM between fixed sources (n_s, 3) and targets (n_t, 3); order p in 2..20; m2l one of M2L_SCHEMES
    or auto (the default, see resolve_m2l; `paraflux bench fmm` compares all of them);
    tree: an octree already built for these points (build_octree), reused instead of building one;
    exponential_nodes: 8, 17 or 26, the plane-wave quadrature of the exponential scheme (about 3, 6, 9
    digits at best)."""

    def __init__(self, sources, targets, order: int = 8, leaf_size: int = 32, m2l: str = M2L.default,
                 backend: str = "numpy", tree: Octree | None = None, exponential_nodes: int = 17):
        if isinstance(order, bool) or int(order) != order or not MIN_ORDER <= order <= MAX_ORDER:
            raise ProblemError(f"FMM order must be a whole number from {MIN_ORDER} to {MAX_ORDER}, got {order}")
        sources, targets = _points(sources, "sources"), _points(targets, "targets")
        self.backend = get_backend(backend)
        m2l = resolve_m2l(m2l, self.backend.is_gpu)
        xp = self.xp = self.backend.xp
        self.order, self.m2l = int(order), m2l
        if m2l == "exponential":
            from .exponential import quadrature  # noqa: PLC0415

            self.nodes = int(exponential_nodes)
            quadrature(self.nodes)  # a clear error for a node count without a rule
        self.tree = tree = build_octree(sources, targets, leaf_size) if tree is None else tree
        self.sources, self.targets = sources[tree.src_order], targets[tree.tgt_order]
        self.n_coef = n_coefficients(self.order)
        self.box_offset = np.cumsum([0] + [lv.n_boxes for lv in tree.levels])
        self.src_leaves, self.tgt_leaves = _leaves(tree, "src"), _leaves(tree, "tgt")
        p = self.order
        deg = np.tile(degree_order(p)[0], 2)
        m2m, l2l = child_tables(p)
        self.m2m = xp.asarray(m2m * (2.0 ** -deg)[None, None, :])          # child scaled by its own side
        self.l2l = xp.asarray(l2l * (2.0 ** -(deg + 1))[None, :, None])    # child local scaled by its side
        self.m2l_table = xp.asarray(standard_m2l_table(p))
        if self.backend.is_gpu and m2l != "batched-gemm":  # the kernel reads the table with rows and columns swapped
            self.m2l_table_t = xp.ascontiguousarray(self.m2l_table.transpose(0, 2, 1))
        self._near_pairs = self._leaf_pairs()
        self._m2l_work = self._prepare_m2l()
        if self.backend.is_gpu:  # M2M and L2L of a level in one launch of the list kernel each
            self._m2m_t, self._l2l_t = (xp.ascontiguousarray(a.transpose(0, 2, 1)) for a in (self.m2m, self.l2l))
            self._tree_lists = [self._translation_lists(lv_i) for lv_i in range(len(tree.levels))]
        else:
            self._octants = [self._octant_groups(lv_i) for lv_i in range(len(tree.levels))]
        self.p2p_reference = False  # True: the near field by the NumPy specification (tests compare the two)

    # ----------------------------------------------------------------- set-up helpers
    def _gid(self, level, box):
        return self.box_offset[level] + box

    def _leaf_pairs(self):
        """(target leaf, source leaf) pairs of every near box pair: the direct-sum work."""
        tl, sl = self.tgt_leaves, self.src_leaves
        t_start, s_start = tl.start, sl.start
        out_t, out_s = [], []
        for lv_i, (a, c) in enumerate(self.tree.near):
            lv = self.tree.levels[lv_i]
            ta = np.searchsorted(t_start, lv.tgt_range[a, 0]), np.searchsorted(t_start, lv.tgt_range[a, 1])
            sc = np.searchsorted(s_start, lv.src_range[c, 0]), np.searchsorted(s_start, lv.src_range[c, 1])
            nt, ns = ta[1] - ta[0], sc[1] - sc[0]
            keep = (nt > 0) & (ns > 0)
            nt, ns, t0, s0 = nt[keep], ns[keep], ta[0][keep], sc[0][keep]
            total = nt * ns
            pair = np.repeat(np.arange(len(total)), total)
            local = np.arange(total.sum()) - np.repeat(np.cumsum(total) - total, total)
            out_t.append(t0[pair] + local // ns[pair])
            out_s.append(s0[pair] + local % ns[pair])
        return np.concatenate(out_t), np.concatenate(out_s)

    # ----------------------------------------------------------------- evaluation
    def apply(self, charges=None, dipoles=None, gradient: bool = False, timings: dict | None = None):
        """Potential (n_dens, n_t) and gradient (n_dens, n_t, 3) or None at the targets.

        charges: (n_dens, n_s) or (n_s,); dipoles: (n_dens, n_s, 3) or (n_s, 3); real. timings: a dict
        that receives the seconds of each phase (upward, m2l, downward, p2p), device work waited for.
        """
        clock = _Clock(self.backend, timings)
        squeeze = (charges is not None and np.ndim(charges) == 1) or (dipoles is not None and np.ndim(dipoles) == 2)
        res = self._resident()
        q, d = self._densities(charges, dipoles, res["src_order"])
        n_dens, xp = (q if q is not None else d).shape[0], self.xp
        multipole = xp.zeros((int(self.box_offset[-1]), n_dens, 2 * self.n_coef))
        local = xp.zeros_like(multipole)
        self._upward(res, q, d, multipole)
        clock.lap("upward")
        self._m2l(multipole, local)
        clock.lap("m2l")
        phi = xp.zeros((n_dens, len(self.targets)))
        grad = xp.zeros((n_dens, len(self.targets), 3)) if gradient else None
        self._downward(res, q, d, local, phi, grad, clock)
        clock.lap("p2p")
        out_phi = xp.empty_like(phi)
        out_phi[:, res["tgt_order"]] = phi
        out_grad = None
        if gradient:
            out_grad = xp.empty_like(grad)
            out_grad[:, res["tgt_order"]] = grad
        if squeeze:
            return out_phi[0], (None if out_grad is None else out_grad[0])
        return out_phi, out_grad

    def _densities(self, charges, dipoles, order):
        """Charges (n_dens, n_s) and dipoles (n_dens, n_s, 3) in the tree's source order (None where not
        given), on the backend; ProblemError on a wrong shape."""
        if charges is None and dipoles is None:
            raise ProblemError("give charges, dipoles or both")
        n_s, xp = len(self.sources), self.xp
        for name, value, shape in (("charges", charges, (n_s,)), ("dipoles", dipoles, (n_s, 3))):
            if value is not None and (np.ndim(value) not in (len(shape), len(shape) + 1)
                                      or tuple(np.shape(value)[-len(shape):]) != shape):
                raise ProblemError(f"{name} must have the shape {shape} or (n_densities, "
                                   f"{', '.join(map(str, shape))}) for {n_s} sources, got {tuple(np.shape(value))}")
        q = None if charges is None else xp.asarray(charges, dtype=xp.float64).reshape(-1, n_s)[:, order]
        d = None if dipoles is None else xp.asarray(dipoles, dtype=xp.float64).reshape(-1, n_s, 3)[:, order]
        return q, d

    def _upward(self, res, q, d, multipole) -> None:
        """P2M at the source leaves (scaled by each leaf's side), then M2M from the finest level up."""
        xp, p = self.xp, self.order
        src, side, centre, gids = (res[k] for k in ("src", "src_side", "src_centre", "src_gid"))
        if self.backend.is_gpu:
            from .gpu_m2l import m2l_lists_gpu, p2m_gpu  # noqa: PLC0415

            p2m_gpu(src, q, d, res["src_slots"], centre, side, gids, p, multipole)
            for lv_i in range(len(self.tree.levels) - 1, 0, -1):  # parents and children are distinct rows
                m2l_lists_gpu(multipole, multipole, *self._tree_lists[lv_i][0])
            return
        idx, mask = res["src_idx"], res["src_mask"]
        for c in self._chunks(idx.shape):  # bounded scratch memory
            pts = (src[idx[c]] - centre[c, None, :]) / side[c, None, None]
            qq = None if q is None else q[:, idx[c]] * mask[c]
            dd = None if d is None else d[:, idx[c]] * mask[None, c, :, None] / side[None, c, None, None]
            m = p2m(pts, qq, dd, xp.zeros_like(centre[c]), p, xp)
            multipole[gids[c]] = xp.concatenate([m.real, m.imag], axis=-1)
        for lv_i in range(len(self.tree.levels) - 1, 0, -1):
            for o, parents, children in self._octants[lv_i]:  # one child per octant and parent: no collisions
                multipole[parents] += multipole[children] @ self.m2m[o].T

    def _m2l(self, multipole, local) -> None:
        """M2L from the work lists prepared once, by the scheme each list was made for."""
        for kind, *work in self._m2l_work:
            if kind == "exponential":
                self._exponential(multipole, local, *work)
            elif kind == "gemm":
                table, groups = work
                for off, tgt_ids, src_ids in groups:
                    local[tgt_ids] += multipole[src_ids] @ table[off].T
            elif self.xp is np:
                from .standard_m2l import m2l_lists_numba  # noqa: PLC0415

                m2l_lists_numba(multipole, local, *work)
            else:
                from .gpu_m2l import m2l_lists_gpu  # noqa: PLC0415

                m2l_lists_gpu(multipole, local, *work)

    def _downward(self, res, q, d, local, phi, grad, clock) -> None:
        """L2L from the coarsest level down, L2P at the target leaves, then P2P; adds into phi and grad."""
        tgt, src = res["tgt"], res["src"]
        tside, tcentre, tgids = (res["tgt_" + k] for k in ("side", "centre", "gid"))
        if self.backend.is_gpu:  # L2P fused, then P2P on the device, one thread per target
            from .gpu_m2l import l2p_gpu, m2l_lists_gpu, p2p_gpu  # noqa: PLC0415

            for lv_i in range(1, len(self.tree.levels)):
                m2l_lists_gpu(local, local, *self._tree_lists[lv_i][1])
            l2p_gpu(tgt, local, res["tgt_slots"], tcentre, tside, tgids, self.order, phi, grad)
            clock.lap("downward")
            p2p_gpu(tgt, src, q, d, *res["near_lists"], phi, grad)
            return
        for lv_i in range(1, len(self.tree.levels)):
            for o, parents, children in self._octants[lv_i]:
                local[children] += local[parents] @ self.l2l[o].T
        phi_pad, grad_pad = self._l2p_host(res, local, phi.shape[0], grad is not None)
        clock.lap("downward")
        self._near_host(res, q, d, phi_pad, grad_pad, phi, grad)

    def _l2p_host(self, res, local, n_dens: int, gradient: bool):
        """L2P at the target leaves on the host: potential (n_dens, leaves, slots) and gradient (..., 3) or None,
        padded per leaf."""
        xp = self.xp
        tgt, tidx = res["tgt"], res["tgt_idx"]
        tside, tcentre, tgids = (res["tgt_" + k] for k in ("side", "centre", "gid"))
        phi_pad = xp.zeros((n_dens,) + tidx.shape)
        grad_pad = xp.zeros((n_dens,) + tidx.shape + (3,)) if gradient else None
        for c in self._chunks(tidx.shape):
            tpts = (tgt[tidx[c]] - tcentre[c, None, :]) / tside[c, None, None]
            lv_local = local[tgids[c]]
            lc = lv_local[..., :self.n_coef] + 1j * lv_local[..., self.n_coef:]
            ph, gr = l2p(lc, tpts, xp.zeros_like(tcentre[c]), self.order, gradient, xp)
            phi_pad[:, c] = ph / tside[None, c, None]
            if gradient:
                grad_pad[:, c] = gr / (tside[c] ** 2)[None, :, None, None]
        return phi_pad, grad_pad

    def _near_host(self, res, q, d, phi_pad, grad_pad, phi, grad) -> None:
        """The padded far field into phi and grad by target, and the near field (P2P) added: the NumPy
        reference on the padded arrays, or the Numba loop, parallel over targets."""
        gradient = grad is not None
        tidx, tmask = res["tgt_idx"], res["tgt_mask"]
        if self.p2p_reference:
            self._p2p(res["src"], res["tgt"], q, d, tidx, tmask, phi_pad, grad_pad, gradient)
        flat = tidx[tmask]
        phi[:, flat] = phi_pad[:, tmask]
        if gradient:
            grad[:, flat] = grad_pad[:, tmask]
        if not self.p2p_reference:
            from .standard_m2l import p2p_numba  # noqa: PLC0415

            empty = np.zeros((1, 1, 3))
            p2p_numba(res["tgt"], res["src"], q if q is not None else empty[..., 0], d if d is not None else empty,
                      q is not None, d is not None, gradient, *self._near_lists(), phi, grad if gradient else empty)

    def _octant_groups(self, level: int) -> list:
        """(octant, parent ids, child ids) of the boxes of a level: the M2M / L2L batches on the host."""
        if level == 0:
            return []
        lv, xp = self.tree.levels[level], self.xp
        octant = (lv.coords[:, 0] % 2) * 4 + (lv.coords[:, 1] % 2) * 2 + lv.coords[:, 2] % 2
        parents, children = self._gid(level - 1, lv.parent), self._gid(level, np.arange(lv.n_boxes))
        return [(o, xp.asarray(parents[octant == o]), xp.asarray(children[octant == o]))
                for o in range(8) if (octant == o).any()]

    def _translation_lists(self, level: int) -> tuple:
        """(M2M, L2L) of a level as list-kernel work (targets, starts, sources, offsets, table_t) on the
        device: children of the level onto their parents, parents onto the children; offset: the octant."""
        if level == 0:
            return (), ()
        lv = self.tree.levels[level]
        octant = (lv.coords[:, 0] % 2) * 4 + (lv.coords[:, 1] % 2) * 2 + lv.coords[:, 2] % 2
        parents, children = self._gid(level - 1, lv.parent), self._gid(level, np.arange(lv.n_boxes))
        return (self._lists(parents, children, octant, self.m2m, self._m2m_t)[1:],
                self._lists(children, parents, octant, self.l2l, self._l2l_t)[1:])

    def _prepare_m2l(self) -> list:
        """The M2L work of every level, sorted and moved to the device once: ("gemm", table, [(offset,
        targets, sources), ...]) per level for batched-gemm, else ("lists", targets, starts, sources,
        offsets, table) for the per-target list kernel (cross-level translations get their own table)."""
        xp, tree, work = self.xp, self.tree, []
        gpu = self.backend.is_gpu
        for lv_i in range(2, len(tree.levels)):
            tgt_box, src_box, off = tree.m2l[lv_i]
            if not len(tgt_box):
                continue
            if self.m2l == "exponential":
                work += self._prepare_exponential(lv_i, tgt_box, src_box, off)
                continue
            if self.m2l == "batched-gemm":
                order = np.argsort(off, kind="stable")
                off, t, s = off[order], self._gid(lv_i, tgt_box[order]), self._gid(lv_i, src_box[order])
                cut = np.r_[0, np.flatnonzero(np.diff(off)) + 1, len(off)]
                work.append(("gemm", self.m2l_table, [(int(off[a]), xp.asarray(t[a:b]), xp.asarray(s[a:b]))
                                                      for a, b in zip(cut[:-1], cut[1:])]))
                continue
            if self.m2l in ("child-to-parent", "parent-to-child"):
                (tl, tb, sl, sb, code), keep = cross_level_split(tree, lv_i, tgt_box, src_box, self.m2l)
                tgt_box, src_box, off = tgt_box[keep], src_box[keep], off[keep]
                if len(tb):
                    codes, slot = np.unique(code, return_inverse=True)
                    table = np.stack([cross_m2l_table(self.order, int(c), self.m2l) for c in codes])
                    work.append(self._lists(self._gid(tl, tb), self._gid(sl, sb), slot.reshape(-1), table))
            work.append(self._lists(self._gid(lv_i, tgt_box), self._gid(lv_i, src_box), off,
                                    None if gpu else standard_m2l_table(self.order)))
        return work

    def _prepare_exponential(self, level, tgt_box, src_box, off) -> list:
        """Per direction: ("exponential", operators, source boxes, target boxes, [(shift, target rows,
        source rows), ...]) with the pairs grouped by offset so that no two rows of a group collide."""
        from .exponential import FRAMES, direction_of, operators, x2x_shift  # noqa: PLC0415
        from .operators import OFFSETS  # noqa: PLC0415

        xp, work = self.xp, []
        delta = -OFFSETS[off]  # target - source, box units
        which = direction_of(delta)
        for k, name in enumerate(FRAMES):
            sel = which == k
            if not sel.any():
                continue
            t, s_, o = tgt_box[sel], src_box[sel], off[sel]
            src_u, tgt_u = np.unique(s_), np.unique(t)
            spos, tpos = np.searchsorted(src_u, s_), np.searchsorted(tgt_u, t)
            groups = []
            for code in np.unique(o):
                g = o == code
                shift = x2x_shift(self.nodes, name, -OFFSETS[code][None].astype(float))[0]
                groups.append((xp.asarray(shift), xp.asarray(tpos[g]), xp.asarray(spos[g])))
            a1, a2, e = operators(self.order, self.nodes, name)
            work.append(("exponential", (xp.asarray(a1.T), xp.asarray(a2.T), xp.asarray(e.T)),
                         xp.asarray(self._gid(level, src_u)), xp.asarray(self._gid(level, tgt_u)), groups))
        return work

    def _exponential(self, multipole, local, ops, sources, targets, groups):
        """M2X at the sources, X2X (a diagonal shift per offset) summed at the targets, X2L."""
        xp, n = self.xp, self.n_coef
        a1t, a2t, et = ops
        m = multipole[sources]
        mc = m[..., :n] + 1j * m[..., n:]
        w_src = mc @ a1t + xp.conj(mc) @ a2t
        w_tgt = xp.zeros((len(targets),) + w_src.shape[1:], dtype=w_src.dtype)
        for shift, tpos, spos in groups:
            w_tgt[tpos] += w_src[spos] * shift
        lc = w_tgt @ et
        local[targets] += xp.concatenate([lc.real, lc.imag], axis=-1)

    def _lists(self, tgt, src, off, table, table_t=None):
        """("lists", unique targets, starts, sources, offsets, table) sorted by target; table None means
        the standard table (already on the device, transposed for the kernel); table_t: the table already
        transposed on the device, shared by several lists."""
        xp = self.xp
        order = np.argsort(tgt, kind="stable")
        tgt, src, off = tgt[order], src[order], off[order]
        starts = np.r_[0, np.flatnonzero(np.diff(tgt)) + 1, len(tgt)]
        if xp is np:
            return ("lists", tgt[starts[:-1]], starts, src, off, table)
        if table_t is None:
            table_t = self.m2l_table_t if table is None else xp.ascontiguousarray(xp.asarray(table).transpose(0, 2, 1))
        return ("lists", xp.asarray(tgt[starts[:-1]], dtype=xp.int64), xp.asarray(starts, dtype=xp.int64),
                xp.asarray(src, dtype=xp.int64), xp.asarray(off, dtype=xp.int32), table_t)

    def _chunks(self, shape):
        """Slices over leaves so that one chunk's harmonics (points x coefficients) stay near 2^24 values."""
        step = max(1, (1 << 24) // (shape[1] * self.n_coef))
        return [slice(lo, lo + step) for lo in range(0, shape[0], step)]

    def _centres(self, leaves: _Leaves) -> np.ndarray:
        """(n, 3) centres of leaves at mixed levels."""
        coords = np.concatenate([lv.coords for lv in self.tree.levels])[self._gid(leaves.level, leaves.box)]
        return self.tree.corner + (coords + 0.5) * (self.tree.side / 2.0 ** leaves.level)[:, None]

    def _resident(self) -> dict:
        """The arrays every application reads, moved to the backend's device once (the device current at the
        first application): sorted points, the orderings, and per source / target leaf its "side", "centre"
        and box "gid" with its slots: on the GPU "slots" (-1 where padded) and the P2P kernel's near-field CSR,
        on the host "idx" (clipped) and "mask"."""
        if getattr(self, "_resident_arrays", None) is None:
            xp, tree = self.xp, self.tree
            res = {"src": xp.asarray(self.sources), "tgt": xp.asarray(self.targets),
                   "src_order": xp.asarray(tree.src_order), "tgt_order": xp.asarray(tree.tgt_order)}
            for kind, leaves in (("src", self.src_leaves), ("tgt", self.tgt_leaves)):
                if self.backend.is_gpu:
                    res[kind + "_slots"] = xp.asarray(leaves.index)
                else:
                    res[kind + "_idx"], res[kind + "_mask"] = np.maximum(leaves.index, 0), leaves.index >= 0
                res[kind + "_side"] = xp.asarray(tree.side / 2.0 ** leaves.level)
                res[kind + "_centre"] = xp.asarray(self._centres(leaves))
                res[kind + "_gid"] = xp.asarray(self._gid(leaves.level, leaves.box))
            if self.backend.is_gpu:
                leaf_of, starts, pair_leaf, first, stop = self._near_lists()
                res["near_lists"] = (xp.asarray(leaf_of, dtype=xp.int32), *(xp.asarray(a, dtype=xp.int64) for a in
                                                                           (starts, pair_leaf, first, stop)))
            self._resident_arrays = res
        return self._resident_arrays

    def _near_lists(self):
        """CSR of the near field for the P2P kernels (CUDA, Numba): leaf of each sorted target, pair starts per
        target leaf, source leaf of each pair, and the sorted-source range of each source leaf."""
        if getattr(self, "_near_csr", None) is None:
            tl, sl = self._near_pairs
            order = np.argsort(tl, kind="stable")
            starts = np.r_[0, np.cumsum(np.bincount(tl, minlength=len(self.tgt_leaves.start)))]
            leaf_of = np.full(len(self.targets), -1, dtype=np.int32)
            rows, cols = np.nonzero(self.tgt_leaves.index >= 0)
            leaf_of[self.tgt_leaves.index[rows, cols]] = rows
            counts = (self.src_leaves.index >= 0).sum(axis=1)
            self._near_csr = (leaf_of, starts, sl[order], self.src_leaves.start,
                              self.src_leaves.start + counts)
        return self._near_csr

    def _p2p(self, src, tgt, q, d, tidx, tmask, phi_pad, grad_pad, gradient):
        xp = self.xp
        tl_pairs, sl_pairs = self._near_pairs
        sidx_all = np.maximum(self.src_leaves.index, 0)
        smask_all = self.src_leaves.index >= 0
        width_t, width_s = tidx.shape[1], sidx_all.shape[1]
        chunk = max(1, 4_000_000 // (width_t * width_s))
        for lo in range(0, len(tl_pairs), chunk):
            tp, sp = tl_pairs[lo:lo + chunk], sl_pairs[lo:lo + chunk]
            x = tgt[tidx[xp.asarray(tp)]]                      # (k, Lt, 3)
            si = xp.asarray(sidx_all[sp])
            sm = xp.asarray(smask_all[sp])
            y = src[si]                                        # (k, Ls, 3)
            diff = x[:, :, None, :] - y[:, None, :, :]         # (k, Lt, Ls, 3)
            r2 = (diff * diff).sum(axis=-1)
            valid = (r2 > 0) & sm[:, None, :]
            inv = xp.where(valid, 1.0 / xp.sqrt(xp.where(valid, r2, 1.0)), 0.0)
            inv3 = inv ** 3
            phi = 0
            grad = 0
            if q is not None:
                qs = q[:, si]                                  # (n_dens, k, Ls)
                phi = phi + xp.einsum("dks,kts->dkt", qs, inv)
                if gradient:
                    grad = grad - xp.einsum("dks,kts,ktsc->dktc", qs, inv3, diff)
            if d is not None:
                ds = d[:, si]                                  # (n_dens, k, Ls, 3)
                dot = xp.einsum("dksc,ktsc->dkts", ds, diff)
                phi = phi + (dot * inv3).sum(axis=-1)
                if gradient:
                    grad = grad + xp.einsum("dksc,kts->dktc", ds, inv3) - 3 * xp.einsum(
                        "dkts,kts,ktsc->dktc", dot, inv3 * inv * inv, diff)
            _scatter_add(phi_pad, xp.asarray(tp), phi, xp)
            if gradient:
                _scatter_add(grad_pad, xp.asarray(tp), grad, xp)


class _Clock:
    """Phase timer: lap(name) adds the seconds since the last lap to timings[name] (if timings given)."""

    def __init__(self, backend, timings):
        import time  # noqa: PLC0415

        self.backend, self.timings, self.now = backend, timings, time.perf_counter
        self.last = self.now()

    def lap(self, name: str) -> None:
        if self.timings is None:
            return
        self.backend.synchronize()
        t = self.now()
        self.timings[name] = self.timings.get(name, 0.0) + t - self.last
        self.last = t


def _scatter_add(target, rows, values, xp):
    """target[:, rows] += values with repeated rows summed (NumPy add.at / CuPy scatter_add)."""
    if xp is np:
        np.add.at(target, (slice(None), rows), values)
    else:
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(target, (slice(None), rows), values)


def translations_per_box(tree: Octree, scheme: str) -> int:
    """The most M2L translations one box needs under a scheme: its interaction list (standard,
    batched-gemm: at most 189); for parent-to-child the kept pairs plus the parents translated in
    their place (at most 119); for child-to-parent, per family, the children's kept pairs plus the
    parent's translations, shared by its 8 child positions (at most 119)."""
    from .operators import cross_level_split  # noqa: PLC0415

    worst = 0
    for level in range(2, len(tree.levels)):
        tgt, src, _ = tree.m2l[level]
        if not len(tgt):
            continue
        n = tree.levels[level].n_boxes
        if scheme not in ("child-to-parent", "parent-to-child"):  # every same-level pair translated
            worst = max(worst, int(np.bincount(tgt, minlength=n).max()))
            continue
        (_, cross_tgt, _, _, _), keep = cross_level_split(tree, level, tgt, src, scheme)
        if scheme == "parent-to-child":
            counts = np.bincount(tgt[keep], minlength=n) + np.bincount(cross_tgt, minlength=n)
            worst = max(worst, int(counts.max()))
        else:
            parents = tree.levels[level].parent
            up = tree.levels[level - 1].n_boxes
            family = np.bincount(parents[tgt[keep]], minlength=up) + np.bincount(cross_tgt, minlength=up)
            worst = max(worst, int(np.ceil(family.max() / 8)))
    return worst
