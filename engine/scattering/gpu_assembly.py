"""The volume matrices K and M assembled on the GPU: the element matrices by fem.element_matrices, which is
backend-neutral (its NumPy run inside fem.volume_matrices is the reference), over CuPy arrays, then summed
into CSR on the device by cupyx and copied to the host as SciPy matrices."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .fem import Discretisation, element_matrices
from .nedelec import FUNCTIONS

CHUNK_ENTRIES = 1 << 25  # element matrix entries per block on the device (32M: 256 MiB per matrix)


def volume_matrices_on_device(d: Discretisation, cells: np.ndarray | None = None) -> tuple[sp.csr_matrix,
                                                                                        sp.csr_matrix]:
    """Curl-curl K (1/m) and mass M (m), real symmetric (n_dofs, n_dofs) CSR on the host, over the given
    tetrahedra (indices; None: all): the same matrices as fem.volume_matrices, computed on the GPU."""
    import cupy as cp  # noqa: PLC0415
    import cupyx.scipy.sparse as csp  # noqa: PLC0415

    cells = np.arange(len(d.mesh.tets)) if cells is None else cells
    n, f = d.dofs.n_dofs, FUNCTIONS[d.order]
    chunk = max(1, CHUNK_ENTRIES // (f * f))
    grads, volumes = cp.asarray(d.geom.grads[cells]), cp.asarray(d.geom.volumes[cells])
    cell_dofs = cp.asarray(d.dofs.cell_dofs[cells], dtype=cp.int32)
    stiffness, mass = [], []
    for lo in range(0, len(cells), chunk):
        sl = slice(lo, lo + chunk)
        k_e, m_e = element_matrices(d.order, grads[sl], volumes[sl])
        rows = cp.repeat(cell_dofs[sl], f, axis=1).ravel()
        cols = cp.tile(cell_dofs[sl], (1, f)).ravel()
        stiffness.append(csp.coo_matrix((k_e.ravel(), (rows, cols)), shape=(n, n)).tocsr())
        mass.append(csp.coo_matrix((m_e.ravel(), (rows, cols)), shape=(n, n)).tocsr())
    return _summed(stiffness).get(), _summed(mass).get()


def _summed(parts: list):
    """The sum of sparse matrices, pairwise (each entry added about log2(len(parts)) times)."""
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]
