"""Many incidences as few columns: the FE-IIIEE data of every incidence is linear in its load on Gamma, so
the loads (n, r) are written as basis (n, m) @ coefficients (m, r) by a truncated SVD, m the numerical rank
(at most the number of field modes the scatterer's size supports: 37 columns for 360 theta-polarised
incidences around the equator of a 1-wavelength sphere); the iteration runs on the m columns, and every
incidence's solution stays a combination of them (Solutions), so what is linear in it (the currents on S',
the far field) is computed on the m columns and combined."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import array_module, to_host

RANK_RTOL = 1e-13  # singular values below this fraction of the largest are dropped (round-off level)


@dataclass(frozen=True)
class Compressed:
    """columns (n, r) ~= basis (n, m) @ coefficients (m, r), basis orthonormal, complex."""

    basis: np.ndarray
    coefficients: np.ndarray

    @property
    def rank(self) -> int:
        return self.basis.shape[1]


def compress(columns, rtol: float = RANK_RTOL) -> Compressed:
    """The numerical range of columns (n, r), NumPy or CuPy: singular vectors whose singular value exceeds
    rtol times the largest (at least one), and every column's coordinates in them (NumPy). The SVD of
    columns = Q R is Q times the SVD of the small R (min(n, r), r): the QR on the columns' device, the SVD of
    R on the host."""
    xp = array_module(columns)
    q, upper = xp.linalg.qr(columns)
    left, sigma, right = np.linalg.svd(to_host(upper), full_matrices=False)
    m = max(1, int(np.count_nonzero(sigma > rtol * sigma[0])))
    return Compressed(to_host(q @ xp.asarray(left[:, :m])), sigma[:m, None] * right[:m])


def combine(rows: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """The combinations (r, ...) sum_j coefficients[j, i] rows[j] of rows (m, ...) by coefficients (m, r)."""
    m = len(rows)
    return (coefficients.T @ rows.reshape(m, -1)).reshape((coefficients.shape[1],) + rows.shape[1:])


def combined_norms(rows: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """The norms (r,) of the combinations of rows (m, ...) by coefficients (m, r), from the rows' Gram
    matrix (m, m) without forming the combinations; rows NumPy or CuPy (the Gram matrix on their device)."""
    flat = rows.reshape(len(rows), -1)
    gram = to_host(flat.conj() @ flat.T)
    squares = np.einsum("ji,jk,ki->i", coefficients.conj(), gram, coefficients).real
    return np.sqrt(np.maximum(squares, 0.0))


@dataclass(frozen=True, eq=False)
class Solutions:
    """The solutions (n_dofs, r) of r incidences, kept as parts (columns (n_dofs, m), NumPy or CuPy where the
    factor lives; coefficients (m, r_k),
    incidences (r_k,) int): incidence incidences[j] of a part is columns @ coefficients[:, j]; each incidence
    in one part (fixed-point: one per step at which incidences stopped)."""

    parts: tuple
    count: int

    def column(self, i: int) -> np.ndarray:
        """Incidence i's solution (n_dofs, 1), NumPy (the columns may be CuPy)."""
        for columns, coefficients, incidences in self.parts:
            j = np.flatnonzero(incidences == i)
            if len(j):
                return to_host(columns @ array_module(columns).asarray(coefficients[:, j]))
        raise IndexError(f"incidence {i} has no solution")


def solutions(columns: np.ndarray, coefficients: np.ndarray) -> Solutions:
    """Every incidence a combination (coefficients (m, r)) of the same columns (n_dofs, m)."""
    r = coefficients.shape[1]
    return Solutions(((columns, coefficients, np.arange(r)),), r)
