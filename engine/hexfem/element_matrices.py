"""Element stiffness matrices K^e = sum_q B^T D B w_q det J of isotropic linear elasticity, by variant.

All variants return the same (m, N_e, N_e) float64 matrices, DOFs in local order 3 a + i (scalar
function a, component i), reference (unoriented) functions; dofs.DofMap applies the orientation signs.
`numpy`, `gemm` and `sumfact` take any array module (NumPy or CuPy); `serial` is one Numba core;
`ai`, `aii` and `mma` are the CUDA kernels of gpu_element_matrices.py.
"""

from __future__ import annotations

import numpy as np

from .basis import ReferenceTables, reference_tables
from .geometry import jacobians


def lame(young, poisson):
    """Lame parameters (lambda, mu) in Pa from Young's modulus (Pa) and Poisson's ratio."""
    young, poisson = np.asarray(young, dtype=np.float64), np.asarray(poisson, dtype=np.float64)
    return young * poisson / ((1 + poisson) * (1 - 2 * poisson)), young / (2 * (1 + poisson))


def textbook_flops(p: int) -> int:
    """Flops per element of eq. (6) done densely: per Gauss point D B (72 N_e) and B^T (D B) (12 N_e^2).

    The one count used for the GFLOP/s of every variant, whatever it actually computes.
    """
    t = reference_tables(p)
    n_e = t.basis.n_dofs
    return len(t.weights) * (12 * n_e * n_e + 72 * n_e)


def physical_gradients(coords, tables: ReferenceTables, xp=np):
    """Gradients (m, n_q^3, n_functions, 3) in 1/m and weights w det J (m, n_q^3) in m^3.

    coords: (m, 8, 3) float64 vertex coordinates in metres.
    """
    _, inv, det = jacobians(coords, tables.points, xp)
    grads = xp.einsum("qak,eqkj->eqaj", xp.asarray(tables.gradients), inv)
    return grads, det * xp.asarray(tables.weights)


def stiffness_numpy(coords, lam, mu, p: int, xp=np):
    """The textbook algorithm, batched over elements: per Gauss point, K += B^T (D B) w det J."""
    coords, lam, mu = xp.asarray(coords), xp.asarray(lam), xp.asarray(mu)
    t = reference_tables(p)
    m, n_s = len(coords), t.basis.n_functions
    grads, wdet = physical_gradients(coords, t, xp)
    d = xp.zeros((m, 6, 6))
    for i in range(3):
        for j in range(3):
            d[:, i, j] = lam
        d[:, i, i] += 2 * mu
        d[:, 3 + i, 3 + i] = mu
    k = xp.zeros((m, 3 * n_s, 3 * n_s))
    b = xp.zeros((m, 6, 3 * n_s))
    # Voigt rows xx, yy, zz, xy, xz, yz (engineering shear strains), as in the slides' B_i
    shear = ((3, 0, 1), (4, 0, 2), (5, 1, 2))
    for q in range(grads.shape[1]):  # the batch runs over elements; the loop over Gauss points stays
        g = grads[:, q]
        for i in range(3):
            b[:, i, i::3] = g[:, :, i]
        for row, i, j in shear:
            b[:, row, i::3] = g[:, :, j]
            b[:, row, j::3] = g[:, :, i]
        k += wdet[:, q, None, None] * xp.matmul(b.transpose(0, 2, 1), xp.matmul(d, b))
    return k


def _from_blocks(m4, lam, mu, xp):
    """K (m, 3 n_s, 3 n_s) from the weighted gradient Gram blocks m4[e, i, a, j, b] = sum_q c G_i(a) G_j(b)."""
    trace = m4[:, 0, :, 0] + m4[:, 1, :, 1] + m4[:, 2, :, 2]
    k4 = lam[:, None, None, None, None] * m4 + mu[:, None, None, None, None] * m4.transpose(0, 3, 2, 1, 4)
    for i in range(3):
        k4[:, i, :, i] += mu[:, None, None] * trace
    m, n_s = m4.shape[0], m4.shape[2]
    return xp.ascontiguousarray(k4.transpose(0, 2, 1, 4, 3)).reshape(m, 3 * n_s, 3 * n_s)


def stiffness_gemm(coords, lam, mu, p: int, xp=np):
    """One batched GEMM per element: the Gram matrix X^T X of the gradients scaled by sqrt(w det J).

    2 n_G (3 n_s)^2 flops per element instead of the textbook 12 n_G N_e^2 (det J > 0 is checked on
    reading the mesh, so the square root is real).
    """
    coords, lam, mu = xp.asarray(coords), xp.asarray(lam), xp.asarray(mu)
    t = reference_tables(p)
    m, n_s = len(coords), t.basis.n_functions
    grads, wdet = physical_gradients(coords, t, xp)
    x = (grads * xp.sqrt(wdet)[:, :, None, None]).transpose(0, 1, 3, 2).reshape(m, -1, 3 * n_s)
    gram = xp.matmul(x.transpose(0, 2, 1), x)
    return _from_blocks(gram.reshape(m, 3, n_s, 3, n_s), lam, mu, xp)


def _pair_tables(t: ReferenceTables, xp):
    """Per axis d and gradient components (k, l): 1D products (P^2, n_q) of the factors along d."""
    tables = {}
    for d in range(3):
        for k in range(3):
            for l in range(3):
                fk = t.derivs if k == d else t.values
                fl = t.derivs if l == d else t.values
                tables[d, k, l] = xp.asarray(np.einsum("fq,gq->fgq", fk, fl).reshape(-1, t.n_q))
    return tables


UPPER = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def stiffness_sumfact(coords, lam, mu, p: int, xp=np):
    """Sum factorisation: contract the Gauss points one direction at a time (t, then s, then r).

    Coefficient fields A^{ij}_{kl}(q) = w det J (lam Jinv_ki Jinv_lj + mu Jinv_kj Jinv_li
    + mu delta_ij Jinv_k. Jinv_l.) for the six blocks i <= j and nine reference-gradient pairs (k, l);
    cost per field n_q^3 P^2 + n_q^2 P^4 + n_q n_s^2 (P = p + 1 1D functions), O(p^7) in all.
    """
    coords, lam, mu = xp.asarray(coords), xp.asarray(lam), xp.asarray(mu)
    t = reference_tables(p)
    m, n_s, n_q, n_1 = len(coords), t.basis.n_functions, t.n_q, t.values.shape[0]
    _, inv, det = jacobians(coords, t.points, xp)
    c = det * xp.asarray(t.weights)
    dot = xp.einsum("eqkm,eqlm->eqkl", inv, inv)
    pairs = _pair_tables(t, xp)
    f = t.basis.factors
    idx1 = xp.asarray((f[:, None, 0] * n_1 + f[None, :, 0]).reshape(-1))
    idx23 = xp.asarray(((f[:, None, 1] * n_1 + f[None, :, 1]) * n_1 * n_1
                        + f[:, None, 2] * n_1 + f[None, :, 2]).reshape(-1))
    m4 = xp.zeros((m, 3, n_s, 3, n_s))
    for k in range(3):
        for l in range(3):
            fields = xp.stack([c * (lam[:, None] * inv[:, :, k, i] * inv[:, :, l, j]
                                    + mu[:, None] * inv[:, :, k, j] * inv[:, :, l, i]
                                    + (mu[:, None] * dot[:, :, k, l] if i == j else 0.0))
                               for i, j in UPPER], axis=1).reshape(m, 6, n_q, n_q, n_q)
            t1 = xp.matmul(fields, pairs[2, k, l].T)                        # (m, 6, qr, qs, P^2)
            t2 = xp.matmul(pairs[1, k, l], t1).reshape(m, 6, n_q, -1)       # (m, 6, qr, P^2 * P^2)
            gathered = t2[:, :, :, idx23]                                    # (m, 6, qr, n_s^2)
            blocks = xp.einsum("ebqn,qn->ebn", gathered, pairs[0, k, l][idx1].T).reshape(m, 6, n_s, n_s)
            for b, (i, j) in enumerate(UPPER):
                m4[:, i, :, j] += blocks[:, b]
    for i, j in UPPER:
        if i != j:
            m4[:, j, :, i] = m4[:, i, :, j].transpose(0, 2, 1)
    # m4 holds K's blocks already (lam and mu are inside the fields): K4[a, i, b, j] = m4[i, a, j, b]
    return xp.ascontiguousarray(m4.transpose(0, 2, 1, 4, 3)).reshape(m, 3 * n_s, 3 * n_s)


def _serial(coords, lam, mu, p, xp=np):
    from .serial import stiffness_serial  # noqa: PLC0415  (compiles with Numba on first use)

    return stiffness_serial(coords, lam, mu, p)


def _ai(coords, lam, mu, p, xp=np):
    from .gpu_element_matrices import stiffness_ai  # noqa: PLC0415

    return stiffness_ai(coords, lam, mu, p)


def _aii(coords, lam, mu, p, xp=np):
    from .gpu_element_matrices import stiffness_aii  # noqa: PLC0415

    return stiffness_aii(coords, lam, mu, p)


def _mma(coords, lam, mu, p, xp=np):
    from .gpu_element_matrices import stiffness_mma  # noqa: PLC0415

    return stiffness_mma(coords, lam, mu, p)


def _gemm(coords, lam, mu, p, xp=np):
    if xp is np:
        return stiffness_gemm(coords, lam, mu, p)
    from .gpu_element_matrices import stiffness_gemm_gpu  # noqa: PLC0415

    return stiffness_gemm_gpu(coords, lam, mu, p)


# integration variant -> (function, where it runs: "cpu", "gpu" or "backend")
INTEGRATIONS = {
    "numpy": (stiffness_numpy, "cpu"),
    "serial": (_serial, "cpu"),
    "ai": (_ai, "gpu"),
    "aii": (_aii, "gpu"),
    "gemm": (_gemm, "backend"),
    "mma": (_mma, "gpu"),
    "sumfact": (stiffness_sumfact, "backend"),
}


def working_bytes(p: int, integration: str) -> int:
    """Peak scratch memory per element of a variant (bytes), for choosing chunk sizes."""
    t = reference_tables(p)
    n_g, n_s, n_q, n_1 = len(t.weights), t.basis.n_functions, t.n_q, t.values.shape[0]
    out = 8 * (3 * n_s) ** 2
    scratch = {
        "numpy": 2 * out + 8 * n_g * n_s * 6,
        "serial": out,
        "ai": 2 * out + 8 * 3 * n_s,
        "aii": out + 8 * n_g * (3 * n_s + 1),
        "gemm": 3 * out + 8 * n_g * 3 * n_s * 3,
        "mma": out + 8 * n_g * 9,
        "sumfact": 3 * out + 8 * 6 * n_q * (2 * n_1 ** 4 + 2 * n_s * n_s + n_q * n_q * (2 + n_1 ** 2)),
    }[integration]
    return int(scratch)


CPU_CHUNK_FLOPS = 5e9  # textbook flops per chunk of a CPU variant: a run checks for Cancel every few seconds


def element_matrix_chunks(coords, lam, mu, p: int, integration: str, xp=np, budget_bytes: int = 1 << 30):
    """Yield (start, stop, K) over element chunks that fit budget_bytes of scratch memory.

    coords: (m, 8, 3) metres; lam, mu: (m,) Pa, as arrays of xp (the backend of gemm / sumfact). K is a
    NumPy array for numpy / serial, CuPy for ai / aii, of xp for gemm / sumfact.
    """
    function, where = INTEGRATIONS[integration]
    step = max(1, budget_bytes // working_bytes(p, integration))
    if where == "cpu":
        module = np
        step = min(step, max(1, int(CPU_CHUNK_FLOPS // textbook_flops(p))))  # seconds, not minutes, a chunk
    elif where == "gpu":
        import cupy as module  # noqa: PLC0415
    else:
        module = xp
    coords, lam, mu = (module.asarray(a) for a in (coords, lam, mu))
    for start in range(0, len(coords), step):
        stop = min(start + step, len(coords))
        yield start, stop, function(coords[start:stop], lam[start:stop], mu[start:stop], p, module)


def element_matrices(coords, lam, mu, p: int, integration: str = "numpy", xp=np):
    """All K^e (m, N_e, N_e) at once (small meshes, tests); see element_matrix_chunks for large ones."""
    chunks = [k for _, _, k in element_matrix_chunks(coords, lam, mu, p, integration, xp)]
    module = np if isinstance(chunks[0], np.ndarray) else __import__("cupy")
    return chunks[0] if len(chunks) == 1 else module.concatenate(chunks)
