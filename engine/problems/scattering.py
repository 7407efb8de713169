"""Scattering (FE-IIIEE) problem definition: the TOML schema as frozen dataclasses.

The geometry is a built-in case (pec-sphere, nasa-almond, meshed with gmsh) or three closed triangle
surfaces (scatterer Gamma, S', S) in mesh files; incidences are plane waves arriving from (theta, phi);
the far field is a theta x phi grid or the back-scatter direction of each incidence (monostatic)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ProblemError
from .schema import REQUIRED, Key, Schema, Section
from .toml_input import Table, problem_head, table

LENGTH_UNITS = {"m": 1.0, "cm": 1e-2, "mm": 1e-3, "in": 0.0254}
CASES = ("pec-sphere", "nasa-almond", "ogive", "double-ogive", "cone-sphere", "cone-sphere-gap", "aircraft")
SHELLS = ("auto", "ellipsoid", "offset")  # S' and S built around a target (scattering/shells.py)
ORDERS = (1, 2, 3)
ACCELERATIONS = ("fixed-point", "gmres")
MAX_DIRECTIONS = 1_000_000
MAX_INCIDENCES = 10_000
MAX_ITERATIONS = 1_000
POLARIZATIONS = ("theta", "phi")
BOTH = "both"  # [incidence] polarization: every direction in each of POLARIZATIONS
DEFAULT_EPW = {1: 16.0, 2: 6.0, 3: 4.0}  # elements per wavelength: <= 0.5 dB against Mie at ka = 1, 3 and pi
DEFAULT_ORDER = 2  # faster and more accurate than order 1 on the sphere and the almond (issue 43)
_ANGLES = "number, list or {start, stop, step}"


@cache
def schema() -> Schema:
    """The scattering problem file's tables and keys, as parse_scattering reads them."""
    from ..variants import LINEAR_SOLVER, NEDELEC_ORDER, SCATTERING_LOOP  # noqa: PLC0415

    surface = "a closed triangle surface file, relative to the problem file"
    return Schema("scattering", (
        Section("problem", (
            Key("kind", str, REQUIRED, "", ("scattering",), "the study"),
            Key("case", str, None, "", ", ".join(CASES), "a built-in target meshed with gmsh (`paraflux cases`)"),
            Key("scatterer", str, None, "", "a file path", f"the PEC scatterer Gamma instead of a case: {surface} "
                "(any meshio format: STL, OBJ, PLY, .msh, ...) or a STEP, IGES or BREP file (STEP and IGES in "
                "the unit they declare, the others in length_unit; solids fused where they touch); coincident "
                "vertices merged and each closed part turned outward, a hole or a non-manifold edge refused "
                "with its place; alone, S' and S are built around it ([geometry] shells)"),
            Key("inner_surface", str, None, "", "a file path", f"S', enclosing Gamma: {surface}; with outer_surface"),
            Key("outer_surface", str, None, "", "a file path", f"S, enclosing S': {surface}; with inner_surface"),
            Key("length_unit", str, "m", "", tuple(LENGTH_UNITS), "unit of the geometry"),
            Key("frequency", float, REQUIRED, "Hz", "positive, at most 1e13", "of the incident waves"))),
        Section("geometry", (
            Key("radius", float, 0.25, "length_unit", "positive", "the sphere's radius (case = \"pec-sphere\" only)"),
            Key("inner_gap", float, 0.1, "wavelengths", "positive", "S' distance from the scatterer"),
            Key("outer_gap", float, 0.2, "wavelengths", "above inner_gap", "S distance from the scatterer"),
            Key("elements_per_wavelength", float, None, "", "2 to 100", "mesh density; left out: " + ", ".join(
                f"{epw:g} at order {order}" for order, epw in DEFAULT_EPW.items())),
            Key("shells", str, "auto", "", SHELLS, "S' and S built around the target (every case but pec-sphere, "
                "or scatterer alone): ellipsoids about its principal axes, surfaces offset from it, or auto: "
                "offset where the ellipsoid S would enclose more than twice the offset S's volume around it")),
            "the meshed region around the target"),
        Section("incidence", (
            Key("theta_deg", (float, list, dict), 0.0, "degrees", _ANGLES, "polar angle the wave arrives from"),
            Key("phi_deg", (float, list, dict), 0.0, "degrees", _ANGLES, "azimuth the wave arrives from"),
            Key("polarization", (str, list), "theta", "", "theta, phi, both, or a list of theta and phi",
                "along theta^ or phi^ at the arrival direction; both: each direction twice, theta then phi "
                "(VV and HH with their cross-polarised parts)")),
            f"plane waves arriving from (theta, phi): lists of equal length pair up, one value repeats; at most "
            f"{MAX_INCIDENCES:,}"),
        Section("far_field", (
            Key("theta_deg", (float, list, dict), {"start": 0.0, "stop": 180.0, "step": 1.0}, "degrees", _ANGLES,
                "far-field grid, theta"),
            Key("phi_deg", (float, list, dict), [0.0, 90.0], "degrees", _ANGLES, "far-field grid, phi"),
            Key("monostatic", bool, False, "", "true, false", "the back-scatter direction of each incidence "
                "instead of the grid")),
            f"where the RCS is computed: the theta x phi grid (at most {MAX_DIRECTIONS:,} directions)"),
        Section("solver", (
            Key("order", int, DEFAULT_ORDER, "", ", ".join(map(str, ORDERS)), NEDELEC_ORDER.description),
            Key("acceleration", str, "fixed-point", "", ACCELERATIONS, "the FE-IIIEE iteration's acceleration"),
            Key("tolerance", float, 1e-4, "", "1e-14 to below 1", "relative change of U on S (fixed-point) or "
                "GMRES residual at which the iteration stops"),
            Key("max_iterations", int, 50, "", f"0 to {MAX_ITERATIONS:,}", "iterations; 0: the absorbing "
                "condition alone"),
            Key("linear_solver", str, "auto", "", LINEAR_SOLVER.names, "the sparse factorisation; auto: the "
                "fastest installed"),
            Key("loop", str, "auto", "", SCATTERING_LOOP.names, "the truncation operator's loop strategy; auto: "
                "multi-gpu-tiled on several GPUs, else zgemm"))),
    ))


@dataclass(frozen=True)
class Incidence:
    """A plane wave arriving from (theta, phi) degrees, polarised along theta^ or phi^ there."""

    theta_deg: float
    phi_deg: float
    polarization: str


@dataclass(frozen=True)
class ScatteringSolver:
    order: int = DEFAULT_ORDER
    acceleration: str = "fixed-point"
    tolerance: float = 1e-4
    max_iterations: int = 50
    linear_solver: str = "auto"
    loop: str = "auto"  # the truncation operator's loop strategy

    @property
    def rtol(self) -> float:
        """The tolerance under the name the command line and the window use (--rtol)."""
        return self.tolerance


@dataclass(frozen=True)
class ScatteringProblem:
    length_unit: str
    frequency: float  # Hz
    incidences: tuple[Incidence, ...]
    far_theta: tuple[float, ...]  # degrees; the far-field grid is theta x phi
    far_phi: tuple[float, ...]
    monostatic: bool = False
    case: str | None = None
    radius: float = 0.25  # pec-sphere, in length_unit
    inner_gap: float = 0.1  # wavelengths
    outer_gap: float = 0.2
    elements_per_wavelength: float | None = None  # None: DEFAULT_EPW of the order
    shells: str = "auto"  # SHELLS: S' and S around a target other than the pec-sphere's
    scatterer_path: Path | None = None
    inner_path: Path | None = None
    outer_path: Path | None = None
    solver: ScatteringSolver = ScatteringSolver()
    case_elements: int | None = None  # not used: the mesh follows elements_per_wavelength
    kind: str = "scattering"

    @property
    def length_scale(self) -> float:
        return LENGTH_UNITS[self.length_unit]

    @property
    def density(self) -> float:
        return self.elements_per_wavelength or DEFAULT_EPW[self.solver.order]

    def with_solver(self, **changes: Any) -> "ScatteringProblem":
        """The problem with solver settings changed (None leaves one as it is; rtol is the tolerance)."""
        if changes.get("rtol") is not None:
            changes["tolerance"] = changes["rtol"]
        changes = {k: v for k, v in changes.items() if v is not None and k not in ("rtol", "check_every")}
        solver = replace(self.solver, **changes)
        check_solver(solver, "")
        return replace(self, solver=solver)


def angles(t: Table, key: str) -> tuple[float, ...]:
    """The declared key `key`: a number, a list of numbers, or {start, stop, step} (stop included) in degrees."""
    raw = t.raw(key)
    where = f"[{t.where}] {key}"
    if isinstance(raw, dict):
        r = Table(raw, f"{t.where}.{key}")
        start, stop, step = r.take("start", float), r.take("stop", float), r.take("step", float)
        r.done()
        if not step > 0 or stop < start:
            raise ProblemError(f"{where} needs step > 0 and stop >= start, got {start:g}, {stop:g}, {step:g}")
        count = (stop - start) / step + 1  # a float: inf where a tiny step overflows, refused here
        if not count <= MAX_DIRECTIONS:
            raise ProblemError(f"{where} gives {count:,.0f} angles, more than {MAX_DIRECTIONS:,}")
        count = math.floor((stop - start) / step + 1e-9) + 1
        return tuple(start + i * step for i in range(count))
    values = raw if isinstance(raw, list) else [raw]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        raise ProblemError(f"{where} must be a number, a list of finite numbers or {{start, stop, step}}")
    if len(values) > MAX_DIRECTIONS:
        raise ProblemError(f"{where} has {len(values):,} angles, more than {MAX_DIRECTIONS:,}")
    return tuple(float(v) for v in values)


def _incidences(top: Table) -> tuple[Incidence, ...]:
    t = table(top, "incidence")
    theta, phi = angles(t, "theta_deg"), angles(t, "phi_deg")
    pol = t.raw("polarization")
    t.done()
    both = pol == BOTH
    pols = list(POLARIZATIONS) if both else pol if isinstance(pol, list) else [pol]
    if not all(isinstance(p, str) and p in POLARIZATIONS for p in pols):
        raise ProblemError(f"[incidence] polarization must be \"theta\", \"phi\", \"{BOTH}\" or a list of "
                           f"\"theta\" and \"phi\", got {pol!r}")
    if not theta or not phi or not pols:
        raise ProblemError("[incidence] gives no incidence: theta_deg, phi_deg and polarization need at least one value")
    lists = (theta, phi) if both else (theta, phi, pols)
    n = max(len(x) for x in lists)
    if any(len(x) not in (1, n) for x in lists):
        raise ProblemError(f"[incidence] theta_deg, phi_deg{'' if both else ' and polarization'} lists must have "
                           f"equal lengths, got {', '.join(str(len(x)) for x in lists)}")
    count = n * len(pols) if both else n
    if count > MAX_INCIDENCES:
        raise ProblemError(f"[incidence] gives {count:,} incidences, more than {MAX_INCIDENCES:,}; split them in a "
                           "sweep")
    pick = lambda xs, i: xs[i if len(xs) > 1 else 0]  # noqa: E731
    if both:  # each direction theta-polarised, then phi-polarised
        return tuple(Incidence(pick(theta, i), pick(phi, i), p) for i in range(n) for p in POLARIZATIONS)
    return tuple(Incidence(pick(theta, i), pick(phi, i), pick(pols, i)) for i in range(n))


def _far_field(top: Table) -> tuple[tuple[float, ...], tuple[float, ...], bool]:
    t = table(top, "far_field")
    theta, phi = angles(t, "theta_deg"), angles(t, "phi_deg")
    monostatic = t.read("monostatic")
    t.done()
    if not monostatic and (not theta or not phi):
        raise ProblemError("[far_field] needs at least one theta_deg and one phi_deg (or monostatic = true)")
    if len(theta) * len(phi) > MAX_DIRECTIONS:
        raise ProblemError(f"[far_field] grid has {len(theta) * len(phi):,} directions, more than {MAX_DIRECTIONS:,}")
    return theta, phi, monostatic


def _solver(top: Table) -> ScatteringSolver:
    t = table(top, "solver")
    order = t.read("order")
    s = ScatteringSolver(order, t.read("acceleration"), t.read("tolerance"), t.read("max_iterations"),
                         t.read("linear_solver"), t.read("loop"))
    t.done()
    check_solver(s, "[solver] ")
    return s


def check_solver(s: ScatteringSolver, where: str) -> None:
    """The order, tolerance and iteration limit in range (from the problem file, where = "[solver] ", or the
    command line and the window, where = "")."""
    if s.order not in ORDERS:
        raise ProblemError(f"{where}order must be 1, 2 or 3 (the Nedelec order), got {s.order}")
    if not 1e-14 <= s.tolerance < 1:
        raise ProblemError(f"{where}tolerance must be from 1e-14 to below 1, got {s.tolerance:g}")
    if not 0 <= s.max_iterations <= MAX_ITERATIONS:
        raise ProblemError(f"{where}max_iterations must be from 0 to {MAX_ITERATIONS}, got {s.max_iterations}")


def _geometry(top: Table, case: str | None, surfaces_given: bool) -> dict[str, Any]:
    t = table(top, "geometry")
    g = {key: t.read(key) for key in ("radius", "inner_gap", "outer_gap", "elements_per_wavelength", "shells")}
    t.done()
    if case != "pec-sphere" and g["radius"] != 0.25:
        raise ProblemError("[geometry] radius is for case = \"pec-sphere\" only")
    if g["shells"] != "auto" and (case == "pec-sphere" or surfaces_given):
        raise ProblemError("[geometry] shells is for S' and S built around a target: a case other than "
                           "\"pec-sphere\", or scatterer without inner_surface and outer_surface")
    if not g["radius"] > 0:
        raise ProblemError(f"[geometry] radius must be positive, got {g['radius']:g}")
    if not g["inner_gap"] > 0:
        raise ProblemError(f"[geometry] inner_gap must be positive (S' must enclose the scatterer), got "
                           f"{g['inner_gap']:g} wavelengths")
    if not g["outer_gap"] > g["inner_gap"]:
        raise ProblemError(f"[geometry] outer_gap ({g['outer_gap']:g}) must exceed inner_gap ({g['inner_gap']:g}): "
                           "S' must lie inside S")
    epw = g["elements_per_wavelength"]
    if epw is not None and not 2 <= epw <= 100:
        raise ProblemError(f"[geometry] elements_per_wavelength must be from 2 to 100, got {epw:g}")
    return g


def _surfaces(head: Table, case: str | None, base_dir: Path) -> tuple[Path | None, Path | None, Path | None]:
    names = ("scatterer", "inner_surface", "outer_surface")
    given = {n: head.read(n) for n in names}
    if case is None and given["scatterer"] is None:
        raise ProblemError(f"[problem] needs case (one of: {', '.join(CASES)}) or scatterer (a surface mesh or "
                           "CAD file), with or without inner_surface and outer_surface")
    if (given["inner_surface"] is None) != (given["outer_surface"] is None):
        raise ProblemError("[problem] gives one of inner_surface and outer_surface: give both, or neither to "
                           "build S' and S around the scatterer")
    if case is not None and any(given.values()):
        raise ProblemError("[problem] gives a case and surface files: give one or the other")
    if case is not None and case not in CASES:
        raise ProblemError(f"[problem] case = {case!r} is not a built-in scattering case; choose one of: "
                           f"{', '.join(CASES)}")
    return tuple((base_dir / given[n]).resolve() if given[n] else None for n in names)


def parse_scattering(data: dict[str, Any], base_dir: Path) -> ScatteringProblem:
    """Build a ScatteringProblem from parsed TOML; paths are relative to base_dir."""
    top, head = problem_head(data, schema(), "a scattering problem")
    case = head.read("case")
    paths = _surfaces(head, case, base_dir)
    length_unit = head.read("length_unit")
    frequency = head.read("frequency")
    if not frequency > 0:
        raise ProblemError(f"[problem] frequency must be positive (Hz), got {frequency:g}")
    if frequency > 1e13:
        raise ProblemError(f"[problem] frequency must be at most 1e13 Hz, got {frequency:g}")
    head.done()
    geometry = _geometry(top, case, paths[1] is not None)
    incidences = _incidences(top)
    theta, phi, monostatic = _far_field(top)
    solver = _solver(top)
    top.done()
    return ScatteringProblem(length_unit, frequency, incidences, theta, phi, monostatic, case,
                             scatterer_path=paths[0], inner_path=paths[1], outer_path=paths[2], solver=solver,
                             **geometry)


def scattering_to_dict(problem: ScatteringProblem) -> dict[str, Any]:
    """The problem in the problem-file schema (paths absolute): parse_scattering(result, any folder) gives
    the problem back."""
    head: dict[str, Any] = {"kind": "scattering", "length_unit": problem.length_unit, "frequency": problem.frequency}
    if problem.case is not None:
        head["case"] = problem.case
    elif problem.inner_path is None:
        head["scatterer"] = str(problem.scatterer_path)
    else:
        head.update(scatterer=str(problem.scatterer_path), inner_surface=str(problem.inner_path),
                    outer_surface=str(problem.outer_path))
    geometry = {"radius": problem.radius, "inner_gap": problem.inner_gap, "outer_gap": problem.outer_gap}
    if problem.elements_per_wavelength is not None:
        geometry["elements_per_wavelength"] = problem.elements_per_wavelength
    if problem.shells != "auto":
        geometry["shells"] = problem.shells
    inc = problem.incidences
    s = problem.solver
    return {"problem": head, "geometry": geometry,
            "incidence": {"theta_deg": [i.theta_deg for i in inc], "phi_deg": [i.phi_deg for i in inc],
                          "polarization": [i.polarization for i in inc]},
            "far_field": {"theta_deg": list(problem.far_theta), "phi_deg": list(problem.far_phi),
                          "monostatic": problem.monostatic},
            "solver": {"order": s.order, "acceleration": s.acceleration, "tolerance": s.tolerance,
                       "max_iterations": s.max_iterations, "linear_solver": s.linear_solver, "loop": s.loop}}
