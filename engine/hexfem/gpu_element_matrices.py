"""CUDA element matrices of paper 004: AI (a thread per element) and AII (a thread per element and
Gauss point, then a summation over the points), launched from kernels/hex_stiffness.cu; the gemm
variant's passes; and mma, the Gram product fused with K^e on the FP64 tensor cores (kernels/hex_gram_mma.cu)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..backend import kernel_function, kernel_module
from .basis import reference_tables
from .geometry import vertex_gradients

BLOCK = 128


def _module():
    return kernel_module(Path(__file__).with_name("kernels") / "hex_stiffness.cu")


MMA_MAX_TILE = 32  # scalar functions per side of an mma block's Gram tile, at most


def mma_tile(ns: int) -> int:
    """Tile side for n_s scalar functions: n_s split into equal tiles of at most MMA_MAX_TILE (little padding)."""
    return -(-ns // -(-ns // MMA_MAX_TILE))


@dataclass(frozen=True)
class MmaShape:
    """Launch shape of the mma kernel for one tile side (the kernel's TILE, ROWS, KC, WARPS_C, MINB).

    Tiles of up to 80 rows: one warp per 16-row strip and three blocks per multiprocessor; larger: two
    warps per strip, 64 Gauss points per step and two blocks (measured fastest on an H100; more blocks
    would spill registers).
    """

    tile: int

    @property
    def rows(self) -> int:  # Gram tile rows: 3 tile padded to a multiple of 16
        return -(-3 * self.tile // 16) * 16

    @property
    def kc(self) -> int:
        return 32 if self.rows <= 80 else 64

    @property
    def warps_c(self) -> int:
        return 1 if self.rows <= 80 else 2

    @property
    def min_blocks(self) -> int:
        return 3 if self.rows <= 80 else 2

    @property
    def threads(self) -> int:
        return 32 * (self.rows // 16) * self.warps_c

    @property
    def shared_bytes(self) -> int:
        return 8 * (max(2 * self.kc * (self.rows + 4), self.rows * (self.rows + 1)) + 9 * self.kc)

    @property
    def options(self) -> tuple[str, ...]:
        return (f"-DTILE={self.tile}", f"-DROWS={self.rows}", f"-DKC={self.kc}", f"-DWARPS_C={self.warps_c}",
                f"-DMINB={self.min_blocks}")


@functools.lru_cache(maxsize=None)
def _mma_kernel(tile: int):
    import cupy  # noqa: PLC0415

    from ..errors import BackendError  # noqa: PLC0415

    capability = int(cupy.cuda.Device().compute_capability)
    if capability < 90:
        raise BackendError(f"integration 'mma' needs the FP64 tensor-core shape m16n8k8 (compute capability 9.0 "
                           f"or newer); this GPU has {capability / 10:.1f}: choose gemm")
    shape = MmaShape(tile)
    kernel = kernel_function(Path(__file__).with_name("kernels") / "hex_gram_mma.cu", "hex_stiffness_mma",
                             tuple(shape.options))
    kernel.max_dynamic_shared_size_bytes = shape.shared_bytes
    return kernel


def mma_tile_pairs(ns: int) -> np.ndarray:
    """(n_pairs, 2) int32 tile indices (ta, tb), ta <= tb, of the Gram tiles the mma kernel computes."""
    n_tiles = -(-ns // mma_tile(ns))
    return np.array([(a, b) for a in range(n_tiles) for b in range(a, n_tiles)], dtype=np.int32).reshape(-1, 2)


def mma_flops(ns: int, n_g: int) -> int:
    """Flops per element the mma kernel performs on real entries (padding past n_s not counted)."""
    tile = mma_tile(ns)
    sizes = np.minimum(tile, ns - tile * np.arange(-(-ns // tile)))
    covered = sum(int(sizes[a] * sizes[b]) for a, b in mma_tile_pairs(ns))
    return 2 * n_g * 9 * covered


@functools.lru_cache(maxsize=None)
def _device_tables(p: int):
    import cupy as cp  # noqa: PLC0415

    t = reference_tables(p)
    return (cp.asarray(t.gradients), cp.asarray(vertex_gradients(t.points)), cp.asarray(t.weights),
            len(t.weights), t.basis.n_functions)


def _inputs(coords, lam, mu):
    import cupy as cp  # noqa: PLC0415

    return (cp.ascontiguousarray(cp.asarray(coords, dtype=cp.float64)),
            cp.ascontiguousarray(cp.asarray(lam, dtype=cp.float64)),
            cp.ascontiguousarray(cp.asarray(mu, dtype=cp.float64)))


def stiffness_ai(coords, lam, mu, p: int):
    """K^e (m, N_e, N_e) as a CuPy array, one thread per element; coords (m, 8, 3) metres, lam / mu Pa."""
    import cupy as cp  # noqa: PLC0415

    coords, lam, mu = _inputs(coords, lam, mu)
    ref_grads, vgrads, weights, nq, ns = _device_tables(p)
    m, ne = len(coords), 3 * ns
    g = cp.empty((3 * ns, m))
    k = cp.empty((ne, ne, m))
    _module().get_function("hex_stiffness_ai")(
        (-(-m // BLOCK),), (BLOCK,),
        (coords, lam, mu, ref_grads, vgrads, weights, np.int32(m), np.int32(nq), np.int32(ns), g, k))
    return cp.ascontiguousarray(k.transpose(2, 0, 1))


def point_gradients(coords, p: int):
    """AII's first pass: gradients (m, n_q^3, n_s, 3) in 1/m and w det J (m, n_q^3), one thread per point."""
    import cupy as cp  # noqa: PLC0415

    coords, _, _ = _inputs(coords, np.zeros(0), np.zeros(0))
    ref_grads, vgrads, weights, nq, ns = _device_tables(p)
    m = len(coords)
    grads = cp.empty((m, nq, ns, 3))
    c = cp.empty((m, nq))
    _module().get_function("hex_point_gradients")(
        (-(-(m * nq) // BLOCK),), (BLOCK,),
        (coords, ref_grads, vgrads, weights, np.int32(m), np.int32(nq), np.int32(ns), grads, c))
    return grads, c


def stiffness_aii(coords, lam, mu, p: int):
    """K^e (m, N_e, N_e) as a CuPy array: point gradients, then one thread per (element, a, b) block."""
    import cupy as cp  # noqa: PLC0415

    coords, lam, mu = _inputs(coords, lam, mu)
    grads, c = point_gradients(coords, p)
    m, nq, ns = grads.shape[0], grads.shape[1], grads.shape[2]
    k = cp.empty((m, 3 * ns, 3 * ns))
    _module().get_function("hex_sum_points")(
        (-(-(m * ns * ns) // BLOCK),), (BLOCK,),
        (grads, c, lam, mu, np.int32(m), np.int32(nq), np.int32(ns), k))
    return k


def _scaled_inverse(coords, p: int):
    """sqrt(w det J) J^-1 (m, n_G, 3, 3) at the Gauss points, one thread per point (CuPy)."""
    import cupy as cp  # noqa: PLC0415

    _, vgrads, weights, nq, _ = _device_tables(p)
    m = len(coords)
    s = cp.empty((m, nq, 3, 3))
    _module().get_function("hex_scaled_inverse")((-(-(m * nq) // BLOCK),), (BLOCK,),
                                                 (coords, vgrads, weights, np.int32(m), np.int32(nq), s))
    return s


def stiffness_gemm_gpu(coords, lam, mu, p: int):
    """The gemm variant on the GPU: the operand X (m, n_G, 3 n_s) of gradients scaled by sqrt(w det J)
    from two kernels, the Gram matrices X^T X by one batched cuBLAS DGEMM, K^e by a last kernel.
    NumPy twin: element_matrices.stiffness_gemm."""
    import cupy as cp  # noqa: PLC0415

    coords, lam, mu = _inputs(coords, lam, mu)
    ref_grads, _, _, nq, ns = _device_tables(p)
    m, f = len(coords), _module().get_function
    s = _scaled_inverse(coords, p)
    x = cp.empty((m, nq, 3 * ns))
    f("hex_gram_operand")((-(-(m * nq * ns) // BLOCK),), (BLOCK,),
                          (ref_grads, s, np.int32(m), np.int32(nq), np.int32(ns), x))
    gram = cp.matmul(x.transpose(0, 2, 1), x)
    del x
    k = cp.empty((m, 3 * ns, 3 * ns))
    f("hex_gram_to_stiffness")((-(-(m * ns * ns) // BLOCK),), (BLOCK,),
                               (gram, lam, mu, np.int32(m), np.int32(ns), k))
    return k


def stiffness_mma(coords, lam, mu, p: int):
    """K^e (m, N_e, N_e) as a CuPy array: the gemm variant's Gram product and K^e in one kernel on the FP64
    tensor cores, the gradient operand formed in shared memory, only the tiles ta <= tb computed and
    mirrored. NumPy twin: element_matrices.stiffness_gemm."""
    import cupy as cp  # noqa: PLC0415

    ref_grads, _, _, nq, ns = _device_tables(p)
    tile = mma_tile(ns)
    kernel = _mma_kernel(tile)
    shape = MmaShape(tile)
    coords, lam, mu = _inputs(coords, lam, mu)
    m = len(coords)
    s = _scaled_inverse(coords, p)
    pairs = cp.asarray(mma_tile_pairs(ns))
    k = cp.empty((m, 3 * ns, 3 * ns))
    kernel((m * len(pairs),), (shape.threads,),
           (ref_grads, s, lam, mu, pairs, np.int32(len(pairs)), np.int32(nq), np.int32(ns), k),
           shared_mem=shape.shared_bytes)
    return k
