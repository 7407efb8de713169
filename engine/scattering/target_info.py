"""What is said of a scatterer before it is solved: its surface and the S' and S around it, as the solve
meshes them, its extent in metres and in wavelengths, and whether its file declares its length unit (the
window's preview of an opened target or a built-in case)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..problems.scattering import LENGTH_UNITS
from ..truncation.fields import C0
from ..truncation.surfaces import TriSurface
from .cases import surfaces_of
from .target import UNIT_DECLARED


def unit_declared(path) -> bool:
    """Whether the file states its own length unit (STEP, IGES: length_unit is not applied to it)."""
    return Path(path).suffix.lower() in UNIT_DECLARED


@dataclass(frozen=True, eq=False)
class TargetPreview:
    """A scatterer meshed for a frequency: Gamma, S' and S (metres), the length unit its file was read in
    (None where the file declares its own, and for a built-in case) and Gamma's extent (3,) m along x, y, z."""

    name: str
    body: TriSurface
    inner: TriSurface
    outer: TriSurface
    length_unit: str | None
    extent: np.ndarray

    @property
    def n_elements(self) -> int:
        return self.body.n_elements

    @property
    def n_nodes(self) -> int:
        return self.body.n_nodes

    def extent_in(self, length_unit: str) -> np.ndarray:
        """The extent (3,) m were the file read in length_unit (unchanged where the file declares its unit)."""
        if self.length_unit is None:
            return self.extent
        return self.extent * (LENGTH_UNITS[length_unit] / LENGTH_UNITS[self.length_unit])

    def wavelengths(self, frequency: float, length_unit: str | None = None) -> float:
        """The widest extent in wavelengths at frequency (Hz), the file read in length_unit (default: as read)."""
        extent = self.extent if length_unit is None else self.extent_in(length_unit)
        return float(extent.max()) * frequency / C0


def preview_target(problem, control=None) -> TargetPreview:
    """The problem's Gamma, S' and S meshed as its solve meshes them (a case or target file in the meshing
    process when control can cancel); MeshError / ProblemError as the solve would raise them."""
    body, inner, outer = surfaces_of(problem, C0 / problem.frequency, control)
    path = problem.scatterer_path
    unit = None if problem.case is not None or unit_declared(path) else problem.length_unit
    name = problem.case or Path(path).name
    return TargetPreview(name, body, inner, outer, unit, np.ptp(body.points, axis=0))
