// ILU(0) of a square matrix of 3x3 blocks (BSR: block row i holds blocks indptr[i] .. indptr[i+1] at sorted
// block columns cols[k], each 9 values row-major, the diagonal block at diag[i]) listed colour by colour, and
// its sync-free triangular solves. A = L U on the pattern, L with identity diagonal blocks, U with full ones;
// the factors overwrite A: L's blocks below the diagonal, U's above, and in place of U's diagonal block its
// inverse. The reference is block_ilu0_reference (engine/bem/block_ilu.py). Values LU_T (double unless
// compiled with -DLU_T=float), arithmetic in double.

#define WARPS 4  // warps per block of the solves
#ifndef LU_T
#define LU_T double
#endif

__device__ __forceinline__ void load(const LU_T* b, double m[9])
{
    for (int e = 0; e < 9; ++e) m[e] = (double)b[e];
}

__device__ __forceinline__ void store(LU_T* b, const double m[9])
{
    for (int e = 0; e < 9; ++e) b[e] = (LU_T)m[e];
}

// c = a b (3x3)
__device__ __forceinline__ void product(const double a[9], const double b[9], double c[9])
{
    for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) c[3 * r + s] = a[3 * r] * b[s] + a[3 * r + 1] * b[3 + s] + a[3 * r + 2] * b[6 + s];
}

// the inverse of d in place; false where it is singular or not finite
__device__ bool invert(double d[9])
{
    const double c0 = d[4] * d[8] - d[5] * d[7], c1 = d[5] * d[6] - d[3] * d[8], c2 = d[3] * d[7] - d[4] * d[6];
    const double det = d[0] * c0 + d[1] * c1 + d[2] * c2;
    if (!(fabs(det) > 0.0) || !isfinite(det)) return false;
    const double f = 1.0 / det;
    const double inv[9] = {c0 * f, (d[2] * d[7] - d[1] * d[8]) * f, (d[1] * d[5] - d[2] * d[4]) * f,
                           c1 * f, (d[0] * d[8] - d[2] * d[6]) * f, (d[2] * d[3] - d[0] * d[5]) * f,
                           c2 * f, (d[1] * d[6] - d[0] * d[7]) * f, (d[0] * d[4] - d[1] * d[3]) * f};
    for (int e = 0; e < 9; ++e) d[e] = inv[e];
    return isfinite(f);
}

// One colour's block rows first .. first + count - 1, a warp each (rows of a colour share no block, and their
// blocks left of the diagonal lie in earlier colours, already factored): for each k < i in row i, in order,
// L_ik = A_ik U_kk^-1 (every lane alike, lane 0 stores it), then A_ij -= L_ik U_kj for the j > k of row i
// that row k has, the lanes taking row i's blocks in turn and finding each in row k by bisection; last
// U_ii^-1. bad = 1 where a diagonal block is singular.
extern "C" __global__ void block_ilu0_colour(const int* __restrict__ indptr, const int* __restrict__ cols,
                                             LU_T* __restrict__ data, const int* __restrict__ diag,
                                             const int first, const int count, int* bad)
{
    const int lane = threadIdx.x & 31, t = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5);
    if (t >= count) return;
    const int i = first + t, end = indptr[i + 1];
    for (int p = indptr[i]; p < end && cols[p] < i; ++p) {
        const int k = cols[p], r0 = diag[k] + 1, r1 = indptr[k + 1];
        double a[9], u_inv[9], l[9];
        load(data + 9 * (size_t)p, a);
        load(data + 9 * (size_t)diag[k], u_inv);
        product(a, u_inv, l);
        __syncwarp();
        if (lane == 0) store(data + 9 * (size_t)p, l);
        for (int q = p + 1 + lane; q < end; q += 32) {
            const int c = cols[q];
            int lo = r0, hi = r1;
            while (lo < hi) {
                const int mid = (lo + hi) >> 1;
                if (cols[mid] < c) lo = mid + 1; else hi = mid;
            }
            if (lo < r1 && cols[lo] == c) {
                double u[9], lu[9], x[9];
                load(data + 9 * (size_t)lo, u);
                product(l, u, lu);
                load(data + 9 * (size_t)q, x);
                for (int e = 0; e < 9; ++e) x[e] -= lu[e];
                store(data + 9 * (size_t)q, x);
            }
        }
        __syncwarp();
    }
    if (lane == 0) {
        double d[9];
        load(data + 9 * (size_t)diag[i], d);
        if (!invert(d)) atomicExch(bad, 1);
        store(data + 9 * (size_t)diag[i], d);
    }
}

__device__ __forceinline__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// s += B x_j over row i's blocks at columns j below (lower) or above (upper) the diagonal, lanes striding the
// blocks, each waiting for x_j's ready flag; the warp's sums reduced into lane 0.
__device__ __forceinline__ void row_sums(const int* indptr, const int* cols, const LU_T* data, const double* x,
                                         volatile int* ready, const int i, const bool lower, double s[3])
{
    const int lane = threadIdx.x & 31;
    s[0] = s[1] = s[2] = 0.0;
    for (int p = indptr[i] + lane; p < indptr[i + 1]; p += 32) {
        const int j = cols[p];
        if (lower ? j < i : j > i) {
            while (ready[j] == 0) { }
            const double x0 = __ldcg(x + 3 * j), x1 = __ldcg(x + 3 * j + 1), x2 = __ldcg(x + 3 * j + 2);
            const LU_T* b = data + 9 * (size_t)p;
            s[0] += b[0] * x0 + b[1] * x1 + b[2] * x2;
            s[1] += b[3] * x0 + b[4] * x1 + b[5] * x2;
            s[2] += b[6] * x0 + b[7] * x1 + b[8] * x2;
        }
    }
    for (int m = 0; m < 3; ++m) s[m] = warp_sum(s[m]);
}

// y = L^-1 r: y_i = r_i - sum_(j < i) L_ij y_j, a warp per block row taken in order from an atomic counter
// (every row a warp waits on belongs to a warp already running); a row is published by its ready flag.
extern "C" __global__ void block_lower_solve(const int* __restrict__ indptr, const int* __restrict__ cols,
                                             const LU_T* __restrict__ data, const double* __restrict__ r,
                                             double* y, volatile int* ready, int* counter, const int n)
{
    __shared__ int rows[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) rows[warp] = atomicAdd(counter, 1);
    __syncwarp();
    const int i = rows[warp];
    if (i >= n) return;
    double s[3];
    row_sums(indptr, cols, data, y, ready, i, true, s);
    if (lane == 0) {
        for (int m = 0; m < 3; ++m) y[3 * i + m] = r[3 * i + m] - s[m];
        __threadfence();
        ready[i] = 1;
    }
}

// z = U^-1 y: z_i = U_ii^-1 (y_i - sum_(j > i) U_ij z_j), rows taken from the last.
extern "C" __global__ void block_upper_solve(const int* __restrict__ indptr, const int* __restrict__ cols,
                                             const LU_T* __restrict__ data, const int* __restrict__ diag,
                                             const double* __restrict__ y, double* z, volatile int* ready,
                                             int* counter, const int n)
{
    __shared__ int rows[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) rows[warp] = n - 1 - atomicAdd(counter, 1);
    __syncwarp();
    const int i = rows[warp];
    if (i < 0) return;
    double s[3];
    row_sums(indptr, cols, data, z, ready, i, false, s);
    if (lane == 0) {
        const LU_T* d = data + 9 * (size_t)diag[i];
        const double t0 = y[3 * i] - s[0], t1 = y[3 * i + 1] - s[1], t2 = y[3 * i + 2] - s[2];
        for (int m = 0; m < 3; ++m) z[3 * i + m] = d[3 * m] * t0 + d[3 * m + 1] * t1 + d[3 * m + 2] * t2;
        __threadfence();
        ready[i] = 1;
    }
}
