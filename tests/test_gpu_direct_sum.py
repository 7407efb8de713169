"""The tiled FP64 direct-sum kernel (engine/fmm/kernels/direct_sum.cu) against its NumPy twin."""

import numpy as np
import pytest

from paraflux.engine.fmm.operators import direct

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n_sources, n_targets", [(1000, 1000), (700, 333), (1, 5)])  # partial tiles too
def test_direct_sum_kernel_matches_the_numpy_twin(n_sources, n_targets):
    from paraflux.engine.fmm.gpu_direct import direct_sum_gpu  # noqa: PLC0415

    rng = np.random.default_rng(n_sources)
    src, q = rng.uniform(0, 1, (n_sources, 3)), rng.standard_normal(n_sources)
    tgt = np.concatenate([src[: n_targets // 2], rng.uniform(0, 1, (n_targets - n_targets // 2, 3))])  # coincident
    ref, ref_grad = direct(src, tgt, q[None], None, True)
    phi, grad = direct_sum_gpu(src, q, tgt)
    assert np.allclose(phi.get(), ref[0], rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    assert np.allclose(grad.get(), ref_grad[0], rtol=1e-12, atol=1e-12 * np.abs(ref_grad).max())
