"""Scattering problems from surface files, and every bad input the issue lists: one line, exit 2, no files."""

from __future__ import annotations

import subprocess
import sys

import meshio
import pytest

from paraflux.engine.cli import main
from paraflux.engine.truncation.surfaces import uv_sphere

HEAD = '[problem]\nkind = "scattering"\nfrequency = 300e6\n'
FAR = '[far_field]\ntheta_deg = [0.0, 90.0, 180.0]\nphi_deg = [0.0]\n'


def write_sphere(path, radius, n_theta=8, drop=0, flip_into=None):
    """A UV sphere of radius (m) as a VTU surface; drop removes that many triangles (an open surface);
    flip_into pushes one node through the opposite side (a self-intersecting surface)."""
    points, triangles = uv_sphere(n_theta, radius)
    if flip_into is not None:
        points = points.copy()
        points[0] = -1.5 * points[0]
    meshio.write(path, meshio.Mesh(points, [("triangle", triangles[drop:])]))
    return path.name


def run(tmp_path, text, capsys, extra=()):
    problem = tmp_path / "p.toml"
    problem.write_text(text)
    out = tmp_path / "out"
    code = main(["solve", str(problem), "--out", str(out), "--quiet", *extra])
    err = capsys.readouterr().err.strip()
    return code, err, out


def files(tmp_path, radii=(0.1, 0.25, 0.4), damage=None):
    """The three surfaces as UV spheres of these radii (m); damage {"body"|"sprime"|"s": write_sphere options}."""
    names = [write_sphere(tmp_path / f"{n}.vtu", r, **(damage or {}).get(n, {}))
             for n, r in zip(("body", "sprime", "s"), radii)]
    return (f'scatterer = "{names[0]}"\ninner_surface = "{names[1]}"\nouter_surface = "{names[2]}"\n'
            "[geometry]\nelements_per_wavelength = 8\n")


def test_three_surface_files_solve(tmp_path, capsys):
    code, err, out = run(tmp_path, HEAD + files(tmp_path) + FAR, capsys)
    assert code == 0, err
    rows = (out / "rcs.csv").read_text().splitlines()
    assert rows[0] == ("incidence,inc_theta_deg,inc_phi_deg,polarization,theta_deg,phi_deg,sigma_theta_m2,"
                       "sigma_phi_m2,sigma_theta_dbsm,sigma_phi_dbsm")
    assert len(rows) == 4 and all(float(r.split(",")[6]) > 0 for r in rows[1:])
    assert {p.name for p in out.iterdir()} == {"rcs.csv", "summary.json", "solution.vtu", "currents.vtu"}


CASE = HEAD.replace("frequency", 'case = "pec-sphere"\nfrequency')
BAD = {
    "a gap of zero": (CASE + "[geometry]\ninner_gap = 0.0\n", "inner_gap must be positive"),
    "S' not inside S": (CASE + "[geometry]\ninner_gap = 0.3\nouter_gap = 0.2\n", "must lie inside S"),
    "a frequency of zero": (CASE.replace("300e6", "0.0"), "frequency must be positive"),
    "a negative frequency": (CASE.replace("300e6", "-1e9"), "frequency must be positive"),
    "no incidence": (CASE + "[incidence]\ntheta_deg = []\nphi_deg = []\n", "no incidence"),
    "unequal incidence lists": (CASE + "[incidence]\ntheta_deg = [0.0, 10.0]\nphi_deg = [0.0, 1.0, 2.0]\n",
                                "equal lengths"),
    "an unknown key": (CASE + "[solver]\nspeed = 3\n", "unknown key"),
    "an unknown polarisation": (CASE + "[incidence]\npolarization = \"circular\"\n", "polarization"),
    "order 4": (CASE + "[solver]\norder = 4\n", "[solver] order must be 1, 2 or 3"),
    "a case and files": (CASE.replace("frequency", 'scatterer = "x.vtu"\nfrequency'), "one or the other"),
    "no geometry": (HEAD, "needs case"),
    "a step that overflows the angle count": (
        CASE + "[far_field]\ntheta_deg = { start = 0.0, stop = 1e150, step = 1e-200 }\n", "gives inf angles"),
    "a 401-digit incidence angle": (CASE + "[incidence]\ntheta_deg = [" + "9" * 401 + "]\n", "theta_deg[0] = an integer"),
    "an infinite frequency": (CASE.replace("300e6", "inf"), "frequency = inf is not a finite number"),
    "a frequency beyond 1e13 Hz": (CASE.replace("300e6", "1e100"), "frequency must be at most 1e13 Hz"),
    "1e300 as a radius": (CASE + "[geometry]\nradius = 1e300\n", "geometry.radius = 1e+300 is too large"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_problem_files_are_refused_in_one_line_with_exit_2(tmp_path, capsys, name):
    text, message = BAD[name]
    code, err, out = run(tmp_path, text, capsys)
    assert code == 2 and message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


@pytest.mark.parametrize("name, kw, message", [
    ("an open surface", dict(damage={"sprime": {"drop": 3}}), "not closed"),
    ("a self-intersecting surface", dict(damage={"s": {"flip_into": True}}), "intersect"),
    ("a scatterer not enclosed by S'", dict(radii=(0.3, 0.25, 0.4)), "not enclosed by S'"),
    ("S' outside S", dict(radii=(0.1, 0.5, 0.4)), "S' is not inside S"),
])
def test_bad_surfaces_are_refused_in_one_line_with_exit_2(tmp_path, capsys, name, kw, message):
    code, err, out = run(tmp_path, HEAD + files(tmp_path, **kw) + FAR, capsys)
    assert code == 2 and message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


@pytest.mark.parametrize("extra, message", [
    (["--max-iterations", "1001"], "max_iterations must be from 0 to 1000, got 1001"),
    (["--max-iterations", "9" * 25], "--max-iterations must be from 1 to 1,000,000"),
    (["--rtol", "5e-15"], "tolerance must be from 1e-14 to below 1, got 5e-15"),
    (["--size", "10"], "--size does not apply to scattering problems"),
    (["--order", "4"], "order must be 1, 2 or 3 (the Nedelec order), got 4"),
])
def test_command_line_options_beyond_the_studys_range_are_refused(tmp_path, capsys, extra, message):
    """Options are checked against the ranges the problem file has (the command line bypassed them)."""
    code, err, out = run(tmp_path, CASE, capsys, extra)
    assert code == 2 and message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_a_case_too_fine_to_mesh_is_refused_before_gmsh_runs(tmp_path, capsys):
    """1e11 Hz on the 0.25 m sphere: S alone would need 7.3 million triangles at order 2's 6 elements per
    wavelength (gmsh ran for hours, past SIGTERM, since it cannot be interrupted inside a call)."""
    code, err, out = run(tmp_path, CASE.replace("300e6", "1e11"), capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "the outer surface S would have about 7,300,137 triangles, more than 1,000,000" in err
    assert not out.exists()


def test_surface_files_too_far_apart_to_mesh_are_refused_before_gmsh_runs(tmp_path, capsys):
    code, err, out = run(tmp_path, HEAD.replace("300e6", "1e10") + files(tmp_path) + FAR, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "the volume mesh would have about" in err and "tetrahedra, more than 3,000,000" in err
    assert not out.exists()


def test_an_iteration_short_of_its_tolerance_writes_its_result_and_exits_3(tmp_path, capsys):
    code, err, out = run(tmp_path, CASE + "[geometry]\nradius = 0.1\nelements_per_wavelength = 6\n" + FAR
                         + "[solver]\nmax_iterations = 1\ntolerance = 1e-12\n", capsys)
    assert code == 3 and "did not reach tolerance" in err
    assert '"converged": false' in (out / "summary.json").read_text()


def test_out_of_memory_in_the_operator_is_one_line_exit_3_and_no_files(tmp_path, capsys, monkeypatch):
    """The operator's loop running out of memory (the GPU's case is under the gpu marker in
    test_out_of_memory.py) ends in the operator's own sentence naming the sizes, and writes nothing."""
    from paraflux.engine.truncation import strategies

    def full(*args):
        raise MemoryError("Unable to allocate 9.00 GiB for an array with shape (600000000,) and data type complex128")

    monkeypatch.setitem(strategies.IMPLEMENTATIONS, "zgemm", full)
    code, err, out = run(tmp_path, HEAD + files(tmp_path) + FAR, capsys)
    assert code == 3 and len(err.splitlines()) == 1, err
    assert "the host ran out of memory for applying 'zgemm' to" in err and "it needed 9.00 GiB" in err, err
    assert not out.exists()


SIGNAL_IN_PHASE = """
import os, signal, sys
import gmsh
from paraflux.engine.cli import main
from paraflux.engine.run_control import RunControl
from paraflux.engine.scattering import system

def signalled(call):  # the signal arrives as the call starts: it is handled when the call returns
    def wrapped(*args, **kwargs):
        os.kill(os.getpid(), signal.{name})
        return call(*args, **kwargs)
    return wrapped

if "{phase}" == "meshing":
    gmsh.model.mesh.generate = signalled(gmsh.model.mesh.generate)
elif "{phase}" == "factorisation":
    system.factorise = signalled(system.factorise)
else:
    report = RunControl.report
    RunControl.report = lambda self, f, m: (m.startswith("iteration 1") and os.kill(os.getpid(), signal.{name}),
                                            report(self, f, m))
sys.exit(main(["solve", "p.toml", "--out", "a/b", "--quiet"]))
"""


@pytest.mark.parametrize("phase, name, code, line", [
    ("meshing", "SIGINT", 130, "paraflux: interrupted"), ("factorisation", "SIGINT", 130, "paraflux: interrupted"),
    ("iteration", "SIGINT", 130, "paraflux: interrupted"), ("factorisation", "SIGTERM", 143, "paraflux: terminated")])
def test_a_signal_in_each_long_phase_is_one_line_and_leaves_nothing(tmp_path, phase, name, code, line):
    """Ctrl-C in gmsh's meshing, the factorisation or the iteration of the scattering study (SIGTERM unwinds
    the same way: sent in one phase)."""
    (tmp_path / "p.toml").write_text(CASE + "[geometry]\nradius = 0.1\nelements_per_wavelength = 6\n" + FAR)
    proc = subprocess.run([sys.executable, "-c", SIGNAL_IN_PHASE.format(name=name, phase=phase)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == code and proc.stderr.strip() == line, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]
