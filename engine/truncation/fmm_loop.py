"""The `fmm` loop: the operator by FMM3D's vector Helmholtz FMM (fmm3dpy.emfmm3d), O(N) on the CPU cores.

emfmm3d evaluates E = curl S[h] + S[e] + grad S[q] with S[u](r) = sum u exp(ikR) / (4 pi R). With
grad'G = -grad G:
    E: h = ce, e = cf, q = -de;     F: h = cf, e = k^2 ce, q = -df,
so one call with 2 n_rhs densities gives E and F (operator.apply_reference is the specification). The
time convention here is exp(+jwt), G = exp(-jkR) / (4 pi R), the conjugate of FMM3D's kernel for real
k (its expansions need Re zk >= 0), so the densities go in conjugated and the fields come out so."""

from __future__ import annotations

import numpy as np

from ..errors import BackendError
from .operator import Currents

DEFAULT_PRECISION = 1e-10


def apply_fmm(targets: np.ndarray, sources: np.ndarray, cur: Currents, k: float,
              precision: float = DEFAULT_PRECISION) -> tuple[np.ndarray, np.ndarray]:
    """E, F (n_rhs, n_S, 3) complex to relative precision about `precision`; targets (n_S, 3) and
    sources (n_S', 3) in m, k in 1/m."""
    try:
        import fmm3dpy  # noqa: PLC0415
    except ImportError:
        raise BackendError("loop 'fmm' needs FMM3D's Python package: pip install fmm3dpy") from None
    n_rhs = cur.dot_e.shape[0]
    h = np.concatenate([cur.cross_e, cur.cross_f]).transpose(0, 2, 1).conj()  # (2 n_rhs, 3, n_S')
    e = np.concatenate([cur.cross_f, k * k * cur.cross_e]).transpose(0, 2, 1).conj()
    q = -np.concatenate([cur.dot_e, cur.dot_f]).conj()
    out = fmm3dpy.emfmm3d(eps=precision, zk=complex(k), sources=np.ascontiguousarray(sources.T),
                          h_current=np.ascontiguousarray(h), e_current=np.ascontiguousarray(e),
                          e_charge=np.ascontiguousarray(q), targets=np.ascontiguousarray(targets.T), ifE=1,
                          nd=2 * n_rhs)
    fields = np.asarray(out.E).reshape(2 * n_rhs, 3, -1).transpose(0, 2, 1).conj()
    return np.ascontiguousarray(fields[:n_rhs]), np.ascontiguousarray(fields[n_rhs:])
