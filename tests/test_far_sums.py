"""The far field's phase sums on the host's cores (engine/scattering/far_sums.py) against their specification
through the phase matrix, for directions shared by every right-hand side and each its own, in float64."""

from __future__ import annotations

import numpy as np
import pytest

from paraflux.engine.scattering.far_sums import phase_sums, phase_sums_numpy


@pytest.mark.parametrize("shared", [True, False])
def test_the_phase_sums_equal_the_phase_matrix_product(shared):
    rng = np.random.default_rng(11)
    r, n_dir, n_src = 3, 40, 300
    directions = rng.standard_normal((1 if shared else r, n_dir, 3))
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    sources = 2.0 * rng.standard_normal((n_src, 3))
    values = rng.standard_normal((r, n_src, 7)) + 1j * rng.standard_normal((r, n_src, 7))
    fast, reference = phase_sums(directions, sources, values, 6.3), phase_sums_numpy(directions, sources, values, 6.3)
    assert fast.shape == reference.shape == (r, n_dir, 7)
    assert np.abs(fast - reference).max() <= 1e-13 * np.abs(reference).max()


def test_one_source_gives_its_phase():
    direction, source = np.array([[[0.0, 0.0, 1.0]]]), np.array([[0.0, 0.0, 0.25]])
    values = np.ones((1, 1, 1), dtype=complex)
    assert phase_sums(direction, source, values, 2 * np.pi)[0, 0, 0] == pytest.approx(1j / (4 * np.pi), abs=1e-16)


def test_directions_for_another_count_of_right_hand_sides_are_refused():
    values = np.ones((2, 4, 7), dtype=complex)
    with pytest.raises(ValueError, match="directions for 3 right-hand sides, values for 2"):
        phase_sums(np.ones((3, 5, 3)), np.zeros((4, 3)), values, 1.0)
