// Element stiffness matrices in one fused kernel on the FP64 tensor cores (mma.sync m16n8k8, sm_90).
// NumPy twin: element_matrices.stiffness_gemm.
//
// K^e[3a+i][3b+j] = lam G[i,a][j,b] + mu G[j,a][i,b] + mu delta_ij sum_l G[l,a][l,b], where the Gram
// matrix G[i,a][j,b] = sum_q X[q][i,a] X[q][j,b] and X[q][i,a] = sum_k ref_grads[q][a][k] s[q][k][i]
// (gradients scaled by sqrt(w det J); s from hex_scaled_inverse).
//
// A block computes the Gram tile of TILE scalar functions a by TILE functions b, all nine (i, j): a
// (3 TILE) x (3 TILE) product (padded to ROWS, a multiple of 16) over the Gauss points, KC points at a
// time. X is formed in shared memory (it never goes to device memory), the products run on the tensor
// cores, and the block writes its K^e block and, off the diagonal, the mirrored block. Only tile pairs
// ta <= tb run (K^e is symmetric). Two or three blocks share a multiprocessor, so one block's stores of K^e
// overlap the others' products. gpu_element_matrices.MmaShape picks TILE, ROWS, KC, WARPS_C and MINB.

#ifndef TILE
#define TILE 16
#endif
#ifndef ROWS
#define ROWS (3 * TILE)        // Gram tile side, a multiple of 16 >= 3 TILE
#endif
#ifndef KC
#define KC 32                  // Gauss points staged per step (a multiple of 8)
#endif
#define LD (ROWS + 4)          // staged operand stride: fragment loads hit distinct banks
#define GLD (ROWS + 1)         // Gram tile stride
#ifndef WARPS_C
#define WARPS_C 2              // warps across a row strip of 16
#endif
#ifndef MINB
#define MINB 2                 // blocks per multiprocessor the registers must allow
#endif
#define THREADS (32 * (ROWS / 16) * WARPS_C)
#define CTW (ROWS / 8 / WARPS_C)  // 16 x 8 products per warp per k step

__device__ __forceinline__ void mma_f64(double* c, double a0, double a1, double a2, double a3, double b0, double b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                 : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
}

// dynamic shared memory: max(2 KC LD, ROWS GLD) + 9 KC doubles (MmaShape.shared_bytes)
extern "C" __global__ void __launch_bounds__(THREADS, MINB) hex_stiffness_mma(
    const double* __restrict__ ref_grads, const double* __restrict__ s, const double* __restrict__ lam,
    const double* __restrict__ mu, const int* __restrict__ pairs, int npairs, int nq, int ns,
    double* __restrict__ k)
{
    extern __shared__ double smem[];
    double* xa = smem;                 // KC x LD: X of the a functions, column i TILE + f
    double* xb = smem + KC * LD;       // KC x LD: X of the b functions (xa itself on the diagonal)
    double* gram = smem;               // ROWS x GLD after the products
    double* sq = smem + (2 * KC * LD > ROWS * GLD ? 2 * KC * LD : ROWS * GLD);  // KC x 9
    const long long e = blockIdx.x / npairs;
    const int pair = blockIdx.x % npairs;
    const int a0 = TILE * pairs[2 * pair], b0 = TILE * pairs[2 * pair + 1];
    const bool diag = a0 == b0;
    const double* xbr = diag ? xa : xb;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int rb = (warp / WARPS_C) * 16, cb = (warp % WARPS_C) * (8 * CTW);
    const int tig = lane & 3, g = lane >> 2;  // fragment coordinates
    const double* se = s + e * nq * 9;

    double acc[CTW][4];
#pragma unroll
    for (int t = 0; t < CTW; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.0;
    if (ROWS > 3 * TILE)  // padding columns stay zero
        for (int t = threadIdx.x; t < 2 * KC * (ROWS - 3 * TILE); t += THREADS)
            smem[(t / (ROWS - 3 * TILE)) * LD + 3 * TILE + t % (ROWS - 3 * TILE)] = 0.0;

    for (int q0 = 0; q0 < nq; q0 += KC) {
        for (int t = threadIdx.x; t < KC * 9; t += THREADS) sq[t] = q0 + t / 9 < nq ? se[q0 * 9 + t] : 0.0;
        __syncthreads();
        for (int it = threadIdx.x; it < KC * TILE; it += THREADS) {
            const int kq = it / TILE, f = it % TILE, q = q0 + kq, a = a0 + f, b = b0 + f;
            const double* sv = sq + 9 * kq;
            double g0 = 0.0, g1 = 0.0, g2 = 0.0, h0 = 0.0, h1 = 0.0, h2 = 0.0;
            if (q < nq && a < ns) {
                const double* p = ref_grads + 3LL * ((long long)ns * q + a);
                g0 = p[0], g1 = p[1], g2 = p[2];
            }
            if (q < nq && !diag && b < ns) {
                const double* p = ref_grads + 3LL * ((long long)ns * q + b);
                h0 = p[0], h1 = p[1], h2 = p[2];
            }
#pragma unroll
            for (int i = 0; i < 3; ++i) {
                xa[kq * LD + i * TILE + f] = g0 * sv[i] + g1 * sv[3 + i] + g2 * sv[6 + i];
                if (!diag) xb[kq * LD + i * TILE + f] = h0 * sv[i] + h1 * sv[3 + i] + h2 * sv[6 + i];
            }
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < KC; kk += 8) {
            const double* ra = xa + (kk + tig) * LD + rb + g;
            const double a0v = ra[0], a1v = ra[8], a2v = ra[4 * LD], a3v = ra[4 * LD + 8];
#pragma unroll
            for (int t = 0; t < CTW; ++t) {
                const double* rbp = xbr + (kk + tig) * LD + cb + 8 * t + g;
                mma_f64(acc[t], a0v, a1v, a2v, a3v, rbp[0], rbp[4 * LD]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int t = 0; t < CTW; ++t) {
        const int col = cb + 8 * t + 2 * tig;
        gram[(rb + g) * GLD + col] = acc[t][0];
        gram[(rb + g) * GLD + col + 1] = acc[t][1];
        gram[(rb + g + 8) * GLD + col] = acc[t][2];
        gram[(rb + g + 8) * GLD + col + 1] = acc[t][3];
    }
    __syncthreads();

    const double l = lam[e], u = mu[e];
    const long long ne = 3LL * ns;
    double* ke = k + e * ne * ne;
    for (int mirror = 0; mirror < (diag ? 1 : 2); ++mirror)
        for (int t = threadIdx.x; t < TILE * TILE; t += THREADS) {
            // a thread per 3 x 3 block (a, b); consecutive threads take consecutive b (consecutive a for
            // the mirrored block), so each of its three rows of three is part of one contiguous warp store
            const int fa = mirror ? t % TILE : t / TILE, fb = mirror ? t / TILE : t % TILE;
            const int a = a0 + fa, b = b0 + fb;
            if (a >= ns || b >= ns) continue;
            const double* gg = gram + fa * GLD + fb;
            const double tr = u * (gg[0] + gg[TILE * GLD + TILE] + gg[2 * TILE * GLD + 2 * TILE]);
#pragma unroll
            for (int i = 0; i < 3; ++i)
#pragma unroll
                for (int j = 0; j < 3; ++j) {
                    const double w = l * gg[i * TILE * GLD + j * TILE] + u * gg[j * TILE * GLD + i * TILE]
                                     + (i == j ? tr : 0.0);
                    if (mirror) ke[(3LL * b + j) * ne + 3 * a + i] = w;
                    else ke[(3LL * a + i) * ne + 3 * b + j] = w;
                }
        }
}
