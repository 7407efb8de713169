// Inner-product reductions for EBE-J-PCG. NumPy twins: ../reductions.py (same summation order;
// __dmul_rn/__dadd_rn forbid fused multiply-adds so that kernel and twin agree bit for bit).
#include "block_sum.cuh"

// Paper 000, Fig. 5: interleaved (adjacent) addressing; the tid % (2*stride) test diverges in every warp.
__device__ __forceinline__ void tree_adjacent(double* s) {
    const unsigned tid = threadIdx.x;
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (tid % (2 * stride) == 0) s[tid] = __dadd_rn(s[tid], s[tid + stride]);
        __syncthreads();
    }
}

// Paper 000, Fig. 6: thread-data remapping, sequential addressing: the lower half adds the upper half.
__device__ __forceinline__ void tree_sequential(double* s) {
    const unsigned tid = threadIdx.x;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] = __dadd_rn(s[tid], s[tid + stride]);
        __syncthreads();
    }
}

#define SHARED_TREE_KERNELS(NAME, TREE)                                                          \
extern "C" __global__ void dot_##NAME(const long long n, const double* __restrict__ a,          \
                                      const double* __restrict__ b, double* __restrict__ out) {  \
    __shared__ double s[BLOCK];                                                                  \
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;                             \
    s[threadIdx.x] = i < n ? __dmul_rn(a[i], b[i]) : 0.0;                                        \
    TREE(s);                                                                                     \
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];                                                \
}                                                                                                \
extern "C" __global__ void sum_##NAME(const long long n, const double* __restrict__ in,         \
                                      double* __restrict__ out) {                                \
    __shared__ double s[BLOCK];                                                                  \
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;                             \
    s[threadIdx.x] = i < n ? in[i] : 0.0;                                                        \
    TREE(s);                                                                                     \
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];                                                \
}

SHARED_TREE_KERNELS(adjacent, tree_adjacent)
SHARED_TREE_KERNELS(sequential, tree_sequential)

// Beyond the paper: grid-stride loads, warp shuffles, one partial per block.
extern "C" __global__ void dot_shuffle(const long long n, const double* __restrict__ a,
                                       const double* __restrict__ b, double* __restrict__ partial) {
    double acc = 0.0;
    const long long stride = (long long)gridDim.x * BLOCK;
    for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
        acc = __dadd_rn(acc, __dmul_rn(a[i], b[i]));
    acc = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// Second pass of dot_shuffle, launched with one block: partials -> *out.
extern "C" __global__ void sum_shuffle(const long long n, const double* __restrict__ in,
                                       double* __restrict__ out) {
    double acc = 0.0;
    for (long long i = threadIdx.x; i < n; i += BLOCK) acc = __dadd_rn(acc, in[i]);
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
