"""The M2L schemes, one class each, and SCHEMES, the one table that names them (the registry's M2L axis
less auto). A scheme prepares its work once from a plan (prepare) and applies it many times (apply:
local += M2L(multipole), both (n_boxes, n_dens, 2P) arrays of the plan's backend)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import ProblemError
from .operators import OFFSETS, cross_level_split, cross_m2l_codes, cross_m2l_tables, standard_m2l_table
from .plan import FmmOptions, FmmPlan, octant_of
from .tree import Octree


class M2LScheme(Protocol):
    separations: tuple  # the tree separations (tree.py) the scheme can translate
    on_device: bool  # prepares from a tree and lists built on the GPU (plan.build_plan); else on the host

    def check(self, options: FmmOptions) -> None:
        """Raise ProblemError for options the scheme cannot run, before any work is done."""

    def prepare(self, plan: FmmPlan):
        """The scheme's work for a plan (its state), on the plan's backend."""

    def apply(self, state, multipole, local) -> None:
        """local += the far field's M2L of multipole."""

    def translations_per_box(self, tree: Octree) -> int:
        """The most M2L translations one box needs."""


def _level_pairs(tree: Octree):
    """(level, target boxes, source boxes, offset indices) of every level with M2L pairs."""
    for level in range(2, len(tree.levels)):
        tgt_box, src_box, off = tree.m2l[level]
        if len(tgt_box):
            yield level, tgt_box, src_box, off


def all_level_pairs(plan: FmmPlan) -> tuple | None:
    """Every level's same-level M2L pairs as one list (the levels write distinct rows: one work item, one
    launch on the GPU): target gids, source gids, offset indices and a ranking of the targets by level,
    octant, then box (Morton order); boxes of one level at one octant under their parents have the same
    interaction list's offsets, so tiles of them (the GPU's list kernel) share their tables. None if none."""
    levels, xp = list(_level_pairs(plan.tree)), plan.tree.xp
    if not levels:
        return None

    def key(level, tgt_box):
        octant = octant_of(plan.tree.levels[level].coords[tgt_box])
        return 8 * plan.box_offset[level] + octant * plan.tree.levels[level].n_boxes + tgt_box

    return tuple(xp.concatenate(parts) for parts in zip(*(
        (plan.gid(lv, t), plan.gid(lv, s), off, key(lv, t)) for lv, t, s, off in levels)))


def _standard_table(plan: FmmPlan, host_form: bool = False):
    """The same-level M2L table (operators.standard_m2l_table) in FP32 where the options ask for it, in the
    form the passes' list kernel reads (host_form: as built, for a scheme that multiplies it itself)."""
    p, separation = plan.order, plan.tree.separation
    dtype = np.float32 if plan.options.fp32_tables else np.float64
    build = lambda: standard_m2l_table(p, separation).astype(dtype, copy=False)  # noqa: E731
    if host_form:
        return build()
    return plan.passes.table(build, ("standard_m2l", p, separation, np.dtype(dtype).name))


def _check_separation(scheme: M2LScheme, name: str, options: FmmOptions) -> None:
    if options.separation not in scheme.separations:
        raise ProblemError(f"the {name} M2L scheme takes separation {' or '.join(map(str, scheme.separations))}, "
                           f"not {options.separation}: its lists and operators are made for adjacent near boxes; "
                           "standard, batched-gemm and the cross-level schemes take separation 2")


def _most_per_box(tree: Octree) -> int:
    """The largest same-level interaction list (at most 189, 875 with separation 2)."""
    return max((int(tree.xp.bincount(t, minlength=tree.levels[lv].n_boxes).max())
                for lv, t, _, _ in _level_pairs(tree)), default=0)


@dataclass(frozen=True, eq=False)
class _ListState:
    passes: object
    work: list


class Standard:
    """The paper's M2L: every same-level pair of the interaction lists by the list kernel, one target box per
    thread (block on the GPU)."""

    separations = (1, 2)
    on_device = True

    def check(self, options: FmmOptions) -> None:
        _check_separation(self, "standard", options)

    def prepare(self, plan: FmmPlan) -> _ListState:
        table = _standard_table(plan)
        pairs = all_level_pairs(plan)
        return _ListState(plan.passes, [plan.passes.lists(*pairs[:3], table, pairs[3])] if pairs else [])

    def apply(self, state: _ListState, multipole, local) -> None:
        for work in state.work:
            state.passes.run_lists(multipole, local, work)

    def translations_per_box(self, tree: Octree) -> int:
        return _most_per_box(tree)


@dataclass(frozen=True)
class CrossLevel(Standard):
    """Some same-level pairs replaced by one translation between levels (operators.cross_level_split):
    child-to-parent (M2L_N) or parent-to-child (M2L_NF), at most 119 translations per box."""

    direction: str
    separations = (1, 2)  # operators._far_from_family keeps the same-level worst case of either
    on_device = False

    def check(self, options: FmmOptions) -> None:
        _check_separation(self, self.direction, options)

    def prepare(self, plan: FmmPlan) -> _ListState:
        """The kept same-level pairs with the standard table, and the cross-level translations with one table
        per offset code shared by every level (the scaled tables do not depend on the level: 640 codes with
        separation 2, 80 with 1), cached like the standard table (on disk and on the device)."""
        passes, tree, work, sep = plan.passes, plan.tree, [], plan.tree.separation
        table = _standard_table(plan)
        splits = [(lv, tgt_box, src_box, off, *cross_level_split(tree, lv, tgt_box, src_box, self.direction))
                  for lv, tgt_box, src_box, off in _level_pairs(tree)]
        codes = cross_m2l_codes(sep)
        cross = passes.table(lambda: cross_m2l_tables(plan.order, self.direction, sep),
                             ("cross_m2l", self.direction, plan.order, sep)) if any(
            len(split[1]) for *_, split, _ in splits) else None
        for lv, tgt_box, src_box, off, (tl, tb, sl, sb, code), keep in splits:
            if len(tb):
                slot = np.searchsorted(codes, code)
                work.append(passes.lists(plan.gid(tl, tb), plan.gid(sl, sb), slot, cross))
            work.append(passes.lists(plan.gid(lv, tgt_box[keep]), plan.gid(lv, src_box[keep]), off[keep], table))
        return _ListState(passes, work)

    def translations_per_box(self, tree: Octree) -> int:
        """The kept pairs plus, for parent-to-child, the parents translated in their place; for child-to-parent,
        per family, the children's kept pairs plus the parent's translations, shared by its 8 child positions."""
        worst = 0
        for level, tgt, src, _ in _level_pairs(tree):
            n = tree.levels[level].n_boxes
            (_, cross_tgt, _, _, _), keep = cross_level_split(tree, level, tgt, src, self.direction)
            if self.direction == "parent-to-child":
                worst = max(worst, int((np.bincount(tgt[keep], minlength=n)
                                        + np.bincount(cross_tgt, minlength=n)).max()))
                continue
            up = tree.levels[level - 1].n_boxes
            family = (np.bincount(tree.levels[level].parent[tgt[keep]], minlength=up)
                      + np.bincount(cross_tgt, minlength=up))
            worst = max(worst, int(np.ceil(family.max() / 8)))
        return worst


class BatchedGemm:
    """All translations of a level with one offset as one stacked dense product (BLAS / cuBLAS)."""

    separations = (1, 2)
    on_device = False

    def check(self, options: FmmOptions) -> None:
        _check_separation(self, "batched-gemm", options)

    def prepare(self, plan: FmmPlan) -> list:
        """Per level (table, [(offset, target gids, source gids), ...]), the pairs grouped by offset: no two rows
        of a group collide."""
        xp, work = plan.xp, []
        table = xp.asarray(_standard_table(plan, host_form=True))
        for lv, tgt_box, src_box, off in _level_pairs(plan.tree):
            order = np.argsort(off, kind="stable")
            off, t, s = off[order], plan.gid(lv, tgt_box[order]), plan.gid(lv, src_box[order])
            cut = np.r_[0, np.flatnonzero(np.diff(off)) + 1, len(off)]
            work.append((table, [(int(off[a]), xp.asarray(t[a:b]), xp.asarray(s[a:b]))
                                 for a, b in zip(cut[:-1], cut[1:])]))
        return work

    def apply(self, state: list, multipole, local) -> None:
        for table, groups in state:
            for off, tgt_ids, src_ids in groups:
                local[tgt_ids] += multipole[src_ids] @ table[off].T

    def translations_per_box(self, tree: Octree) -> int:
        return _most_per_box(tree)


@dataclass(frozen=True, eq=False)
class _Direction:
    """One direction's exponential work: (A1^T, A2^T, E^T) on the backend, the source and target gids, and
    [(shift, target rows, source rows), ...] grouped by offset so that no two rows of a group collide."""

    ops: tuple
    sources: object
    targets: object
    groups: list


class Exponential:
    """Plane waves (exponential.py): M2X at the sources, X2X (a diagonal shift per offset) summed at the
    targets, X2L, over six directional lists."""

    separations = (1,)  # the plane-wave rules hold for separations Z in [1, 4] box sides (exponential.py)
    on_device = False

    def check(self, options: FmmOptions) -> None:
        from .exponential import quadrature  # noqa: PLC0415

        _check_separation(self, "exponential", options)
        quadrature(options.exponential_nodes)  # a clear error for a node count without a rule
        if options.fp32_tables:
            raise ProblemError("FP32 tables are for the schemes with the same-level M2L table (standard, "
                               "batched-gemm and the cross-level schemes), not the exponential one")

    def prepare(self, plan: FmmPlan) -> tuple:
        """(xp, n_coef, [_Direction, ...]) over the levels and the six directions."""
        return plan.xp, plan.n_coef, [d for lv, t, s, off in _level_pairs(plan.tree)
                                      for d in self._directions(plan, lv, t, s, off)]

    @staticmethod
    def _directions(plan: FmmPlan, level: int, tgt_box, src_box, off) -> list:
        from .exponential import FRAMES, direction_of, operators, x2x_shift  # noqa: PLC0415

        xp, nodes, work = plan.xp, plan.options.exponential_nodes, []
        which = direction_of(-OFFSETS[off])  # target - source, box units
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
                shift = x2x_shift(nodes, name, -OFFSETS[code][None].astype(float))[0]
                groups.append((xp.asarray(shift), xp.asarray(tpos[g]), xp.asarray(spos[g])))
            a1, a2, e = operators(plan.order, nodes, name)
            work.append(_Direction((xp.asarray(a1.T), xp.asarray(a2.T), xp.asarray(e.T)),
                                   xp.asarray(plan.gid(level, src_u)), xp.asarray(plan.gid(level, tgt_u)), groups))
        return work

    def apply(self, state: tuple, multipole, local) -> None:
        xp, n, directions = state
        for work in directions:
            a1t, a2t, et = work.ops
            m = multipole[work.sources]
            mc = m[..., :n] + 1j * m[..., n:]
            w_src = mc @ a1t + xp.conj(mc) @ a2t
            w_tgt = xp.zeros((len(work.targets),) + w_src.shape[1:], dtype=w_src.dtype)
            for shift, tpos, spos in work.groups:
                w_tgt[tpos] += w_src[spos] * shift
            lc = w_tgt @ et
            local[work.targets] += xp.concatenate([lc.real, lc.imag], axis=-1)

    def translations_per_box(self, tree: Octree) -> int:
        return _most_per_box(tree)


SCHEMES: dict[str, M2LScheme] = {
    "standard": Standard(),
    "child-to-parent": CrossLevel("child-to-parent"),
    "parent-to-child": CrossLevel("parent-to-child"),
    "exponential": Exponential(),
    "batched-gemm": BatchedGemm(),
}

