// A square CSR matrix's rows and columns permuted, P A P^T: output row i is input row perm[i], its columns
// relabelled by inverse (inverse[perm[i]] = i) and sorted (insertion sort in place: no scratch beyond the
// output). One thread per output row; out_indptr holds the permuted row lengths' running sums. The reference
// is SciPy's a[perm][:, perm] with sorted indices. Values in IN_T, out OUT_T (double unless compiled with
// -DIN_T=float or -DOUT_T=float).

#ifndef IN_T
#define IN_T double
#endif
#ifndef OUT_T
#define OUT_T double
#endif

extern "C" __global__ void permute_rows(const int* __restrict__ indptr, const int* __restrict__ indices,
                                        const IN_T* __restrict__ data, const int* __restrict__ perm,
                                        const int* __restrict__ inverse, const int* __restrict__ out_indptr,
                                        int* __restrict__ out_indices, OUT_T* __restrict__ out_data, const int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int src = indptr[perm[i]], count = indptr[perm[i] + 1] - src, dst = out_indptr[i];
    int* cols = out_indices + dst;
    OUT_T* vals = out_data + dst;
    for (int k = 0; k < count; ++k) {
        const int column = inverse[indices[src + k]];
        const OUT_T value = (OUT_T)data[src + k];
        int m = k - 1;
        for (; m >= 0 && cols[m] > column; --m) {
            cols[m + 1] = cols[m];
            vals[m + 1] = vals[m];
        }
        cols[m + 1] = column;
        vals[m + 1] = value;
    }
}
