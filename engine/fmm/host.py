"""The FMM's passes on the host: P2M and L2P with NumPy over padded leaves in chunks, M2M and L2L batched per
octant, the list M2L and the near field (P2P) as Numba loops; the P2P's NumPy specification for the tests."""

from __future__ import annotations

import numpy as np

from .operators import l2p_apply, l2p_harmonics, p2m_apply, p2m_harmonics
from .plan import TILE_SLOTS, FmmPlan, ListWork, Resident, by_target, leaf_of_targets, octants, resident_arrays
from .standard_m2l import m2l_lists_numba, p2p_numba

SCRATCH_VALUES = 1 << 24  # harmonics (points x coefficients) one chunk of leaves may hold
KEPT_BYTES = 256 << 20  # harmonics a plan keeps between applications


class HostPasses:
    """The passes of an FMM application on NumPy (Backend "numpy")."""

    def table(self, table, key=None) -> np.ndarray:
        """A translation table (n, 2P, 2P), or a function making it, in the form the list kernel reads (key: the
        GPU's cache name; the host reads the tables from table_cache's files)."""
        return table() if callable(table) else table

    def lists(self, tgt, src, off, table, key=None) -> ListWork:
        """The translations dest[tgt] += table[off] @ source[src] (equal-length int arrays) as list work; key
        (the GPU's tile ranking) is not used: one thread owns a target's list."""
        return ListWork(*by_target(tgt, src, off), table)

    def run_lists(self, source, dest, work: ListWork) -> None:
        m2l_lists_numba(source, dest, work.targets, work.starts, work.sources, work.offsets, work.table)

    def families(self, plan: FmmPlan) -> list:
        """Per level, (octant, parent ids, child ids) batches of its boxes (one child per octant and parent, so
        no two rows of a batch collide); [] at the root."""
        work = [[]]
        for level in range(1, len(plan.tree.levels)):
            octant, parents, children = octants(plan, level)
            work.append([(o, plan.xp.asarray(parents[octant == o]), plan.xp.asarray(children[octant == o]))
                         for o in range(8) if (octant == o).any()])
        return work

    def resident(self, plan: FmmPlan) -> Resident:
        return resident_arrays(plan, lambda leaves: (np.maximum(leaves.index, 0), leaves.index >= 0),
                               (leaf_of_targets(plan.tgt_leaves, len(plan.targets)), *plan.near_csr))

    def p2m(self, plan: FmmPlan, res: Resident, q, d, multipole) -> None:
        """Multipoles of the source leaves, each scaled by its side, into multipole (n_boxes, n_dens, 2P)."""
        xp, leaf = plan.xp, res.src_leaf
        side, centre, idx, mask = leaf.side, leaf.centre, leaf.slots, leaf.mask
        for c in _chunks(idx.shape, plan.n_coef):
            harmonics = _kept(plan, ("p2m", d is not None, c.start), lambda: p2m_harmonics(
                (res.src[idx[c]] - centre[c, None, :]) / side[c, None, None], xp.zeros_like(centre[c]), plan.order,
                d is not None, xp))
            qq = None if q is None else q[:, idx[c]] * mask[c]
            dd = None if d is None else d[:, idx[c]] * mask[None, c, :, None] / side[None, c, None, None]
            m = p2m_apply(harmonics, qq, dd, xp)
            multipole[leaf.gid[c]] = xp.concatenate([m.real, m.imag], axis=-1)

    def m2m(self, plan: FmmPlan, level: int, multipole) -> None:
        for o, parents, children in plan.families[level]:
            multipole[parents] += multipole[children] @ plan.m2m[o].T

    def l2l(self, plan: FmmPlan, level: int, local) -> None:
        for o, parents, children in plan.families[level]:
            local[children] += local[parents] @ plan.l2l[o].T

    def l2p(self, plan: FmmPlan, res: Resident, local, phi, grad) -> None:
        """The far field at the targets from their leaves' locals: sets phi (n_dens, n_t) and grad (n_dens,
        n_t, 3) or None, sorted order."""
        xp, leaf, n = plan.xp, res.tgt_leaf, plan.n_coef
        tidx, tmask = leaf.slots, leaf.mask
        phi_pad = xp.zeros((phi.shape[0],) + tidx.shape)
        grad_pad = xp.zeros((phi.shape[0],) + tidx.shape + (3,)) if grad is not None else None
        for c in _chunks(tidx.shape, n):
            harmonics = _kept(plan, ("l2p", grad is not None, c.start), lambda: l2p_harmonics(
                (res.tgt[tidx[c]] - leaf.centre[c, None, :]) / leaf.side[c, None, None],
                xp.zeros_like(leaf.centre[c]), plan.order, grad is not None, xp))
            lv_local = local[leaf.gid[c]]
            ph, gr = l2p_apply(lv_local[..., :n] + 1j * lv_local[..., n:], harmonics, xp)
            phi_pad[:, c] = ph / leaf.side[None, c, None]
            if grad is not None:
                grad_pad[:, c] = gr / (leaf.side[c] ** 2)[None, :, None, None]
        phi[:, tidx[tmask]] = phi_pad[:, tmask]
        if grad is not None:
            grad[:, tidx[tmask]] = grad_pad[:, tmask]

    def p2p(self, plan: FmmPlan, res: Resident, q, d, phi, grad, reference: bool = False) -> None:
        """Adds the near field into phi and grad (or None): the Numba loop, parallel over targets, or with
        reference its NumPy specification (p2p_reference)."""
        if reference:
            p2p_reference(plan, res, q, d, phi, grad)
            return
        empty = np.zeros((1, 1, 3))
        p2p_numba(res.tgt, res.src, q if q is not None else empty[..., 0], d if d is not None else empty,
                  q is not None, d is not None, grad is not None, *res.near, phi,
                  grad if grad is not None else empty)


def _kept(plan: FmmPlan, key: tuple, make) -> tuple:
    """The harmonics make() of one chunk, kept in plan.kept while all stay within KEPT_BYTES: a plan applied
    again (every GMRES iteration) then skips evaluating them."""
    if key in plan.kept:
        return plan.kept[key]
    harmonics = make()
    if sum(a.nbytes for a in harmonics if a is not None) + plan.kept_bytes <= KEPT_BYTES:
        plan.kept[key] = harmonics
    return harmonics


def _chunks(shape: tuple, n_coef: int) -> list:
    """Slices over leaves (shape: (leaves, slots)) so that one chunk's harmonics stay near SCRATCH_VALUES."""
    step = max(1, SCRATCH_VALUES // (shape[1] * n_coef))
    return [slice(lo, lo + step) for lo in range(0, shape[0], step)]


def p2p_reference(plan: FmmPlan, res: Resident, q, d, phi, grad) -> None:
    """The near field by padded leaf pairs with array operations, added into phi (n_dens, n_t) and grad
    (n_dens, n_t, 3) or None: the specification the compiled P2P kernels are tested against."""
    xp, (tl_pairs, sl_pairs) = plan.xp, plan.near_pairs
    tidx, tmask = res.tgt_leaf.slots, res.tgt_leaf.mask
    sidx_all, smask_all = np.maximum(plan.src_leaves.index, 0), plan.src_leaves.index >= 0
    chunk = max(1, 4_000_000 // (tidx.shape[1] * sidx_all.shape[1]))
    for lo in range(0, len(tl_pairs), chunk):
        tp, sp = tl_pairs[lo:lo + chunk], sl_pairs[lo:lo + chunk]
        si = xp.asarray(sidx_all[sp])
        diff = res.tgt[tidx[xp.asarray(tp)]][:, :, None, :] - res.src[si][:, None, :, :]  # (k, Lt, Ls, 3)
        r2 = (diff * diff).sum(axis=-1)
        valid = (r2 > 0) & xp.asarray(smask_all[sp])[:, None, :]
        inv = xp.where(valid, 1.0 / xp.sqrt(xp.where(valid, r2, 1.0)), 0.0)
        pot, field = _pair_sums(q, d, si, diff, inv, grad is not None, xp)
        rows, real = tidx[tp], tmask[tp]
        plan.backend.scatter_add(phi, (slice(None), rows[real]), pot[:, real])
        if grad is not None:
            plan.backend.scatter_add(grad, (slice(None), rows[real]), field[:, real])


def _pair_sums(q, d, si, diff, inv, gradient: bool, xp):
    """Potential (n_dens, k, Lt) and gradient (n_dens, k, Lt, 3) or 0 of the charges q and dipoles d (or None)
    of source slots si (k, Ls) at separations diff (k, Lt, Ls, 3) with inverse distances inv (0 where void)."""
    inv3 = inv ** 3
    phi = grad = 0
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
    return phi, grad


def tiles_reference(source: np.ndarray, dest: np.ndarray, arrays: tuple, table: np.ndarray) -> None:
    """The NumPy twin of kernels/fmm.cu's m2l_tiles, segment by segment: dest[t] += table[o] @ source[s] for
    the pairs of by_tile's arrays; source, dest (n_boxes, n_dens, width), table (n, width, width)."""
    tile_target, tile_segments, segment_table, segment_pairs, pair_slot, pair_source = arrays
    for tile in range(len(tile_segments) - 1):
        for seg in range(tile_segments[tile], tile_segments[tile + 1]):
            pairs = slice(segment_pairs[seg], segment_pairs[seg + 1])
            rows = tile_target[tile * TILE_SLOTS + pair_slot[pairs]]
            dest[rows] += source[pair_source[pairs]] @ table[segment_table[seg]].T
