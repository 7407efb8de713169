"""Node-to-element and element-to-element maps of a mesh as CSR arrays, built vectorised with NumPy
or, passing xp=cupy, on the GPU."""

from __future__ import annotations

import numpy as np


def _owners(counts, xp):
    """For counts (m,), the owner index of each of the sum(counts) slots: [0]*counts[0] + [1]*counts[1] ..."""
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if len(counts) else 0
    return xp.searchsorted(ends, xp.arange(total), side="right"), ends - counts


def node_elements(connectivity, n_nodes: int, xp=np):
    """CSR (offsets (n_nodes + 1,) int64, elements int32) of the elements at each node, in element order.

    connectivity: (n_elements, k) int node indices.
    """
    connectivity = xp.asarray(connectivity)
    k = connectivity.shape[1]
    nodes = connectivity.ravel()
    order = xp.argsort(nodes, kind="stable") if xp is np else xp.argsort(nodes)  # CuPy's sort is stable
    elements = (order // k).astype(xp.int32)
    offsets = xp.zeros(n_nodes + 1, dtype=xp.int64)
    offsets[1:] = xp.cumsum(xp.bincount(nodes, minlength=n_nodes))
    return offsets, elements


def max_node_degree(connectivity: np.ndarray, n_nodes: int) -> int:
    """The largest number of elements meeting at one node: a lower bound on the colours needed."""
    return int(np.bincount(np.asarray(connectivity).ravel(), minlength=n_nodes).max())


def element_adjacency(connectivity, n_nodes: int, xp=np):
    """CSR (offsets (n_elements + 1,) int64, neighbours int32) of the elements sharing at least one
    node with each element (itself excluded), neighbours sorted per row."""
    offsets, elements = node_elements(connectivity, n_nodes, xp)
    degree = offsets[1:] - offsets[:-1]
    # every ordered pair (first, second) of elements meeting at a node: slot j of node v pairs the
    # element in v's slot (j // degree[v]) with the one in slot (j % degree[v])
    node, start = _owners(degree * degree, xp)
    local = xp.arange(node.size) - start[node]
    d = degree[node]
    first = elements[offsets[node] + local // d]
    second = elements[offsets[node] + local % d]
    keep = first != second
    n_el = int(xp.asarray(connectivity).shape[0])
    keys = xp.sort(first[keep].astype(xp.int64) * n_el + second[keep])
    if keys.size:
        keys = keys[xp.concatenate([xp.ones(1, dtype=bool), keys[1:] != keys[:-1]])]
    rows, cols = keys // n_el, (keys % n_el).astype(xp.int32)
    adj_offsets = xp.zeros(n_el + 1, dtype=xp.int64)
    adj_offsets[1:] = xp.cumsum(xp.bincount(rows, minlength=n_el))
    return adj_offsets, cols
