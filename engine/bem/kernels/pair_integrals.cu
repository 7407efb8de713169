// Near-field pair integrals of the elastostatic BEM on flat triangles, one thread per pair (collocation
// point, element): h[i, l, k, a] = int_e T_lk(y - x) phi_a dS and g[i, l, k, a] = int_e U_lk(y - x) phi_a dS
// by the pair's own barycentric rule. The NumPy specification is assembly._pair_integrals, the Numba twin
// pair_kernel.pair_integrals; the element's corners, normal and area come per pair (already gathered and, for
// a Duffy rule, rotated so the collocation vertex comes first).

extern "C" __global__ void pair_integrals(
    const double* __restrict__ x,          // (P, 3) collocation points
    const double* __restrict__ corners,    // (n, 3, 3) the pair's element corners
    const double* __restrict__ normals,    // (n, 3)
    const double* __restrict__ areas,      // (n,)
    const long long* __restrict__ pair_p,  // (n,) rows of x
    const long long* __restrict__ rule_of, // (n,) into rule_start / rule_count
    const long long* __restrict__ rule_start,
    const long long* __restrict__ rule_count,
    const double* __restrict__ bary,       // (Q, 3) stacked rules
    const double* __restrict__ weights,    // (Q,)
    const double mu, const double nu, const long long n,
    double* __restrict__ h, double* __restrict__ g)  // (n, 3, 3, 3) each
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double pi = 3.14159265358979323846;
    const double cu = 1.0 / (16.0 * pi * mu * (1.0 - nu));
    const double ct = -1.0 / (8.0 * pi * (1.0 - nu));
    const double a1 = 1.0 - 2.0 * nu;
    const double* c = corners + 9 * i;
    const double nv[3] = {normals[3 * i], normals[3 * i + 1], normals[3 * i + 2]};
    const double xp[3] = {x[3 * pair_p[i]], x[3 * pair_p[i] + 1], x[3 * pair_p[i] + 2]};
    double hs[27], gs[27];
    for (int j = 0; j < 27; ++j) { hs[j] = 0.0; gs[j] = 0.0; }
    const long long q0 = rule_start[rule_of[i]], q1 = q0 + rule_count[rule_of[i]];
    for (long long q = q0; q < q1; ++q) {
        const double b0 = bary[3 * q], b1 = bary[3 * q + 1], b2 = bary[3 * q + 2];
        double r[3];
        for (int k = 0; k < 3; ++k) r[k] = b0 * c[k] + b1 * c[3 + k] + b2 * c[6 + k] - xp[k];
        const double d = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        const double ev[3] = {r[0] / d, r[1] / d, r[2] / d};
        const double drdn = ev[0] * nv[0] + ev[1] * nv[1] + ev[2] * nv[2];
        const double w = weights[q] * areas[i];
        const double wu = w * cu / d, wt = w * ct / (d * d);
        const double phi[3] = {b0, b1, b2};
        for (int l = 0; l < 3; ++l) {
            for (int k = 0; k < 3; ++k) {
                const double delta = (l == k) ? 1.0 : 0.0;
                const double u = wu * ((3.0 - 4.0 * nu) * delta + ev[l] * ev[k]);
                const double t = wt * (drdn * (a1 * delta + 3.0 * ev[l] * ev[k]) - a1 * (ev[l] * nv[k] - ev[k] * nv[l]));
                for (int a = 0; a < 3; ++a) {
                    gs[9 * l + 3 * k + a] += u * phi[a];
                    hs[9 * l + 3 * k + a] += t * phi[a];
                }
            }
        }
    }
    for (int j = 0; j < 27; ++j) { h[27 * i + j] = hs[j]; g[27 * i + j] = gs[j]; }
}
