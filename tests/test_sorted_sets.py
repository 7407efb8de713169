"""engine/sorted_sets.py against NumPy's own set routines."""

import numpy as np
import pytest

from paraflux.engine.sorted_sets import complement, unique_sorted


@pytest.mark.parametrize("size", [0, 1, 7, 10_000])
def test_unique_sorted_and_complement_are_numpys(size):
    rng = np.random.default_rng(size)
    values = rng.integers(-50, 2**40 if size > 100 else 20, (size, 2))
    np.testing.assert_array_equal(unique_sorted(values), np.unique(values))
    members = unique_sorted(rng.integers(0, 30, size))
    np.testing.assert_array_equal(complement(30, members), np.setdiff1d(np.arange(30), members))
