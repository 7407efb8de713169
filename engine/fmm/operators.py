"""FMM operators of the Laplace kernel 1/|x - y| on expansions stored for m >= 0 (harmonics.py).

Translations are linear over the reals (negative orders enter through conjugates), so each one is a
real (2P, 2P) matrix acting on [Re c; Im c] of the P stored coefficients. The matrices are built here
from the translation theorems and are independent of the box size once expansions are scaled:
multipoles M_n h^-n, locals L_n h^(n+1) for boxes of side h.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .harmonics import degree_order, full_order, index, irregular, n_coefficients, regular


def _basis_inputs(p: int) -> np.ndarray:
    """All-order forms (2P, p+1, 2p+1) of the 2P real unit inputs: e_s and i e_s for each stored s."""
    count = n_coefficients(p)
    eye = np.eye(count, dtype=np.complex128)
    return full_order(np.concatenate([eye, 1j * eye]), p)


def _as_real(columns: np.ndarray) -> np.ndarray:
    """(n, P, 2P) complex images of the unit inputs -> (n, 2P, 2P) real matrices on [Re; Im]."""
    return np.concatenate([columns.real, columns.imag], axis=1)


def m2m_matrices(p: int, shifts: np.ndarray) -> np.ndarray:
    """Child multipole about c to parent multipole about c' for shifts c - c' (n, 3):
    M'_n^m = sum_{j <= n, k} M_j^k conj(R_{n-j}^{m-k}(c - c'))."""
    r_full = np.conj(full_order(regular(shifts, p), p))  # (n, p+1, 2p+1)
    inputs = _basis_inputs(p)
    deg, order = degree_order(p)
    out = np.zeros((len(shifts), len(deg), inputs.shape[0]), dtype=np.complex128)
    for t, (n, m) in enumerate(zip(deg, order)):
        for j in range(n + 1):
            k = np.arange(-j, j + 1)
            ok = np.abs(m - k) <= n - j
            coeff = r_full[:, n - j, p + m - k[ok]]  # (n_shifts, n_k)
            out[:, t] += coeff @ inputs[:, j, p + k[ok]].T
    return _as_real(out)


def l2l_matrices(p: int, shifts: np.ndarray) -> np.ndarray:
    """Parent local about t to child local about t' for shifts t' - t (n, 3):
    L'_n^m = sum_{j >= n, k} L_j^k R_{j-n}^{k-m}(t' - t)."""
    r_full = full_order(regular(shifts, p), p)
    inputs = _basis_inputs(p)
    deg, order = degree_order(p)
    out = np.zeros((len(shifts), len(deg), inputs.shape[0]), dtype=np.complex128)
    for t, (n, m) in enumerate(zip(deg, order)):
        for j in range(n, p + 1):
            k = np.arange(-j, j + 1)
            ok = np.abs(k - m) <= j - n
            out[:, t] += r_full[:, j - n, p + k[ok] - m] @ inputs[:, j, p + k[ok]].T
    return _as_real(out)


def m2l_matrices(p: int, shifts: np.ndarray) -> np.ndarray:
    """Multipole about c to local about t for shifts t - c (n, 3), |t - c| beyond both radii:
    L_n^m = sum_{j, k} M_j^k (-1)^(n+m) I_{j+n}^{k-m}(t - c)."""
    i_full = full_order(irregular(shifts, 2 * p), 2 * p)  # (n, 2p+1, 4p+1)
    inputs = _basis_inputs(p)
    deg, order = degree_order(p)
    out = np.zeros((len(shifts), len(deg), inputs.shape[0]), dtype=np.complex128)
    for t, (n, m) in enumerate(zip(deg, order)):
        for j in range(p + 1):
            k = np.arange(-j, j + 1)
            out[:, t] += (-1.0) ** (n + m) * (i_full[:, j + n, 2 * p + k - m] @ inputs[:, j, p + k].T)
    return _as_real(out)


def scales(p: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Factors (2P,) that scale multipoles (h^-n) and locals (h^(n+1)) of boxes of side h."""
    deg, _ = degree_order(p)
    return np.tile(float(h) ** -deg, 2), np.tile(float(h) ** (deg + 1), 2)


def offsets(separation: int = 1) -> np.ndarray:
    """Integer box offsets (n, 3) in -R..R, R = 2 separation + 1, in the order of tree.offset_index."""
    r = 2 * separation + 1
    return np.array([(a, b, c) for a in range(-r, r + 1) for b in range(-r, r + 1) for c in range(-r, r + 1)])


OFFSETS = offsets(1)
WELL_SEPARATED = np.abs(OFFSETS).max(axis=1) > 1  # the 316 offsets a same-level M2L can have


@lru_cache(maxsize=None)
def standard_m2l_table(p: int, separation: int = 1) -> np.ndarray:
    """(n_offsets, 2P, 2P) scaled M2L matrices for integer box offsets (source centre - target centre) / h
    (offsets(separation), indexed by tree.offset_index: 343 for separation 1, 1331 for 2); offsets of near
    boxes hold zeros. Kept on disk between processes (table_cache.py)."""
    from .table_cache import cached_table  # noqa: PLC0415 (operators.py is part of the cache's digest)

    shifts = offsets(separation)
    size = 2 * n_coefficients(p)

    def build() -> np.ndarray:
        far = np.abs(shifts).max(axis=1) > separation
        table = np.zeros((len(shifts), size, size))
        table[far] = m2l_matrices(p, -shifts[far].astype(float))
        return table

    return cached_table(f"m2l-p{p}-s{separation}", (len(shifts), size, size), build)


CHILD_SIGNS = np.array([(a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)], dtype=float)


@lru_cache(maxsize=None)
def child_tables(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Scaled M2M (child -> parent) and L2L (parent -> child) matrices for the 8 octants, for a parent
    of side 1 (child centre = parent centre + signs / 4); both in the parent's scaling."""
    m2m = m2m_matrices(p, CHILD_SIGNS / 4)  # child multipole (scaled by the parent side) -> parent
    l2l = l2l_matrices(p, CHILD_SIGNS / 4)
    return m2m, l2l


def to_real(coefficients, xp=np):
    """(..., P) complex -> (..., 2P) real [Re; Im]."""
    return xp.concatenate([coefficients.real, coefficients.imag], axis=-1)


def to_complex(values, xp=np):
    half = values.shape[-1] // 2
    return values[..., :half] + 1j * values[..., half:]


@lru_cache(maxsize=None)
def _gradient_index(p: int):
    """For each stored (n, m): stored index of R_{n-1}^{m-1} (or of R_{n-1}^1 for m = 0, used through
    R^{-1} = -conj(R^1)), of R_{n-1}^{m+1} and of R_{n-1}^m, with masks where they vanish."""
    deg, order = degree_order(p)
    n1 = np.maximum(deg - 1, 0)
    minus = np.where(order >= 1, index(n1, np.maximum(order - 1, 0)), index(n1, np.minimum(1, n1)))
    minus_ok = (deg >= 1) & ((order >= 1) | (deg >= 2))
    plus = index(n1, np.minimum(order + 1, n1))
    plus_ok = (deg >= 1) & (order + 1 <= deg - 1)
    same = index(n1, np.minimum(order, n1))
    same_ok = (deg >= 1) & (order <= deg - 1)
    return minus, minus_ok, order == 0, plus, plus_ok, same, same_ok


def gradient_regular(rvals, p: int, xp=np):
    """Gradients (n, 3, P) of R_n^m from their stored values (n, P):
    d/dz R_n^m = R_{n-1}^m, d/dx = (i/2)(R_{n-1}^{m-1} + R_{n-1}^{m+1}), d/dy = -(1/2)(R_{n-1}^{m-1} - R_{n-1}^{m+1})."""
    minus_i, minus_ok, mirror, plus_i, plus_ok, same_i, same_ok = (xp.asarray(a) for a in _gradient_index(p))
    minus = rvals[:, minus_i]
    minus = xp.where(mirror, -xp.conj(minus), minus) * minus_ok
    plus = rvals[:, plus_i] * plus_ok
    same = rvals[:, same_i] * same_ok
    return xp.stack([0.5j * (minus + plus), -0.5 * (minus - plus), same], axis=1)


def p2m_harmonics(points, center, p: int, dipoles: bool, xp=np) -> tuple:
    """What P2M reads of padded leaves' points (n_boxes, L, 3) about centres (n_boxes, 3): conj R_n^m
    (n_boxes, L, P) and, with dipoles, conj grad R_n^m (n_boxes, L, 3, P); fixed while the points are."""
    nb, lmax, _ = points.shape
    r = regular((points - center[:, None, :]).reshape(-1, 3), p, xp)
    g = xp.conj(gradient_regular(r, p, xp)).reshape(nb, lmax, 3, -1) if dipoles else None
    return xp.conj(r).reshape(nb, lmax, -1), g


def p2m_apply(harmonics: tuple, charges, dipoles, xp=np):
    """Multipoles (n_boxes, n_dens, P) from p2m_harmonics and charges (n_dens, n_boxes, L) or None, dipoles
    (n_dens, n_boxes, L, 3) or None, as batched products over the boxes."""
    conj_r, conj_g = harmonics
    nb, lmax, _ = conj_r.shape
    out = 0
    if charges is not None:
        out = out + xp.matmul(xp.moveaxis(charges, 0, 1), conj_r)
    if dipoles is not None:
        out = out + xp.matmul(xp.moveaxis(dipoles, 0, 1).reshape(nb, dipoles.shape[0], lmax * 3),
                              conj_g.reshape(nb, lmax * 3, -1))
    return out


def p2m(points, charges, dipoles, center, p: int, xp=np):
    """Multipoles (n_boxes, n_dens, P) of padded leaves: points (n_boxes, L, 3), charges (n_dens,
    n_boxes, L) or None, dipoles (n_dens, n_boxes, L, 3) or None (zeros where padded), centres (n_boxes, 3).
    M_n^m = sum q conj(R_n^m(y - c)) + d . grad_y conj(R_n^m(y - c))."""
    return p2m_apply(p2m_harmonics(points, center, p, dipoles is not None, xp), charges, dipoles, xp)


def l2p_harmonics(points, center, p: int, gradient: bool, xp=np) -> tuple:
    """What L2P reads of padded points (n_boxes, L, 3) about centres (n_boxes, 3): R_n^m (n_boxes, L, P)
    weighted 2 for m > 0 (m and -m together: 2 Re(L R)) and, with gradient, its gradient (n_boxes, L, 3, P)."""
    nb, lmax, _ = points.shape
    _, order = degree_order(p)
    weight = xp.asarray(np.where(order > 0, 2.0, 1.0))
    r = regular((points - center[:, None, :]).reshape(-1, 3), p, xp)
    g = (gradient_regular(r, p, xp) * weight).reshape(nb, lmax * 3, -1) if gradient else None
    return (r * weight).reshape(nb, lmax, -1), g


def l2p_apply(local, harmonics: tuple, xp=np):
    """Potential (n_dens, n_boxes, L) and gradient (n_dens, n_boxes, L, 3) or None of local expansions
    (n_boxes, n_dens, P) from l2p_harmonics, as batched products over the boxes."""
    r, g = harmonics
    lt = xp.swapaxes(local, 1, 2)  # (n_boxes, P, n_dens)
    phi = xp.moveaxis(xp.matmul(r, lt).real, 2, 0)
    grad = None
    if g is not None:
        nb, lk, _ = g.shape
        grad = xp.moveaxis(xp.matmul(g, lt).real, 2, 0).reshape(-1, nb, lk // 3, 3)
    return phi, grad


def l2p(local, points, center, p: int, gradient: bool, xp=np):
    """Potential (n_dens, n_boxes, L) and gradient (n_dens, n_boxes, L, 3) or None of local
    expansions (n_boxes, n_dens, P) at padded points (n_boxes, L, 3)."""
    return l2p_apply(local, l2p_harmonics(points, center, p, gradient, xp), xp)


def direct(sources, targets, charges=None, dipoles=None, gradient=False, xp=np):
    """Reference sums over all pairs (coincident pairs skipped): potential (n_dens, n_targets) and
    gradient (n_dens, n_targets, 3) of sum_j q_j / |x - y_j| + d_j . (x - y_j) / |x - y_j|^3."""
    sources, targets = xp.asarray(sources, dtype=xp.float64), xp.asarray(targets, dtype=xp.float64)
    diff = targets[:, None, :] - sources[None, :, :]
    r2 = (diff * diff).sum(axis=2)
    inv = xp.where(r2 > 0, 1.0 / xp.sqrt(xp.where(r2 > 0, r2, 1.0)), 0.0)
    inv3 = inv ** 3
    n_dens = (charges if charges is not None else dipoles).shape[0]
    phi = xp.zeros((n_dens, len(targets)))
    grad = xp.zeros((n_dens, len(targets), 3)) if gradient else None
    if charges is not None:
        phi += charges @ inv.T
        if gradient:
            grad -= xp.einsum("ds,ts,tsk->dtk", charges, inv3, diff)
    if dipoles is not None:
        dot = xp.einsum("dsk,tsk->dts", dipoles, diff)
        phi += (dot * inv3).sum(axis=2)
        if gradient:
            inv5 = inv3 * inv * inv
            grad += xp.einsum("dsk,ts->dtk", dipoles, inv3) - 3 * xp.einsum("dts,ts,tsk->dtk", dot, inv5, diff)
    return phi, grad


def _code_base(separation: int) -> int:
    """Doubled offsets between a side-h box and the centre of a side-2h family lie in -(4 s + 1)..4 s + 1
    (s the separation): their codes count in this base."""
    return 8 * separation + 3


def _half_offsets(code: int, separation: int = 1) -> np.ndarray:
    """Offset (3,) in units of the smaller box from a code of doubled odd offsets (see _code)."""
    base, reach = _code_base(separation), 4 * separation + 1
    d = np.array([code // base ** 2, (code // base) % base, code % base]) - reach
    return d / 2.0


def cross_m2l_codes(separation: int = 1) -> np.ndarray:
    """The sorted offset codes (see _code) a cross-level translation can have: doubled offsets between a
    side-h box and the centre of a side-2h box, odd in -(4 s + 1)..4 s + 1 along each axis (the side-h box
    a child of a near neighbour of the side-2h box or of its parent), far enough from the family
    (_far_from_family): 80 with separation 1, 640 with 2."""
    odd = np.arange(-(4 * separation + 1), 4 * separation + 2, 2)
    doubled = np.stack(np.meshgrid(odd, odd, odd, indexing="ij"), axis=-1).reshape(-1, 3)
    return _code(doubled[_far_from_family(doubled, separation)], separation)


@lru_cache(maxsize=None)
def cross_m2l_tables(p: int, scheme: str, separation: int = 1) -> np.ndarray:
    """(n_codes, 2P, 2P) scaled M2L between a box of side h and one of side 2h, one per code of
    cross_m2l_codes(separation), whose offset is source centre - target centre in units of h.
    child-to-parent: source side h, target side 2h: diag(2^(n+1)) T; parent-to-child: source side 2h,
    target side h: T diag(2^j). Kept on disk between processes (table_cache.py)."""
    from .table_cache import cached_table  # noqa: PLC0415 (operators.py is part of the cache's digest)

    codes = cross_m2l_codes(separation)
    size = 2 * n_coefficients(p)

    def build() -> np.ndarray:
        t = m2l_matrices(p, -np.stack([_half_offsets(int(c), separation) for c in codes]))
        deg = np.tile(degree_order(p)[0], 2)
        if scheme == "child-to-parent":
            return (2.0 ** (deg + 1))[None, :, None] * t
        return t * (2.0 ** deg)[None, None, :]

    return cached_table(f"m2l-{scheme}-p{p}-s{separation}", (len(codes), size, size), build)


def _code(doubled: np.ndarray, separation: int = 1) -> np.ndarray:
    base, reach = _code_base(separation), 4 * separation + 1
    return ((doubled[:, 0] + reach) * base + doubled[:, 1] + reach) * base + doubled[:, 2] + reach


def _far_from_family(doubled: np.ndarray, separation: int = 1) -> np.ndarray:
    """Doubled offsets (odd) of a side-h box from the centre of a side-2h box (or the reverse) that allow
    one translation between the two: at least separation + 1 boxes clear of every side-h child position
    along some axis (some |offset| >= 2 s + 3), and centres far enough apart that the convergence ratio
    (sqrt(3)/2 h + sqrt(3) h) / D stays within the same-level worst case sqrt(3) / (s + 1), two side-h
    boxes whose centres are s + 1 boxes apart: D >= 3 (s + 1) h / 2 (3 h for s = 1, 4.5 h for s = 2)."""
    return ((np.abs(doubled).max(axis=1) >= 2 * separation + 3)
            & ((doubled.astype(float) ** 2).sum(axis=1) >= (3 * (separation + 1)) ** 2))


def cross_level_split(tree, level: int, tgt_box, src_box, scheme: str):
    """Split the same-level M2L pairs of a level into cross-level translations and the pairs kept.

    child-to-parent (M2L_N): source boxes far enough from the target's parent go once into the parent's
    local expansion (deduplicated over the parent's children, so no two writes collide);
    parent-to-child (M2L_NF): a source box's parent far enough from the target goes once to the target
    in place of all its children. Returns ((target level, target boxes, source level, source boxes,
    offset codes), kept mask); the codes are those of the tree's separation."""
    lv, up, sep = tree.levels[level], tree.levels[level - 1], tree.separation
    if scheme == "child-to-parent":
        parent = lv.parent[tgt_box]
        doubled = 2 * lv.coords[src_box] + 1 - (4 * up.coords[parent] + 2)
        far = _far_from_family(doubled, sep)
        pairs = np.unique(np.stack([parent[far], src_box[far]], axis=1), axis=0)
        d = 2 * lv.coords[pairs[:, 1]] + 1 - (4 * up.coords[pairs[:, 0]] + 2)
        cross = (level - 1, pairs[:, 0], level, pairs[:, 1], _code(d, sep))
    else:
        parent = lv.parent[src_box]
        doubled = 4 * up.coords[parent] + 2 - (2 * lv.coords[tgt_box] + 1)
        far = _far_from_family(doubled, sep)
        pairs = np.unique(np.stack([tgt_box[far], parent[far]], axis=1), axis=0)
        d = 4 * up.coords[pairs[:, 1]] + 2 - (2 * lv.coords[pairs[:, 0]] + 1)
        cross = (level, pairs[:, 0], level - 1, pairs[:, 1], _code(d, sep))
    return cross, ~far
