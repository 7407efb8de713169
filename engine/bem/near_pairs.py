"""The near-field pair list of the FMM boundary element operator: which (collocation point, element) pairs
get accurate integrals, found by k-d trees per element-size class without Python-level lists."""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

SIZE_CLASS_RATIO = np.sqrt(2.0)  # largest over smallest element size within one search class


def near_pairs(targets, target_node, triangles, centroids, sizes, ratio: float):
    """(p, e, distance): every pair of target p (targets (T, 3) m) and element e (triangles (M, 3), centroids
    (M, 3) m, sizes (M,) m) with |centroid_e - x_p| < ratio size_e, or with target_node[p] (-1: none) a
    vertex of e; sorted by p, then e; distance (P,) m from the centroid. Elements are searched in classes of sizes within
    SIZE_CLASS_RATIO, each with its own radius, so a few large elements do not widen every search."""
    m = len(triangles)
    sizes = np.asarray(sizes, dtype=float)
    target_tree = cKDTree(targets)
    size_class = np.floor(np.log(sizes / sizes.min()) / np.log(SIZE_CLASS_RATIO)).astype(np.int64)
    keys = []
    for c in np.unique(size_class):
        members = np.flatnonzero(size_class == c)
        found = target_tree.sparse_distance_matrix(cKDTree(centroids[members]), ratio * sizes[members].max(),
                                                   output_type="ndarray")
        close = found["v"] < ratio * sizes[members[found["j"]]]
        keys.append(found["i"][close].astype(np.int64) * m + members[found["j"][close]])
    p, e = _vertex_pairs(target_node, triangles)
    keys.append(p * m + e)
    key = np.sort(np.concatenate(keys))  # most vertex pairs are close ones too: each pair once below
    key = key[np.r_[True, key[1:] != key[:-1]]]
    p, e = key // m, key % m
    return p, e, np.linalg.norm(centroids[e] - targets[p], axis=1)


def _vertex_pairs(target_node, triangles):
    """(p, e) for every target p with a node (target_node[p] >= 0) and every element e having it as a vertex."""
    flat = triangles.reshape(-1)
    order = np.argsort(flat, kind="stable")
    count = np.bincount(flat, minlength=int(max(flat.max(), np.max(target_node)) + 1))
    start = np.concatenate([[0], np.cumsum(count)])
    targets = np.flatnonzero(target_node >= 0)
    node = target_node[targets]
    per_target = count[node]
    p = np.repeat(targets.astype(np.int64), per_target)
    offset = np.arange(len(p)) - np.repeat(np.cumsum(per_target) - per_target, per_target)
    return p, order[np.repeat(start[node], per_target) + offset] // 3
