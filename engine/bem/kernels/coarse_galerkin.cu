// The coarse level's Galerkin matrix, plain-rule part (engine/bem/coarse.py; host twin: engine/bem/coarse_rows.py,
// Numba): out[R, col] += sum_q K_R(q) cols(q, col) for every coarse row R = (cluster I, component l, kind t).
// One block per cluster I, its threads striding over the elements (per_element quadrature points each). K_R(q) is the cluster's sum over its
// members i of P's weight times [U | T](y_q - x_i) where y_q lies within near_radii radii of the centre, else
// sqrt(count_R) times [U | T](y_q - c_I). cols: the quadrature-to-coarse map, CSR of 6Q rows (6q + 3 layer + k,
// layer 0 the single layer U, 1 the double layer T with the normal at y_q) over the coarse columns; a pass takes
// the columns [col0, col1) only, whose far sums it gathers in shared memory (3 x (col1 - col0) doubles), an
// element's points summed first (a third of the shared-memory atomics with 3 points per element).
// Kelvin's kernels as engine/bem/kelvin.py; zero where y_q = x (the FMM skips coincident points).

#define PI 3.14159265358979323846

__device__ void kelvin(double rx, double ry, double rz, const double* n, double mu, double nu, double k[2][3][3])
{
    const double d2 = rx * rx + ry * ry + rz * rz;
    if (d2 == 0.0) {
        for (int a = 0; a < 18; ++a) (&k[0][0][0])[a] = 0.0;
        return;
    }
    const double d = sqrt(d2), e[3] = {rx / d, ry / d, rz / d};
    const double cu = 1.0 / (16.0 * PI * mu * (1.0 - nu) * d), ct = -1.0 / (8.0 * PI * (1.0 - nu) * d2);
    const double drdn = e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
    for (int l = 0; l < 3; ++l)
        for (int j = 0; j < 3; ++j) {
            const double delta = l == j ? 1.0 : 0.0, outer = e[l] * e[j];
            k[0][l][j] = cu * ((3.0 - 4.0 * nu) * delta + outer);
            k[1][l][j] = ct * (drdn * ((1.0 - 2.0 * nu) * delta + 3.0 * outer)
                               - (1.0 - 2.0 * nu) * (e[l] * n[j] - n[l] * e[j]));
        }
}

// A point within the reach: the cluster's members summed one by one, added straight into out.
__device__ void near_point(int q, const double* yq, double k[2][3][3], int cluster, int n_members,
                           const long long* members, const double* member_weight, const double* targets,
                           const double* normals, const int* indptr, const int* indices, const double* data,
                           const long long* rows, double* out, int n_c, int col0, int col1, double mu, double nu)
{
    double w[3][2][2][3] = {};  // [l][t][layer][j]: the members' weighted sum
    for (int m = 0; m < n_members; ++m) {
        const long long i = members[(long long)cluster * n_members + m];
        if (i < 0) break;
        kelvin(yq[0] - targets[3 * i], yq[1] - targets[3 * i + 1], yq[2] - targets[3 * i + 2], normals + 3 * q,
               mu, nu, k);
        const double* mw = member_weight + ((long long)cluster * n_members + m) * 6;
        for (int l = 0; l < 3; ++l)
            for (int t = 0; t < 2; ++t)
                for (int layer = 0; layer < 2; ++layer)
                    for (int j = 0; j < 3; ++j) w[l][t][layer][j] += mw[2 * l + t] * k[layer][l][j];
    }
    for (int layer = 0; layer < 2; ++layer)
        for (int j = 0; j < 3; ++j)
            for (int e = indptr[6 * q + 3 * layer + j]; e < indptr[6 * q + 3 * layer + j + 1]; ++e) {
                const int col = indices[e];
                if (col < col0 || col >= col1) continue;
                for (int l = 0; l < 3; ++l)
                    for (int t = 0; t < 2; ++t)
                        if (rows[2 * l + t] >= 0) atomicAdd(out + rows[2 * l + t] * n_c + col, w[l][t][layer][j] * data[e]);
            }
}

// A far point's row: summed into the element's sums where its columns are those of the element's first far
// point's row (the same nodes' clusters: at most 3 entries), else gathered straight into acc.
__device__ void far_point(const double k[2][3][3], int layer, int j, const int* indptr, const int* indices,
                          const double* data, int row, int row0, double sum[3][3], double* acc, int col0, int width)
{
    const int n = indptr[row + 1] - indptr[row];
    bool same = n <= 3 && n == indptr[row0 + 1] - indptr[row0];
    for (int e = 0; same && e < n; ++e) same = indices[indptr[row] + e] == indices[indptr[row0] + e];
    for (int e = 0; e < n; ++e) {
        const double v = data[indptr[row] + e];
        if (same) {
            for (int l = 0; l < 3; ++l) sum[e][l] += k[layer][l][j] * v;
            continue;
        }
        const int col = indices[indptr[row] + e] - col0;
        if (col < 0 || col >= width) continue;
        for (int l = 0; l < 3; ++l) atomicAdd(acc + l * width + col, k[layer][l][j] * v);
    }
}

extern "C" __global__ void coarse_rows(
    const double* __restrict__ centres, const double* __restrict__ radius, const double* __restrict__ y,
    const double* __restrict__ normals, const int* __restrict__ indptr, const int* __restrict__ indices,
    const double* __restrict__ data, const long long* __restrict__ members, const double* __restrict__ member_weight,
    const long long* __restrict__ row_of, const double* __restrict__ root, const double* __restrict__ targets,
    double* __restrict__ out, const int n_q, const int per_element, const int n_members, const int n_c,
    const int col0, const int col1,
    const double near_radii, const double mu, const double nu)
{
    extern __shared__ double acc[];  // [3][col1 - col0]: the centre's sums per component
    const int cluster = blockIdx.x, width = col1 - col0;
    const double* c = centres + 3 * cluster;
    const double reach2 = near_radii * near_radii * radius[cluster] * radius[cluster];
    const long long* rows = row_of + 6 * cluster;  // [l][t]
    for (int a = threadIdx.x; a < 3 * width; a += blockDim.x) acc[a] = 0.0;
    __syncthreads();
    for (int el = threadIdx.x; el < n_q / per_element; el += blockDim.x) {
        double sum[2][3][3][3] = {};  // [layer][j][entry][l]: the element's far points, in its first far row's columns
        int first = -1;  // the element's first far point
        for (int q = el * per_element; q < (el + 1) * per_element; ++q) {
            const double* yq = y + 3 * q;
            const double rx = yq[0] - c[0], ry = yq[1] - c[1], rz = yq[2] - c[2];
            double k[2][3][3];
            if (rx * rx + ry * ry + rz * rz > reach2) {  // far: the centre's kernel, gathered per component
                kelvin(rx, ry, rz, normals + 3 * q, mu, nu, k);
                first = first < 0 ? q : first;
                for (int layer = 0; layer < 2; ++layer)
                    for (int j = 0; j < 3; ++j)
                        far_point(k, layer, j, indptr, indices, data, 6 * q + 3 * layer + j,
                                  6 * first + 3 * layer + j, sum[layer][j], acc, col0, width);
                continue;
            }
            near_point(q, yq, k, cluster, n_members, members, member_weight, targets, normals, indptr, indices,
                       data, rows, out, n_c, col0, col1, mu, nu);
        }
        if (first < 0) continue;
        for (int layer = 0; layer < 2; ++layer)  // the element's far sums: one atomic per entry and component
            for (int j = 0; j < 3; ++j) {
                const int row = 6 * first + 3 * layer + j, n = min(3, indptr[row + 1] - indptr[row]);
                for (int e = 0; e < n; ++e) {
                    const int col = indices[indptr[row] + e] - col0;
                    if (col < 0 || col >= width) continue;
                    for (int l = 0; l < 3; ++l) atomicAdd(acc + l * width + col, sum[layer][j][e][l]);
                }
            }
    }
    __syncthreads();
    for (int a = threadIdx.x; a < width; a += blockDim.x)
        for (int l = 0; l < 3; ++l)
            for (int t = 0; t < 2; ++t)
                if (rows[2 * l + t] >= 0)
                    out[rows[2 * l + t] * n_c + col0 + a] += root[6 * cluster + 2 * l + t] * acc[l * width + a];
}
