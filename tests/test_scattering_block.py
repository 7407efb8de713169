"""Many incidences at once (issue 27): a block of incidences, iterated as the few columns of its data's
numerical range, gives every incidence the RCS and the iteration count it gets alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paraflux.engine.problems.scattering import parse_scattering
from paraflux.engine.run_control import RunControl
from paraflux.engine.scattering import run
from paraflux.engine.scattering.cases import surfaces_of
from paraflux.engine.scattering.fem import discretise
from paraflux.engine.scattering.incidences import combine, combined_norms, compress
from paraflux.engine.scattering.iteration import sprime_currents
from paraflux.engine.scattering.mesh import volume_mesh
from paraflux.engine.scattering.run import run_problem
from paraflux.engine.scattering.system import build_system
from paraflux.engine.scattering.waves import dbsm, far_field, rcs, unit_vectors
from paraflux.engine.truncation.fields import C0

RNG = np.random.default_rng(11)
# the last repeats the first: six incidences, five columns
INCIDENCES = {"theta_deg": [90.0, 90.0, 90.0, 30.0, 150.0, 90.0], "phi_deg": [0.0, 50.0, 100.0, 200.0, 300.0, 0.0],
              "polarization": ["theta", "theta", "phi", "theta", "phi", "theta"]}


def monostatic(incidence: dict, acceleration: str = "fixed-point", **solver):
    """The problem of monostatic incidences on a coarse sphere of ka = 1 at 300 MHz."""
    data = {"problem": {"kind": "scattering", "case": "pec-sphere", "frequency": 300e6},
            "geometry": {"radius": C0 / 300e6 / (2 * np.pi), "elements_per_wavelength": 6},
            "incidence": incidence, "far_field": {"monostatic": True},
            "solver": {"acceleration": acceleration, **solver}}
    return parse_scattering(data, Path("."))


def sweep(acceleration: str, which=slice(None)):
    return run_problem(monostatic({key: values[which] for key, values in INCIDENCES.items()}, acceleration))


def rcs_one_by_one(system, u: np.ndarray, theta: np.ndarray, phi: np.ndarray):
    """The reference: each incidence's currents from its own solution u[:, i] and its far field alone."""
    out = [rcs(far_field(unit_vectors(theta[i], phi[i])[0], system.inner.points,
                         sprime_currents(system, u[:, i:i + 1]), system.k)[0], theta[i], phi[i])
           for i in range(len(theta))]
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


@pytest.mark.parametrize("acceleration", ["fixed-point", "gmres"])
def test_a_block_gives_every_incidence_its_separate_rcs_and_iterations(acceleration):
    block = sweep(acceleration)
    assert block.converged.all() and block.columns == (5 if acceleration == "fixed-point" else 6)
    for i in range(len(INCIDENCES["phi_deg"]) - 1):
        alone = sweep(acceleration, slice(i, i + 1))
        assert block.iteration_counts[i] == alone.iteration_counts[0]
        for together, separate in (((block.sigma_theta, block.sigma_phi), (alone.sigma_theta, alone.sigma_phi)),
                                   (block.sigma_abc, alone.sigma_abc)):
            peak = max(s[i].max() for s in together)
            for a, b in zip(together, separate):
                assert np.abs(a[i] - b[0]).max() <= 1e-10 * peak
    assert np.abs(block.solution.reshape(2, 6)[:, 5] - block.solution.reshape(2, 6)[:, 0]).max() < 1e-9  # dB


@pytest.mark.parametrize("linear_solver", ["umfpack", pytest.param("cudss", marks=pytest.mark.gpu)])
def test_a_sweeps_far_field_from_its_columns_is_every_incidences_own(linear_solver):
    """cudss: the columns iterate on the GPU (CuPy), umfpack: on the host."""
    if linear_solver == "cudss":
        pytest.importorskip("nvmath")
    phi = np.arange(0.0, 360.0, 10.0)
    problem = monostatic({"theta_deg": [90.0] * 36, "phi_deg": list(phi), "polarization": ["theta"] * 36}, order=1)
    wavelength = C0 / problem.frequency
    mesh = volume_mesh(*surfaces_of(problem, wavelength, RunControl()), wavelength / problem.density)
    system = build_system(discretise(mesh, problem.solver.order), 2 * np.pi / wavelength, linear_solver)
    done, abc, columns, _, _ = run._iterate(system, problem, RunControl())
    assert done.converged.all() and columns < 36
    theta, phi = run._directions(problem)
    for solutions in (done.u, abc):
        u = np.hstack([solutions.column(i) for i in range(36)])
        new = run._rcs(system, solutions, theta, phi)
        old = rcs_one_by_one(system, u, theta, phi)
        peak = old[0].max()  # theta-polarised incidences: sigma_phi is round-off
        for a, b in zip(new, old):
            assert np.abs(a - b).max() <= 1e-12 * peak
        assert np.abs(dbsm(new[0]) - dbsm(old[0])).max() <= 1e-10


def test_incidences_spanning_few_modes_iterate_as_few_columns():
    phi = np.arange(0.0, 360.0, 10.0)
    rows = np.exp(1j * np.outer(np.cos(np.radians(phi)), np.linspace(0, 6, 400))).T  # plane waves on a segment
    data = compress(rows)
    assert data.rank < len(phi)
    assert np.abs(data.basis @ data.coefficients - rows).max() <= 1e-12 * np.abs(rows).max()


def test_combined_norms_are_the_norms_of_the_combinations():
    rows = RNG.standard_normal((4, 7, 3)) + 1j * RNG.standard_normal((4, 7, 3))
    coefficients = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))
    direct = np.linalg.norm(combine(rows, coefficients).reshape(6, -1), axis=1)
    np.testing.assert_allclose(combined_norms(rows, coefficients), direct, rtol=1e-12)
