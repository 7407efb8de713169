"""The boundary element operator applied through the Laplace fast multipole engine (engine/fmm).

Far field: every element's quadrature points (Dunavant, 3 by default) are FMM sources, the nodes its targets. With
r = y - x, Phi[q] = sum q / r and Psi[d] = -sum d . r / r^3 (the engine's charge and dipole potentials,
derivatives taken at the target x), H u - G t at node x is, per component l,
    V_l + d_l Z - x_m d_l W_m,
    V_l = -(3 - 4 nu) C_U Phi[t_l] + C_T Psi[(1 - 2 nu) u_l n + 2 (1 - nu) n_l u],
    W_m = -C_U Phi[t_m] + C_T Psi[u_m n],
    Z   = C_T (1 - 2 nu) Phi[n . u] - C_U Phi[y . t] + C_T Psi[(y . u) n],
C_U = 1 / (16 pi mu (1 - nu)), C_T = 1 / (8 pi (1 - nu)): seven densities, potential and gradient, in one
FMM application. The targets are the collocation points of an UnknownLayout: the nodes, then the points of
the extra traction nodes at sharp edges. Near field: where a target lies within CORRECTION_RATIO element sizes
of an element's centroid (or is its vertex, or lies inside it) the plain-rule part is replaced by the accurate
integral (sub-triangles, Duffy), as sparse corrections onto nodes (displacements) and traction slots; the
rigid-body terms come from three FMM applications of unit translations."""

from __future__ import annotations

import time
from dataclasses import fields

import numpy as np

from ..fmm.fmm import LaplaceFMM
from ..quadrature import dunavant
from ..truncation.surfaces import POINTS_TO_DEGREE
from ..backend import DeviceMemory, array_module, to_host
from .assembly import Elements, accurate_pair_integrals, elements_of, levels_of, plain_pair_integrals
from .block_sparse import BlockFiller
from .far_densities import N_DENSITIES, far_densities
from .near_pairs import near_pairs

CORRECTION_RATIO = 3.0  # centroid distance / element size below which the near correction applies
FAR_POINTS = 3  # FMM sources per element: with the near field out to 3 sizes as accurate as 12 out to 2
FINE_FAR_POINTS, FINE_FROM_ORDER = 6, 10  # from p = 10 the 3-point rule, not the FMM, limits the solve
PATTERN_CHUNKS = 8  # chunks of pairs whose blocks' pattern is listed at once (no integrals: little scratch)
PAIR_CHUNK = 32_000  # near pairs integrated per block (their scratch, about 3 KB a pair, goes between blocks)


def far_points_for(order: int) -> int:
    """The far-field rule (points per element) that keeps the quadrature below the FMM's own error at
    multipole order p: 3 points hold the solve near 3e-5 on the bracket, which p = 8 (1.5e-5) does not
    reach past but p = 10 does (6 points: 6.9e-7 there against 3.0e-5; docs/studies/fmbem.md)."""
    return FINE_FAR_POINTS if order >= FINE_FROM_ORDER else FAR_POINTS


class FmmBemOperator:
    """The mixed problem's system A x (3T,) at the T = N + K collocation points of layout (an UnknownLayout) for
    the unknowns x (T, 3): a node's displacement where it is unknown, else the traction slot's t / mu (as in
    the direct solve), identity at idle slots. displacement_type (M, 3) bool: the components an element
    prescribes as displacements; known_traction (M, 3, 3) Pa and known_displacement (N, 3) m (None: zero): the
    prescribed data, read where prescribed (known_part); far_points: the FMM sources per element (a Dunavant
    rule of 1, 3, 6, 7 or 12 points); correction_ratio: how far out (centroid distance over element size) the
    near field replaces that rule; precondition_ratio: how far out the preconditioner's matrix reaches (None:
    as far as the corrections; at least 1, so that a target's own elements are in it), pairs beyond the
    corrections entering it by the plain rule; far_passes: the FMM applications a far-field product takes, its
    seven densities split into that many ranges (1 to 7; more passes hold fewer densities and expansions at
    once: less memory, more time); fp32_tables: the FMM's same-level M2L table in FP32 (LaplaceFMM).
    The near field is kept once, in the unknowns' columns: `correction` (3T, 3T), accurate minus plain rule,
    used by every product, and `near` (3T, 3T), the near blocks themselves with the rigid-body terms and the
    idle slots' identity, the preconditioner's matrix (values of near_dtype: float32 where the preconditioner
    is single precision) until take_near() hands it over; the prescribed data's corrections are summed
    into known_correction (3T,) as the pairs are integrated. memory: a DeviceMemory whose phases the set-up
    marks (its own one, not counting, if none is given). separation: the FMM's (LaplaceFMM), 1 or 2."""

    def __init__(self, points, triangles, layout, displacement_type, known_traction, mu, nu, order=8,
                 leaf_size=None, m2l="auto", backend="numpy", far_points=FAR_POINTS,
                 correction_ratio=CORRECTION_RATIO, memory: DeviceMemory | None = None, exponential_nodes=17,
                 separation=1, precondition_ratio=None, known_displacement=None, near_dtype=np.float64,
                 far_passes=1, fp32_tables=False):
        self.centre = points.mean(axis=0)
        self.points = points - self.centre  # shifted: the x_m d_l W_m term cancels less
        self.triangles = triangles
        self.layout = layout
        self.targets, self.target_node, self.own, self.own_weights = layout.collocation(self.points, triangles)
        self.mu, self.nu = mu, nu
        self.n = len(points)
        self.el = elements_of(self.points, triangles)
        rule = dunavant(POINTS_TO_DEGREE[far_points])
        self.bary, w = rule.points, rule.weights
        self.correction_ratio = correction_ratio
        self.near_reach = correction_ratio if precondition_ratio is None else precondition_ratio
        if self.near_reach < 1.0:
            raise ValueError(f"the preconditioner's reach {self.near_reach} is under 1 element size")
        self.reach = max(correction_ratio, self.near_reach)
        self.near_dtype = near_dtype
        if not 1 <= far_passes <= N_DENSITIES:
            raise ValueError(f"the far field takes 1 to {N_DENSITIES} FMM passes, got {far_passes}")
        self.passes = [range(int(r[0]), int(r[-1]) + 1) for r in np.array_split(range(N_DENSITIES), far_passes)]
        self.src = np.einsum("qa,eak->eqk", self.bary, self.el.corners).reshape(-1, 3)
        self.src_w0 = w
        self.src_w = (w[None] * self.el.areas[:, None]).reshape(-1)
        self.src_n = np.repeat(self.el.normals, len(w), axis=0)
        t0 = time.perf_counter()
        self.fmm = LaplaceFMM(self.src, self.targets, order=order, leaf_size=leaf_size, m2l=m2l, backend=backend,
                              exponential_nodes=exponential_nodes, separation=separation, fp32_tables=fp32_tables)
        fmm_setup = time.perf_counter() - t0
        self.xp = self.fmm.xp
        self.memory = DeviceMemory(self.xp) if memory is None else memory
        self.disp = np.asarray(displacement_type, dtype=bool)
        self.t_known = known_traction * ~self.disp[:, None, :]
        self.u_known = np.zeros((self.n, 3)) if known_displacement is None else np.where(
            layout.displacement, 0.0, known_displacement)
        t0 = time.perf_counter()
        self._to_device()
        far_rows = self._unit_translations()
        self.memory.mark("FMM set-up")
        self.timings = {"far_setup": fmm_setup + time.perf_counter() - t0}
        t0 = time.perf_counter()
        self._near(far_rows)
        self.timings["near_setup"] = time.perf_counter() - t0

    # ---------------------------------------------------------------- near field
    def _near(self, far_rows):
        """The near-field pairs (listed on the host, sorted by target so that chunks end at a row boundary),
        their integrals and block sums where the FMM runs (Numba on the host, CUDA on the GPU): the
        correction and near matrices, known_correction and the rigid-body diagonal (T, 3, 3) from the plain
        rule's unit translations far_rows (_unit_translations) and the corrections' row sums. The matrices'
        patterns are listed first, PATTERN_CHUNKS chunks at a time, so that each chunk's blocks are written into
        place (BlockFiller): the set-up holds the matrices and one chunk's scratch."""
        el, xp, t = self.el, self.xp, len(self.targets)
        p, e, distance = near_pairs(self.targets, self.target_node, self.triangles, el.centroids, el.sizes,
                                    self.reach)
        relative = distance / el.sizes[e]
        el_x = el if xp is np else Elements(*(xp.asarray(getattr(el, f.name)) for f in fields(Elements)))
        geometry = [xp.asarray(a) for a in (self.target_node, self.own, self.own_weights)]
        self.known_correction, self.dev["diag"] = xp.zeros(3 * t), far_rows
        bounds = np.unique(np.searchsorted(p, p[np.r_[0:len(p):PAIR_CHUNK]], side="left").tolist() + [len(p)])
        first_rows = [0, *p[bounds[1:-1]].tolist(), t]  # the chunks' rows cover every target, pairs or not
        chunks = [(slice(lo, hi), slice(first_rows[i], first_rows[i + 1]))
                  for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:]))]
        wide = [(slice(group[0][0].start, group[-1][0].stop), slice(group[0][1].start, group[-1][1].stop))
                for group in (chunks[g:g + PATTERN_CHUNKS] for g in range(0, len(chunks), PATTERN_CHUNKS))]
        # (the blocks of consecutive chunks, sorted by row then column, come in the order of theirs)
        patterns = zip(*(self._chunk_pattern(p[k], e[k], relative[k], rows) for k, rows in wide))
        fillers = [BlockFiller(xp.concatenate([r for r, _ in pattern]), xp.concatenate([c for _, c in pattern]),
                               t, dtype) for pattern, dtype in
                   zip(patterns, (np.float64, self.near_dtype))]
        del patterns  # (it holds the groups' pieces)
        self.memory.mark("near-field pattern")
        for k, rows in chunks:
            for filler, blocks in zip(fillers, self._near_chunk(p[k], e[k], relative[k], rows, el_x, *geometry)):
                filler.write(blocks)
        self.known_correction = to_host(self.known_correction)
        self.correction, self.near = (filler.matrix() for filler in fillers)
        self.memory.mark("near-field integrals")
        self.near_pairs = len(p)

    def _picks(self, relative):
        """(correction's, near's) pairs of a chunk (index arrays; None: all) from their centroid distances over
        element size: the corrections within correction_ratio, the near matrix within near_reach."""
        if self.reach == self.correction_ratio:  # every listed pair corrected (vertex and own pairs lie within
            # 2/3 of an element size of its centroid, so a ratio of 1 or more keeps them)
            return None, None if self.near_reach == self.reach else np.flatnonzero(relative < self.near_reach)
        return np.flatnonzero(relative < self.correction_ratio), None

    def _chunk_pattern(self, p, e, relative, rows: slice):
        """The block rows and columns (int32) of a chunk's correction and near blocks (as _near_chunk sums them)."""
        xp, fixed = self.xp, self._rigid_and_idle(rows)
        pp, ee = xp.asarray(p), xp.asarray(e)
        out = []
        for pick, with_fixed in zip(self._picks(relative), (False, True)):
            sel = slice(None) if pick is None else xp.asarray(pick)
            r, c, _ = self.system_blocks(pp[sel], ee[sel], fixed=(fixed, ()) if with_fixed else None)
            out.append((r.astype(xp.int32), c.astype(xp.int32)))
        return out

    def _near_chunk(self, p, e, relative, rows: slice, el_x, node, own, own_weights):
        """One chunk of near pairs (rows p, elements e, host arrays ending at a row boundary, relative: their
        centroid distances over element size; rows: the targets whose pairs are all here): the correction's and
        near blocks (B, 3, 3) in the unknowns' columns (system_blocks; the corrections from the pairs _picks
        gives, the near blocks from its pairs, those beyond the corrections by the plain rule, then in
        near_dtype); the prescribed data's corrections go into known_correction, the rows' rigid-body diagonal
        is made final. Its scratch goes when it returns."""
        xp, dev, t = self.xp, self.dev, len(self.targets)
        pp, ee = xp.asarray(p), xp.asarray(e)
        h_base, g_base = plain_pair_integrals(dev["x"], el_x, pp, ee, self.mu, self.nu, (self.bary, self.src_w0))
        pick, near_pick = self._picks(relative)
        if pick is None:
            h_acc, g_acc = self._accurate(pp, ee, relative, el_x, node, own, own_weights)
        else:  # pairs beyond correction_ratio keep the plain rule
            h_acc, g_acc = h_base.copy(), g_base.copy()
            sel = xp.asarray(pick)
            h_acc[sel], g_acc[sel] = self._accurate(pp[sel], ee[sel], relative[pick], el_x, node, own, own_weights)
        dh, dg = h_acc - h_base, g_acc - g_base
        del h_base, g_base
        known = (xp.einsum("plka,pak->pl", dg, dev["t_known"][ee])
                 - xp.einsum("plka,pak->pl", dh, dev["u_known"][dev["tri"][ee]]))
        self.known_correction += xp.bincount((3 * pp[:, None] + xp.arange(3)).reshape(-1), known.reshape(-1),
                                             minlength=3 * t)
        row_sums = xp.bincount((9 * (pp - rows.start)[:, None] + xp.arange(9)).reshape(-1),
                               dh.sum(axis=3).reshape(-1), minlength=9 * (rows.stop - rows.start))
        dev["diag"][rows] += row_sums.reshape(-1, 3, 3)
        dev["diag"][rows] *= -1.0
        unknown = dev["disp"][ee][:, None, :, None]  # traction component k unknown on this element
        sel = slice(None) if pick is None else xp.asarray(pick)
        correction = self.system_blocks(pp[sel], ee[sel], dh[sel], (dg * unknown)[sel])[2][0]
        del dh, dg
        sel = slice(None) if near_pick is None else xp.asarray(near_pick)
        near = self.system_blocks(pp[sel], ee[sel], h_acc[sel], (g_acc * unknown)[sel],
                                  fixed=(self._rigid_and_idle(rows), (1.0,)))[2][0]
        return correction, near.astype(self.near_dtype, copy=False)

    def _rigid_and_idle(self, rows: slice):
        """Pseudo pairs of the rigid-body terms and the idle slots' identity in the given rows, as system_blocks
        takes them: (rows, nodes (R, 3), h-like blocks (R, 3, 3, 3) on displacement unknowns, blocks on idle
        slots (R, 3, 3, 3)); the rigid-body diagonal of those rows must be final."""
        xp, dev = self.xp, self.dev
        r = xp.arange(rows.start, rows.stop)
        rigid = dev["diag"][rows][:, :, :, None] * dev["rigid_w"][r][:, None, None, :]
        idle = xp.zeros((len(r), 3, 3, 3))
        idle[:, :, :, 0] = xp.eye(3)[None] * (1.0 - dev["busy"][r])[:, :, None]  # at the target's own slot
        return r, dev["rigid_nodes"][r], rigid, idle

    def system_blocks(self, pp, ee, *hg, fixed=None):
        """h and g pair blocks (pairs, 3, 3, 3) [l, k, a] of rows pp and elements ee, given as h, g, h, g, ...,
        summed into 3x3 blocks of the unknowns' columns (node_blocks): each h on a node's displacement
        unknowns, each -mu g on a slot's traction unknowns, idle rows left out; fixed: (_rigid_and_idle's
        pseudo pairs, their weight in each output) adds the rigid-body terms and the idle identity."""
        xp, dev = self.xp, self.dev
        nodes, slots = dev["tri"][ee], dev["slot"][ee]
        row = dev["busy"][pp][:, :, None, None]
        on_u = dev["displacement"][nodes].transpose(0, 2, 1)[:, None] * row
        on_t = -self.mu * dev["traction"][slots, dev["component"]].transpose(0, 2, 1)[:, None] * row
        hs, gs = [h * on_u for h in hg[::2]], [g * on_t for g in hg[1::2]]
        p_t, slots_t, gs = _slot_pairs(pp, slots, *gs)
        rows, cols, outputs = [pp, p_t], [nodes, slots_t], [[h, g] for h, g in zip(hs, gs)]
        if fixed is not None:
            (r, r_nodes, rigid, idle), weights = fixed
            on_r = dev["displacement"][r_nodes].transpose(0, 2, 1)[:, None] * dev["busy"][r][:, :, None, None]
            rows, cols = rows + [r, r], cols + [r_nodes, xp.repeat(r[:, None], 3, axis=1)]
            outputs = [out + [weight * rigid * on_r, weight * idle] for out, weight in zip(outputs, weights)]
        return node_blocks(xp.concatenate(rows), xp.concatenate(cols), len(self.targets),
                           *(xp.concatenate(out) for out in outputs))

    def _accurate(self, pp, ee, relative_distance, el_x, node, own, own_weights):
        """Accurate h, g (pairs, 3, 3, 3) of pairs (pp, ee on the backend) at the subdivision level of their
        centroid distance over element size (host)."""
        level = self.xp.asarray(levels_of(relative_distance))
        return accurate_pair_integrals(self.dev["x"], node, el_x, self.dev["tri"], pp, ee, level, self.mu, self.nu,
                                       own, own_weights)

    # ---------------------------------------------------------------- far field
    def _to_device(self):
        """The geometry, the prescribed data and the unknowns' masks where the FMM runs (CuPy arrays on the GPU
        backend)."""
        xp, layout = self.xp, self.layout
        order = self.fmm.source_order  # the FMM's sources (element-major here) in its tree's order
        self.dev = {"q_source": xp.asarray(order.astype(np.int32)), "normal": xp.asarray(self.el.normals),
                    "area": xp.asarray(self.el.areas), "bary": xp.asarray(self.bary),
                    "rule_weight": xp.asarray(self.src_w0), "y": self.fmm.sorted_sources(),
                    "tri": xp.asarray(self.triangles, dtype=xp.int64), "x": xp.asarray(self.targets),
                    "disp": xp.asarray(self.disp), "slot": xp.asarray(layout.traction_node),
                    "component": xp.arange(3)[None, None, :], "t_known": xp.asarray(self.t_known),
                    "u_known": xp.asarray(self.u_known), "displacement": xp.asarray(layout.displacement),
                    "traction": xp.asarray(layout.traction), "idle": xp.asarray(layout.idle.reshape(-1)),
                    "busy": xp.asarray(~layout.idle)}
        n, extra = self.n, layout.extra_element  # the rigid-body terms' columns: a node's own, an extra
        # point's element nodes, with its barycentric weights
        self.dev["rigid_nodes"] = xp.asarray(np.r_[np.repeat(np.arange(n)[:, None], 3, axis=1),
                                                   self.triangles[extra].reshape(-1, 3)])
        self.dev["rigid_w"] = xp.asarray(np.r_[np.tile([1.0, 0.0, 0.0], (n, 1)), layout.extra_weights.reshape(-1, 3)])

    def far(self, u, t):
        """H u - G t (3T,) at the targets by the plain rule on every pair, through len(self.passes) FMM
        applications; u (N, 3) and t (M, 3, 3) arrays of the FMM's backend. Each pass's densities are written in
        the FMM's source order (far_densities): its scratch is little beyond those densities."""
        out = self.xp.zeros((len(self.targets), 3))
        for densities in self.passes:
            charges, dipoles = far_densities(self.xp, u, t, self.dev, self.mu, self.nu, densities)
            pot, grad = self.fmm.apply(charges=charges, dipoles=dipoles, gradient=densities.stop > 3,
                                       in_tree_order=True)
            del charges, dipoles
            self._add_far(out, pot, grad, densities)
        return out.reshape(-1)

    def _add_far(self, out, pot, grad, densities: range) -> None:
        """out (T, 3) += the far field of densities (far_densities): the potentials of 0..2 in their
        components, -x_k times the gradient of 3 + k, the gradient of 6."""
        for i, d in enumerate(densities):
            if d < 3:
                out[:, d] += pot[i]
            elif d < 6:
                out -= self.dev["x"][:, d - 3, None] * grad[i]
            else:
                out += grad[i]

    def _unit_translations(self):
        """(T, 3, 3) [target, l, k]: the plain rule's H of a unit translation in k (through the FMM), which
        with the corrections' row sums makes the rigid-body diagonal (_near_chunk)."""
        xp, t = self.xp, len(self.targets)
        rows = xp.empty((t, 3, 3))
        zero_t = xp.zeros((len(self.triangles), 3, 3))
        for k in range(3):
            u = xp.zeros((self.n, 3))
            u[:, k] = 1.0
            rows[:, :, k] = self.far(u, zero_t).reshape(t, 3)
        return rows

    def _rigid_part(self, u):
        """The rigid-body terms (3T,) of nodal displacements u (N, 3), an array of the backend."""
        return self.xp.einsum("nlk,nk->nl", self.dev["diag"], self.layout.at_targets(u, self.triangles)).reshape(-1)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """A x (3T,) for the unknowns x (T, 3) or (3T,): H u - G t in the rows of busy slots with u the
        displacement unknowns (m) and t = mu x at the traction unknowns, x itself at idle slots; an array of
        the FMM's module out (NumPy or CuPy; a host array in is moved)."""
        xp, dev = self.xp, self.dev
        x = xp.asarray(x).reshape(-1, 3)
        u = xp.where(dev["displacement"], x[: self.n], 0.0)
        slots = xp.where(dev["traction"], self.mu * x, 0.0)
        t = xp.where(dev["disp"][:, None, :], slots[dev["slot"], dev["component"]], 0.0)
        out = self.far(u, t) + self.correction @ x.reshape(-1) + self._rigid_part(u)
        return xp.where(dev["idle"], x.reshape(-1), out)

    def take_near(self):
        """The near matrix (3T, 3T), handed over once (to build the preconditioner): the operator keeps no
        reference, so its memory goes with the caller's."""
        near, self.near = self.near, None
        if near is None:
            raise RuntimeError("the near-field blocks were taken already")
        return near

    def known_part(self) -> np.ndarray:
        """b = G t_known - H u_known (3T,), zero at idle slots: the right-hand side from the prescribed data (host)."""
        u, t = self.dev["u_known"], self.dev["t_known"]
        b = self.known_correction - to_host(self.far(u, t) + self._rigid_part(u))  # far: H u - G t, plain rule
        return np.where(self.layout.idle.reshape(-1), 0.0, b)


def node_blocks(p, nodes, n, *pair_blocks):
    """Pair blocks (pairs, 3, 3, 3) [l, k, a] of rows p (pairs,) and element nodes (pairs, 3), summed
    into node-space 3x3 blocks: (rows, cols, [blocks (n_blocks, 3, 3) per input]) sorted by row then column;
    NumPy or CuPy arrays."""
    xp = array_module(p)
    key = (p[:, None] * n + nodes).reshape(-1)
    if xp is not np:
        unique, inverse = xp.unique(key, return_inverse=True)
        summed = [xp.zeros((len(unique), 3, 3)) for _ in pair_blocks]
        for out, b in zip(summed, pair_blocks):
            xp.add.at(out, inverse, b.transpose(0, 3, 1, 2).reshape(-1, 3, 3))
        return unique // n, unique % n, summed
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
    summed = [np.add.reduceat(b.transpose(0, 3, 1, 2).reshape(-1, 3, 3)[order], first, axis=0)
              for b in pair_blocks]
    return key[first] // n, key[first] % n, summed


def _slot_pairs(p, slots, *pair_blocks):
    """Pair blocks (pairs, 3, 3, 3) onto traction slots (pairs, 3 element nodes a, 3 components k) as
    node_blocks takes them, (rows, slots (pairs', 3), [blocks]): where a pair's slot depends on k (a double
    node of only some components), each component's column goes on its own."""
    xp = array_module(p)
    if bool((slots == slots[..., :1]).all()):
        return p, slots[..., 0], list(pair_blocks)
    one_k = xp.eye(3)[:, None, :, None]  # (k, l, k', a): keep component k
    split = [(b[:, None] * one_k).reshape(-1, 3, 3, 3) for b in pair_blocks]
    return xp.repeat(p, 3), slots.transpose(0, 2, 1).reshape(-1, 3), split
