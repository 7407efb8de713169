"""What is said of a scatterer file before it is solved: its surface and the S' and S built around it, as the
solve meshes them, its extent in metres and in wavelengths, and whether the file declares its length unit
(the window's preview of an opened target)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..mesh.meshing_process import run_meshing
from ..problems.scattering import LENGTH_UNITS
from ..truncation.fields import C0
from ..truncation.surfaces import TriSurface
from .cases import target_case
from .target import UNIT_DECLARED


def unit_declared(path) -> bool:
    """Whether the file states its own length unit (STEP, IGES: length_unit is not applied to it)."""
    return Path(path).suffix.lower() in UNIT_DECLARED


@dataclass(frozen=True, eq=False)
class TargetPreview:
    """A target file meshed for a frequency: Gamma, S' and S (metres), the length unit it was read in
    (None where the file declares its own) and Gamma's extent (3,) m along x, y and z."""

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
    """The problem's scatterer file (problem.case None, S' and S not given) meshed as its solve meshes it,
    in the meshing process when control can cancel; MeshError / ProblemError as the solve would raise."""
    wavelength = C0 / problem.frequency
    body, inner, outer = run_meshing(target_case, str(problem.scatterer_path), problem.length_scale,
                                     problem.length_unit, wavelength, problem.inner_gap, problem.outer_gap,
                                     problem.density, problem.shells, control=control)
    unit = None if unit_declared(problem.scatterer_path) else problem.length_unit
    return TargetPreview(Path(problem.scatterer_path).name, body, inner, outer, unit, np.ptp(body.points, axis=0))
