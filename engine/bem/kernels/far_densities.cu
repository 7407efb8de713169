// The FMBEM far field's seven Laplace densities at the FMM's sources (quadrature points, in the FMM's tree
// order), densities first .. first + count - 1 of them: one thread per point q, source s = q_source[q] the
// quadrature point (element e = s / n_rule, rule point r = s % n_rule). From the nodal displacements u (N, 3)
// and the element tractions t (M, 3, 3) [element, node a, component k] interpolated with the weights
// w_a = bary[r][a] rule_weight[r] area[e]: charges (count, Q), dipoles (count, Q, 3) of densities d:
// for k = 0..2, charge_k = -(3 - 4 nu) cu tq_k, dipole_k = ct ((1 - 2 nu) uq_k n + 2 (1 - nu) n_k uq),
// charge_{3+k} = -cu tq_k, dipole_{3+k} = ct uq_k n; charge_6 = ct (1 - 2 nu) n.uq - cu y.tq,
// dipole_6 = ct (y.uq) n, n the element's unit normal, y the point. The reference is far_densities_reference
// (engine/bem/far_densities.py), which the host runs.

extern "C" __global__ void far_densities(const double* __restrict__ u, const double* __restrict__ t,
                                         const int* __restrict__ q_source, const long long* __restrict__ tri,
                                         const double* __restrict__ normal, const double* __restrict__ area,
                                         const double* __restrict__ bary, const double* __restrict__ rule_weight,
                                         const int n_rule, const double* __restrict__ y, const double cu,
                                         const double ct, const double nu, const int first, const int count,
                                         double* __restrict__ charges, double* __restrict__ dipoles,
                                         const int n_points)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n_points) return;
    const int e = q_source[q] / n_rule, r = q_source[q] % n_rule;
    const double scale = rule_weight[r] * area[e];
    double uq[3] = {0.0, 0.0, 0.0}, tq[3] = {0.0, 0.0, 0.0};
    const double* te = t + 9 * (size_t)e;
    for (int a = 0; a < 3; ++a) {
        const double w = bary[3 * r + a] * scale;
        const double* ua = u + 3 * (size_t)tri[3 * (size_t)e + a];
        for (int k = 0; k < 3; ++k) {
            uq[k] += w * ua[k];
            tq[k] += w * te[3 * a + k];
        }
    }
    const double n[3] = {normal[3 * (size_t)e], normal[3 * (size_t)e + 1], normal[3 * (size_t)e + 2]};
    const double x[3] = {y[3 * (size_t)q], y[3 * (size_t)q + 1], y[3 * (size_t)q + 2]};
    const size_t stride = (size_t)n_points;
    const double nu_q = n[0] * uq[0] + n[1] * uq[1] + n[2] * uq[2];
    const double yt = x[0] * tq[0] + x[1] * tq[1] + x[2] * tq[2], yu = x[0] * uq[0] + x[1] * uq[1] + x[2] * uq[2];
#pragma unroll
    for (int d = 0; d < 7; ++d) {
        if (d < first || d >= first + count) continue;
        const size_t row = (size_t)(d - first) * stride + q;
        const int k = d % 3;
        charges[row] = d < 3 ? -(3.0 - 4.0 * nu) * cu * tq[k] : d < 6 ? -cu * tq[k]
                                                             : ct * (1.0 - 2.0 * nu) * nu_q - cu * yt;
        for (int m = 0; m < 3; ++m)
            dipoles[3 * row + m] = d < 3 ? (1.0 - 2.0 * nu) * ct * uq[k] * n[m] + 2.0 * (1.0 - nu) * ct * n[k] * uq[m]
                                 : d < 6 ? ct * uq[k] * n[m] : ct * yu * n[m];
    }
}
