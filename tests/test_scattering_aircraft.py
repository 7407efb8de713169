"""The faceted aircraft target (engine/scattering/aircraft.py): a closed, outward, self-avoiding surface with
sharp chines and two canted tails, long enough in wavelengths at its example's frequency; its example
problem's 1000 incidences in both polarisations; a small solve's RCS obeying the target's mirror symmetry
and reciprocity; polarization = "both" in the problem file."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from paraflux.engine.cli import main
from paraflux.engine.errors import ProblemError
from paraflux.engine.mesh.checks import check_not_self_intersecting
from paraflux.engine.problems import load_case_problem
from paraflux.engine.problems.scattering import MAX_INCIDENCES, parse_scattering
from paraflux.engine.scattering import aircraft
from paraflux.engine.scattering.edges import sharp_edges
from paraflux.engine.scattering.mesh import enclosed_volume
from paraflux.engine.truncation.fields import C0
from paraflux.engine.truncation.surfaces import TriSurface, check_closed_outward


@pytest.fixture(scope="module")
def surface() -> TriSurface:
    return aircraft.aircraft_surface(1.5)


def _outward(points, triangles, name) -> TriSurface:
    """The surface checked closed, manifold and consistently oriented, and its triangles already outward."""
    surface = TriSurface(name, points, triangles)
    assert check_closed_outward(surface).triangles is surface.triangles  # not flipped: outward as built
    return surface


def test_the_meshed_aircraft_is_closed_outward_and_does_not_cut_itself(surface):
    _outward(surface.points, surface.triangles, "aircraft")
    check_not_self_intersecting(surface.points, surface.triangles, "the aircraft")
    hull = _outward(*aircraft.hull_facets(), "hull")
    tails = [_outward(*aircraft.tail_facets(side), "tail") for side in (1, -1)]
    inside = enclosed_volume(surface)
    assert enclosed_volume(hull) < inside < enclosed_volume(hull) + sum(enclosed_volume(t) for t in tails)
    extent = np.ptp(surface.points, axis=0)
    assert extent[0] == pytest.approx(aircraft.AIRCRAFT_LENGTH + aircraft.TAIL_OVERHANG, abs=1e-6)
    assert extent[1] == pytest.approx(aircraft.AIRCRAFT_SPAN, abs=1e-6)


def test_the_hull_is_its_own_mirror_image_with_a_sharp_chine_all_round():
    points, triangles = aircraft.hull_facets()
    mirrored = points * [1, -1, 1]
    assert np.abs(mirrored[:, None] - points[None]).sum(axis=2).min(axis=1).max() < 1e-12
    edges = sharp_edges(TriSurface("hull", points, triangles))
    ends = points[edges]
    on_chine = (np.abs(ends[:, :, 2]) < 1e-12).all(axis=1)
    outline = np.array(list(aircraft._OUTLINE.values()))
    half = np.linalg.norm(np.diff(outline, axis=0), axis=1).sum()  # nose to rear along y >= 0
    assert np.linalg.norm(ends[on_chine, 1] - ends[on_chine, 0], axis=1).sum() == pytest.approx(2 * half)


def test_the_twin_tails_rise_above_the_hull_canted_outward(surface):
    top = max(v[2] for v in aircraft._INTERIOR.values())
    for side in (1, -1):
        tail = surface.points[(surface.points[:, 2] > top + 0.05) & (side * surface.points[:, 1] > 0)]
        assert len(tail) >= 4
        slope = np.polyfit(tail[:, 2], side * tail[:, 1], 1)[0]  # outward per metre up
        assert math.degrees(math.atan(slope)) == pytest.approx(aircraft.TAIL_CANT_DEG, abs=5.0)


def test_the_example_is_long_in_wavelengths_with_1000_incidences_in_both_polarisations():
    problem = load_case_problem("aircraft")
    assert problem.case == "aircraft" and problem.monostatic
    assert aircraft.AIRCRAFT_LENGTH / (C0 / problem.frequency) >= 5.0
    assert len(problem.incidences) == 1000
    directions = {}
    for inc in problem.incidences:
        directions.setdefault((inc.theta_deg, inc.phi_deg), []).append(inc.polarization)
    assert len(directions) == 500 and all(p == ["theta", "phi"] for p in directions.values())
    phi = sorted(p for _, p in directions)
    assert phi[0] == 0.0 and phi[-1] == pytest.approx(359.28) and np.allclose(np.diff(phi), 0.72)


SMALL = """[problem]
kind = "scattering"
case = "aircraft"
frequency = 5e6
[geometry]
elements_per_wavelength = 6.0
[incidence]
theta_deg = 90.0
phi_deg = [30.0, 330.0, 0.0, 180.0]
polarization = "both"
[far_field]
monostatic = true
[solver]
order = 1
"""


def test_a_small_solve_is_mirror_symmetric_and_reciprocal_in_both_polarisations(tmp_path):
    """At 5 MHz (the aircraft 0.34 wavelengths long, order 1, 6 elements per wavelength; a few seconds) from
    the command line, lit from phi = 30 and 330 deg and nose- and tail-on in both polarisations: the four
    parts side by side in rcs_polarisations.csv; the mirror image across y = 0 swaps 30 and 330 and keeps
    every part's magnitude (measured: 0.1 dB co-, 0.35 dB cross-polarised), back-scatter is reciprocal (HV =
    VH, measured within 0.2 dB), and in the symmetry plane the cross-polarised parts vanish (measured 50 dB
    below HH)."""
    problem = tmp_path / "aircraft.toml"
    problem.write_text(SMALL)
    assert main(["solve", str(problem), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    with open(tmp_path / "out" / "rcs_polarisations.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["inc_phi_deg"]) for r in rows] == [30.0, 330.0, 0.0, 180.0]
    parts = {p: np.array([float(r[f"sigma_{p}_dbsm"]) for r in rows]) for p in ("vv", "hh", "hv", "vh")}
    assert all(np.isfinite(v).all() for v in parts.values())
    for part, tolerance in (("vv", 0.5), ("hh", 0.5), ("hv", 1.0), ("vh", 1.0)):
        assert abs(parts[part][0] - parts[part][1]) < tolerance, part
    assert np.abs(parts["hv"][:2] - parts["vh"][:2]).max() < 0.5
    assert (parts["hh"][2:] - np.maximum(parts["hv"][2:], parts["vh"][2:]) > 30.0).all()


def _incidences(**incidence):
    return parse_scattering({"problem": {"kind": "scattering", "case": "pec-sphere", "frequency": 3e8},
                             "incidence": incidence}, ".").incidences


def test_polarization_both_lights_every_direction_twice_and_lists_still_pair_up():
    both = _incidences(theta_deg=90.0, phi_deg=[0.0, 45.0], polarization="both")
    assert [(i.phi_deg, i.polarization) for i in both] == [(0.0, "theta"), (0.0, "phi"), (45.0, "theta"),
                                                           (45.0, "phi")]
    paired = _incidences(theta_deg=90.0, phi_deg=[0.0, 45.0], polarization=["theta", "phi"])
    assert [(i.phi_deg, i.polarization) for i in paired] == [(0.0, "theta"), (45.0, "phi")]
    with pytest.raises(ProblemError, match="polarization"):
        _incidences(polarization=["theta", "both"])
    with pytest.raises(ProblemError, match=f"more than {MAX_INCIDENCES:,}"):
        _incidences(phi_deg={"start": 0.0, "stop": MAX_INCIDENCES / 2, "step": 0.5}, polarization="both")
