// Laplace FMM kernels. NumPy twins: standard_m2l.m2l_lists_numba (M2L) and LaplaceFMM._p2p (near field).

// The paper's M2L: one block per target box, one thread per real coefficient row (the real and
// imaginary parts of each (j, k >= 0)), the source expansions of the interaction list staged through
// shared memory one box at a time. table_t is (343, width, width) with rows and columns swapped so that
// consecutive threads read consecutive addresses. Up to MAX_DENS densities per launch.
#define MAX_DENS 8
extern "C" __global__ void m2l_lists(
    const double* __restrict__ multipole, double* __restrict__ local,
    const long long* __restrict__ targets, const long long* __restrict__ starts,
    const long long* __restrict__ sources, const int* __restrict__ offsets,
    const double* __restrict__ table_t, int n_dens, int width)
{
    extern __shared__ double staged[];  // n_dens * width
    const long long t = targets[blockIdx.x];
    const int r = threadIdx.x;
    double acc[MAX_DENS];
    for (int d = 0; d < n_dens; ++d) acc[d] = 0.0;
    for (long long k = starts[blockIdx.x]; k < starts[blockIdx.x + 1]; ++k) {
        const double* m = multipole + sources[k] * (long long)n_dens * width;
        for (int i = threadIdx.x; i < n_dens * width; i += blockDim.x) staged[i] = m[i];
        __syncthreads();
        if (r < width) {
            const double* col = table_t + (long long)offsets[k] * width * width + r;
            for (int c = 0; c < width; ++c) {
                const double a = col[(long long)c * width];
                for (int d = 0; d < n_dens; ++d) acc[d] += a * staged[d * width + c];
            }
        }
        __syncthreads();
    }
    if (r < width)
        for (int d = 0; d < n_dens; ++d) local[(t * n_dens + d) * width + r] += acc[d];
}

// Near field: one thread per (sorted) target, over the source leaves paired with its leaf; the
// coincident pair (r = 0) is skipped. phi (n_dens, n_t) and grad (n_dens, n_t, 3) are added to.
extern "C" __global__ void p2p_leaves(
    const double* __restrict__ tgt, const double* __restrict__ src,
    const double* __restrict__ charges, const double* __restrict__ dipoles,
    const int* __restrict__ leaf_of_target, const long long* __restrict__ pair_start,
    const long long* __restrict__ pair_leaf, const long long* __restrict__ leaf_first,
    const long long* __restrict__ leaf_stop, int n_t, int n_s, int n_dens, int has_charges,
    int has_dipoles, int gradient,
    double* __restrict__ phi, double* __restrict__ grad)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_t) return;
    const double x = tgt[3 * t], y = tgt[3 * t + 1], z = tgt[3 * t + 2];
    const int leaf = leaf_of_target[t];
    for (int d = 0; d < n_dens; ++d) {
        double p = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
        for (long long k = pair_start[leaf]; k < pair_start[leaf + 1]; ++k) {
            const long long s_leaf = pair_leaf[k];
            for (long long j = leaf_first[s_leaf]; j < leaf_stop[s_leaf]; ++j) {
                const double dx = x - src[3 * j], dy = y - src[3 * j + 1], dz = z - src[3 * j + 2];
                const double r2 = dx * dx + dy * dy + dz * dz;
                if (r2 == 0.0) continue;
                const double inv = rsqrt(r2), inv3 = inv * inv * inv;
                if (has_charges) {
                    const double q = charges[(long long)d * n_s + j];
                    p += q * inv;
                    gx -= q * inv3 * dx; gy -= q * inv3 * dy; gz -= q * inv3 * dz;
                }
                if (has_dipoles) {
                    const double* v = dipoles + ((long long)d * n_s + j) * 3;
                    const double dot = v[0] * dx + v[1] * dy + v[2] * dz;
                    const double inv5 = inv3 * inv * inv;
                    p += dot * inv3;
                    gx += v[0] * inv3 - 3.0 * dot * inv5 * dx;
                    gy += v[1] * inv3 - 3.0 * dot * inv5 * dy;
                    gz += v[2] * inv3 - 3.0 * dot * inv5 * dz;
                }
            }
        }
        phi[(long long)d * n_t + t] += p;
        if (gradient) {
            double* g = grad + ((long long)d * n_t + t) * 3;
            g[0] += gx; g[1] += gy; g[2] += gz;
        }
    }
}
