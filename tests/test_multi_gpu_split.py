"""The several-GPU split's plan, staging and gathering on the CPU: apply_split_reference (the NumPy twin of
MultiGpuOperator) equals the unsplit specification for any device count and either split."""

import numpy as np
import pytest

from paraflux.engine.truncation.multi_gpu import SPLITS, apply_split_reference, plan, split_elements
from paraflux.engine.truncation.operator import Currents, apply_reference


def random_case(n_rhs, n_s=40, n_elem=11, q=3, seed=0):
    rng = np.random.default_rng(seed)
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    cur = Currents(cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s, 3), cplx(n_rhs, n_s), cplx(n_rhs, n_s))
    return cur, 0.3 * rng.standard_normal((n_s, 3)), rng.standard_normal((n_elem * q, 3)) + 2.0


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("devices", "n_rhs"), [(1, 1), (1, 5), (2, 1), (2, 5), (3, 7), (4, 2), (5, 37)])
def test_split_equals_the_unsplit_specification(split, devices, n_rhs):
    cur, sources, targets = random_case(n_rhs, seed=devices * 100 + n_rhs)
    e_ref, f_ref = apply_reference(targets, sources, cur, 6.0)
    e, f = apply_split_reference(targets, sources, cur, 6.0, 3, devices, split)
    assert not np.isnan(e).any() and not np.isnan(f).any()  # every entry written by some part
    assert np.abs(e - e_ref).max() < 1e-13 * np.abs(e_ref).max()
    assert np.abs(f - f_ref).max() < 1e-13 * np.abs(f_ref).max()


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("n_elem", "n_rhs", "devices"), [(11, 5, 4), (3, 2, 4), (101, 37, 4), (7, 1, 2)])
def test_plan_covers_every_point_and_right_hand_side_once_with_whole_elements(split, n_elem, n_rhs, devices):
    parts = plan(n_elem, 3, n_rhs, devices, split)
    hits = np.zeros((n_rhs, 3 * n_elem), dtype=int)
    for p in parts:
        hits[p.first:p.last, p.lo:p.hi] += 1
        assert p.lo % 3 == 0 and p.hi % 3 == 0 and 0 <= p.device < devices
    assert (hits == 1).all()
    assert len({p.device for p in parts}) == len(parts) == min(devices, n_elem if split == "points" else n_rhs)


def test_split_ranges_are_nearly_equal_and_an_unknown_split_is_refused():
    assert split_elements(101, 4) == [(0, 25), (25, 50), (50, 76), (76, 101)]
    assert split_elements(37, 4) == [(0, 9), (9, 18), (18, 28), (28, 37)]
    with pytest.raises(ValueError, match="split must be one of points, incidences"):
        plan(4, 3, 2, 2, "columns")
