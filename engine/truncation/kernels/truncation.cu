// FE-IIIEE truncation operator on the GPU: E and F = curl E at S points from the currents at S' points.
// The NumPy specification is operator.apply_reference; complex numbers are double2 (re, im), the layout
// of CuPy's complex128. Per pair: R = t - s, d = |R|, G = exp(-jkd) / (4 pi d),
// grad'G = C R with C = (1 + jkd) G / d^2, and for one right-hand side with currents
// (ce = w n'xE, cf = w n'xF, de = w n'.E, df = w n'.F):
//   E += G cf + C (ce x R + de R),   F += k^2 G ce + C (cf x R + df R).
// Layouts: targets (n_t, 3), sources (n_s, 3) double; currents ce, cf (n_rhs, n_s, 3), de, df (n_rhs, n_s);
// outputs e, f (n_rhs, n_t, 3), all C order.

// cuda-tiled-fp32 (tiled<NR, T, float>) does each pair's arithmetic in single precision: R = t - s is taken
// in double and rounded, the tile of T pairs is summed in float and each tile's sum added to double totals.

#define TILE 128
#define INV4PI 0.07957747154594767

template <typename R> struct Complex;
template <> struct Complex<double> { using T = double2; };
template <> struct Complex<float> { using T = float2; };

__device__ __forceinline__ double rsqrt_of(double x) { return rsqrt(x); }
__device__ __forceinline__ float rsqrt_of(float x) { return rsqrtf(x); }
__device__ __forceinline__ void sincos_of(double x, double* s, double* c) { sincos(x, s, c); }
__device__ __forceinline__ void sincos_of(float x, float* s, float* c) { sincosf(x, s, c); }
template <typename C2> __device__ __forceinline__ C2 complex_of(double2 v);
template <> __device__ __forceinline__ double2 complex_of<double2>(double2 v) { return v; }
template <> __device__ __forceinline__ float2 complex_of<float2>(double2 v) {
    return make_float2((float)v.x, (float)v.y);
}

template <typename R> struct CouplingOf {
    R gr, gi, cr, ci, rx, ry, rz;
};
using Coupling = CouplingOf<double>;

// The coupling of a pair from R = t - s (rx, ry, rz) at wavenumber k.
template <typename R>
__device__ __forceinline__ CouplingOf<R> coupling_of(R rx, R ry, R rz, R k) {
    CouplingOf<R> c;
    c.rx = rx; c.ry = ry; c.rz = rz;
    R d2 = rx * rx + ry * ry + rz * rz;
    R inv = rsqrt_of(d2);
    R kd = k * d2 * inv;
    R sn, cs;
    sincos_of(kd, &sn, &cs);
    R a = inv * (R)INV4PI;
    c.gr = cs * a; c.gi = -sn * a;
    R b = a * inv * inv;
    c.cr = (cs + kd * sn) * b; c.ci = (kd * cs - sn) * b;
    return c;
}

__device__ __forceinline__ Coupling coupling(double tx, double ty, double tz, double sx, double sy, double sz,
                                             double k) {
    return coupling_of<double>(tx - sx, ty - sy, tz - sz, k);
}

// acc[0..5] E, acc[6..11] F as (re, im) pairs for one right-hand side; u = (ce, cf, de, df) of one point.
template <typename R, typename C2>
__device__ __forceinline__ void accumulate(R* acc, const CouplingOf<R>& c, const C2* ce, const C2* cf, C2 de,
                                           C2 df, R k2) {
    // a = ce x R + de R, b = cf x R + df R (complex 3-vectors)
    R ax_r = ce[1].x * c.rz - ce[2].x * c.ry + de.x * c.rx, ax_i = ce[1].y * c.rz - ce[2].y * c.ry + de.y * c.rx;
    R ay_r = ce[2].x * c.rx - ce[0].x * c.rz + de.x * c.ry, ay_i = ce[2].y * c.rx - ce[0].y * c.rz + de.y * c.ry;
    R az_r = ce[0].x * c.ry - ce[1].x * c.rx + de.x * c.rz, az_i = ce[0].y * c.ry - ce[1].y * c.rx + de.y * c.rz;
    R bx_r = cf[1].x * c.rz - cf[2].x * c.ry + df.x * c.rx, bx_i = cf[1].y * c.rz - cf[2].y * c.ry + df.y * c.rx;
    R by_r = cf[2].x * c.rx - cf[0].x * c.rz + df.x * c.ry, by_i = cf[2].y * c.rx - cf[0].y * c.rz + df.y * c.ry;
    R bz_r = cf[0].x * c.ry - cf[1].x * c.rx + df.x * c.rz, bz_i = cf[0].y * c.ry - cf[1].y * c.rx + df.y * c.rz;
    R a_r[3] = {ax_r, ay_r, az_r}, a_i[3] = {ax_i, ay_i, az_i};
    R b_r[3] = {bx_r, by_r, bz_r}, b_i[3] = {bx_i, by_i, bz_i};
    R kgr = k2 * c.gr, kgi = k2 * c.gi;
#pragma unroll
    for (int i = 0; i < 3; ++i) {
        acc[2 * i] += c.gr * cf[i].x - c.gi * cf[i].y + c.cr * a_r[i] - c.ci * a_i[i];
        acc[2 * i + 1] += c.gr * cf[i].y + c.gi * cf[i].x + c.cr * a_i[i] + c.ci * a_r[i];
        acc[6 + 2 * i] += kgr * ce[i].x - kgi * ce[i].y + c.cr * b_r[i] - c.ci * b_i[i];
        acc[7 + 2 * i] += kgr * ce[i].y + kgi * ce[i].x + c.cr * b_i[i] + c.ci * b_r[i];
    }
}

__device__ __forceinline__ void store(const double* acc, double2* e, double2* f, long long row) {
#pragma unroll
    for (int i = 0; i < 3; ++i) {
        e[3 * row + i] = make_double2(acc[2 * i], acc[2 * i + 1]);
        f[3 * row + i] = make_double2(acc[6 + 2 * i], acc[7 + 2 * i]);
    }
}

// Stage T source points from s0 (below s_end) and the currents of right-hand sides r0 .. r0 + nr - 1 in
// shared memory; n_s is the currents' row length.
template <int T, typename C2>
__device__ __forceinline__ void stage(const double* src, const double2* ce, const double2* cf, const double2* de,
                                      const double2* df, int n_s, int s_end, int s0, int r0, int nr, double* sp,
                                      C2 (*cur)[8]) {
    for (int i = threadIdx.x; i < T; i += blockDim.x) {
        int s = s0 + i;
        if (s < s_end) {
            sp[3 * i] = src[3 * s]; sp[3 * i + 1] = src[3 * s + 1]; sp[3 * i + 2] = src[3 * s + 2];
        }
    }
    for (int i = threadIdx.x; i < T * nr; i += blockDim.x) {
        int j = i % T, r = i / T, s = s0 + j;
        if (s < s_end) {
            long long p = (long long)(r0 + r) * n_s + s;
            C2* u = cur[r * T + j];
            u[0] = complex_of<C2>(ce[3 * p]); u[1] = complex_of<C2>(ce[3 * p + 1]);
            u[2] = complex_of<C2>(ce[3 * p + 2]); u[3] = complex_of<C2>(cf[3 * p]);
            u[4] = complex_of<C2>(cf[3 * p + 1]); u[5] = complex_of<C2>(cf[3 * p + 2]);
            u[6] = complex_of<C2>(de[p]); u[7] = complex_of<C2>(df[p]);
        }
    }
}

// cuda_s (the paper's cuda_S): one thread per S element, i.e. per group of q consecutive S points. For
// each right-hand side and each of its points, the thread sweeps the S' points tile by tile (positions
// and that right-hand side's currents staged in shared memory by the block); G and grad'G are
// recomputed per right-hand side, as in a loop nest with S outside and right-hand sides inside.
extern "C" __global__ void cuda_s(const double* tgt, int n_elem, int q, const double* src, int n_s,
                                  const double2* ce, const double2* cf, const double2* de, const double2* df,
                                  int n_rhs, double k, double2* e, double2* f) {
    __shared__ double sp[3 * TILE];
    __shared__ double2 cur[TILE][8];
    int elem = blockIdx.x * blockDim.x + threadIdx.x;
    long long n_t = (long long)n_elem * q;
    double k2 = k * k;
    for (int r = 0; r < n_rhs; ++r) {
        for (int j = 0; j < q; ++j) {
            long long t = (long long)elem * q + j;
            double tx = 0, ty = 0, tz = 0;
            if (elem < n_elem) { tx = tgt[3 * t]; ty = tgt[3 * t + 1]; tz = tgt[3 * t + 2]; }
            double acc[12] = {0};
            for (int s0 = 0; s0 < n_s; s0 += TILE) {
                __syncthreads();
                stage<TILE>(src, ce, cf, de, df, n_s, n_s, s0, r, 1, sp, cur);
                __syncthreads();
                if (elem < n_elem) {
                    int m = min(TILE, n_s - s0);
                    for (int i = 0; i < m; ++i) {
                        Coupling c = coupling(tx, ty, tz, sp[3 * i], sp[3 * i + 1], sp[3 * i + 2], k);
                        accumulate(acc, c, cur[i], cur[i] + 3, cur[i][6], cur[i][7], k2);
                    }
                }
            }
            if (elem < n_elem) store(acc, e, f, (long long)r * n_t + t);
        }
    }
}

// cuda_tiled: N-body tiling, one thread per S point, NR right-hand sides per sweep held in registers;
// G and grad'G of a pair are computed once per sweep and reused for its NR right-hand sides. T source
// points per shared-memory tile (NR * T * 16 sizeof(R) bytes of currents). To fill the GPU when S is small, the
// S' points are split into gridDim.y chunks of chunk_len: chunk c sums its part into e, f + c n_rhs n_t 3
// (the launcher adds the chunks in a fixed order, so the result stays deterministic). R = float: each
// pair in single precision, each tile's float sum added to double totals.
template <int NR, int T, typename R>
__device__ void tiled(const double* tgt, int n_t, const double* src, int n_s, int chunk_len, const double2* ce,
                      const double2* cf, const double2* de, const double2* df, int n_rhs, double k, double2* e,
                      double2* f) {
    using C2 = typename Complex<R>::T;
    constexpr bool single = sizeof(R) < sizeof(double);
    __shared__ double sp[3 * T];
    __shared__ C2 cur[NR * T][8];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int s_begin = blockIdx.y * chunk_len, s_end = min(n_s, s_begin + chunk_len);
    long long offset = (long long)blockIdx.y * n_rhs * n_t * 3;
    e += offset;
    f += offset;
    double tx = 0, ty = 0, tz = 0;
    if (t < n_t) { tx = tgt[3 * t]; ty = tgt[3 * t + 1]; tz = tgt[3 * t + 2]; }
    R kr = (R)k, k2 = (R)(k * k);
    for (int r0 = 0; r0 < n_rhs; r0 += NR) {
        int nr = min(NR, n_rhs - r0);
        R acc[NR][12];
        double total[NR][12];
#pragma unroll
        for (int r = 0; r < NR; ++r)
#pragma unroll
            for (int i = 0; i < 12; ++i) acc[r][i] = total[r][i] = 0;
        for (int s0 = s_begin; s0 < s_end; s0 += T) {
            __syncthreads();
            stage<T>(src, ce, cf, de, df, n_s, s_end, s0, r0, nr, sp, cur);
            __syncthreads();
            int m = min(T, s_end - s0);
            for (int i = 0; i < m; ++i) {
                CouplingOf<R> c = coupling_of<R>((R)(tx - sp[3 * i]), (R)(ty - sp[3 * i + 1]), (R)(tz - sp[3 * i + 2]),
                                                 kr);
#pragma unroll
                for (int r = 0; r < NR; ++r)
                    if (r < nr) accumulate(acc[r], c, cur[r * T + i], cur[r * T + i] + 3, cur[r * T + i][6],
                                           cur[r * T + i][7], k2);
            }
            if (single) {
#pragma unroll
                for (int r = 0; r < NR; ++r)
#pragma unroll
                    for (int i = 0; i < 12; ++i) { total[r][i] += acc[r][i]; acc[r][i] = 0; }
            }
        }
        if (!single) {
#pragma unroll
            for (int r = 0; r < NR; ++r)
#pragma unroll
                for (int i = 0; i < 12; ++i) total[r][i] = acc[r][i];
        }
        if (t < n_t)
            for (int r = 0; r < nr; ++r) store(total[r], e, f, (long long)(r0 + r) * n_t + t);
    }
}

#define TILED_KERNEL(name, NR, T, R)                                                                              \
    extern "C" __global__ void name(const double* tgt, int n_t, const double* src, int n_s, int chunk_len,        \
                                    const double2* ce, const double2* cf, const double2* de, const double2* df,   \
                                    int n_rhs, double k, double2* e, double2* f) {                               \
        tiled<NR, T, R>(tgt, n_t, src, n_s, chunk_len, ce, cf, de, df, n_rhs, k, e, f);                           \
    }
TILED_KERNEL(cuda_tiled_1, 1, 128, double)
TILED_KERNEL(cuda_tiled_4, 4, 32, double)
TILED_KERNEL(cuda_tiled32_1, 1, 128, float)
TILED_KERNEL(cuda_tiled32_4, 4, 32, float)

// sum_chunks: cuda-tiled's S' chunks added in chunk order, for E and F in one launch; pe, pf hold chunks
// blocks of n doubles, e[i] = sum over c of pe[c n + i] (the NumPy specification: part.sum(axis=0)).
extern "C" __global__ void sum_chunks(const double* pe, const double* pf, long long n, int chunks, double* e,
                                      double* f) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double se = 0, sf = 0;
    for (int c = 0; c < chunks; ++c) {
        se += pe[c * n + i];
        sf += pf[c * n + i];
    }
    e[i] = se;
    f[i] = sf;
}

// cuda_rhs (the paper's cuda_rhs): one block per S point, one thread per right-hand side (grid.y covers
// more right-hand sides than a block holds). The block computes the couplings of a tile of S' points
// once into shared memory; each thread then adds its right-hand side's contributions. Currents are
// read in the transposed layout cur_t (n_s, 8, n_rhs) so that neighbouring threads read neighbouring words.
extern "C" __global__ void cuda_rhs(const double* tgt, const double* src, int n_s, const double2* cur_t,
                                    int n_rhs, long long n_t, double k, double2* e, double2* f) {
    __shared__ Coupling cpl[TILE];
    long long t = blockIdx.x;
    int r = blockIdx.y * blockDim.x + threadIdx.x;
    double tx = tgt[3 * t], ty = tgt[3 * t + 1], tz = tgt[3 * t + 2];
    double k2 = k * k;
    double acc[12] = {0};
    for (int s0 = 0; s0 < n_s; s0 += TILE) {
        __syncthreads();
        for (int i = threadIdx.x; i < TILE && s0 + i < n_s; i += blockDim.x) {
            int s = s0 + i;
            cpl[i] = coupling(tx, ty, tz, src[3 * s], src[3 * s + 1], src[3 * s + 2], k);
        }
        __syncthreads();
        if (r < n_rhs) {
            int m = min(TILE, n_s - s0);
            for (int i = 0; i < m; ++i) {
                const double2* u = cur_t + (long long)(s0 + i) * 8 * n_rhs + r;
                double2 ce[3] = {u[0], u[n_rhs], u[2 * n_rhs]};
                double2 cf[3] = {u[3 * n_rhs], u[4 * n_rhs], u[5 * n_rhs]};
                accumulate(acc, cpl[i], ce, cf, u[6 * n_rhs], u[7 * n_rhs], k2);
            }
        }
    }
    if (r < n_rhs) store(acc, e, f, (long long)r * n_t + t);
}

// zgemm's coupling tile: A (n_t, 4 n_s) = [G | C Rx | C Ry | C Rz] for the targets of the tile.
extern "C" __global__ void coupling_tile(const double* tgt, int n_t, const double* src, int n_s, double k,
                                         double2* a) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)n_t * n_s) return;
    long long t = idx / n_s;
    int s = idx % n_s;
    Coupling c = coupling(tgt[3 * t], tgt[3 * t + 1], tgt[3 * t + 2], src[3 * s], src[3 * s + 1], src[3 * s + 2], k);
    double2* row = a + t * 4 * (long long)n_s;
    row[s] = make_double2(c.gr, c.gi);
    row[n_s + s] = make_double2(c.cr * c.rx, c.ci * c.rx);
    row[2 * n_s + s] = make_double2(c.cr * c.ry, c.ci * c.ry);
    row[3 * n_s + s] = make_double2(c.cr * c.rz, c.ci * c.rz);
}
