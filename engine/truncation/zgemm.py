"""The truncation operator as complex GEMMs (loop "zgemm"): for a tile of S points,
    [E | F] (tile, 6 n_rhs) = A (tile, 4 n') @ X (4 n', 6 n_rhs),
A = [G | C Rx | C Ry | C Rz] the coupling (geometry and k only), X the currents arranged so that each
block of A meets the terms it multiplies (see currents_matrix). Coupling tiles are kept up to a memory
budget and reused by later applications with the same geometry (FE-IIIEE iterations); the rest are
recomputed per application. cuBLAS on the GPU (CuPy), BLAS on the CPU (NumPy); the tiles by a CUDA kernel
or Numba threads, coupling_numpy the specification of both."""

from __future__ import annotations

import numpy as np

TILE_BYTES = 1 << 30  # one coupling tile: about 1 GiB


def coupling_numpy(targets, sources, k: float) -> np.ndarray:
    """A (n_t, 4 n_s) complex: G, then grad'G's x, y, z components, each (n_t, n_s)."""
    r = targets[:, None, :] - sources[None, :, :]
    d = np.linalg.norm(r, axis=2)
    g = np.exp(-1j * k * d) / (4 * np.pi * d)
    c = (1 + 1j * k * d) * g / d ** 2
    return np.concatenate([g, c * r[..., 0], c * r[..., 1], c * r[..., 2]], axis=1)


def coupling_cpu(targets, sources, k: float) -> np.ndarray:
    """coupling_numpy's A by Numba threads, written once (NumPy's version makes a dozen temporaries of the
    tile's size on one core: 20 s against 2 s for a 1 GiB tile on a loaded two-core host)."""
    from .loops import coupling_rows  # noqa: PLC0415

    out = np.empty((len(targets), 4 * len(sources)), dtype=complex)
    coupling_rows(np.ascontiguousarray(targets, dtype=float), np.ascontiguousarray(sources, dtype=float), float(k), out)
    return out


def currents_matrix(xp, cur, k: float):
    """X (4 n', 6 n_rhs): column (r, c) gives output component c (E x, y, z, F x, y, z) of right-hand side r.
    Rows: the G block [cf, k^2 ce]; the C Rx block [de, ce_z, -ce_y, df, cf_z, -cf_y]; the Ry block
    [-ce_z, de, ce_x, -cf_z, df, cf_x]; the Rz block [ce_y, -ce_x, de, cf_y, -cf_x, df]."""
    ce, cf = xp.asarray(cur.cross_e), xp.asarray(cur.cross_f)
    de, df = xp.asarray(cur.dot_e), xp.asarray(cur.dot_f)
    k2 = k * k
    blocks = [
        [cf[..., 0], cf[..., 1], cf[..., 2], k2 * ce[..., 0], k2 * ce[..., 1], k2 * ce[..., 2]],
        [de, ce[..., 2], -ce[..., 1], df, cf[..., 2], -cf[..., 1]],
        [-ce[..., 2], de, ce[..., 0], -cf[..., 2], df, cf[..., 0]],
        [ce[..., 1], -ce[..., 0], de, cf[..., 1], -cf[..., 0], df],
    ]
    # each block: (n_rhs, n', 6) -> (n', n_rhs * 6); blocks stacked along n'
    return xp.concatenate([xp.stack(b, axis=-1).transpose(1, 0, 2).reshape(de.shape[1], -1) for b in blocks])


class ZgemmOperator:
    """The operator for fixed S points, S' points and k; apply(currents) -> E, F (n_rhs, n_S, 3) arrays
    of xp. cache_bytes: how much coupling to keep between applications."""

    def __init__(self, targets, sources, k: float, xp=np, cache_bytes: int = 0, tile_bytes: int = TILE_BYTES):
        self.xp, self.k = xp, k
        self.targets = xp.asarray(targets, dtype=float)
        self.sources = xp.asarray(sources, dtype=float)
        row = 4 * len(sources) * 16
        self.tile = max(1, min(len(targets), tile_bytes // row))
        self.cached_tiles = int(cache_bytes // (self.tile * row))
        self.cache: dict[int, object] = {}
        self.coupling_seconds = 0.0

    @property
    def n_tiles(self) -> int:
        return -(-len(self.targets) // self.tile)

    def _coupling(self, lo: int, hi: int):
        if lo in self.cache:
            return self.cache[lo]
        if self.xp is np:
            a = coupling_cpu(self.targets[lo:hi], self.sources, self.k)
        else:
            a = _coupling_gpu(self.xp, self.targets[lo:hi], self.sources, self.k)
        if len(self.cache) < self.cached_tiles:
            self.cache[lo] = a
        return a

    def apply(self, cur):
        xp = self.xp
        x = currents_matrix(xp, cur, self.k)
        n_rhs, n_t = cur.dot_e.shape[0], len(self.targets)
        out = xp.empty((n_t, n_rhs, 6), dtype=complex)
        for lo in range(0, n_t, self.tile):
            hi = min(n_t, lo + self.tile)
            out[lo:hi] = (self._coupling(lo, hi) @ x).reshape(hi - lo, n_rhs, 6)
        out = out.transpose(1, 0, 2)
        return xp.ascontiguousarray(out[..., :3]), xp.ascontiguousarray(out[..., 3:])

    def gemm_flops(self, n_rhs: int) -> int:
        """Real flops of the GEMMs of one application: 8 per complex multiply-add."""
        return 8 * len(self.targets) * 4 * len(self.sources) * 6 * n_rhs


def _coupling_gpu(cp, targets, sources, k: float):
    from .gpu_loops import compiled_module  # noqa: PLC0415

    n_t, n_s = len(targets), len(sources)
    a = cp.empty((n_t, 4 * n_s), dtype=cp.complex128)
    compiled_module(cp).get_function("coupling_tile")((-(-n_t * n_s // 256),), (256,),
                                                      (targets, np.int32(n_t), sources, np.int32(n_s), np.float64(k), a))
    return a

