"""The scattering iteration's host products: the parallel sparse-times-columns product against SciPy's, and
n x v by components against np.cross (float64, complex)."""

import numpy as np
import scipy.sparse as sp

from paraflux.engine.scattering.fem import normal_cross, tangential
from paraflux.engine.scattering.sparse_columns import times_columns

RNG = np.random.default_rng(3)


def test_times_columns_equals_scipys_product_for_real_and_complex_operands():
    a = sp.random(300, 200, density=0.05, format="csr", random_state=4)
    for x in (RNG.standard_normal((200, 5)), RNG.standard_normal((200, 5)) + 1j * RNG.standard_normal((200, 5)),
              np.asfortranarray(RNG.standard_normal((200, 3)) + 1j)):
        np.testing.assert_allclose(times_columns(a, x), a @ x, rtol=0, atol=1e-13 * np.abs(a @ x).max())
    complex_a = (a * (1 + 2j)).tocsr()
    x = RNG.standard_normal((200, 4))
    np.testing.assert_allclose(times_columns(complex_a, x), complex_a @ x, rtol=0, atol=1e-13)
    one = RNG.standard_normal((200, 1))
    np.testing.assert_array_equal(times_columns(a, one), a @ one)  # one column: SciPy's product itself


def test_normal_cross_and_the_double_cross_by_components():
    n = RNG.standard_normal((40, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    v = RNG.standard_normal((6, 40, 3)) + 1j * RNG.standard_normal((6, 40, 3))
    np.testing.assert_allclose(normal_cross(n, v), np.cross(n[None], v), rtol=0, atol=1e-15)
    np.testing.assert_allclose(-tangential(v, n), np.cross(n[None], np.cross(n[None], v)), rtol=0, atol=1e-14)
