// The FMBEM far field's seven Laplace densities at the FMM's sources (quadrature points, in the FMM's tree
// order): one thread per point q, from the nodal displacements u (N, 3) and the element tractions t (M, 3, 3)
// [element, node a, component k] interpolated with the point's weights w_a (barycentric times quadrature
// weight). charges (7, Q), dipoles (7, Q, 3): for k = 0..2, charge_k = -(3 - 4 nu) cu tq_k, dipole_k =
// ct ((1 - 2 nu) uq_k n + 2 (1 - nu) n_k uq), charge_{3+k} = -cu tq_k, dipole_{3+k} = ct uq_k n; charge_6 =
// ct (1 - 2 nu) n.uq - cu y.tq, dipole_6 = ct (y.uq) n. The reference is far_densities_reference
// (engine/bem/far_densities.py), which the host runs.

extern "C" __global__ void far_densities(const double* __restrict__ u, const double* __restrict__ t,
                                         const int* __restrict__ q_nodes, const int* __restrict__ q_element,
                                         const double* __restrict__ q_weight, const double* __restrict__ normal,
                                         const double* __restrict__ y, const double cu, const double ct,
                                         const double nu, double* __restrict__ charges,
                                         double* __restrict__ dipoles, const int n_points)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n_points) return;
    double uq[3] = {0.0, 0.0, 0.0}, tq[3] = {0.0, 0.0, 0.0};
    const double* te = t + 9 * (size_t)q_element[q];
    for (int a = 0; a < 3; ++a) {
        const double w = q_weight[3 * (size_t)q + a];
        const double* ua = u + 3 * (size_t)q_nodes[3 * (size_t)q + a];
        for (int k = 0; k < 3; ++k) {
            uq[k] += w * ua[k];
            tq[k] += w * te[3 * a + k];
        }
    }
    const double n[3] = {normal[3 * (size_t)q], normal[3 * (size_t)q + 1], normal[3 * (size_t)q + 2]};
    const double x[3] = {y[3 * (size_t)q], y[3 * (size_t)q + 1], y[3 * (size_t)q + 2]};
    const size_t stride = (size_t)n_points;
    for (int k = 0; k < 3; ++k) {
        charges[k * stride + q] = -(3.0 - 4.0 * nu) * cu * tq[k];
        charges[(3 + k) * stride + q] = -cu * tq[k];
        for (int m = 0; m < 3; ++m) {
            dipoles[3 * (k * stride + q) + m] = (1.0 - 2.0 * nu) * ct * uq[k] * n[m]
                                                + 2.0 * (1.0 - nu) * ct * n[k] * uq[m];
            dipoles[3 * ((3 + k) * stride + q) + m] = ct * uq[k] * n[m];
        }
    }
    const double nu_q = n[0] * uq[0] + n[1] * uq[1] + n[2] * uq[2];
    const double yt = x[0] * tq[0] + x[1] * tq[1] + x[2] * tq[2], yu = x[0] * uq[0] + x[1] * uq[1] + x[2] * uq[2];
    charges[6 * stride + q] = ct * (1.0 - 2.0 * nu) * nu_q - cu * yt;
    for (int m = 0; m < 3; ++m) dipoles[3 * (6 * stride + q) + m] = ct * yu * n[m];
}
