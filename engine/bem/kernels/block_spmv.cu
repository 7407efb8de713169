// y = A x for a square sparse matrix of 3x3 blocks (BSR): block row r holds blocks indptr[r] .. indptr[r+1]
// at block columns cols[k], each 9 doubles row-major. One warp per block row: each lane takes every 32nd
// block, the three row sums are reduced over the warp. The reference is SciPy's bsr_matrix product
// (engine/bem/block_sparse.py, which the host uses itself).

__device__ __forceinline__ double warp_total(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void block_spmv(const int* __restrict__ indptr, const int* __restrict__ cols,
                                      const double* __restrict__ blocks, const double* __restrict__ x,
                                      double* __restrict__ y, const int n_rows)
{
    const int row = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
    if (row >= n_rows) return;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int k = indptr[row] + lane; k < indptr[row + 1]; k += 32) {
        const double* b = blocks + 9 * (size_t)k;
        const int c = 3 * cols[k];
        const double x0 = x[c], x1 = x[c + 1], x2 = x[c + 2];
        s0 += b[0] * x0 + b[1] * x1 + b[2] * x2;
        s1 += b[3] * x0 + b[4] * x1 + b[5] * x2;
        s2 += b[6] * x0 + b[7] * x1 + b[8] * x2;
    }
    s0 = warp_total(s0);
    s1 = warp_total(s1);
    s2 = warp_total(s2);
    if (lane == 0) {
        y[3 * row] = s0;
        y[3 * row + 1] = s1;
        y[3 * row + 2] = s2;
    }
}
