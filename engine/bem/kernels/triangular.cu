// Sync-free sparse triangular solves of a combined ILU(0) factor in CSR (strict lower part: L with a unit
// diagonal; diagonal and upper part: U), one warp per row. Warps take rows in dependency order from an atomic
// counter, so every row a warp waits on belongs to a warp already running; a row is published through its
// ready flag after its value. The reference is scipy.sparse.linalg.spsolve_triangular on the same factors.
// The factors' values are LU_T (double unless compiled with -DLU_T=float); vectors and sums are double.

#define WARPS 4  // warps per block
#ifndef LU_T
#define LU_T double
#endif

__device__ __forceinline__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// y = L^-1 r, L unit lower: y_i = r_i - sum_(j < i) LU_ij y_j
extern "C" __global__ void lower_solve(const int* __restrict__ indptr, const int* __restrict__ indices,
                                       const LU_T* __restrict__ lu, const double* __restrict__ r, double* y,
                                       volatile int* ready, int* counter, const int n)
{
    __shared__ int rows[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) rows[warp] = atomicAdd(counter, 1);
    __syncwarp();
    const int i = rows[warp];
    if (i >= n) return;
    double sum = 0.0;
    for (int k = indptr[i] + lane; k < indptr[i + 1]; k += 32) {
        const int j = indices[k];
        if (j < i) {
            while (ready[j] == 0) { }
            sum += lu[k] * __ldcg(y + j);
        }
    }
    sum = warp_sum(sum);
    if (lane == 0) {
        y[i] = r[i] - sum;
        __threadfence();
        ready[i] = 1;
    }
}

// z = U^-1 y: z_i = (y_i - sum_(j > i) LU_ij z_j) / LU_ii, rows taken from the last
extern "C" __global__ void upper_solve(const int* __restrict__ indptr, const int* __restrict__ indices,
                                       const LU_T* __restrict__ lu, const double* __restrict__ y, double* z,
                                       volatile int* ready, int* counter, const int n)
{
    __shared__ int rows[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) rows[warp] = n - 1 - atomicAdd(counter, 1);
    __syncwarp();
    const int i = rows[warp];
    if (i < 0) return;
    double sum = 0.0, diagonal = 0.0;
    for (int k = indptr[i] + lane; k < indptr[i + 1]; k += 32) {
        const int j = indices[k];
        if (j > i) {
            while (ready[j] == 0) { }
            sum += lu[k] * __ldcg(z + j);
        } else if (j == i) {
            diagonal = (double)lu[k];
        }
    }
    sum = warp_sum(sum);
    diagonal = warp_sum(diagonal);
    if (lane == 0) {
        z[i] = (y[i] - sum) / diagonal;
        __threadfence();
        ready[i] = 1;
    }
}
