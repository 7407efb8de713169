"""Dense collocation matrices of the displacement boundary integral equation on linear triangles.

Collocation at the N mesh nodes; displacements linear and continuous (nodal), tractions linear per element
(element node a, so they may jump across edges; unknown ones at the slots of an UnknownLayout, with
double nodes at sharp edges). For collocation point p and element e:
    h[p, e, l, k, a] = int_e T_lk(y - x_p) phi_a dS,   g[p, e, l, k, a] = int_e U_lk(y - x_p) phi_a dS.
Far pairs use a degree-6 rule, near pairs that rule on 4, 16 or 64 sub-triangles (by distance over
element size), pairs with x_p a vertex of e a Duffy-collapsed Gauss rule, a shifted point's own element split
at the point into three such triangles. The free term plus Cauchy principal value at a collocation point comes
from rigid-body translation: minus the sum of the row's other T integrals, times u there."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import array_module
from ..quadrature import dunavant
from .kelvin import kelvin_t, kelvin_u
from .scatter import blocks_onto_columns, node_columns

NEAR_RATIOS = (4.0, 2.0, 1.0)  # centroid distance / longest edge below which 1, 2, 3 subdivision levels apply
DUFFY_POINTS = 8  # Gauss points per direction on the collapsed square
INTERIOR_DUFFY_POINTS = 16  # the same on the six pieces around a shifted collocation point
CHUNK_BYTES = 64 << 20  # scratch per block of collocation points


@dataclass(frozen=True, eq=False)
class Elements:
    """Geometry of M flat triangles: corners (M, 3, 3) m, unit outward normals (M, 3), areas (M,) m^2, longest
    edges (M,) m and centroids (M, 3) m."""

    corners: np.ndarray
    normals: np.ndarray
    areas: np.ndarray
    sizes: np.ndarray
    centroids: np.ndarray


def elements_of(points: np.ndarray, triangles: np.ndarray) -> Elements:
    corners = points[triangles]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    doubled = np.linalg.norm(cross, axis=1)
    edges = np.linalg.norm(corners - np.roll(corners, -1, axis=1), axis=2).max(axis=1)
    return Elements(corners, cross / doubled[:, None], doubled / 2, edges, corners.mean(axis=1))


def subdivided_rule(level: int) -> tuple[np.ndarray, np.ndarray]:
    """Barycentric points (q 4^level, 3) and weights summing to 1 of the degree-6 rule on the reference
    triangle split level times into four."""
    rule = dunavant(6)
    tris = [np.eye(3)]
    for _ in range(level):
        split = []
        for t in tris:
            m = (t + np.roll(t, -1, axis=0)) / 2  # midpoints of edges 01, 12, 20
            split += [np.array([t[0], m[0], m[2]]), np.array([m[0], t[1], m[1]]),
                      np.array([m[2], m[1], t[2]]), np.array([m[0], m[1], m[2]])]
        tris = split
    points = np.concatenate([rule.points @ t for t in tris])
    return points, np.tile(rule.weights, len(tris)) / len(tris)


def duffy_rule(n: int = DUFFY_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Barycentric points (n^2, 3) and weights (sum 1) of the triangle collapsed onto vertex 0:
    y = v0 + xi ((v1 - v0) + eta (v2 - v1)), Jacobian 2 A xi."""
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = (x + 1) / 2, w / 2
    xi, eta = np.meshgrid(x, x, indexing="ij")
    ww = np.outer(w, w) * 2 * xi  # reference area 1/2 -> weights summing to 1
    bary = np.stack([1 - xi, xi * (1 - eta), xi * eta], axis=-1)
    return bary.reshape(-1, 3), ww.reshape(-1)


def _pair_integrals(x, el: Elements, pairs_p, pairs_e, bary, weights, mu, nu):
    """h, g (n_pairs, 3, 3, 3) for listed pairs (collocation row pairs_p of x, element pairs_e)."""
    y = np.einsum("qa,eak->eqk", bary, el.corners[pairs_e])
    r = y - x[pairs_p][:, None]
    w = weights[None, :] * el.areas[pairs_e][:, None]
    h = np.einsum("eqlk,eq,qa->elka", kelvin_t(r, el.normals[pairs_e][:, None], nu), w, bary)
    g = np.einsum("eqlk,eq,qa->elka", kelvin_u(r, mu, nu), w, bary)
    return h, g


def levels_of(ratio: np.ndarray) -> np.ndarray:
    """Subdivision level (0: the plain rule) for centroid distances over element sizes (any shape)."""
    level_of = np.zeros(np.shape(ratio), dtype=int)
    for level, limit in enumerate(NEAR_RATIOS, start=1):
        level_of[ratio < limit] = level
    return level_of


def pair_levels(el: Elements, x: np.ndarray) -> np.ndarray:
    """(P, M) subdivision level of each pair (x[p], element e)."""
    return levels_of(np.linalg.norm(el.centroids[None] - x[:, None], axis=2) / el.sizes[None])


def _rules(xp=np):
    """Stacked rules (start, count, bary, weights) as arrays of xp: subdivision levels 0..len(NEAR_RATIOS), then
    the Duffy rules (vertex, interior)."""
    if xp not in _RULES:
        from .pair_kernel import stacked_rules  # noqa: PLC0415

        rules = stacked_rules([subdivided_rule(lv) for lv in range(len(NEAR_RATIOS) + 1)]
                              + [duffy_rule(), duffy_rule(INTERIOR_DUFFY_POINTS)])
        _RULES[xp] = tuple(xp.asarray(a) for a in rules)
    return _RULES[xp]


_RULES = {}
DUFFY = len(NEAR_RATIOS) + 1  # the Duffy rule's index among _rules(), the interior Duffy rule's next


def plain_pair_integrals(x, el: Elements, p, e, mu, nu, rule=None):
    """h, g (n_pairs, 3, 3, 3) of pairs (x[p], element e) by one rule (bary, weights) for all, by default
    the plain degree-6 rule; NumPy arrays (Numba) or CuPy arrays (CUDA)."""
    from .pair_kernel import kernel_for, stacked_rules  # noqa: PLC0415

    xp = array_module(p)
    rules = _rules(xp) if rule is None else tuple(xp.asarray(a) for a in stacked_rules([rule]))
    return kernel_for(p)(x, el.corners, el.normals, el.areas, p, e, xp.zeros(len(p), dtype=np.int64), *rules,
                         mu, nu)


def accurate_pair_integrals(x, nodes, el: Elements, triangles, p, e, level, mu, nu, own=None, own_weights=None):
    """h, g (n_pairs, 3, 3, 3) of pairs (x[p], element e) at their subdivision level (n_pairs,), by the
    Duffy rule where nodes[p] is a vertex of e (its own T shape function left 0); nodes: the mesh node of
    each x, -1 for none; own (len(x),), own_weights (len(x), 3): the element holding x[p] in its interior
    (-1 for none) and x's barycentric weights there, integrated by interior_integrals. All NumPy arrays
    (Numba, parallel over pairs) or all CuPy arrays (CUDA); _pair_integrals is the specification."""
    from .pair_kernel import kernel_for  # noqa: PLC0415

    xp = array_module(p)
    vertex = triangles[e] == nodes[p][:, None]
    singular = vertex.any(axis=1)
    order = xp.tile(xp.arange(3), (len(p), 1))
    local = xp.argmax(vertex, axis=1)
    order[singular] = (local[singular][:, None] + xp.arange(3)[None]) % 3  # the collocation node first
    rule = xp.where(singular, DUFFY, level).astype(np.int64)
    h, g = kernel_for(p)(x, el.corners[e[:, None], order], el.normals[e], el.areas[e], p.astype(np.int64),
                         xp.arange(len(p), dtype=np.int64), rule, *_rules(xp), mu, nu)
    h[singular, :, :, 0] = 0.0  # the node's own shape function: rigid-body diagonal
    back = xp.argsort(order, axis=1)  # local shape index a of the original element
    h = xp.take_along_axis(h, back[:, None, None, :], axis=3)
    g = xp.take_along_axis(g, back[:, None, None, :], axis=3)
    if own is not None:
        inside = xp.flatnonzero(own[p] == e)
        if len(inside):
            h[inside], g[inside] = interior_integrals(x[p[inside]], el, e[inside], own_weights[p[inside]], mu, nu)
    return h, g


def interior_integrals(x, el: Elements, e, weights, mu, nu):
    """h, g (P, 3, 3, 3) of points x (P, 3) inside elements e (P,) at barycentric weights (P, 3): the element
    split at x into six triangles (x, a corner, an edge midpoint), each Duffy-collapsed onto x by the
    INTERIOR_DUFFY_POINTS rule (these pieces are wider and longer than an element at its own vertex). h
    integrates T (phi_a - phi_a(x)), weakly singular; the rest of the T term, c(x) u(x) + PV int T u(x), is
    the rigid-body part -sum(h) u(x). NumPy or CuPy arrays."""
    from .pair_kernel import kernel_for  # noqa: PLC0415

    xp = array_module(e)
    n = len(e)
    h, g = xp.zeros((n, 3, 3, 3)), xp.zeros((n, 3, 3, 3))
    rule = xp.full(n, DUFFY + 1, dtype=np.int64)
    idx = xp.arange(n, dtype=np.int64)
    eye = xp.eye(3)
    for i in range(3):
        j = (i + 1) % 3
        middle = (eye[i] + eye[j]) / 2
        for b1, b2 in ((eye[i], middle), (middle, eye[j])):  # the piece (x, b1, b2) in barycentric coordinates
            bary = xp.stack([weights, xp.broadcast_to(b1, (n, 3)), xp.broadcast_to(b2, (n, 3))], axis=1)
            corners = xp.einsum("pba,pak->pbk", bary, el.corners[e])
            area = el.areas[e] * xp.abs(xp.linalg.det(bary))
            hs, gs = kernel_for(e)(x, corners, el.normals[e], area, idx, idx, rule, *_rules(xp), mu, nu)
            g += xp.einsum("plkb,pba->plka", gs, bary)
            h += xp.einsum("plkb,pba->plka", hs[..., 1:], bary[:, 1:] - weights[:, None, :])
    return h, g


def collocation_integrals(points, triangles, x, nodes, own, own_weights, mu, nu):
    """h, g (P, M, 3, 3, 3) for collocation at x (P, 3), every pair by the plain rule through the pair kernel
    (Numba, parallel over pairs), the near and singular ones again by their accurate rules: nodes (P,) the
    mesh node at each point or -1; own,
    own_weights: the element holding a shifted point (-1 for none) and its barycentric weights there. The
    T integral of a node's own shape function over its elements is left 0, a shifted point's own element
    integrates T (phi_a - phi_a(x)): the rest belongs to the rigid-body term."""
    el = elements_of(points, triangles)
    pp, ee = (a.reshape(-1) for a in np.meshgrid(np.arange(len(x)), np.arange(len(triangles)), indexing="ij"))
    h, g = (a.reshape(len(x), len(triangles), 3, 3, 3) for a in plain_pair_integrals(x, el, pp, ee, mu, nu))
    level_of = pair_levels(el, x)
    singular = (triangles[None, :, :] == np.asarray(nodes)[:, None, None]).any(axis=2)
    singular[np.flatnonzero(own >= 0), own[own >= 0]] = True
    p, e = np.nonzero((level_of > 0) | singular)
    if len(p):
        h[p, e], g[p, e] = accurate_pair_integrals(x, nodes, el, triangles, p, e, level_of[p, e], mu, nu, own,
                                                   own_weights)
    return h, g


@dataclass(frozen=True, eq=False)
class Assembled:
    """For T = N + K collocation points (UnknownLayout): H (3T, 3N) with its rigid-body terms; G (3T, 3T): U
    integrals onto the traction slots of the components prescribed as displacements; b_t (3T,): U integrals
    of the known element tractions."""

    h: np.ndarray
    g: np.ndarray
    b_t: np.ndarray


def assemble(points, triangles, layout, displacement_type, traction, mu, nu, check=lambda: None) -> Assembled:
    """Dense H, G and b_t. layout: the UnknownLayout; displacement_type (M, 3) bool: component k of element e
    is a prescribed displacement (its traction an unknown slot); traction (M, 3, 3) Pa: known tractions at
    element node a, component k, where not displacement_type. check() runs before each chunk of rows (it
    raises to stop, e.g. RunControl.check)."""
    n, m = len(points), len(triangles)
    x, nodes, own, own_weights = layout.collocation(points, triangles)
    t = len(x)
    to_nodes = node_columns(triangles)
    disp = displacement_type.astype(float)  # a slot's column where component k is a prescribed displacement
    to_slots = (np.ascontiguousarray(layout.traction_node), disp)
    h_all = np.zeros((3 * t, 3 * n))
    g_all = np.zeros((3 * t, 3 * t))
    b_t = np.zeros(3 * t)
    known = traction * (1 - disp)[:, None, :]
    rows_per_chunk = max(1, CHUNK_BYTES // (m * 27 * 8 * 6))
    for start in range(0, t, rows_per_chunk):
        check()
        rows = np.arange(start, min(t, start + rows_per_chunk))
        h, g = collocation_integrals(points, triangles, x[rows], nodes[rows], own[rows], own_weights[rows], mu, nu)
        blocks_onto_columns(h, *to_nodes, h_all[3 * rows[0]:3 * rows[-1] + 3].reshape(len(rows), 3, n, 3))
        blocks_onto_columns(g, *to_slots, g_all[3 * rows[0]:3 * rows[-1] + 3].reshape(len(rows), 3, t, 3))
        b_t[3 * rows[0]:3 * rows[-1] + 3] = np.einsum("pelka,eak->pl", g, known).reshape(-1)
    blocks = h_all.reshape(t, 3, n, 3)
    rigid = -blocks.sum(axis=2)  # (T, 3, 3): c + PV int T, from rigid-body translation
    interp = layout.interpolation(triangles).tocoo()
    np.add.at(blocks, (interp.row, slice(None), interp.col, slice(None)), rigid[interp.row] * interp.data[:, None, None])
    return Assembled(h_all, g_all, b_t)


def traction_load(points, triangles, known_traction, mu, nu, pairs_per_chunk: int = 2_000_000) -> np.ndarray:
    """G t (3N,) of known element-node tractions (M, 3, 3) Pa, integrated as assemble() does (every node with
    every loaded element, subdivided by distance, Duffy at a vertex) without a dense matrix: assemble's
    b_t, in memory and time proportional to the nodes times the loaded elements."""
    n = len(points)
    el = elements_of(points, triangles)
    loaded = np.flatnonzero(np.abs(known_traction).reshape(len(triangles), -1).max(axis=1) > 0)
    out = np.zeros(3 * n)
    if not len(loaded):
        return out
    step = max(1, pairs_per_chunk // len(loaded))
    for start in range(0, n, step):
        rows = np.arange(start, min(n, start + step))
        p, e = np.repeat(rows, len(loaded)), np.tile(loaded, len(rows))
        level = levels_of(np.linalg.norm(el.centroids[e] - points[p], axis=1) / el.sizes[e])
        _, g = accurate_pair_integrals(points, np.arange(n), el, triangles, p, e, level, mu, nu)
        out[3 * start:3 * rows[-1] + 3] = np.einsum("plka,pak->pl", g, known_traction[e]).reshape(
            len(rows), len(loaded), 3).sum(axis=1).reshape(-1)
    return out
