// The exact Laplace direct sum over all pairs in FP64: potential sum_j q_j / |x_i - y_j| and its gradient at
// every target, coincident pairs skipped. One thread per target; the block stages TILE sources at a time in
// shared memory, so each source is read from global memory once per block. NumPy twin: operators.direct.
#define TILE 256

extern "C" __global__ void direct_sum_charges(const double* __restrict__ src, const double* __restrict__ q,
                                              const double* __restrict__ tgt, int n_s, int n_t,
                                              double* __restrict__ phi, double* __restrict__ grad)
{
    __shared__ double sx[TILE], sy[TILE], sz[TILE], sq[TILE];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = i < n_t;
    const double x = active ? tgt[3 * i] : 0.0, y = active ? tgt[3 * i + 1] : 0.0, z = active ? tgt[3 * i + 2] : 0.0;
    double p = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
    for (int base = 0; base < n_s; base += TILE) {
        const int j = base + threadIdx.x;
        if (j < n_s) {
            sx[threadIdx.x] = src[3 * j];
            sy[threadIdx.x] = src[3 * j + 1];
            sz[threadIdx.x] = src[3 * j + 2];
            sq[threadIdx.x] = q[j];
        }
        __syncthreads();
        const int count = min(TILE, n_s - base);
        #pragma unroll 8
        for (int k = 0; k < count; ++k) {
            const double dx = x - sx[k], dy = y - sy[k], dz = z - sz[k];
            const double r2 = dx * dx + dy * dy + dz * dz;
            const double inv = r2 > 0.0 ? rsqrt(r2) : 0.0;
            const double qi = sq[k] * inv;
            const double qi3 = qi * inv * inv;
            p += qi;
            gx -= qi3 * dx;
            gy -= qi3 * dy;
            gz -= qi3 * dz;
        }
        __syncthreads();
    }
    if (active) {
        phi[i] = p;
        grad[3 * i] = gx;
        grad[3 * i + 1] = gy;
        grad[3 * i + 2] = gz;
    }
}
