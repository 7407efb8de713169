// A square CSR matrix's rows and columns permuted, P A P^T: output row i is input row perm[i], its columns
// relabelled by inverse (inverse[perm[i]] = i), in the input row's order (sorted afterwards by cuSPARSE).
// One thread per output row; out_indptr holds the permuted row lengths' running sums. The reference is
// SciPy's a[perm][:, perm]. The output values are OUT_T (double unless compiled with -DOUT_T=float).

#ifndef OUT_T
#define OUT_T double
#endif

extern "C" __global__ void permute_rows(const int* __restrict__ indptr, const int* __restrict__ indices,
                                        const double* __restrict__ data, const int* __restrict__ perm,
                                        const int* __restrict__ inverse, const int* __restrict__ out_indptr,
                                        int* __restrict__ out_indices, OUT_T* __restrict__ out_data, const int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int src = indptr[perm[i]], count = indptr[perm[i] + 1] - src, dst = out_indptr[i];
    for (int k = 0; k < count; ++k) {
        out_indices[dst + k] = inverse[indices[src + k]];
        out_data[dst + k] = (OUT_T)data[src + k];
    }
}
