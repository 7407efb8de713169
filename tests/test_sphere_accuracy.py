"""The sphere benchmark's accuracy measures (engine/bench/sphere_accuracy.py): zero for Mie itself, the
known values for a uniform error, an error in the backward lobe seen by the 40 dB window where a 20 dB one
misses it, and the grid's weights integrating Mie's bistatic RCS to its scattering cross-section (the
series' own sum)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paraflux.engine.bench.sphere_accuracy import (FAR_FIELD, cut_error_db, mie_on_grid, rcs_record,
                                                    sphere_accuracy)
from paraflux.engine.scattering.mie import _coefficients, pec_sphere_rcs

RADIUS, K = 1.5, 2 * math.pi  # a 3-wavelength sphere, lambda = 1 m


def _grid() -> tuple[np.ndarray, np.ndarray]:
    theta = np.arange(0.0, 180.0 + 1e-9, FAR_FIELD["theta_deg"]["step"])
    phi = np.arange(0.0, 350.0 + 1e-9, FAR_FIELD["phi_deg"]["step"])
    t, p = np.meshgrid(theta, phi, indexing="ij")
    return t.ravel(), p.ravel()


def test_mie_on_the_grid_is_the_e_and_h_plane_cuts():
    theta, phi = _grid()
    sigma_theta, sigma_phi = mie_on_grid(RADIUS, K, theta, phi)
    e_plane, h_plane = pec_sphere_rcs(RADIUS, K, theta)
    np.testing.assert_allclose(sigma_theta[phi == 0], e_plane[phi == 0], rtol=1e-14)
    np.testing.assert_allclose(sigma_phi[phi == 90], h_plane[phi == 90], rtol=1e-14)
    assert sigma_phi[phi == 0].max() < 1e-20 * e_plane.max()


def test_mie_against_itself_has_no_error():
    theta, phi = _grid()
    accuracy = sphere_accuracy(RADIUS, K, theta, phi, *mie_on_grid(RADIUS, K, theta, phi))
    assert (accuracy.window_db, accuracy.backscatter_db, accuracy.l2_relative) == (0.0, 0.0, 0.0)


def test_one_db_everywhere():
    theta, phi = _grid()
    sigma = [s * 10 ** 0.1 for s in mie_on_grid(RADIUS, K, theta, phi)]
    accuracy = sphere_accuracy(RADIUS, K, theta, phi, *sigma)
    assert accuracy.window_db == pytest.approx(1.0, abs=1e-9)
    assert accuracy.backscatter_db == pytest.approx(1.0, abs=1e-9)
    assert accuracy.l2_relative == pytest.approx(10 ** 0.05 - 1, rel=1e-9)


def test_the_40_db_window_sees_the_backward_lobe_that_20_db_misses():
    theta = np.arange(0.0, 180.1, 2.0)
    e_plane = pec_sphere_rcs(10.0, K, theta)[0]  # 20 wavelengths: the forward lobe far above the rest
    wrong = np.where(theta < 60, e_plane * 10 ** 0.3, e_plane)  # 3 dB too high toward the source
    ref = 10 * np.log10(e_plane)
    assert (ref[theta < 60] < ref.max() - 20).all()  # invisible to a 20 dB window
    assert cut_error_db(theta, e_plane, wrong, 20.0) == 0.0
    assert cut_error_db(theta, e_plane, wrong) == pytest.approx(3.0, abs=1e-9)


@pytest.mark.parametrize("theta_step, rtol", [(2.0, 5e-3), (0.25, 1e-4)])  # the benchmark's grid, a finer one
def test_the_grid_integrates_mie_to_its_scattering_cross_section(theta_step, rtol):
    """(1/4 pi) times the integral of the bistatic RCS over directions is the scattering cross-section,
    2 pi / k^2 sum (2n + 1)(|a_n|^2 + |b_n|^2) (Bohren and Huffman 4.61): the weights of the L2 norm. The
    10-degree azimuths integrate cos^2 and sin^2 exactly; the theta step's error falls with the step."""
    t, p = np.meshgrid(np.arange(0.0, 180.0 + 1e-9, theta_step), np.arange(0.0, 350.0 + 1e-9, 10.0), indexing="ij")
    theta, phi = t.ravel(), p.ravel()
    sigma = sum(mie_on_grid(RADIUS, K, theta, phi))
    cell = math.radians(theta_step) * math.radians(10.0)
    integral = (sigma * np.sin(np.radians(theta))).sum() * cell / (4 * math.pi)
    a, b = _coefficients(K * RADIUS)
    n = np.arange(1, len(a) + 1)
    assert integral == pytest.approx(2 * math.pi / K ** 2 * ((2 * n + 1) * (abs(a) ** 2 + abs(b) ** 2)).sum(),
                                     rel=rtol)


def test_the_record_keeps_every_direction_in_dbsm():
    theta, phi = _grid()
    record = rcs_record(theta, phi, *mie_on_grid(RADIUS, K, theta, phi))
    assert len(record["sigma_theta_dbsm"]) == len(theta) == 91 * 36
    assert record["sigma_theta_dbsm"][0] == pytest.approx(10 * math.log10(pec_sphere_rcs(RADIUS, K, [0.0])[0][0]),
                                                          abs=1e-4)
