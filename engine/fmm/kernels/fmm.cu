// Laplace FMM kernels. NumPy twins: standard_m2l.m2l_lists_numba (the list translations), host.p2p_reference (near field),
// operators.p2m and operators.l2p (the leaf expansions).

// The list translations (M2L, and M2M / L2L: dest[t] += T[o] @ source[s] over pairs (t, s, o)) as small
// dense products: target boxes are grouped in tiles of TILE_SLOTS (plan.by_tile) and a tile's pairs in
// segments sharing one table T[o], so a block loads each table once for up to TILE_SLOTS targets instead of
// once per pair. Block (tile, row chunk, column chunk): output rows row0 .. row0 + TILE_ROWS - 1 of columns
// (slot, density) = 64 z .. 64 z + 63 (col = slot * n_dens + d), 256 threads each holding TILE_R rows x 4
// columns in registers (TILE_R, 3 to 6, fitted to the expansion's width by the launcher so that few rows are
// padding); the table and the gathered source columns staged kc <= TILE_K coefficients at a time (kc: the
// width cut into equal chunks, rounded up to 4). The products: on the FP64 tensor cores where the device has
// them (compute capability 8.0 on, mma.sync m8n8k4: 8 warps as 2 x 4, each TILE_R x 2 tiles of 8 x 8), else
// (or with -DM2L_CUDA_CORES) on the FP64 CUDA cores (16 x 16 threads). With splits = 1 a block owns its
// targets' rows (no atomics, a fixed order of sums); where there are too few tiles to fill the GPU, each
// tile's segments are cut into `splits` parts, one block each (blockIdx.x = tile * splits + part), added with
// atomics. table_t (n_tables, width, width) has its last two axes swapped. M2M and L2L pass the same array
// as source and dest: the rows read (one level) and written (the next) never overlap. NumPy twin:
// standard_m2l.m2l_lists_numba (the same sums, pair by pair).
#ifndef TABLE_T
#define TABLE_T double  // -DTABLE_T=float: the FP32 tables (LaplaceFMM's fp32_tables), staged and summed in FP64
#endif
#ifndef M2L_MIN_BLOCKS
#define M2L_MIN_BLOCKS 3  // blocks of m2l_tiles per multiprocessor the registers must allow: 3 caps them at 80
// (110 uncapped, no spills) and took the M2L 17-20 % faster on the H100 at 1e6 points; 4 (64) spills, slower
#endif
#ifndef TILE_R
#define TILE_R 6  // output rows per thread (gpu_m2l.tile_rows picks it per width)
#endif
#if !defined(M2L_CUDA_CORES) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define M2L_MMA
#endif
#define TILE_SLOTS 64
#define TILE_ROWS (16 * TILE_R)
#define TILE_COLS 64
#define TILE_K 32
#define TILE_PAD 4  // staged rows 4 doubles longer: an mma fragment's four k rows fall in distinct banks. The
// source columns' staging stores then meet 4-way bank conflicts (the table's do not); measured on the H100 (1e6
// points, p = 6, 10, 14), neither a pad of 1 on the CUDA-core path nor staging by warps of 4 coefficients x 8
// columns (no conflicts with this pad) was faster: the latter lost 3-9 %, its reads from global memory being
// less contiguous

// The block's staged products acc[i][j] += sum_k ts[k][row(i)] xs[k][col(j)] over k < kc (a multiple of 4),
// and the block-relative row and column of acc[i][j].
#ifdef M2L_MMA
__device__ __forceinline__ int tile_row(int tid, int i) { return (tid / 128 * TILE_R + i) * 8 + tid % 32 / 4; }
__device__ __forceinline__ int tile_col(int tid, int j) { return tid / 32 % 4 * 16 + j / 2 * 8 + tid % 4 * 2 + j % 2; }
__device__ __forceinline__ void tile_products(const double (*ts)[TILE_ROWS + TILE_PAD],
                                              const double (*xs)[TILE_COLS + TILE_PAD], int kc, int tid,
                                              double (&acc)[TILE_R][4])
{
    const int lane = tid % 32, row = tid / 128 * TILE_R * 8 + lane / 4, col = tid / 32 % 4 * 16 + lane / 4;
#pragma unroll 2
    for (int k0 = 0; k0 < kc; k0 += 4) {
        double a[TILE_R], x[2];
#pragma unroll
        for (int i = 0; i < TILE_R; ++i) a[i] = ts[k0 + lane % 4][row + 8 * i];
#pragma unroll
        for (int j = 0; j < 2; ++j) x[j] = xs[k0 + lane % 4][col + 8 * j];
#pragma unroll
        for (int i = 0; i < TILE_R; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j)
                asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                    : "+d"(acc[i][2 * j]), "+d"(acc[i][2 * j + 1]) : "d"(a[i]), "d"(x[j]));
    }
}
#else
__device__ __forceinline__ int tile_row(int tid, int i) { return tid / 16 + 16 * i; }
__device__ __forceinline__ int tile_col(int tid, int j) { return tid % 16 + 16 * j; }
__device__ __forceinline__ void tile_products(const double (*ts)[TILE_ROWS + TILE_PAD],
                                              const double (*xs)[TILE_COLS + TILE_PAD], int kc, int tid,
                                              double (&acc)[TILE_R][4])
{
#pragma unroll 4
    for (int k = 0; k < kc; ++k) {
        double a[TILE_R], x[4];
        for (int i = 0; i < TILE_R; ++i) a[i] = ts[k][tile_row(tid, i)];
        for (int j = 0; j < 4; ++j) x[j] = xs[k][tile_col(tid, j)];
        for (int i = 0; i < TILE_R; ++i)
            for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * x[j];
    }
}
#endif

extern "C" __global__ void __launch_bounds__(256, M2L_MIN_BLOCKS) m2l_tiles(
    const double* __restrict__ source, double* __restrict__ dest,
    const long long* __restrict__ tile_target, const long long* __restrict__ tile_segments,
    const int* __restrict__ segment_table, const long long* __restrict__ segment_pairs,
    const int* __restrict__ pair_slot, const long long* __restrict__ pair_source,
    const TABLE_T* __restrict__ table_t, int n_dens, int width, int splits)
{
    __shared__ double ts[TILE_K][TILE_ROWS + TILE_PAD];
    __shared__ double xs[TILE_K][TILE_COLS + TILE_PAD];
    __shared__ long long src_of[TILE_SLOTS];
    const int tid = threadIdx.x;
    const int nk = (width + TILE_K - 1) / TILE_K, kc = ((width + nk - 1) / nk + 3) / 4 * 4;
    const long long tile = blockIdx.x / splits, part = blockIdx.x % splits;
    const long long seg0 = tile_segments[tile], n_seg = tile_segments[tile + 1] - seg0;
    const int row0 = blockIdx.y * TILE_ROWS, col0 = blockIdx.z * TILE_COLS;
    double acc[TILE_R][4];
#pragma unroll
    for (int i = 0; i < TILE_R; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
    for (long long seg = seg0 + n_seg * part / splits; seg < seg0 + n_seg * (part + 1) / splits; ++seg) {
        const TABLE_T* table = table_t + (long long)segment_table[seg] * width * width;
        __syncthreads();  // the previous segment's staged columns are used up
        if (tid < TILE_SLOTS) src_of[tid] = -1;
        __syncthreads();
        for (long long k = segment_pairs[seg] + tid; k < segment_pairs[seg + 1]; k += blockDim.x)
            src_of[pair_slot[k]] = pair_source[k];
        __syncthreads();
        for (int c0 = 0; c0 < width; c0 += kc) {
            for (int e = tid; e < kc * TILE_ROWS; e += blockDim.x) {
                const int cc = e / TILE_ROWS, rr = e % TILE_ROWS, c = c0 + cc, r = row0 + rr;
                ts[cc][rr] = (c < width && r < width) ? (double)table[(long long)c * width + r] : 0.0;
            }
            for (int e = tid; e < kc * TILE_COLS; e += blockDim.x) {
                const int cc = e % kc, col = col0 + e / kc, slot = col / n_dens, c = c0 + cc;
                const long long s = slot < TILE_SLOTS ? src_of[slot] : -1;
                xs[cc][e / kc] = (s >= 0 && c < width) ? source[(s * n_dens + col % n_dens) * width + c] : 0.0;
            }
            __syncthreads();
            tile_products(ts, xs, kc, tid, acc);
            __syncthreads();
        }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int col = col0 + tile_col(tid, j), slot = col / n_dens;
        if (slot >= TILE_SLOTS) continue;
        const long long t = tile_target[tile * TILE_SLOTS + slot];
        if (t < 0) continue;
        double* out = dest + (t * n_dens + col % n_dens) * width;
#pragma unroll
        for (int i = 0; i < TILE_R; ++i) {
            const int r = row0 + tile_row(tid, i);
            if (r >= width) continue;
            if (splits > 1) atomicAdd(out + r, acc[i][j]);
            else out[r] += acc[i][j];
        }
    }
}

// Near field: one block per target leaf, a thread per target (looping when the leaf holds more), the
// sources of each paired source leaf staged through shared memory blockDim.x at a time; the coincident pair
// (r = 0) is skipped. phi (n_dens, n_t) and grad (n_dens, n_t, 3) are added to. NumPy twin:
// host.p2p_reference (and standard_m2l.p2p_numba).
#define P2P_THREADS 128
extern "C" __global__ void __launch_bounds__(P2P_THREADS) p2p_leaves(
    const double* __restrict__ tgt, const double* __restrict__ src,
    const double* __restrict__ charges, const double* __restrict__ dipoles,
    const long long* __restrict__ tgt_first, const long long* __restrict__ tgt_stop,
    const long long* __restrict__ pair_start, const long long* __restrict__ pair_leaf,
    const long long* __restrict__ leaf_first, const long long* __restrict__ leaf_stop, int n_t, int n_s,
    int n_dens, int has_charges, int has_dipoles, int gradient,
    double* __restrict__ phi, double* __restrict__ grad)
{
    __shared__ double sp[P2P_THREADS][7];  // x, y, z, charge, dipole
    const long long leaf = blockIdx.x, stop = tgt_stop[leaf];
    for (long long t = tgt_first[leaf] + threadIdx.x; t - threadIdx.x < stop; t += blockDim.x) {
        const bool live = t < stop;  // every thread runs every loop: the barriers below need them all
        const double x = live ? tgt[3 * t] : 0.0, y = live ? tgt[3 * t + 1] : 0.0, z = live ? tgt[3 * t + 2] : 0.0;
        for (int d = 0; d < n_dens; ++d) {
            double p = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
            for (long long k = pair_start[leaf]; k < pair_start[leaf + 1]; ++k) {
                const long long s0 = leaf_first[pair_leaf[k]], s1 = leaf_stop[pair_leaf[k]];
                for (long long j0 = s0; j0 < s1; j0 += blockDim.x) {
                    const long long j = j0 + threadIdx.x;
                    __syncthreads();
                    if (j < s1) {
                        for (int a = 0; a < 3; ++a) sp[threadIdx.x][a] = src[3 * j + a];
                        sp[threadIdx.x][3] = has_charges ? charges[(long long)d * n_s + j] : 0.0;
                        for (int a = 0; a < 3; ++a)
                            sp[threadIdx.x][4 + a] = has_dipoles ? dipoles[((long long)d * n_s + j) * 3 + a] : 0.0;
                    }
                    __syncthreads();
                    const int m = (int)min((long long)blockDim.x, s1 - j0);
                    for (int i = 0; live && i < m; ++i) {
                        const double* v = sp[i];
                        const double dx = x - v[0], dy = y - v[1], dz = z - v[2];
                        const double r2 = dx * dx + dy * dy + dz * dz;
                        if (r2 == 0.0) continue;
                        const double inv = rsqrt(r2), inv3 = inv * inv * inv, qi3 = v[3] * inv3;
                        p += v[3] * inv;
                        gx -= qi3 * dx; gy -= qi3 * dy; gz -= qi3 * dz;
                        if (has_dipoles) {
                            const double dot = v[4] * dx + v[5] * dy + v[6] * dz, c = 3.0 * dot * inv3 * inv * inv;
                            p += dot * inv3;
                            gx += v[4] * inv3 - c * dx; gy += v[5] * inv3 - c * dy; gz += v[6] * inv3 - c * dz;
                        }
                    }
                }
            }
            if (!live) continue;
            phi[(long long)d * n_t + t] += p;
            if (gradient) {
                double* g = grad + ((long long)d * n_t + t) * 3;
                g[0] += gx; g[1] += gy; g[2] += gz;
            }
        }
    }
}

// Regular solid harmonics R_n^m (0 <= m <= n <= p) of (x, y, z) at R[n (n + 1) / 2 + m], times i^m, by the
// recurrences of harmonics.regular (its NumPy twin).
__device__ void regular_harmonics(double x, double y, double z, int p, double2* R) {
    const double r2 = x * x + y * y + z * z;
    R[0] = make_double2(1.0, 0.0);
    for (int m = 0; m <= p; ++m) {
        const int mm = m * (m + 1) / 2 + m;
        if (m > 0) {
            const double2 a = R[(m - 1) * m / 2 + m - 1];
            R[mm] = make_double2((a.x * x - a.y * y) / (2 * m), (a.x * y + a.y * x) / (2 * m));
        }
        if (m + 1 <= p) {
            const int i = (m + 1) * (m + 2) / 2 + m;
            R[i] = make_double2(z * R[mm].x, z * R[mm].y);
        }
        for (int n = m + 2; n <= p; ++n) {
            const double2 a = R[(n - 1) * n / 2 + m], b = R[(n - 2) * (n - 1) / 2 + m];
            const double c = (double)((n + m) * (n - m));
            R[n * (n + 1) / 2 + m] = make_double2(((2 * n - 1) * z * a.x - r2 * b.x) / c,
                                                  ((2 * n - 1) * z * a.y - r2 * b.y) / c);
        }
    }
    for (int n = 1; n <= p; ++n)
        for (int m = 1; m <= n; ++m) {  // times i^m
            double2& v = R[n * (n + 1) / 2 + m];
            const double re = v.x, im = v.y;
            switch (m & 3) {
                case 1: v = make_double2(-im, re); break;
                case 2: v = make_double2(-re, -im); break;
                case 3: v = make_double2(im, -re); break;
                default: break;
            }
        }
}

// The gradient (d/dx, d/dy, d/dz) of stored harmonic (n, m) from the stored values R, as
// operators.gradient_regular: d/dz R_n^m = R_{n-1}^m, d/dx = (i/2)(R_{n-1}^{m-1} + R_{n-1}^{m+1}),
// d/dy = -(1/2)(R_{n-1}^{m-1} - R_{n-1}^{m+1}), with R_{n-1}^{-1} = -conj(R_{n-1}^1).
__device__ void harmonic_gradient(const double2* R, int n, int m, double2* g) {
    double2 minus = make_double2(0.0, 0.0), plus = minus, same = minus;
    if (n >= 1) {
        const int base = (n - 1) * n / 2;
        if (m >= 1) minus = R[base + m - 1];
        else if (n >= 2) minus = make_double2(-R[base + 1].x, R[base + 1].y);
        if (m + 1 <= n - 1) plus = R[base + m + 1];
        if (m <= n - 1) same = R[base + m];
    }
    const double2 s = make_double2(minus.x + plus.x, minus.y + plus.y);
    const double2 d = make_double2(minus.x - plus.x, minus.y - plus.y);
    g[0] = make_double2(-0.5 * s.y, 0.5 * s.x);
    g[1] = make_double2(-0.5 * d.x, -0.5 * d.y);
    g[2] = same;
}

// P2M at the source leaves (operators.p2m's twin): one block per leaf, points staged `chunk` at a time with
// their harmonics in shared memory, one thread per (density, stored coefficient). idx (n_leaves, width):
// sorted-source index or -1; points scaled (y - centre) / side, dipoles / side. multipole[gid, d] gets
// [Re M | Im M], M_n^m = sum q conj(R_n^m) + dipole . conj(grad R_n^m).
extern "C" __global__ void p2m_leaves(
    const double* __restrict__ src, const double* __restrict__ charges, const double* __restrict__ dipoles,
    const long long* __restrict__ idx, const double* __restrict__ centre, const double* __restrict__ side,
    const long long* __restrict__ gid, int width, int chunk, int n_s, int n_dens, int p, int has_q, int has_d,
    double* __restrict__ multipole)
{
    extern __shared__ double2 harm[];  // chunk x n_coef
    __shared__ long long point[64];
    const int b = blockIdx.x, n_coef = (p + 1) * (p + 2) / 2;
    const double h = side[b], cx = centre[3 * b], cy = centre[3 * b + 1], cz = centre[3 * b + 2];
    const int combos = n_dens * n_coef;
    double2 acc[8];
    for (int j = 0; j < 8; ++j) acc[j] = make_double2(0.0, 0.0);
    for (int l0 = 0; l0 < width; l0 += chunk) {
        const int count = min(chunk, width - l0);
        __syncthreads();
        for (int l = threadIdx.x; l < count; l += blockDim.x) {
            const long long s = idx[(long long)b * width + l0 + l];
            point[l] = s;
            const long long si = s < 0 ? 0 : s;
            regular_harmonics((src[3 * si] - cx) / h, (src[3 * si + 1] - cy) / h, (src[3 * si + 2] - cz) / h, p,
                              harm + (long long)l * n_coef);
        }
        __syncthreads();
        for (int c = threadIdx.x, j = 0; c < combos; c += blockDim.x, ++j) {
            const int d = c / n_coef, t = c % n_coef;
            int n = 0;
            while ((n + 1) * (n + 2) / 2 <= t) ++n;
            const int m = t - n * (n + 1) / 2;
            for (int l = 0; l < count; ++l) {
                const long long s = point[l];
                if (s < 0) continue;
                const double2* R = harm + (long long)l * n_coef;
                if (has_q) {
                    const double q = charges[(long long)d * n_s + s];
                    acc[j].x += q * R[t].x;
                    acc[j].y -= q * R[t].y;
                }
                if (has_d) {
                    double2 g[3];
                    harmonic_gradient(R, n, m, g);
                    const double* dp = dipoles + ((long long)d * n_s + s) * 3;
                    for (int k = 0; k < 3; ++k) {
                        acc[j].x += dp[k] / h * g[k].x;
                        acc[j].y -= dp[k] / h * g[k].y;
                    }
                }
            }
        }
    }
    for (int c = threadIdx.x, j = 0; c < combos; c += blockDim.x, ++j) {
        const int d = c / n_coef, t = c % n_coef;
        double* out = multipole + (gid[b] * n_dens + d) * 2 * n_coef;
        out[t] = acc[j].x;
        out[n_coef + t] = acc[j].y;
    }
}

// L2P at the target leaves (operators.l2p's twin): one block per leaf, one thread per slot (blockDim at a
// time), its harmonics in local memory; the leaf's local expansions (n_dens, [Re | Im]) staged one density
// at a time. Writes phi (n_dens, n_t) / side and grad (n_dens, n_t, 3) / side^2 at each slot's sorted target.
#define L2P_MAX_COEF 231
extern "C" __global__ void l2p_leaves(
    const double* __restrict__ tgt, const double* __restrict__ local, const long long* __restrict__ idx,
    const double* __restrict__ centre, const double* __restrict__ side, const long long* __restrict__ gid,
    int width, int n_t, int n_dens, int p, int gradient, double* __restrict__ phi, double* __restrict__ grad)
{
    extern __shared__ double staged[];  // 2 n_coef
    const int b = blockIdx.x, n_coef = (p + 1) * (p + 2) / 2;
    const double h = side[b];
    double2 R[L2P_MAX_COEF];
    for (int s0 = 0; s0 < width; s0 += blockDim.x) {  // uniform trip count: the barriers below are safe
        long long t = -1;
        if (s0 + threadIdx.x < width) t = idx[(long long)b * width + s0 + threadIdx.x];
        if (t >= 0)
            regular_harmonics((tgt[3 * t] - centre[3 * b]) / h, (tgt[3 * t + 1] - centre[3 * b + 1]) / h,
                              (tgt[3 * t + 2] - centre[3 * b + 2]) / h, p, R);
        for (int d = 0; d < n_dens; ++d) {
            __syncthreads();
            const double* loc = local + (gid[b] * n_dens + d) * 2 * n_coef;
            for (int i = threadIdx.x; i < 2 * n_coef; i += blockDim.x) staged[i] = loc[i];
            __syncthreads();
            if (t < 0) continue;
            double value = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
            for (int n = 0, c = 0; n <= p; ++n)
                for (int m = 0; m <= n; ++m, ++c) {
                    const double w = m > 0 ? 2.0 : 1.0;
                    const double lr = w * staged[c], li = w * staged[n_coef + c];
                    value += lr * R[c].x - li * R[c].y;
                    if (gradient) {
                        double2 g[3];
                        harmonic_gradient(R, n, m, g);
                        gx += lr * g[0].x - li * g[0].y;
                        gy += lr * g[1].x - li * g[1].y;
                        gz += lr * g[2].x - li * g[2].y;
                    }
                }
            phi[(long long)d * n_t + t] = value / h;
            if (gradient) {
                double* gout = grad + ((long long)d * n_t + t) * 3;
                gout[0] = gx / (h * h); gout[1] = gy / (h * h); gout[2] = gz / (h * h);
            }
        }
    }
}
