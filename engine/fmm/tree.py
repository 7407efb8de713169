"""Adaptive octree over sources and targets with the lists the FMM needs, built with array operations.

Built with the array module given (NumPy on the host, CuPy on the GPU: Morton keys, a radix sort and
level-by-level lists there, no host round trip). Points get 3 x 21-bit Morton keys in the root cube (padded and shifted off the points' faces) and are
sorted by them, so every box owns a contiguous range. A box is split while it holds more than leaf_size
points (sources and targets together) and the depth is below max_level. A level-synchronous dual traversal from (root, root)
classifies every pair of same-level boxes whose parents are near: not near -> M2L (the "interaction
list"); near with a leaf on either side -> direct sum between the two subtrees; otherwise the children
pairs go on to the next level. Near means at most `separation` boxes apart along every axis: 1 (adjacent,
at most 189 M2L per box) or 2 (neighbours' neighbours too, at most 875 per box, a smaller convergence
ratio: the far field's error falls faster with the order).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from ..backend import array_module, to_host
from ..errors import ProblemError

BITS = 21
# The root cube is the points' bounding cube widened by ROOT_PAD of its side on each end and shifted off
# centre by these fractions of each axis's slack (irrational-looking, so no level's box faces meet at a
# rational place): a body's flat faces then cut through boxes instead of lying on box faces, where the
# translation errors of a whole face would add up coherently (the FMBEM's H u cancels them 10x less: the
# tension bar's solve error at p = 8 fell from 1.2e-3 to 1.3e-4).
ROOT_PAD = 0.05
ROOT_SHIFT = np.array([0.382, -0.276, 0.159])
SEPARATIONS = (1, 2)


def _spread(v):
    v = v.astype(np.uint64) & np.uint64(0x1FFFFF)
    for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F),
                        (4, 0x10C30C30C30C30C3), (2, 0x1249249249249249)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def morton(cells):
    """Interleaved keys (n,) uint64 of integer cell coordinates (n, 3), x in the highest bit of each triple
    (NumPy or CuPy, as given)."""
    return (_spread(cells[:, 0]) << np.uint64(2)) | (_spread(cells[:, 1]) << np.uint64(1)) | _spread(cells[:, 2])


@dataclass(frozen=True, eq=False)
class Level:
    """Boxes of one level: integer coordinates (n, 3), point ranges [start, stop) in sorted order for
    sources and targets, leaf flags, parent (index into the level above) and children (n, 8), -1 if none."""

    coords: np.ndarray
    src_range: np.ndarray
    tgt_range: np.ndarray
    leaf: np.ndarray
    parent: np.ndarray
    children: np.ndarray = field(default=None)

    @property
    def n_boxes(self) -> int:
        return len(self.coords)


@dataclass(frozen=True, eq=False)
class Octree:
    """The tree: root cube (corner, side in the points' unit), sorted permutations of sources and
    targets, levels, and per level the M2L pairs (target box, source box, offset index) and the
    near pairs (target box, source box) whose subtrees interact directly; separation: the near criterion
    (boxes at most that many boxes apart along every axis)."""

    corner: np.ndarray
    side: float
    src_order: np.ndarray
    tgt_order: np.ndarray
    levels: list
    m2l: list
    near: list
    leaf_size: int
    separation: int = 1

    def box_side(self, level: int) -> float:
        return self.side / 2 ** level

    def centres(self, level: int) -> np.ndarray:
        return self.xp.asarray(self.corner) + (self.levels[level].coords + 0.5) * self.box_side(level)

    @property
    def xp(self):
        """The array module holding the tree's arrays (NumPy, or CuPy for a tree built on the GPU)."""
        return array_module(self.src_order)

    def stats(self) -> dict:
        xp = self.xp
        per_box = [xp.bincount(t, minlength=lv.n_boxes) for (t, _, _), lv in zip(self.m2l, self.levels) if len(t)]
        return {"levels": len(self.levels), "boxes": [lv.n_boxes for lv in self.levels],
                "leaves": int(sum(int(lv.leaf.sum()) for lv in self.levels)),
                "m2l_pairs": int(sum(len(t) for t, _, _ in self.m2l)),
                "max_m2l_per_box": int(max((int(c.max()) for c in per_box if len(c)), default=0)),
                "near_pairs": int(sum(len(t) for t, _ in self.near))}

    def on_host(self) -> "Octree":
        """This tree with every array in host memory (itself if it is there already)."""
        if self.xp is np:
            return self
        levels = [Level(*(to_host(a) for a in (lv.coords, lv.src_range, lv.tgt_range, lv.leaf, lv.parent,
                                               lv.children))) for lv in self.levels]
        pairs = lambda rows: [tuple(to_host(a) for a in row) for row in rows]  # noqa: E731
        return Octree(self.corner, self.side, to_host(self.src_order), to_host(self.tgt_order), levels,
                      pairs(self.m2l), pairs(self.near), self.leaf_size, self.separation)


def build_octree(sources, targets, leaf_size: int = 32, max_level: int = 20, root_pad: float = ROOT_PAD,
                 separation: int = 1, xp=np) -> Octree:
    """The adaptive octree of sources (n_s, 3) and targets (n_t, 3); root_pad: the root cube's margin (a
    fraction of its side on each end, shifted by ROOT_SHIFT); 0 gives the points' bounding cube, centred;
    separation: 1 or 2, the boxes apart (along some axis) beyond which two boxes interact by M2L; xp: the
    array module that builds and holds the tree (NumPy: points in host memory; CuPy: in either memory)."""
    if leaf_size < 1:
        raise ProblemError(f"leaf_size must be at least 1, got {leaf_size}")
    if separation not in SEPARATIONS:
        raise ProblemError(f"the FMM separation must be 1 or 2 boxes, got {separation}")
    sources, targets = xp.asarray(sources, dtype=xp.float64), xp.asarray(targets, dtype=xp.float64)
    allp = xp.concatenate([sources, targets])
    if not bool(xp.isfinite(allp).all()):
        raise ProblemError("source or target coordinates contain NaN or infinite values")
    lo, hi = to_host(allp.min(axis=0)), to_host(allp.max(axis=0))
    side = float((hi - lo).max()) * (1 + 1e-9 + 2 * root_pad) or 1.0
    corner = (lo + hi) / 2 - side / 2 + (side - (hi - lo)) / 2 * ROOT_SHIFT * (root_pad > 0)
    scale, origin = 2 ** BITS / side, xp.asarray(corner)
    cells = lambda x: xp.clip(((x - origin) * scale).astype(xp.int64), 0, 2 ** BITS - 1)  # noqa: E731
    src_keys, tgt_keys = morton(cells(sources)), morton(cells(targets))
    src_order, tgt_order = stable_argsort(src_keys), stable_argsort(tgt_keys)
    levels = _levels(src_keys[src_order], tgt_keys[tgt_order], leaf_size, max_level, xp)
    m2l, near = _interactions(levels, separation, xp)
    return Octree(corner, side, src_order, tgt_order, levels, m2l, near, leaf_size, separation)


def stable_argsort(keys):
    """The stable sorting permutation of a NumPy or CuPy array (CuPy's sort is a stable radix sort and takes
    no kind)."""
    return np.argsort(keys, kind="stable") if isinstance(keys, np.ndarray) else keys.argsort()


def _levels(src_keys, tgt_keys, leaf_size: int, max_level: int, xp) -> list:
    """The levels of the tree over sorted Morton keys: a box splits while it holds more than leaf_size points
    and is above max_level; children holding no point are dropped."""

    def count(prefixes, level: int):  # ranges [start, stop) of boxes given by their key prefixes at a level
        shift = np.uint64(3 * (BITS - level))
        lo, hi = prefixes << shift, (prefixes << shift) + (np.uint64(1) << shift)
        return (xp.stack([xp.searchsorted(src_keys, lo), xp.searchsorted(src_keys, hi)], 1),
                xp.stack([xp.searchsorted(tgt_keys, lo), xp.searchsorted(tgt_keys, hi)], 1))

    levels: list[Level] = []
    boxes, parent = xp.zeros(1, dtype=xp.uint64), xp.full(1, -1, dtype=xp.int64)
    for level in range(max_level + 1):
        s_rng, t_rng = count(boxes, level)
        leaf = ((s_rng[:, 1] - s_rng[:, 0]) + (t_rng[:, 1] - t_rng[:, 0]) <= leaf_size) | (level == max_level)
        levels.append(Level(_decode(boxes, level, xp), s_rng, t_rng, leaf, parent))
        split = xp.flatnonzero(~leaf)
        if not len(split):
            break
        child = ((boxes[split][:, None] << np.uint64(3)) | xp.arange(8, dtype=xp.uint64)).reshape(-1)
        c_src, c_tgt = count(child, level + 1)
        keep = (c_src[:, 1] > c_src[:, 0]) | (c_tgt[:, 1] > c_tgt[:, 0])
        boxes, parent = child[keep], xp.repeat(split, 8)[keep]
    return [_with_children(lv, levels[i + 1] if i + 1 < len(levels) else None, xp) for i, lv in enumerate(levels)]


def _decode(keys, level: int, xp):
    out = xp.zeros((len(keys), 3), dtype=xp.int64)
    for bit in range(level):
        for axis in range(3):
            out[:, axis] |= ((keys >> np.uint64(3 * bit + 2 - axis)) & np.uint64(1)).astype(xp.int64) << bit
    return out


def _with_children(level: Level, below: Level | None, xp) -> Level:
    children = xp.full((level.n_boxes, 8), -1, dtype=xp.int64)
    if below is not None and below.n_boxes:
        octant = (below.coords[:, 0] % 2) * 4 + (below.coords[:, 1] % 2) * 2 + below.coords[:, 2] % 2
        children[below.parent, octant] = xp.arange(below.n_boxes)
    return Level(level.coords, level.src_range, level.tgt_range, level.leaf, level.parent, children)


def reach(separation: int) -> int:
    """The largest offset (boxes, along an axis) of an M2L pair: children of near parents."""
    return 2 * separation + 1


def offset_index(delta: np.ndarray, separation: int = 1) -> np.ndarray:
    """Index (dx + R) W^2 + (dy + R) W + dz + R of integer offsets in -R..R (n, 3), R = reach(separation),
    W = 2 R + 1 (for separation 1: (dx + 3) * 49 + (dy + 3) * 7 + dz + 3)."""
    r = reach(separation)
    w = 2 * r + 1
    return (delta[:, 0] + r) * w * w + (delta[:, 1] + r) * w + delta[:, 2] + r


def _interactions(levels: list[Level], separation: int, xp):
    m2l = [(xp.zeros(0, xp.int64),) * 3]
    near = []
    pairs = xp.zeros((1, 2), dtype=xp.int64)  # adjacent (target box, source box) pairs of this level
    split_pairs = _children_pairs if xp is np else _children_pairs_arrays
    for lv_index, lv in enumerate(levels):
        a, c = pairs[:, 0], pairs[:, 1]
        stop = lv.leaf[a] | lv.leaf[c]
        near.append((a[stop], c[stop]))
        a, c = a[~stop], c[~stop]
        if lv_index + 1 == len(levels):
            break
        below = levels[lv_index + 1]
        far_t, far_s, far_off, adj_t, adj_s = split_pairs(lv.children[a], lv.children[c], below.coords, separation)
        m2l.append((far_t, far_s, far_off))
        pairs = xp.stack([adj_t, adj_s], axis=1)
    return m2l, near


CHUNK_PAIRS = 1 << 17  # parent pairs split at once by _children_pairs_arrays (64 child pairs each)


def _children_pairs_arrays(children_a, children_c, coords, separation):
    """_children_pairs by array operations (NumPy or CuPy), in the same order: parent pair, then the target
    child's octant, then the source child's; in chunks of CHUNK_PAIRS parent pairs."""
    xp, r = array_module(coords), 2 * separation + 1
    w = 2 * r + 1
    parts = []
    for i in range(0, len(children_a), CHUNK_PAIRS):
        a, c = children_a[i:i + CHUNK_PAIRS], children_c[i:i + CHUNK_PAIRS]
        ca = xp.broadcast_to(a[:, :, None], (len(a), 8, 8))
        cc = xp.broadcast_to(c[:, None, :], ca.shape)
        valid = (ca >= 0) & (cc >= 0)
        ca, cc = ca[valid], cc[valid]
        d = coords[cc] - coords[ca]
        far = xp.abs(d).max(axis=1) > separation
        off = (d[:, 0] + r) * w * w + (d[:, 1] + r) * w + d[:, 2] + r
        parts.append((ca[far], cc[far], off[far], ca[~far], cc[~far]))
    if not parts:
        empty = xp.zeros(0, dtype=xp.int64)
        return (empty,) * 5
    return tuple(xp.concatenate([part[k] for part in parts]) for k in range(5))


@numba.njit(parallel=True, cache=True)
def _children_pairs(children_a, children_c, coords, separation):  # pragma: no cover - compiled
    """Children pairs of near, split (target, source) box pairs: well separated ones (with their offset
    index, offset_index) and near ones. Two passes: count per parent pair, then fill."""
    r = 2 * separation + 1
    w = 2 * r + 1
    k = children_a.shape[0]
    n_far = np.zeros(k + 1, dtype=np.int64)
    n_adj = np.zeros(k + 1, dtype=np.int64)
    for i in numba.prange(k):
        for u in range(8):
            ca = children_a[i, u]
            if ca < 0:
                continue
            for v in range(8):
                cc = children_c[i, v]
                if cc < 0:
                    continue
                d = max(abs(coords[cc, 0] - coords[ca, 0]), abs(coords[cc, 1] - coords[ca, 1]),
                        abs(coords[cc, 2] - coords[ca, 2]))
                if d <= separation:
                    n_adj[i + 1] += 1
                else:
                    n_far[i + 1] += 1
    far_start, adj_start = np.cumsum(n_far), np.cumsum(n_adj)
    far_t = np.empty(far_start[-1], dtype=np.int64)
    far_s = np.empty(far_start[-1], dtype=np.int64)
    far_off = np.empty(far_start[-1], dtype=np.int64)
    adj_t = np.empty(adj_start[-1], dtype=np.int64)
    adj_s = np.empty(adj_start[-1], dtype=np.int64)
    for i in numba.prange(k):
        f, j = far_start[i], adj_start[i]
        for u in range(8):
            ca = children_a[i, u]
            if ca < 0:
                continue
            for v in range(8):
                cc = children_c[i, v]
                if cc < 0:
                    continue
                dx = coords[cc, 0] - coords[ca, 0]
                dy = coords[cc, 1] - coords[ca, 1]
                dz = coords[cc, 2] - coords[ca, 2]
                if max(abs(dx), abs(dy), abs(dz)) <= separation:
                    adj_t[j], adj_s[j] = ca, cc
                    j += 1
                else:
                    far_t[f], far_s[f] = ca, cc
                    far_off[f] = (dx + r) * w * w + (dy + r) * w + dz + r
                    f += 1
    return far_t, far_s, far_off, adj_t, adj_s
