// EBE-J-PCG iteration kernels. NumPy twins: ../ebe_layout.py (matvec) and ../reductions.py
// (sum_one_per_thread for the fused inner products: block partials, then sum_partials). Element data are structure-of-arrays:
// conn[k * n_el + e] (k = 0..2) with Dirichlet nodes replaced by the dummy index n_nodes, and the
// symmetric element matrix packed as ke[j * n_el + e], j = 0..5: k00 k01 k02 k11 k12 k22.
#include "block_sum.cuh"

// Second pass of the fused inner products, one block per sum: block b adds partials[b][0..n) in index
// order (deterministic) into *outs[b]. Launched with 1 block for (p, Ap), 2 for (r, z) and (r, r).
extern "C" __global__ void sum_partials(const int n, const double* __restrict__ partial_a,
                                        const double* __restrict__ partial_b, double* out_a, double* out_b) {
    const double* partial = blockIdx.x == 0 ? partial_a : partial_b;
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += BLOCK) acc = __dadd_rn(acc, partial[i]);
    acc = block_sum(acc);
    if (threadIdx.x == 0) *(blockIdx.x == 0 ? out_a : out_b) = acc;
}

// ATOMIC: accumulate with atomics (any element order); otherwise plain adds, for launches over one
// colour group of a conflict-free colouring, where no two threads share a node.
template <bool ATOMIC>
__device__ __forceinline__ double element_product(const int e, const int n_el, const int n_nodes,
                                                  const int* __restrict__ conn,
                                                  const double* __restrict__ ke,
                                                  const double* __restrict__ p, double* __restrict__ q) {
    const int a = conn[e], b = conn[n_el + e], c = conn[2 * n_el + e];
    const double pa = p[a], pb = p[b], pc = p[c];  // p[n_nodes] == 0: Dirichlet nodes drop out
    const double k00 = ke[e], k01 = ke[n_el + e], k02 = ke[2 * n_el + e];
    const double k11 = ke[3 * n_el + e], k12 = ke[4 * n_el + e], k22 = ke[5 * n_el + e];
    const double ya = k00 * pa + k01 * pb + k02 * pc;
    const double yb = k01 * pa + k11 * pb + k12 * pc;
    const double yc = k02 * pa + k12 * pb + k22 * pc;
    if (ATOMIC) {
        if (a < n_nodes) atomicAdd(q + a, ya);
        if (b < n_nodes) atomicAdd(q + b, yb);
        if (c < n_nodes) atomicAdd(q + c, yc);
    } else {
        if (a < n_nodes) q[a] += ya;
        if (b < n_nodes) q[b] += yb;
        if (c < n_nodes) q[c] += yc;
    }
    return pa * ya + pb * yb + pc * yc;  // p_e . K_e p_e
}

// q += sum_e K_e p_e (q zeroed by the previous cg_update_p), one thread per element.
extern "C" __global__ void ebe_matvec_atomic(const int n_el, const int n_nodes, const int* __restrict__ conn,
                                             const double* __restrict__ ke, const double* __restrict__ p,
                                             double* __restrict__ q) {
    const int e = blockIdx.x * BLOCK + threadIdx.x;
    if (e < n_el) element_product<true>(e, n_el, n_nodes, conn, ke, p, q);
}

// Fused: the same product and the block partials of (p, Ap) = sum_e p_e . K_e p_e (paper 000, eq. 11).
// (A last-block-finishes variant with __threadfence measured 30-40 % slower: the fence waits for the
// block's atomics; docs/benchmarks/ebe.md.)
extern "C" __global__ void ebe_matvec_atomic_pap(const int n_el, const int n_nodes, const int* __restrict__ conn,
                                                 const double* __restrict__ ke, const double* __restrict__ p,
                                                 double* __restrict__ q, double* __restrict__ partial) {
    const int e = blockIdx.x * BLOCK + threadIdx.x;
    const double value = e < n_el ? element_product<true>(e, n_el, n_nodes, conn, ke, p, q) : 0.0;
    const double sum = block_sum(value);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// Coloured accumulation: elements first .. first + count - 1 form one colour group (the element data
// are stored grouped by colour); one launch per colour, no atomics, the same sums in the same order
// on every run.
extern "C" __global__ void ebe_matvec_colored(const int first, const int count, const int n_el, const int n_nodes,
                                              const int* __restrict__ conn, const double* __restrict__ ke,
                                              const double* __restrict__ p, double* __restrict__ q) {
    const int t = blockIdx.x * BLOCK + threadIdx.x;
    if (t < count) element_product<false>(first + t, n_el, n_nodes, conn, ke, p, q);
}

// Fused and coloured: also the block partials of (p, Ap) for this group (partial offset per group).
extern "C" __global__ void ebe_matvec_colored_pap(const int first, const int count, const int n_el,
                                                  const int n_nodes, const int* __restrict__ conn,
                                                  const double* __restrict__ ke, const double* __restrict__ p,
                                                  double* __restrict__ q, double* __restrict__ partial) {
    const int t = blockIdx.x * BLOCK + threadIdx.x;
    const double value = t < count ? element_product<false>(first + t, n_el, n_nodes, conn, ke, p, q) : 0.0;
    const double sum = block_sum(value);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__device__ __forceinline__ double step_length(const double* scalars, int rz_slot) {
    const double pq = scalars[0];
    return pq != 0.0 ? scalars[rz_slot] / pq : 0.0;
}

// x += alpha p, r -= alpha q, z = r / diag with alpha = (r, z) / (p, Ap) read on the device.
extern "C" __global__ void cg_update_xrz(const int n, const double* __restrict__ scalars, const int rz_old,
                                         double* __restrict__ x, double* __restrict__ r,
                                         const double* __restrict__ p, const double* __restrict__ q,
                                         const double* __restrict__ inv_diag, double* __restrict__ z) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    const double alpha = step_length(scalars, rz_old);
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    z[i] = inv_diag[i] * ri;
}

// Fused: the same update and the block partials of (r, z) and (r, r).
extern "C" __global__ void cg_update_xrz_dots(const int n, const double* __restrict__ scalars, const int rz_old,
                                              double* __restrict__ x, double* __restrict__ r,
                                              const double* __restrict__ p, const double* __restrict__ q,
                                              const double* __restrict__ inv_diag, double* __restrict__ z,
                                              double* __restrict__ partial_rz, double* __restrict__ partial_rr) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    double rz_value = 0.0, rr_value = 0.0;
    if (i < n) {
        const double alpha = step_length(scalars, rz_old);
        x[i] += alpha * p[i];
        const double ri = r[i] - alpha * q[i];
        const double zi = inv_diag[i] * ri;
        r[i] = ri;
        z[i] = zi;
        rz_value = __dmul_rn(ri, zi);
        rr_value = __dmul_rn(ri, ri);
    }
    const double rz_sum = block_sum(rz_value);
    if (threadIdx.x == 0) partial_rz[blockIdx.x] = rz_sum;
    const double rr_sum = block_sum(rr_value);
    if (threadIdx.x == 0) partial_rr[blockIdx.x] = rr_sum;
}

// p = z + beta p with beta = (r, z)_new / (r, z)_old; zeroes q for the next product.
extern "C" __global__ void cg_update_p(const int n, const double* __restrict__ scalars, const int rz_old,
                                       const int rz_new, const double* __restrict__ z, double* __restrict__ p,
                                       double* __restrict__ q) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    const double old = scalars[rz_old];
    const double beta = old != 0.0 ? scalars[rz_new] / old : 0.0;
    p[i] = z[i] + beta * p[i];
    q[i] = 0.0;
}
