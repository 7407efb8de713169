// Element stiffness matrices of isotropic elasticity on trilinear hexahedra with a hierarchical basis.
// NumPy twins: element_matrices.stiffness_numpy (whole matrices) and physical_gradients (AII's first pass).
// K[3a+i][3b+j] = sum_q c_q (lam g_ai g_bj + mu g_aj g_bi + mu delta_ij g_a . g_b), c_q = w_q det J_q.

__device__ inline double jacobian_inverse(const double* __restrict__ x, const double* __restrict__ vg,
                                          double inv[3][3])
{   // x: 8 vertices (x, y, z); vg: 8 reference vertex gradients at the point. Returns det J.
    double j[3][3];
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) {
            double s = 0.0;
            for (int v = 0; v < 8; ++v) s += x[3 * v + i] * vg[3 * v + k];
            j[i][k] = s;
        }
    double det = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1])
               - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
               + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
    inv[0][0] = (j[1][1] * j[2][2] - j[1][2] * j[2][1]) / det;
    inv[0][1] = (j[0][2] * j[2][1] - j[0][1] * j[2][2]) / det;
    inv[0][2] = (j[0][1] * j[1][2] - j[0][2] * j[1][1]) / det;
    inv[1][0] = (j[1][2] * j[2][0] - j[1][0] * j[2][2]) / det;
    inv[1][1] = (j[0][0] * j[2][2] - j[0][2] * j[2][0]) / det;
    inv[1][2] = (j[0][2] * j[1][0] - j[0][0] * j[1][2]) / det;
    inv[2][0] = (j[1][0] * j[2][1] - j[1][1] * j[2][0]) / det;
    inv[2][1] = (j[0][1] * j[2][0] - j[0][0] * j[2][1]) / det;
    inv[2][2] = (j[0][0] * j[1][1] - j[0][1] * j[1][0]) / det;
    return det;
}

// Algorithm AI: one thread per element walks every Gauss point and every block (a, b >= a).
// Scratch g (n_s * 3, m) and the output k (N_e * N_e, m) are entry-major so that a warp's
// threads (consecutive elements) touch consecutive addresses.
extern "C" __global__ void hex_stiffness_ai(
    const double* __restrict__ coords, const double* __restrict__ lam, const double* __restrict__ mu,
    const double* __restrict__ ref_grads, const double* __restrict__ vgrads,
    const double* __restrict__ weights, int m, int nq, int ns,
    double* __restrict__ g, double* __restrict__ k)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= m) return;
    const long long M = m;
    const int ne = 3 * ns;
    for (long long r = 0; r < (long long)ne * ne; ++r) k[r * M + e] = 0.0;
    double x[24];
    for (int r = 0; r < 24; ++r) x[r] = coords[24LL * e + r];
    for (int q = 0; q < nq; ++q) {
        double inv[3][3];
        const double c = weights[q] * jacobian_inverse(x, vgrads + 24 * q, inv);
        const double* rg = ref_grads + 3LL * ns * q;
        for (int a = 0; a < ns; ++a)
            for (int j = 0; j < 3; ++j)
                g[(3LL * a + j) * M + e] = rg[3 * a] * inv[0][j] + rg[3 * a + 1] * inv[1][j]
                                         + rg[3 * a + 2] * inv[2][j];
        const double cl = c * lam[e], cm = c * mu[e];
        for (int a = 0; a < ns; ++a) {
            const double ga[3] = {g[3LL * a * M + e], g[(3LL * a + 1) * M + e], g[(3LL * a + 2) * M + e]};
            for (int b = a; b < ns; ++b) {
                const double gb[3] = {g[3LL * b * M + e], g[(3LL * b + 1) * M + e], g[(3LL * b + 2) * M + e]};
                const double dot = cm * (ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2]);
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j)
                        k[((3LL * a + i) * ne + 3 * b + j) * M + e] +=
                            cl * ga[i] * gb[j] + cm * ga[j] * gb[i] + (i == j ? dot : 0.0);
            }
        }
    }
    for (int r = 0; r < ne; ++r)  // mirror the upper block triangle
        for (int s = 0; s < r; ++s)
            if (s / 3 < r / 3) k[((long long)r * ne + s) * M + e] = k[((long long)s * ne + r) * M + e];
}

// Algorithm AII, first pass: one thread per (element, Gauss point) computes the physical gradients
// grads (m, nq, ns, 3) and c = w det J (m, nq) of its point.
extern "C" __global__ void hex_point_gradients(
    const double* __restrict__ coords, const double* __restrict__ ref_grads,
    const double* __restrict__ vgrads, const double* __restrict__ weights, int m, int nq, int ns,
    double* __restrict__ grads, double* __restrict__ c)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= (long long)m * nq) return;
    const int q = t % nq;
    const long long e = t / nq;
    double inv[3][3];
    const double det = jacobian_inverse(coords + 24 * e, vgrads + 24 * q, inv);
    c[t] = weights[q] * det;
    const double* rg = ref_grads + 3LL * ns * q;
    double* out = grads + 3LL * ns * t;
    for (int a = 0; a < ns; ++a)
        for (int j = 0; j < 3; ++j)
            out[3 * a + j] = rg[3 * a] * inv[0][j] + rg[3 * a + 1] * inv[1][j] + rg[3 * a + 2] * inv[2][j];
}

// Algorithm AII, summation (the slides' Fig. 2): one thread per (element, a, b) sums its 3 x 3 block
// over the Gauss points; consecutive threads take consecutive b, so the loads of g_b coalesce.
extern "C" __global__ void hex_sum_points(
    const double* __restrict__ grads, const double* __restrict__ c, const double* __restrict__ lam,
    const double* __restrict__ mu, int m, int nq, int ns, double* __restrict__ k)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= (long long)m * ns * ns) return;
    const int b = t % ns;
    const int a = (t / ns) % ns;
    const long long e = t / ((long long)ns * ns);
    double s[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
    for (int q = 0; q < nq; ++q) {
        const double* gq = grads + 3LL * ns * (e * nq + q);
        const double cq = c[e * nq + q];
        const double ga[3] = {cq * gq[3 * a], cq * gq[3 * a + 1], cq * gq[3 * a + 2]};
        const double gb[3] = {gq[3 * b], gq[3 * b + 1], gq[3 * b + 2]};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) s[i][j] += ga[i] * gb[j];
    }
    const double tr = s[0][0] + s[1][1] + s[2][2];
    const int ne = 3 * ns;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            k[(e * ne + 3 * a + i) * ne + 3 * b + j] =
                lam[e] * s[i][j] + mu[e] * s[j][i] + (i == j ? mu[e] * tr : 0.0);
}

// gemm, first pass: s[e][q][k][i] = sqrt(w_q det J) Jinv[k][i], one thread per (element, Gauss point).
extern "C" __global__ void hex_scaled_inverse(
    const double* __restrict__ coords, const double* __restrict__ vgrads,
    const double* __restrict__ weights, int m, int nq, double* __restrict__ s)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= (long long)m * nq) return;
    const int q = t % nq;
    const long long e = t / nq;
    double inv[3][3];
    const double root = sqrt(weights[q] * jacobian_inverse(coords + 24 * e, vgrads + 24 * q, inv));
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i) s[9 * t + 3 * k + i] = root * inv[k][i];
}

// gemm, second pass: the GEMM operand x[e][q][i][a] = sum_k ref_grads[q][a][k] s[e][q][k][i], one thread
// per (element, point, function): consecutive threads write consecutive a.
extern "C" __global__ void hex_gram_operand(
    const double* __restrict__ ref_grads, const double* __restrict__ s, int m, int nq, int ns,
    double* __restrict__ x)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= (long long)m * nq * ns) return;
    const int a = t % ns;
    const long long eq = t / ns;
    const int q = eq % nq;
    const double* g = ref_grads + 3LL * (ns * q + a);
    const double* sq = s + 9 * eq;
    for (int i = 0; i < 3; ++i)
        x[(3 * eq + i) * ns + a] = g[0] * sq[i] + g[1] * sq[3 + i] + g[2] * sq[6 + i];
}

// gemm, last pass: from the Gram matrix gram[e][i ns + a][j ns + b] = sum_q c G_i(a) G_j(b),
// k[e][3a+i][3b+j] = lam gram_ij + mu gram_ji + mu delta_ij sum_l gram_ll, one thread per (e, a, b).
extern "C" __global__ void hex_gram_to_stiffness(
    const double* __restrict__ gram, const double* __restrict__ lam, const double* __restrict__ mu,
    int m, int ns, double* __restrict__ k)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= (long long)m * ns * ns) return;
    const int b = t % ns;
    const int a = (t / ns) % ns;
    const long long e = t / ((long long)ns * ns);
    const int ne = 3 * ns;
    const double* g = gram + e * ne * ne;
    double v[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) v[i][j] = g[(long long)(i * ns + a) * ne + j * ns + b];
    const double tr = mu[e] * (v[0][0] + v[1][1] + v[2][2]);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            k[(e * ne + 3 * a + i) * ne + 3 * b + j] = lam[e] * v[i][j] + mu[e] * v[j][i] + (i == j ? tr : 0.0);
}
