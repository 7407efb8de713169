"""Node-to-element and element-to-element maps of a mesh as CSR arrays, built vectorised."""

from __future__ import annotations

import numpy as np


def node_elements(connectivity: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets (n_nodes + 1,), elements) of the elements at each node, in element order.

    connectivity: (n_elements, k) int node indices.
    """
    k = connectivity.shape[1]
    nodes = connectivity.ravel()
    order = np.argsort(nodes, kind="stable")
    elements = (order // k).astype(np.int32)
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(nodes, minlength=n_nodes), out=offsets[1:])
    return offsets, elements


def max_node_degree(connectivity: np.ndarray, n_nodes: int) -> int:
    """The largest number of elements meeting at one node: a lower bound on the colours needed."""
    return int(np.bincount(connectivity.ravel(), minlength=n_nodes).max())


def element_adjacency(connectivity: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets (n_elements + 1,), neighbours) of the elements sharing at least one node with each
    element (itself excluded), neighbours sorted per row."""
    offsets, elements = node_elements(connectivity, n_nodes)
    degree = np.diff(offsets)
    # every ordered pair of elements meeting at a node
    node_of_slot = np.repeat(np.arange(n_nodes), degree)
    first = np.repeat(elements, degree[node_of_slot])
    start = np.repeat(offsets[node_of_slot], degree[node_of_slot])
    within = np.arange(first.size) - np.repeat(np.cumsum(degree[node_of_slot]) - degree[node_of_slot],
                                               degree[node_of_slot])
    second = elements[start + within]
    keep = first != second
    n_el = connectivity.shape[0]
    keys = np.unique(first[keep].astype(np.int64) * n_el + second[keep])
    rows, cols = keys // n_el, (keys % n_el).astype(np.int32)
    adj_offsets = np.zeros(n_el + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_el), out=adj_offsets[1:])
    return adj_offsets, cols
