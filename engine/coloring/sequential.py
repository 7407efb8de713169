"""Sequential colourings of paper 002, compiled with Numba: CCM (Algorithm 1), FCM (Algorithm 2),
OFCM (Algorithm 3) and the balancing pass. Each returns a colour (int32) per element.

OFCM keeps, per node, a tabu bit set of the colours already used by the elements at that node, so
colouring an element reads three bit sets instead of walking the elements of its nodes: the same
colours as FCM, found without searching nodes and colours again.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import MeshError
from .adjacency import max_node_degree, node_elements


def _ccm(conn, offsets, elements, max_colors):
    """Algorithm 1 (CCM): one pass over the elements per colour; (colour per element, colours)."""
    n_el = conn.shape[0]
    color = np.full(n_el, -1, np.int32)
    remaining = n_el
    c = 0
    while remaining > 0:  # one pass over the elements per colour
        if c >= max_colors:
            return color, c
        for e in range(n_el):
            if color[e] >= 0:
                continue
            free = True
            for k in range(conn.shape[1]):
                node = conn[e, k]
                for s in range(offsets[node], offsets[node + 1]):
                    if color[elements[s]] == c:
                        free = False
                        break
                if not free:
                    break
            if free:
                color[e] = c
                remaining -= 1
        c += 1
    return color, c


def _fcm(conn, offsets, elements, max_colors):
    """Algorithm 2 (FCM): one pass, the smallest colour free near each element."""
    n_el = conn.shape[0]
    color = np.full(n_el, -1, np.int32)
    used = np.full(max_colors + 1, -1, np.int64)  # used[c] == e: colour c taken near element e
    for e in range(n_el):  # one sequential pass
        for k in range(conn.shape[1]):
            node = conn[e, k]
            for s in range(offsets[node], offsets[node + 1]):
                f = color[elements[s]]
                if f >= 0:
                    used[f] = e
        c = 0
        while used[c] == e:
            c += 1
        color[e] = c
    return color, int(color.max()) + 1


def _ofcm(conn, n_nodes, words):
    """Algorithm 3 (OFCM): FCM's colours from per-node tabu bit sets of `words` 64-bit words."""
    n_el = conn.shape[0]
    color = np.empty(n_el, np.int32)
    tabu = np.zeros((n_nodes, words), np.uint64)  # bit c of node n: colour c used at n
    n_colors = 0
    for e in range(n_el):
        c = -1
        for w in range(words):
            taken = np.uint64(0)
            for k in range(conn.shape[1]):
                taken |= tabu[conn[e, k], w]
            free = ~taken
            if free != 0:
                low = free & (~free + np.uint64(1))  # lowest free bit
                bit = 0
                while (low >> np.uint64(bit)) != np.uint64(1):
                    bit += 1
                c = 64 * w + bit
                break
        color[e] = c
        for k in range(conn.shape[1]):
            tabu[conn[e, k], c // 64] |= np.uint64(1) << np.uint64(c % 64)
        if c + 1 > n_colors:
            n_colors = c + 1
    return color, n_colors


def _balance(conn, color, n_colors, n_nodes, passes):
    """Move elements from large colour groups to the smallest group none of their neighbours uses."""
    n_el = conn.shape[0]
    count = np.zeros((n_nodes, n_colors), np.int32)  # elements of colour c at node n
    size = np.zeros(n_colors, np.int64)
    for e in range(n_el):
        size[color[e]] += 1
        for k in range(conn.shape[1]):
            count[conn[e, k], color[e]] += 1
    target = (n_el + n_colors - 1) // n_colors
    for _ in range(passes):
        moved = 0
        for e in range(n_el):
            c = color[e]
            if size[c] <= target:
                continue
            best = -1
            for d in range(n_colors):
                if d == c or size[d] >= target:
                    continue
                if best >= 0 and size[d] >= size[best]:
                    continue
                free = True
                for k in range(conn.shape[1]):
                    if count[conn[e, k], d] > 0:
                        free = False
                        break
                if free:
                    best = d
            if best >= 0:
                for k in range(conn.shape[1]):
                    count[conn[e, k], c] -= 1
                    count[conn[e, k], best] += 1
                size[c] -= 1
                size[best] += 1
                color[e] = best
                moved += 1
        if moved == 0:
            break
    return color


@functools.lru_cache(maxsize=1)
def _compiled():
    """The kernels compiled with Numba (imported only when colouring on the CPU), each compiled now on a
    one-element mesh so that timed runs never include compilation."""
    import numba  # noqa: PLC0415

    ccm, fcm, ofcm, balance = (numba.njit(cache=False)(f) for f in (_ccm, _fcm, _ofcm, _balance))
    one = np.array([[0, 1, 2]], dtype=np.int32)
    o = np.array([0, 1, 2, 3], dtype=np.int64)
    els = np.zeros(3, dtype=np.int32)
    ccm(one, o, els, 4)
    fcm(one, o, els, 4)
    ofcm(one, 3, 1)
    balance(one, np.zeros(1, np.int32), 1, 3, 1)
    return {"ccm": ccm, "fcm": fcm, "ofcm": ofcm, "balance": balance}


def color_limit(connectivity: np.ndarray, n_nodes: int) -> int:
    """An upper bound on the colours greedy colouring can need: elements sharing a node with one
    element, plus one."""
    return connectivity.shape[1] * (max_node_degree(connectivity, n_nodes) - 1) + 1


def color_sequential(method: str, connectivity: np.ndarray, n_nodes: int) -> np.ndarray:
    """(n_elements,) int32 colours by 'ccm', 'fcm' or 'ofcm' (elements in their stored order)."""
    kernels = _compiled()
    conn = np.ascontiguousarray(connectivity, dtype=np.int32)
    limit = color_limit(conn, n_nodes)
    if method == "ofcm":
        color, _ = kernels["ofcm"](conn, n_nodes, -(-limit // 64))
        return color
    offsets, elements = node_elements(conn, n_nodes)
    color, _ = kernels[method](conn, offsets, elements, limit)
    if (color < 0).any():
        raise MeshError(f"{method} needed more than {limit} colours")  # cannot happen for valid meshes
    return color


def balance_colors(connectivity: np.ndarray, n_nodes: int, colors: np.ndarray, passes: int = 8) -> np.ndarray:
    """Even the group sizes without adding colours: elements of groups above the mean move to the
    smallest group that none of their neighbours uses. Returns new colours (int32)."""
    n_colors = int(colors.max()) + 1
    return _compiled()["balance"](np.ascontiguousarray(connectivity, dtype=np.int32),
                                  colors.astype(np.int32).copy(), n_colors, n_nodes, passes)
