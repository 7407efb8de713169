"""Structured closed surfaces for boundary element checks and cases: a box with its six faces labelled."""

from __future__ import annotations

import numpy as np

from ..truncation.surfaces import TriSurface, check_closed_outward

BOX_FACES = ("x0", "x1", "y0", "y1", "z0", "z1")  # the faces x = 0, x = Lx, y = 0, ...


def box_surface(lengths, divisions) -> tuple[TriSurface, np.ndarray]:
    """The surface of [0, Lx] x [0, Ly] x [0, Lz] (m) with divisions (nx, ny, nz) cells per edge, each cell
    two triangles, oriented outward; and each triangle's face index into BOX_FACES."""
    lengths, divisions = np.asarray(lengths, float), np.asarray(divisions, int)
    pts, tris, faces = [], [], []
    offset = 0
    for axis in range(3):
        u, v = [a for a in range(3) if a != axis]
        su, sv = (np.linspace(0, lengths[u], divisions[u] + 1), np.linspace(0, lengths[v], divisions[v] + 1))
        gu, gv = np.meshgrid(su, sv, indexing="ij")
        nu_, nv = divisions[u] + 1, divisions[v] + 1
        idx = np.arange(nu_ * nv).reshape(nu_, nv)
        quads = np.stack([idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]], -1).reshape(-1, 4)
        local = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
        for side in range(2):
            p = np.zeros((nu_ * nv, 3))
            p[:, u], p[:, v], p[:, axis] = gu.ravel(), gv.ravel(), side * lengths[axis]
            pts.append(p)
            tris.append(local + offset)
            faces.append(np.full(len(local), 2 * axis + side))
            offset += len(p)
    points = np.concatenate(pts)
    key = np.round(points / lengths.max() * 1e9).astype(np.int64)
    unique, inverse = np.unique(key, axis=0, return_inverse=True)
    merged = np.zeros((len(unique), 3))
    merged[inverse.reshape(-1)] = points
    triangles = inverse.reshape(-1)[np.concatenate(tris)]
    surface = TriSurface("box", merged, triangles)
    return _orient_each(surface), np.concatenate(faces)


def _orient_each(surface: TriSurface) -> TriSurface:
    """Every triangle turned so that its normal points away from the box centre (the faces are planar)."""
    tri = surface.triangles.copy()
    c = surface.points[tri]
    normal = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
    outward = np.einsum("ij,ij->i", normal, c.mean(axis=1) - surface.points.mean(axis=0)) > 0
    tri[~outward] = tri[~outward][:, ::-1]
    return check_closed_outward(TriSurface(surface.name, surface.points, tri))
