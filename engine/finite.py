"""Values that overflow double precision, caught where they first appear and named, instead of surfacing
later as a solver breakdown or a zero-area element."""

from __future__ import annotations

import numpy as np

from .errors import MeshError, ProblemError


def require_finite(values, what: str, cause: str) -> None:
    """ProblemError "<what> overflow double precision (<cause>)" unless every entry of values is finite."""
    with np.errstate(all="ignore"):
        if not np.isfinite(values).all():
            raise ProblemError(f"{what} overflow double precision ({cause})")


def require_measurable(points, what: str = "elements") -> None:
    """MeshError naming the nodes whose coordinates are not finite, or the coordinates when products of two
    or three of them (areas, volumes, Jacobians) would overflow double precision; points (n, d) as read."""
    points = np.asarray(points, dtype=float)
    if not points.size:
        return
    flat = points.reshape(len(points), -1)
    bad = np.flatnonzero(~np.isfinite(flat).all(axis=1))
    if bad.size:
        raise MeshError(f"the mesh has non-finite node coordinates ({bad.size} node(s); first: node {bad[0]} at "
                        f"{flat[bad[0]].tolist()})")
    largest = float(np.abs(flat).max())
    if largest > 1e100:
        raise MeshError(f"node coordinates reach {largest:.3g}: the {what}' sizes overflow double precision; "
                        "check the mesh's scale and [problem] length_unit")
