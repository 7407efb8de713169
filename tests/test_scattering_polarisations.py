"""Both polarisations side by side (VV, HH, HV, VH by arrival direction), the angle a monostatic sweep runs
along, rcs_polarisations.csv from a STEP sphere checked against the Mie series, and a problem written as a
TOML file that `paraflux solve` reads back as the same problem."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from paraflux.engine.cli import main
from paraflux.engine.problems import load_case_problem, load_problem
from paraflux.engine.problems.scattering import Incidence
from paraflux.engine.problems.toml_output import toml_text, write_problem
from paraflux.engine.scattering.mie import amplitudes
from paraflux.engine.scattering.polarisations import both_polarisations, polarised_rcs, sweep_angle
from paraflux.engine.studies.registry import all_cases
from paraflux.engine.truncation.fields import C0


def fake_result(incidences, sigma_theta, sigma_phi):
    """A monostatic result's parts that polarised_rcs reads: each incidence's back-scatter direction."""
    theta = np.array([[i.theta_deg] for i in incidences])
    phi = np.array([[i.phi_deg] for i in incidences])
    return SimpleNamespace(problem=SimpleNamespace(incidences=tuple(incidences)), theta=theta, phi=phi,
                           sigma_theta=np.array(sigma_theta, dtype=float)[:, None],
                           sigma_phi=np.array(sigma_phi, dtype=float)[:, None])


def test_each_part_comes_from_its_incidence_and_component():
    """Arrival (90, 0) has both polarisations, (90, 30) only phi: VV = sigma_theta of the theta incidence,
    HV its sigma_phi, HH = sigma_phi of the phi incidence, VH its sigma_theta, NaN where one is missing."""
    incidences = [Incidence(90.0, 0.0, "phi"), Incidence(90.0, 30.0, "phi"), Incidence(90.0, 0.0, "theta")]
    rcs = polarised_rcs(fake_result(incidences, [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]))
    assert rcs.inc_phi.tolist() == [0.0, 30.0] and rcs.inc_theta.tolist() == [90.0, 90.0]
    assert rcs.sigma["VV"][:, 0].tolist()[0] == 3.0 and rcs.sigma["HV"][0, 0] == 6.0
    assert rcs.sigma["HH"][:, 0].tolist() == [4.0, 5.0] and rcs.sigma["VH"][:, 0].tolist() == [1.0, 2.0]
    assert np.isnan(rcs.sigma["VV"][1, 0]) and np.isnan(rcs.sigma["HV"][1, 0])
    assert both_polarisations(SimpleNamespace(incidences=incidences))
    assert not both_polarisations(SimpleNamespace(incidences=incidences[:2]))


def test_the_sweep_angle_is_the_one_that_varies():
    assert sweep_angle(np.full(3, 90.0), np.array([0.0, 10.0, 350.0]))[0] == "phi_deg"
    assert sweep_angle(np.array([0.0, 10.0]), np.zeros(2))[0] == "theta_deg"
    name, x = sweep_angle(np.array([0.0, 10.0]), np.array([5.0, 6.0]))
    assert name == "incidence" and x.tolist() == [0.0, 1.0]


def step_sphere(path: Path, radius_mm: float) -> Path:
    """A sphere of radius_mm centred at the origin, written as a STEP file in millimetres."""
    import gmsh

    gmsh.initialize(argv=[], readConfigFiles=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        # OpenCASCADE keeps the unit of the last STEP file read in this process and writes in it: say millimetres
        gmsh.option.setString("Geometry.OCCTargetUnit", "MM")
        gmsh.model.occ.addSphere(0, 0, 0, radius_mm)
        gmsh.model.occ.synchronize()
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    return path


def test_a_step_sphere_monostatic_in_both_polarisations_matches_mie(tmp_path, capsys):
    """A 150 mm STEP sphere at 300 MHz (ka = 0.94), lit around the equator in both polarisations: VV and HH
    within 0.5 dB of the Mie series' back-scatter, the cross-polarised parts 40 dB under them (a sphere
    keeps the polarisation), side by side in rcs_polarisations.csv."""
    step_sphere(tmp_path / "sphere.step", 150.0)
    (tmp_path / "p.toml").write_text(
        '[problem]\nkind = "scattering"\nfrequency = 300e6\nscatterer = "sphere.step"\n'
        '[incidence]\ntheta_deg = 90.0\nphi_deg = [0.0, 120.0, 0.0, 120.0]\n'
        'polarization = ["theta", "theta", "phi", "phi"]\n[far_field]\nmonostatic = true\n')
    assert main(["solve", str(tmp_path / "p.toml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    capsys.readouterr()
    with open(tmp_path / "out" / "rcs_polarisations.csv") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["inc_phi_deg"]) for r in rows] == [0.0, 120.0]
    k = 2 * np.pi * 300e6 / C0
    s1, _ = amplitudes(k * 0.15, np.array([np.pi]))
    mie = 10 * np.log10(4 * np.pi / k ** 2 * abs(s1[0]) ** 2)
    for r in rows:
        vv, hh, hv, vh = (float(r[f"sigma_{p}_dbsm"]) for p in ("vv", "hh", "hv", "vh"))
        assert abs(vv - mie) < 0.5 and abs(hh - mie) < 0.5, (vv, hh, mie)
        assert max(hv, vh) < mie - 40.0, (hv, vh)


def test_every_built_in_problem_is_written_and_read_back_the_same(tmp_path):
    for _, case in all_cases():
        try:
            problem = load_case_problem(case.name)
        except Exception:  # noqa: BLE001 (a case without its example file is another test's business)
            continue
        assert load_problem(write_problem(problem, tmp_path / f"{case.name}.toml")) == problem, case.name


def test_a_target_path_is_written_relative_to_the_problem_file(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "box.stl").write_text("solid\nendsolid\n")
    (tmp_path / "p.toml").write_text('[problem]\nkind = "scattering"\nfrequency = 3e8\nscatterer = "parts/box.stl"\n'
                                     'length_unit = "mm"\n')
    problem = load_problem(tmp_path / "p.toml")
    (tmp_path / "saved").mkdir()
    written = write_problem(problem, tmp_path / "saved" / "q.toml")
    assert 'scatterer = "../parts/box.stl"' in written.read_text()
    assert load_problem(written) == problem


@pytest.mark.parametrize("value, text", [("a \"quoted\" é", '"a \\"quoted\\" é"'), (float("inf"), "inf"),
                                         (1e-5, "1e-05"), ([1, 2.5], "[1, 2.5]"), (True, "true")])
def test_values_are_written_as_toml(value, text):
    import tomllib

    written = toml_text({"problem": {"kind": "x", "v": value}, "regions": {"air gap": {"mu_r": 1.0}}})
    assert f"v = {text}" in written and '[regions."air gap"]' in written
    assert tomllib.loads(written)["problem"]["v"] == value
