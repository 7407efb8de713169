"""Device layout of an element system for the CUDA EBE kernels, and the NumPy twin of their product.

Connectivity and packed symmetric element matrices are structure-of-arrays so that consecutive
threads (elements) read consecutive words; Dirichlet nodes are replaced by a dummy node index
n_nodes whose value stays zero, so fixed nodes drop out of every product without a mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .system import ElementSystem

PACKED_ENTRIES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


@dataclass(frozen=True, eq=False)
class PackedSystem:
    """conn: (3, n_elements) int32 with fixed nodes -> n_nodes; ke: (6, n_elements) float64;
    free: (n_nodes,) bool."""

    conn: np.ndarray
    ke: np.ndarray
    n_nodes: int
    free: np.ndarray


def pack_system(system: ElementSystem, xp=np) -> PackedSystem:
    """SoA, int32 connectivity with the dummy node, and the 6 upper-triangle entries of each K_e,
    built in the array module xp (CuPy packs on the device after one plain transfer)."""
    if system.connectivity.shape[1] != 3:
        raise ValueError("the CUDA EBE kernels take 3-node elements")
    free = xp.asarray(~system.fixed_mask())
    connectivity = xp.asarray(system.connectivity.astype(np.int32))
    conn = xp.where(free[connectivity], connectivity, np.int32(system.n_nodes))
    ke_full = xp.asarray(system.element_matrices)
    ke = xp.stack([ke_full[:, i, j] for i, j in PACKED_ENTRIES])
    return PackedSystem(xp.ascontiguousarray(conn.T), xp.ascontiguousarray(ke), system.n_nodes, free)


def matvec_packed(packed: PackedSystem, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Twin of ebe_matvec_atomic_pap: q = sum_e K_e p_e over free nodes (n_nodes,) and the element
    values p_e . K_e p_e (n_elements,). p: (n_nodes + 1,) with p[n_nodes] == 0."""
    k00, k01, k02, k11, k12, k22 = packed.ke
    pa, pb, pc = p[packed.conn]
    y = np.stack([k00 * pa + k01 * pb + k02 * pc,
                  k01 * pa + k11 * pb + k12 * pc,
                  k02 * pa + k12 * pb + k22 * pc])
    q = np.bincount(packed.conn.ravel(), weights=y.ravel(), minlength=packed.n_nodes + 1)[:packed.n_nodes]
    return q, pa * y[0] + pb * y[1] + pc * y[2]


def bytes_per_iteration(n_elements: int, n_nodes: int) -> int:
    """Bytes one EBE-J-PCG iteration must move through device memory, each array once per use:
    element data (6 matrix words, 3 int32 indices) once; p gathered and q written once; the update
    reads x, r, p, q, 1/diag and writes x, r, z; the direction update reads z, p and writes p, q."""
    return n_elements * (6 * 8 + 3 * 4) + n_nodes * 8 * (2 + 5 + 3 + 4)
