"""The element-level linear system (element matrices, element vectors, Dirichlet data) and its checks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..errors import SolverError


@dataclass(frozen=True, eq=False)
class ElementSystem:
    """sum_e Q_e^T K_e Q_e x = sum_e Q_e^T f_e with x fixed on Dirichlet nodes.

    element_matrices: (n_elements, k, k) float64; connectivity: (n_elements, k) int64;
    element_vectors: (n_elements, k) float64; fixed_nodes: (n_fixed,) int64 with fixed_values.
    """

    element_matrices: np.ndarray
    element_vectors: np.ndarray
    connectivity: np.ndarray
    n_nodes: int
    fixed_nodes: np.ndarray
    fixed_values: np.ndarray

    def fixed_mask(self) -> np.ndarray:
        mask = np.zeros(self.n_nodes, dtype=bool)
        mask[self.fixed_nodes] = True
        return mask

    def lifted_values(self) -> np.ndarray:
        """(n_nodes,) the Dirichlet values on fixed nodes, zero elsewhere."""
        x = np.zeros(self.n_nodes)
        x[self.fixed_nodes] = self.fixed_values
        return x


def _entry_indices(conn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Global (row, column) of every entry of every element matrix, flattened like element_matrices."""
    k = conn.shape[1]
    return np.repeat(conn, k, axis=1).ravel(), np.tile(conn, (1, k)).ravel()


def check_not_singular(system: ElementSystem) -> None:
    """Raise SolverError when some connected part of the mesh has no Dirichlet node
    (its potential is then defined only up to a constant)."""
    if system.fixed_nodes.size == 0:
        raise SolverError("singular problem: no Dirichlet boundary, so the potential is defined only "
                          "up to a constant; give at least one boundary type = \"dirichlet\"")
    rows, cols = _entry_indices(system.connectivity)
    graph = sp.coo_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)),
                          shape=(system.n_nodes, system.n_nodes)).tocsr()
    n_parts, label = connected_components(graph, directed=False)
    if n_parts > 1:
        anchored = np.zeros(n_parts, dtype=bool)
        anchored[label[system.fixed_nodes]] = True
        if not anchored.all():
            free_parts = int((~anchored).sum())
            raise SolverError(f"singular problem: {free_parts} disconnected part(s) of the mesh touch no "
                              "Dirichlet boundary")


def assemble_sparse(system: ElementSystem) -> sp.csr_matrix:
    """The global stiffness matrix (n_nodes, n_nodes) CSR, summed from the element matrices."""
    rows, cols = _entry_indices(system.connectivity)
    return sp.csr_matrix((system.element_matrices.ravel(), (rows, cols)),
                         shape=(system.n_nodes, system.n_nodes))


def assemble_vector(system: ElementSystem) -> np.ndarray:
    """The global load vector (n_nodes,) summed from the element vectors."""
    return np.bincount(system.connectivity.ravel(), weights=system.element_vectors.ravel(),
                       minlength=system.n_nodes)
