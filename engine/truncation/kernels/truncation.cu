// FE-IIIEE truncation operator on the GPU: E and F = curl E at S points from the currents at S' points.
// The NumPy specification is operator.apply_reference; complex numbers are double2 (re, im), the layout
// of CuPy's complex128. Per pair: R = t - s, d = |R|, G = exp(-jkd) / (4 pi d),
// grad'G = C R with C = (1 + jkd) G / d^2, and for one right-hand side with currents
// (ce = w n'xE, cf = w n'xF, de = w n'.E, df = w n'.F):
//   E += G cf + C (ce x R + de R),   F += k^2 G ce + C (cf x R + df R).
// Layouts: targets (n_t, 3), sources (n_s, 3) double; currents ce, cf (n_rhs, n_s, 3), de, df (n_rhs, n_s);
// outputs e, f (n_rhs, n_t, 3), all C order.

#define TILE 128
#define INV4PI 0.07957747154594767

struct Coupling {
    double gr, gi, cr, ci, rx, ry, rz;
};

__device__ __forceinline__ Coupling coupling(double tx, double ty, double tz, double sx, double sy, double sz,
                                             double k) {
    Coupling c;
    c.rx = tx - sx; c.ry = ty - sy; c.rz = tz - sz;
    double d2 = c.rx * c.rx + c.ry * c.ry + c.rz * c.rz;
    double inv = rsqrt(d2);
    double kd = k * d2 * inv;
    double sn, cs;
    sincos(kd, &sn, &cs);
    double a = inv * INV4PI;
    c.gr = cs * a; c.gi = -sn * a;
    double b = a * inv * inv;
    c.cr = (cs + kd * sn) * b; c.ci = (kd * cs - sn) * b;
    return c;
}

// acc[0..5] E, acc[6..11] F as (re, im) pairs for one right-hand side; u = (ce, cf, de, df) of one point.
__device__ __forceinline__ void accumulate(double* acc, const Coupling& c, const double2* ce, const double2* cf,
                                           double2 de, double2 df, double k2) {
    // a = ce x R + de R, b = cf x R + df R (complex 3-vectors)
    double ax_r = ce[1].x * c.rz - ce[2].x * c.ry + de.x * c.rx, ax_i = ce[1].y * c.rz - ce[2].y * c.ry + de.y * c.rx;
    double ay_r = ce[2].x * c.rx - ce[0].x * c.rz + de.x * c.ry, ay_i = ce[2].y * c.rx - ce[0].y * c.rz + de.y * c.ry;
    double az_r = ce[0].x * c.ry - ce[1].x * c.rx + de.x * c.rz, az_i = ce[0].y * c.ry - ce[1].y * c.rx + de.y * c.rz;
    double bx_r = cf[1].x * c.rz - cf[2].x * c.ry + df.x * c.rx, bx_i = cf[1].y * c.rz - cf[2].y * c.ry + df.y * c.rx;
    double by_r = cf[2].x * c.rx - cf[0].x * c.rz + df.x * c.ry, by_i = cf[2].y * c.rx - cf[0].y * c.rz + df.y * c.ry;
    double bz_r = cf[0].x * c.ry - cf[1].x * c.rx + df.x * c.rz, bz_i = cf[0].y * c.ry - cf[1].y * c.rx + df.y * c.rz;
    double a_r[3] = {ax_r, ay_r, az_r}, a_i[3] = {ax_i, ay_i, az_i};
    double b_r[3] = {bx_r, by_r, bz_r}, b_i[3] = {bx_i, by_i, bz_i};
    double kgr = k2 * c.gr, kgi = k2 * c.gi;
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
template <int T>
__device__ __forceinline__ void stage(const double* src, const double2* ce, const double2* cf, const double2* de,
                                      const double2* df, int n_s, int s_end, int s0, int r0, int nr, double* sp,
                                      double2 (*cur)[8]) {
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
            double2* u = cur[r * T + j];
            u[0] = ce[3 * p]; u[1] = ce[3 * p + 1]; u[2] = ce[3 * p + 2];
            u[3] = cf[3 * p]; u[4] = cf[3 * p + 1]; u[5] = cf[3 * p + 2];
            u[6] = de[p]; u[7] = df[p];
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
// points per shared-memory tile (NR * T * 128 bytes of currents). To fill the GPU when S is small, the
// S' points are split into gridDim.y chunks of chunk_len: chunk c sums its part into e, f + c n_rhs n_t 3
// (the launcher adds the chunks in a fixed order, so the result stays deterministic).
template <int NR, int T>
__device__ void tiled(const double* tgt, int n_t, const double* src, int n_s, int chunk_len, const double2* ce,
                      const double2* cf, const double2* de, const double2* df, int n_rhs, double k, double2* e,
                      double2* f) {
    __shared__ double sp[3 * T];
    __shared__ double2 cur[NR * T][8];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int s_begin = blockIdx.y * chunk_len, s_end = min(n_s, s_begin + chunk_len);
    long long offset = (long long)blockIdx.y * n_rhs * n_t * 3;
    e += offset;
    f += offset;
    double tx = 0, ty = 0, tz = 0;
    if (t < n_t) { tx = tgt[3 * t]; ty = tgt[3 * t + 1]; tz = tgt[3 * t + 2]; }
    double k2 = k * k;
    for (int r0 = 0; r0 < n_rhs; r0 += NR) {
        int nr = min(NR, n_rhs - r0);
        double acc[NR][12];
#pragma unroll
        for (int r = 0; r < NR; ++r)
#pragma unroll
            for (int i = 0; i < 12; ++i) acc[r][i] = 0;
        for (int s0 = s_begin; s0 < s_end; s0 += T) {
            __syncthreads();
            stage<T>(src, ce, cf, de, df, n_s, s_end, s0, r0, nr, sp, cur);
            __syncthreads();
            int m = min(T, s_end - s0);
            for (int i = 0; i < m; ++i) {
                Coupling c = coupling(tx, ty, tz, sp[3 * i], sp[3 * i + 1], sp[3 * i + 2], k);
#pragma unroll
                for (int r = 0; r < NR; ++r)
                    if (r < nr) accumulate(acc[r], c, cur[r * T + i], cur[r * T + i] + 3, cur[r * T + i][6],
                                           cur[r * T + i][7], k2);
            }
        }
        if (t < n_t)
            for (int r = 0; r < nr; ++r) store(acc[r], e, f, (long long)(r0 + r) * n_t + t);
    }
}

extern "C" __global__ void cuda_tiled_1(const double* tgt, int n_t, const double* src, int n_s, int chunk_len,
                                        const double2* ce, const double2* cf, const double2* de,
                                        const double2* df, int n_rhs, double k, double2* e, double2* f) {
    tiled<1, 128>(tgt, n_t, src, n_s, chunk_len, ce, cf, de, df, n_rhs, k, e, f);
}

extern "C" __global__ void cuda_tiled_4(const double* tgt, int n_t, const double* src, int n_s, int chunk_len,
                                        const double2* ce, const double2* cf, const double2* de,
                                        const double2* df, int n_rhs, double k, double2* e, double2* f) {
    tiled<4, 32>(tgt, n_t, src, n_s, chunk_len, ce, cf, de, df, n_rhs, k, e, f);
}

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
