// Jones-Plassmann parallel colouring, one thread per element. NumPy twin: ../parallel.py.
// Each element has a fixed pseudo-random priority (a hash of its index, ties broken by the index).
// A round: every uncoloured element whose priority beats all its uncoloured neighbours takes the
// smallest colour none of its neighbours holds. Such elements are never adjacent, so a round has no
// conflicts; decisions read the colours of the round's start and are applied by a second kernel.

__device__ __forceinline__ unsigned long long priority(const unsigned int e) {
    unsigned int h = e * 0x9E3779B1u;  // murmur3 finaliser of the golden-ratio product
    h ^= h >> 16; h *= 0x85EBCA6Bu; h ^= h >> 13; h *= 0xC2B2AE35u; h ^= h >> 16;
    return ((unsigned long long)h << 32) | e;
}

extern "C" __global__ void jp_decide(const int n_el, const long long* __restrict__ offsets,
                                     const int* __restrict__ neighbours, const int* __restrict__ color,
                                     int* __restrict__ chosen) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_el) return;
    chosen[e] = -1;
    if (color[e] >= 0) return;
    const unsigned long long mine = priority((unsigned int)e);
    unsigned long long taken = 0ull;
    for (long long s = offsets[e]; s < offsets[e + 1]; ++s) {
        const int f = neighbours[s];
        const int c = color[f];
        if (c >= 0) taken |= 1ull << c;
        else if (priority((unsigned int)f) > mine) return;  // an uncoloured neighbour goes first
    }
    chosen[e] = taken == ~0ull ? 64 : __ffsll((long long)~taken) - 1;  // 64: out of colours
}

extern "C" __global__ void jp_apply(const int n_el, const int* __restrict__ chosen, int* __restrict__ color) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n_el && chosen[e] >= 0) color[e] = chosen[e];
}
