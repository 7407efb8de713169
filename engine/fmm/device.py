"""The FMM's passes on the GPU through the kernels of kernels/fmm.cu (gpu_m2l.py launches them): fused P2M and
L2P at the leaves, M2M, L2L and the list M2L by the tiled list kernel, the near field one block per target leaf."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..backend import to_host
from ..errors import ProblemError
from .gpu_m2l import l2p_gpu, m2l_tiles_gpu, p2m_gpu, p2p_gpu
from .plan import TILE_SLOTS, FmmPlan, Resident, TileWork, by_tile, octants, resident_arrays


DEVICE_TABLE_BYTES = 1 << 30  # translation tables kept on the device between plans, the most recent first, up
# to this many bytes in all (one table is kept whatever its size: 613 MB at p = 14 with separation 2)
_device_tables: OrderedDict = OrderedDict()


def _evict(device: int) -> None:
    """Drop a device's least recently used tables until its tables hold DEVICE_TABLE_BYTES or fewer (its newest
    one stays whatever its size)."""
    while True:
        mine = [k for k in _device_tables if k[1] == device]
        if len(mine) <= 1 or sum(_device_tables[k].nbytes for k in mine) <= DEVICE_TABLE_BYTES:
            return
        del _device_tables[mine[0]]


def _most_segments(tile_segments) -> int:
    """The most segments one tile has (TileWork.most_segments), from by_tile's tile_segments."""
    segments = tile_segments[1:] - tile_segments[:-1]
    return int(segments.max()) if len(segments) else 1


class DevicePasses:
    """The passes of an FMM application on CuPy (Backend "cupy")."""

    def __init__(self, xp):
        self.xp = xp
        self.table_bytes = {}  # bytes of each cached table handed to this plan, by key

    def table(self, table, key=None):
        """A translation table (n, 2P, 2P), or a function making it, in the form the list kernel reads: on the
        device, the last two axes swapped. key: a name for the table (its kind, order and separation): the
        device copy is kept for the next plan that asks for it (per device, DEVICE_TABLE_BYTES in all), and
        the function is not called again."""
        cache_key = None if key is None else (key, self.xp.cuda.Device().id)
        if cache_key in _device_tables:
            _device_tables.move_to_end(cache_key)
            out = _device_tables[cache_key]
        else:
            out = self.xp.ascontiguousarray(self.xp.asarray(table() if callable(table) else table).transpose(0, 2, 1))
            if cache_key is not None:
                _device_tables[cache_key] = out
                _evict(cache_key[1])
        if cache_key is not None:  # a table without a key is the plan's own allocation, in its memory anyway
            self.table_bytes[cache_key] = out.nbytes
        return out

    def lists(self, tgt, src, off, table, key=None) -> TileWork:
        """The translations dest[tgt] += table[off] @ source[src] (equal-length int arrays, on the host or the
        device) as tiles of target boxes for the tiled kernel (plan.by_tile), ranked by key (per pair; default
        the target): targets sharing their tables should rank close; table already in the kernel's form."""
        xp = self.xp
        arrays = by_tile(*(xp.asarray(a) for a in (tgt, src, off)), key=None if key is None else xp.asarray(key))
        return TileWork(*arrays, table, _most_segments(arrays[1]))

    def run_lists(self, source, dest, work: TileWork) -> None:
        m2l_tiles_gpu(source, dest, work)

    def families(self, plan: FmmPlan) -> list:
        """(M2M, L2L) of each level as list work: children onto their parents, parents onto the children;
        offset: the octant; () at the root. Planned for all levels at once (by_tile's groups: the levels), each
        level's work a slice of the same tiles."""
        xp, levels = self.xp, range(1, len(plan.tree.levels))
        if not levels:
            return [()]
        octant, parents, children = (xp.concatenate([xp.asarray(a) for a in parts]) for parts in zip(
            *(octants(plan, level) for level in levels)))
        level = xp.concatenate([xp.full(plan.tree.levels[lv].n_boxes, lv, dtype=xp.int64) for lv in levels])
        same_octant = (8 * level + octant) * int(plan.box_offset[-1]) + children  # L2L: one table per tile
        up = self._per_level(plan, by_tile(parents, children, octant, group=level), self.table(plan.m2m), 1)
        down = self._per_level(plan, by_tile(children, parents, octant, same_octant, group=level),
                               self.table(plan.l2l), 0)
        return [()] + list(zip(up, down))

    def _per_level(self, plan: FmmPlan, arrays: tuple, table, above: int) -> list:
        """by_tile's arrays over the levels 1 .. L-1 as one TileWork per level: the tiles whose targets lie
        `above` levels above the family's level, slices of the same arrays."""
        xp, tile_target, tile_segments = self.xp, arrays[0], arrays[1]
        first = tile_target[::TILE_SLOTS]  # a tile's first slot is always filled
        tile_level = to_host(xp.searchsorted(xp.asarray(plan.box_offset), first, side="right") - 1 + above)
        bounds = np.searchsorted(tile_level, np.arange(1, len(plan.tree.levels) + 1))
        most = _most_segments(tile_segments)
        return [TileWork(tile_target[a * TILE_SLOTS:b * TILE_SLOTS], tile_segments[a:b + 1], *arrays[2:], table, most)
                for a, b in zip(bounds[:-1], bounds[1:])]

    def resident(self, plan: FmmPlan) -> Resident:
        xp = self.xp
        starts, pair_leaf, first, stop = plan.near_csr
        leaves = plan.tgt_leaves
        tgt_stop = leaves.start + (leaves.index >= 0).sum(axis=1)
        near = tuple(xp.ascontiguousarray(xp.asarray(a, dtype=xp.int64))  # from the host or the device
                     for a in (leaves.start, tgt_stop, starts, pair_leaf, first, stop))
        return resident_arrays(plan, lambda leaves: (xp.asarray(leaves.index), None), near)

    def p2m(self, plan: FmmPlan, res: Resident, q, d, multipole) -> None:
        leaf = res.src_leaf
        p2m_gpu(res.src, q, d, leaf.slots, leaf.centre, leaf.side, leaf.gid, plan.order, multipole)

    def m2m(self, plan: FmmPlan, level: int, multipole) -> None:
        self.run_lists(multipole, multipole, plan.families[level][0])  # parents and children are distinct rows

    def l2l(self, plan: FmmPlan, level: int, local) -> None:
        self.run_lists(local, local, plan.families[level][1])

    def l2p(self, plan: FmmPlan, res: Resident, local, phi, grad) -> None:
        leaf = res.tgt_leaf
        l2p_gpu(res.tgt, local, leaf.slots, leaf.centre, leaf.side, leaf.gid, plan.order, phi, grad)

    def p2p(self, plan: FmmPlan, res: Resident, q, d, phi, grad, reference: bool = False) -> None:
        """Adds the near field into phi and grad (or None); the reference P2P is the host's only."""
        if reference:
            raise ProblemError("the reference P2P runs on the host (backend numpy) only")
        p2p_gpu(res.tgt, res.src, q, d, *res.near, phi, grad)
