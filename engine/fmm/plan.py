"""The FMM's plan: everything built once from the points, the order and the scheme (octree, leaves, near
pairs, translation tables and lists, the M2L scheme's work) so that applications only run the passes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..backend import Backend, array_module
from ..errors import ProblemError
from .harmonics import degree_order, n_coefficients
from .operators import child_tables
from .tree import Octree, build_octree, stable_argsort

TILE_SLOTS = 64  # target boxes per tile of the GPU's list kernel (kernels/fmm.cu m2l_tiles)


@dataclass(frozen=True)
class FmmOptions:
    """order: expansion order p; leaf_size: points per leaf at most; scheme: an M2L scheme's name (m2l.SCHEMES);
    exponential_nodes: the exponential scheme's plane-wave rule (8, 17 or 26); separation: 1 or 2, the boxes
    apart beyond which boxes interact by M2L (tree.py); fp32_tables: the same-level M2L table in FP32 (the
    expansions and the sums stay FP64)."""

    order: int
    leaf_size: int
    scheme: str
    exponential_nodes: int = 17
    separation: int = 1
    fp32_tables: bool = False


@dataclass(frozen=True, eq=False)
class Leaves:
    """Leaves holding targets (or sources) as padded index arrays into the sorted points."""

    level: np.ndarray   # (n,) level of each leaf
    box: np.ndarray     # (n,) box index in its level
    start: np.ndarray   # (n,) first sorted point
    index: np.ndarray   # (n, L) sorted point indices, -1 where padded


@dataclass(frozen=True, eq=False)
class ListWork:
    """Translations for the host's per-target list loop (M2L; standard_m2l.m2l_lists_numba), sorted by target:
    dest[targets[i]] += table[offsets[k]] @ source[sources[k]] for k in [starts[i], starts[i + 1]); arrays
    and table in the form the backend's kernel reads (passes.lists)."""

    targets: object
    starts: object
    sources: object
    offsets: object
    table: object


@dataclass(frozen=True, eq=False)
class TileWork:
    """Translations for the GPU's tiled kernel (kernels/fmm.cu m2l_tiles), grouped by by_tile: tile_target
    (n_tiles * TILE_SLOTS,) target row or -1; tile_segments (n_tiles + 1,) each tile's segments; segment_table
    (n_seg,) int32 the table every pair of a segment uses; segment_pairs (n_seg + 1,) each segment's pairs;
    pair_slot (n,) int32 the target's slot in its tile; pair_source (n,) the source row; table: (n, 2P, 2P)
    with its last two axes swapped. All on the device."""

    tile_target: object
    tile_segments: object
    segment_table: object
    segment_pairs: object
    pair_slot: object
    pair_source: object
    table: object
    most_segments: int = 1  # the most segments one tile has


@dataclass(frozen=True, eq=False)
class LeafArrays:
    """Per source or target leaf, on the backend: side (n,), centre (n, 3), global box id (n,), and its slots
    (n, L) in the form the passes read them: sorted point indices, -1 where padded (GPU) or clipped to 0 with
    mask (n, L) marking the real ones (host; mask None on the GPU)."""

    side: object
    centre: object
    gid: object
    slots: object
    mask: object


@dataclass(frozen=True, eq=False)
class Resident:
    """The arrays every application reads, on the backend: sorted sources and targets, the sorting
    permutations, the leaves' arrays and the near-field CSR (plan.near_csr, in the passes' dtypes)."""

    src: object
    tgt: object
    src_order: object
    tgt_order: object
    src_leaf: LeafArrays
    tgt_leaf: LeafArrays
    near: tuple


def resident_arrays(plan, slots, near) -> Resident:
    """A plan's Resident; slots(leaves) -> (slots, mask) in the passes' form; near: the CSR on the backend."""
    xp, tree = plan.xp, plan.tree

    def leaf(leaves: Leaves) -> LeafArrays:
        return LeafArrays(xp.asarray(tree.side / 2.0 ** leaves.level), xp.asarray(plan.centres(leaves)),
                          xp.asarray(plan.gid(leaves.level, leaves.box)), *slots(leaves))

    return Resident(xp.asarray(plan.sources), xp.asarray(plan.targets), xp.asarray(tree.src_order),
                    xp.asarray(tree.tgt_order), leaf(plan.src_leaves), leaf(plan.tgt_leaves), near)


@dataclass(eq=False)
class FmmPlan:
    """The plan of one FMM: sources (n_s, 3) and targets (n_t, 3) in the tree's sorted order, box_offset (levels
    + 1,) giving each level's first global box id, near_pairs (target leaf, source leaf) of the direct sum,
    near_csr its CSR for the P2P kernels, m2m / l2l the (8, 2P, 2P) octant tables scaled for one set to serve
    every level (on the backend); passes: the host's or the GPU's implementation of the passes, with its
    per-level M2M / L2L work in `families`; m2l: the scheme, with its prepared work in `m2l_work`; kept: what
    the passes keep of the points between applications (the host's P2M and L2P harmonics, host.py)."""

    options: FmmOptions
    backend: Backend
    passes: object
    tree: Octree
    sources: np.ndarray
    targets: np.ndarray
    box_offset: np.ndarray
    src_leaves: Leaves
    tgt_leaves: Leaves
    near_pairs: tuple
    near_csr: tuple
    m2m: object
    l2l: object
    m2l: object
    families: list = field(default=None)
    m2l_work: object = field(default=None)
    _resident: object = field(default=None, repr=False)
    kept: dict = field(default_factory=dict, repr=False)

    @property
    def xp(self):
        return self.backend.xp

    @property
    def order(self) -> int:
        return self.options.order

    @property
    def n_coef(self) -> int:
        return n_coefficients(self.options.order)

    def gid(self, level, box):
        """Global box ids (the rows of the expansion arrays) of boxes of a level (or of levels, elementwise)."""
        return self.box_offset[level] + box

    def centres(self, leaves: Leaves):
        """(n, 3) centres of leaves at mixed levels, in the tree's memory."""
        xp = self.tree.xp
        coords = xp.concatenate([lv.coords for lv in self.tree.levels])[self.gid(leaves.level, leaves.box)]
        return xp.asarray(self.tree.corner) + (coords + 0.5) * (self.tree.side / 2.0 ** leaves.level)[:, None]

    @property
    def kept_bytes(self) -> int:
        """Bytes of the harmonics in kept."""
        return sum(a.nbytes for pair in self.kept.values() for a in pair if a is not None)

    def resident(self):
        """The arrays every application reads, moved to the backend's device once (the device current at the
        first application): see the passes' resident()."""
        if self._resident is None:
            self._resident = self.passes.resident(self)
        return self._resident


def build_plan(sources: np.ndarray, targets: np.ndarray, options: FmmOptions, backend: Backend, passes, m2l,
               tree: Octree | None = None) -> FmmPlan:
    """The plan for sources (n_s, 3) and targets (n_t, 3) float64; passes: the backend's passes (host or GPU);
    m2l: the M2L scheme (m2l.SCHEMES); tree: an octree already built for these points, or None. The tree and
    the lists are built in the backend's memory where the scheme prepares from a tree there (on_device),
    on the host otherwise; a tree given in the other memory is moved to the host."""
    on_device = backend.is_gpu and getattr(m2l, "on_device", False)
    if tree is None:
        if on_device:  # copied to the device once, for the tree and the plan
            same = targets is sources
            sources = backend.xp.asarray(sources)
            targets = sources if same else backend.xp.asarray(targets)
        tree = build_octree(sources, targets, options.leaf_size, separation=options.separation,
                            xp=backend.xp if on_device else np)
    elif tree.separation != options.separation:
        raise ProblemError(f"the tree given was built for separation {tree.separation}, the FMM asks for "
                           f"{options.separation}")
    if tree.xp is not np and not on_device:
        tree = tree.on_host()
    xp = tree.xp
    src_leaves, tgt_leaves = leaves_of(tree, "src"), leaves_of(tree, "tgt")
    m2m, l2l = _scaled_child_tables(options.order)
    near = leaf_pairs(tree, src_leaves, tgt_leaves)
    plan = FmmPlan(options, backend, passes, tree, xp.asarray(sources)[tree.src_order],
                   xp.asarray(targets)[tree.tgt_order],
                   xp.asarray(np.cumsum([0] + [lv.n_boxes for lv in tree.levels])), src_leaves, tgt_leaves, near,
                   near_csr(near, src_leaves, tgt_leaves), backend.xp.asarray(m2m),
                   backend.xp.asarray(l2l), m2l)
    plan.m2l_work = m2l.prepare(plan)
    plan.families = passes.families(plan)
    return plan


def _scaled_child_tables(p: int) -> tuple[np.ndarray, np.ndarray]:
    """M2M (child -> parent) and L2L (parent -> child) tables (8, 2P, 2P) with each box's expansion scaled by
    its own side."""
    deg = np.tile(degree_order(p)[0], 2)
    m2m, l2l = child_tables(p)
    return m2m * (2.0 ** -deg)[None, None, :], l2l * (2.0 ** -(deg + 1))[None, :, None]


def octant_of(coords):
    """The octant (0..7) of boxes under their parents, from their integer coordinates (n, 3)."""
    return (coords[:, 0] % 2) * 4 + (coords[:, 1] % 2) * 2 + coords[:, 2] % 2


def octants(plan: FmmPlan, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(octant, parent gid, child gid) of every box of a level >= 1 under its parent."""
    lv = plan.tree.levels[level]
    return octant_of(lv.coords), plan.gid(level - 1, lv.parent), plan.gid(level, plan.tree.xp.arange(lv.n_boxes))


def leaves_of(tree: Octree, kind: str) -> Leaves:
    """The leaves holding targets (kind "tgt") or sources ("src"), ordered by their first sorted point."""
    xp, parts = tree.xp, []
    for lv_i, lv in enumerate(tree.levels):
        rng = lv.tgt_range if kind == "tgt" else lv.src_range
        ids = xp.flatnonzero(lv.leaf & (rng[:, 1] > rng[:, 0]))
        parts.append(xp.stack([xp.full(len(ids), lv_i, dtype=xp.int64), ids, rng[ids, 0], rng[ids, 1]], axis=1))
    a = xp.concatenate(parts)
    a = a[xp.argsort(a[:, 2])]  # distinct starts: leaves holding points do not overlap
    width = int((a[:, 3] - a[:, 2]).max()) if len(a) else 1
    offs = xp.arange(width)
    index = xp.where(offs[None, :] < (a[:, 3] - a[:, 2])[:, None], a[:, 2:3] + offs[None, :], -1)
    return Leaves(*(xp.ascontiguousarray(a[:, k]) for k in range(3)), index)  # the kernels read flat arrays


def by_target(tgt, src, off):
    """Translations dest[tgt] += table[off] @ source[src] (equal-length int arrays, NumPy or CuPy) sorted by
    target: (targets, starts, sources, offsets), the targets' lists being [starts[i], starts[i + 1])."""
    xp = array_module(tgt)
    order = stable_argsort(tgt)
    tgt, src, off = tgt[order], src[order], off[order]
    starts = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.flatnonzero(xp.diff(tgt)) + 1,
                             xp.full(1, len(tgt), dtype=xp.int64)])
    return tgt[starts[:-1]], starts, src, off


def by_tile(tgt, src, off, key=None, slots: int = TILE_SLOTS, group=None) -> tuple:
    """Translations dest[tgt] += table[off] @ source[src] (equal-length int arrays, NumPy or CuPy) grouped for
    the tiled kernel: the targets ranked by key (per pair, one value per target; default the target itself)
    and cut into tiles of `slots`, each tile's pairs sorted by table; no target twice with one table.
    group: per pair, a group whose targets no tile mixes with another's (key must rank the groups apart,
    in group order), so that each group's tiles run as one launch (the levels of M2M and L2L).
    Returns TileWork's arrays (less the table): tile_target, tile_segments, segment_table, segment_pairs,
    pair_slot, pair_source."""
    xp = array_module(tgt)
    key = tgt if key is None else key
    order = stable_argsort(key)
    first = xp.concatenate([xp.ones(min(1, len(tgt)), dtype=bool), key[order][1:] != key[order][:-1]])
    if bool((~first[1:] & (tgt[order][1:] != tgt[order][:-1])).any()):
        raise ValueError("two target boxes share a key: a tile slot holds one target")
    ranked = xp.cumsum(first) - 1  # the targets' rank, in key order
    if group is None:
        tiled, n_tiles = ranked, -(-int(first.sum()) // slots)
    else:  # each group's ranks padded to whole tiles
        counts = xp.bincount(group[order][first], minlength=int(group.max()) + 1 if len(group) else 0)
        padded = -(-counts // slots) * slots
        g = group[order]
        tiled = ranked - (xp.cumsum(counts) - counts)[g] + (xp.cumsum(padded) - padded)[g]
        n_tiles = int(padded.sum()) // slots
    rank = xp.empty(len(tgt), dtype=xp.int64)
    rank[order] = tiled
    tile_target = xp.full(n_tiles * slots, -1, dtype=xp.int64)
    tile_target[rank] = tgt
    tile, slot = rank // slots, rank % slots
    pair_key = (tile * (int(off.max()) + 1 if len(off) else 1) + off) * slots + slot
    order = stable_argsort(pair_key)
    if bool((pair_key[order][1:] == pair_key[order][:-1]).any()):
        raise ValueError("a target box appears twice with one table: the tiled kernel holds one source per slot")
    tile, off = tile[order], off[order]
    cut = xp.flatnonzero((tile[1:] != tile[:-1]) | (off[1:] != off[:-1])) + 1
    segment_pairs = xp.concatenate([xp.zeros(1, dtype=xp.int64), cut, xp.full(1, len(tgt), dtype=xp.int64)])
    starts = segment_pairs[:-1][: len(cut) + min(1, len(tgt))]
    tile_segments = xp.searchsorted(tile[starts], xp.arange(n_tiles + 1))
    return (tile_target, tile_segments.astype(xp.int64), off[starts].astype(xp.int32),
            segment_pairs[: len(starts) + 1], slot[order].astype(xp.int32),
            src[order].astype(xp.int64))


def segment_ids(counts):
    """repeat(arange(len(counts)), counts) for counts (n,) >= 0, by a search (CuPy's repeat takes no array
    of counts)."""
    xp = array_module(counts)
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    return xp.searchsorted(ends, xp.arange(total), side="right")


def leaf_pairs(tree: Octree, src_leaves: Leaves, tgt_leaves: Leaves) -> tuple:
    """(target leaf, source leaf) pairs of every near box pair: the direct-sum work."""
    xp, t_start, s_start = tree.xp, tgt_leaves.start, src_leaves.start
    out_t, out_s = [], []
    for lv_i, (a, c) in enumerate(tree.near):
        lv = tree.levels[lv_i]
        ta = xp.searchsorted(t_start, lv.tgt_range[a, 0]), xp.searchsorted(t_start, lv.tgt_range[a, 1])
        sc = xp.searchsorted(s_start, lv.src_range[c, 0]), xp.searchsorted(s_start, lv.src_range[c, 1])
        nt, ns = ta[1] - ta[0], sc[1] - sc[0]
        keep = (nt > 0) & (ns > 0)
        nt, ns, t0, s0 = nt[keep], ns[keep], ta[0][keep], sc[0][keep]
        total = nt * ns
        pair = segment_ids(total)
        local = xp.arange(len(pair)) - (xp.cumsum(total) - total)[pair]
        out_t.append(t0[pair] + local // ns[pair])
        out_s.append(s0[pair] + local % ns[pair])
    return xp.concatenate(out_t), xp.concatenate(out_s)


def near_csr(pairs: tuple, src_leaves: Leaves, tgt_leaves: Leaves) -> tuple:
    """CSR of the near field for the P2P kernels (CUDA, Numba): pair starts per target leaf, source leaf of
    each pair, and the sorted-source range [first, stop) of each source leaf; in the pairs' memory."""
    tl, sl = pairs
    xp = array_module(tl)
    order = stable_argsort(tl)
    starts = xp.concatenate([xp.zeros(1, dtype=xp.int64),
                             xp.cumsum(xp.bincount(tl, minlength=len(tgt_leaves.start)))])
    counts = (src_leaves.index >= 0).sum(axis=1)
    return starts, sl[order], src_leaves.start, src_leaves.start + counts


def leaf_of_targets(tgt_leaves: Leaves, n_targets: int):
    """The leaf of each sorted target (n_t,) int32 (the host's P2P loops over targets; the GPU's over leaves)."""
    xp = array_module(tgt_leaves.index)
    leaf_of = xp.full(n_targets, -1, dtype=xp.int32)
    rows, cols = xp.nonzero(tgt_leaves.index >= 0)
    leaf_of[tgt_leaves.index[rows, cols]] = rows.astype(xp.int32)
    return leaf_of
