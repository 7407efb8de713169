// Warp and block sums shared by the reduction and EBE kernels (inlined into each .cu by the loader).
#define BLOCK 256
#define WARP 32
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ double warp_sum(double v) {
    for (int offset = WARP / 2; offset > 0; offset >>= 1)
        v = __dadd_rn(v, __shfl_down_sync(FULL_MASK, v, offset));
    return v;
}

// Sum over the block (BLOCK threads); the result is valid in thread 0.
__device__ __forceinline__ double block_sum(double v) {
    __shared__ double warp_partial[BLOCK / WARP];
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    __syncthreads();  // a previous block_sum in the same kernel may still read warp_partial
    v = warp_sum(v);
    if (lane == 0) warp_partial[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < BLOCK / WARP ? warp_partial[lane] : 0.0);
    return v;
}
