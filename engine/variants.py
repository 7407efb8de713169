"""Variant axes and their choices: the one list that problem files, solvers, the study registry, the
command line, the GUI and the benchmarks all read."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace
from typing import Callable

from .errors import ProblemError, shown


@dataclass(frozen=True)
class Choice:
    """One value of a variant axis and what it needs to run: needs_gpu, a CUDA GPU; package, a Python
    package that is not a dependency of ParaFlux (imported by that name; distribution, its name on PyPI
    where that differs)."""

    name: str
    description: str
    needs_gpu: bool = False
    package: str | None = None
    distribution: str | None = None

    def unavailable(self, gpu_reason: str | None) -> str | None:
        """Why this choice cannot run here (gpu_reason: why no GPU is usable, None when one is), or None."""
        if self.needs_gpu and gpu_reason:
            return gpu_reason
        if self.package and importlib.util.find_spec(self.package) is None:
            return f"needs the Python package {self.package} (pip install {self.distribution or self.package})"
        return None


@dataclass(frozen=True)
class VariantAxis:
    """A named algorithm choice (e.g. method, backend); option is the CLI flag and problem-file key.
    applies_when (axis, choice): the axis only matters when that other axis has that choice. auto(on_gpu):
    the choice an "auto" choice stands for where the run happens (axes with an "auto" choice)."""

    name: str
    label: str
    choices: tuple[Choice, ...]
    default: str
    applies_when: tuple[str, str] | None = None
    auto: Callable[[bool], str] | None = None

    def resolve(self, name: str, on_gpu: bool) -> str:
        """The choice that runs: name itself, or what "auto" stands for on a GPU (on_gpu) or the CPU."""
        self.choice(name)
        return self.auto(on_gpu) if name == "auto" and self.auto is not None else name

    @property
    def concrete(self) -> tuple[str, ...]:
        """Every choice but "auto" (which picks one of them)."""
        return tuple(n for n in self.names if n != "auto")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.choices)

    def choice(self, name: str) -> Choice:
        for c in self.choices:
            if c.name == name:
                return c
        raise ProblemError(f"unknown {self.name} '{name}'; choose one of: "
                           f"{', '.join(c.name for c in self.choices)}")

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")



@dataclass(frozen=True)
class Parameter:
    """A numeric setting of a study (e.g. the solver tolerance), with its admissible range."""

    name: str
    label: str
    default: float
    minimum: float
    maximum: float
    description: str

    integer: bool = False  # an integer setting with inclusive bounds (e.g. the element order)
    compare_values: tuple = ()  # values Compare offers for this parameter (none: not compared)

    @property
    def option(self) -> str:
        """The command-line option that sets it."""
        return "--" + self.name.replace("_", "-")

    def check(self, value: float) -> float:
        if self.integer:  # the range first: float() of a huge integer would overflow (shown() names its size)
            if isinstance(value, bool) or not self.minimum <= value <= self.maximum or float(value) != int(value):
                raise ProblemError(f"{self.label.lower()} must be a whole number from {self.minimum:g} to "
                                   f"{self.maximum:g}, got {shown(value)}")
            return int(value)
        if not self.minimum < value < self.maximum:
            raise ProblemError(f"{self.label.lower()} must lie between {self.minimum:g} and {self.maximum:g}, "
                               f"got {shown(value)}")
        return value


RESIDUAL_FLOOR = 1e-15  # a relative residual float64 arithmetic can reach; below it CG's p.Ap underflows
RTOL = Parameter("rtol", "Tolerance", 1e-8, RESIDUAL_FLOOR, 1.0, "relative residual ||b - Ax|| / ||b|| to reach")

METHOD = VariantAxis("method", "Solver", (
    Choice("ebe-jpcg", "element-by-element Jacobi-preconditioned CG, no global matrix"),
    Choice("sparse-direct", "assembled sparse matrix, SciPy SuperLU (CPU reference)"),
), "ebe-jpcg")

BACKEND = VariantAxis("backend", "Backend", (
    Choice("numpy", "CPU, NumPy"),
    Choice("cupy", "CUDA GPU, CuPy", needs_gpu=True),
    Choice("auto", "CuPy when a usable GPU is present, NumPy otherwise"),
), "auto")

REDUCTION = VariantAxis("reduction", "Reduction", (
    Choice("auto", "library on NumPy, fused on the GPU"),
    Choice("adjacent", "shared-memory tree, interleaved addressing (paper 000, Fig. 5)"),
    Choice("sequential", "shared-memory tree, sequential addressing (paper 000, Fig. 6)"),
    Choice("warp-shuffle", "grid-stride loads and warp shuffles, two passes"),
    Choice("library", "CuPy's CUB sum on the GPU, NumPy's dot on the CPU"),
    Choice("fused", "inner products computed inside the product and update kernels"),
), "auto", auto=lambda on_gpu: "fused" if on_gpu else "library")

ACCUMULATE = VariantAxis("accumulate", "Accumulation", (
    Choice("atomic", "element contributions added with atomics (GPU) or one bincount (CPU)"),
    Choice("colored", "one conflict-free pass per colour group: bitwise identical from run to run"),
), "atomic")

COLORING = VariantAxis("coloring", "Colouring", (
    Choice("ccm", "classical: one colour per pass over the elements (paper 002, Algorithm 1)"),
    Choice("fcm", "fast colour marking: one pass, smallest colour free near the element (Algorithm 2)"),
    Choice("ofcm", "optimised FCM with a per-node tabu bit set of used colours (Algorithm 3)"),
    Choice("parallel", "Jones-Plassmann rounds on the GPU (CuPy) or vectorised NumPy"),
), "ofcm")

ELASTIC_RTOL = Parameter("rtol", "Tolerance", 1e-10, RESIDUAL_FLOOR, 1.0, "relative residual ||b - Ax|| / ||b|| to reach")

ORDER = Parameter("order", "Order", 3, 1, 10, "polynomial order p of the hierarchical hexahedra", integer=True)

ELASTIC_METHOD = VariantAxis("method", "Solver", (
    Choice("cg", "preconditioned conjugate gradients on the assembled sparse matrix (CuPy or SciPy)"),
    Choice("sparse-direct", "assembled sparse matrix, SciPy sparse direct solve (CPU reference)"),
), "cg")

PRECONDITIONER = VariantAxis("preconditioner", "Preconditioner", (
    Choice("jacobi", "diagonal of the assembled matrix"),
    Choice("block-jacobi", "3x3 blocks of the assembled matrix (the x, y, z DOFs of one basis function)"),
), "block-jacobi")

INTEGRATION = VariantAxis("integration", "Element matrices", (
    Choice("numpy", "vectorised NumPy: B^T D B per Gauss point, batched over elements (CPU reference)"),
    Choice("serial", "one CPU core, Numba: the slides' single-core baseline"),
    Choice("ai", "GPU, one thread per element (paper 004, algorithm AI)", needs_gpu=True),
    Choice("aii", "GPU, one thread per (element, Gauss point), then a summation (algorithm AII)",
           needs_gpu=True),
    Choice("gemm", "batched GEMM of the weighted gradient Gram matrix (cuBLAS on the GPU, BLAS on the CPU)"),
    Choice("mma", "GPU, the Gram product and K^e fused in one kernel on the FP64 tensor cores, symmetric half",
           needs_gpu=True),
    Choice("sumfact", "sum factorisation over the tensor-product basis, O(p^7) instead of O(p^9) (GPU or CPU)"),
), "numpy")

BEM_METHOD = VariantAxis("method", "Solver", (
    Choice("fmm", "GMRES on the operator through the fast multipole engine, near field precomputed"),
    Choice("direct", "dense collocation matrix, LU (the reference; small meshes)"),
), "fmm")

BEM_PRECISION = VariantAxis("precision", "Precision", (
    Choice("order", "the multipole order as given"),
    Choice("1e-3", "the order whose FMM solve is within 1e-3 of the direct solve's displacements (bem/precision.py)"),
    Choice("1e-4", "the order whose FMM solve is within 1e-4 of the direct solve's displacements"),
    Choice("1e-5", "the order whose FMM solve is within 1e-5 of the direct solve's displacements"),
), "order")

MULTIPOLE_ORDER = Parameter("order", "Multipole order", 8, 2, 20, "expansion order p of the fast "
                            "multipole engine", integer=True, compare_values=(4, 6, 8, 10, 12))

LEAF_SIZE = Parameter("leaf_size", "Leaf size", 0, 0, 1000, "points per octree leaf of the fast multipole "
                      "engine; 0: by backend, 32 on NumPy, 256 on the GPU (there faster than 32 with the same "
                      "GMRES iterations: bench fmbem)", integer=True)

FAR_PASSES = Parameter("far_passes", "FMM passes", 1, 1, 7, "FMM applications per far-field product of the "
                       "FMBEM, its seven Kelvin densities split among them: more passes hold fewer densities and "
                       "expansions at once, less device memory for more time (GPU, 100k DOFs: 7 passes 3.94 KB "
                       "per DOF instead of 4.20, 8.5 s instead of 7.8, measured)", integer=True,
                       compare_values=(1, 3, 7))

FAR_TABLES = VariantAxis("far_tables", "Far-field tables", (
    Choice("fp64", "the FMM's translation tables in FP64, as the rest of the far field"),
    Choice("fp32", "the FMM's same-level M2L table in FP32 (half its memory and its table traffic; the "
                   "densities, expansions and sums stay FP64), which adds about 1e-7 relative to the far field: "
                   "with a precision of 1e-3 to 1e-5 asked or an order up to 10, where the FMM's own error stays "
                   "well above that; not with the exponential scheme"),
), "fp64", applies_when=("method", "fmm"))

NEAR_FIELD = VariantAxis("near_field", "Near field", (
    Choice("auto", "6 element sizes on NumPy (on the bracket, ILU alone: half the GMRES iterations of 3, 1.9x "
                   "faster, measured), 3 on the GPU (there 6 took 30 iterations instead of 35 at 100k DOFs "
                   "with the coarse level, for 1.45x the device memory and 1.5x the time, measured)"),
    Choice("2", "the FMBEM's preconditioner sees element pairs out to 2 element sizes only, the accurate "
                "corrections still out to 3: less memory, more iterations (GPU, 100k DOFs to 1e-3: 41 GMRES "
                "iterations instead of 35, 3.9 KB per DOF instead of 4.2, measured)"),
    Choice("3", "the FMBEM's ILU preconditioner sees element pairs out to 3 element sizes (centroid distance "
                "over size), as far as the accurate near-field integrals reach"),
    Choice("4.5", "out to 4.5 element sizes, the pairs beyond 3 by the plain rule: fewer iterations, a larger ILU"),
    Choice("6", "out to 6: about half the iterations of 3 for twice the host memory (measured on NumPy)"),
    Choice("8", "out to 8: a few iterations fewer than 6 for more memory and set-up"),
), "auto", applies_when=("method", "fmm"), auto=lambda on_gpu: "3" if on_gpu else "6")

COARSE_LEVEL = VariantAxis("coarse", "Coarse level", (
    Choice("on", "the FMBEM preconditioner's coarse level beside the ILU: a Galerkin solve on clusters of 8 "
                 "collocation points (engine/bem/coarse.py; at 100k DOFs 35 GMRES iterations instead of 88, "
                 "half the time, its LU 0.5 KB per DOF in FP32 (tolerances from 1e-3), 1 KB in FP64, measured)"),
    Choice("off", "the ILU of the near field alone"),
), "on", applies_when=("method", "fmm"))

M2L = VariantAxis("m2l", "M2L scheme", (
    Choice("auto", "batched-gemm on NumPy (1.4-2.4x standard's speed there, measured), standard on the GPU "
                   "(the fastest there up to 1e6 points, docs/benchmarks/fmm.md)"),
    Choice("standard", "same-level interaction lists, at most 189 translations per box (paper 001, M2L)"),
    Choice("child-to-parent", "far sources translated once into the target's parent (M2L_N), 119 per box"),
    Choice("parent-to-child", "far sources' parents translated straight to the target (M2L_NF), 119 per box"),
    Choice("exponential", "plane waves: M2X, X2X, X2L over six directional lists (8, 17 or 26 nodes)"),
    Choice("batched-gemm", "all translations of a level as stacked dense products (cuBLAS / BLAS)"),
), "auto", auto=lambda on_gpu: "standard" if on_gpu else "batched-gemm")

EXPONENTIAL_NODES = VariantAxis("exponential_nodes", "Exponential nodes", (
    Choice("8", "the exponential M2L's plane-wave rule of 8 nodes, accurate to 1.9e-3"),
    Choice("17", "17 nodes, accurate to 6e-6"),
    Choice("26", "26 nodes, accurate to 7e-8"),
), "17", applies_when=("m2l", "exponential"))

SOLVER_REDUCTIONS = REDUCTION.concrete  # the reductions the solvers implement

LOOP = VariantAxis("loop", "Loop strategy", (
    Choice("serial", "one core, Numba, the paper's loop order S', S, right-hand sides (Table 1's baseline)"),
    Choice("cpu-sprime", "Numba threads over S' points, a private output per thread, then a parallel sum (omp_S')"),
    Choice("cpu-s", "Numba threads over S points, each owning its rows of the output (omp_S)"),
    Choice("cpu-rhs", "Numba threads over right-hand sides (omp_rhs)"),
    Choice("zgemm", "coupling tiles (G, grad'G) times the currents as complex GEMMs, tiles cached across "
                    "applications (cuBLAS on the GPU when one is usable, BLAS otherwise)"),
    Choice("cuda-s", "CUDA, one thread per S element, S' currents staged through shared memory (cuda_S)",
           needs_gpu=True),
    Choice("cuda-rhs", "CUDA, one thread per right-hand side, one block per S point, the block's coupling "
                       "shared (cuda_rhs)", needs_gpu=True),
    Choice("cuda-tiled", "CUDA, N-body tiling: one thread per S point, S' tiles in shared memory, G and "
                         "grad'G fused and reused for every right-hand side", needs_gpu=True),
    Choice("cuda-tiled-fp32", "cuda-tiled with each pair in single precision (R = t - s taken in double), tile sums "
                              "in float added to double totals: within 3e-5 of cuda-tiled (tested ten wavelengths across), "
                              "for GMRES tolerances of 1e-4",
           needs_gpu=True),
    Choice("fmm", "FMM3D's vector Helmholtz FMM (fmm3dpy), O(N) on the CPU cores, to the requested precision "
                  "([solver] precision)", package="fmm3dpy"),
    Choice("multi-gpu-tiled", "S split across every visible GPU, each running cuda-tiled with S' chunked to "
                              "fill it (the fast path for few right-hand sides)", needs_gpu=True),
), "cpu-s")

QUADRATURE = VariantAxis("quadrature", "Quadrature", (
    Choice("1", "1 point per triangle (degree 1)"),
    Choice("3", "3 points per triangle (degree 2)"),
    Choice("6", "6 points per triangle (degree 4)"),
    Choice("7", "7 points per triangle (degree 5)"),
    Choice("12", "12 points per triangle (degree 6)"),
), "6")

ACCELERATION = VariantAxis("acceleration", "Iteration", (
    Choice("fixed-point", "the FE-IIIEE loop: U <- L U + f from the first-order absorbing condition (U = 0)"),
    Choice("gmres", "GMRES on (I - L) U = f over the values of U on S, every incidence its own Krylov space"),
), "fixed-point")

LINEAR_SOLVER_SPEED = ("pardiso", "umfpack", "superlu")  # fastest first, docs/benchmarks/scattering-linear.md


def _fastest_installed(on_gpu: bool) -> str:
    """cuDSS where a GPU is usable and nvmath-python installed, else the first of LINEAR_SOLVER_SPEED whose
    package is installed (on the host)."""
    if on_gpu and LINEAR_SOLVER.choice("cudss").unavailable(None) is None:
        return "cudss"
    return next(n for n in LINEAR_SOLVER_SPEED if LINEAR_SOLVER.choice(n).unavailable(None) is None)


LINEAR_SOLVER = VariantAxis("linear_solver", "Linear solver", (
    Choice("auto", "cuDSS where a GPU is usable, else the fastest installed on the host, as measured on the "
                   "1-wavelength sphere: PARDISO, UMFPACK, SuperLU"),
    Choice("umfpack", "UMFPACK (SuiteSparse, multifrontal, BLAS 3) through CVXOPT", package="cvxopt"),
    Choice("superlu", "SciPy's SuperLU, symmetric mode (minimum degree on A + A^T, diagonal pivots)"),
    Choice("pardiso", "MKL PARDISO, complex symmetric LDL^T of the upper triangle, one call for every "
                      "right-hand side (py-mkl-pardiso)", package="pymklpardiso", distribution="py-mkl-pardiso"),
    Choice("cudss", "NVIDIA cuDSS on the GPU, complex symmetric LDL^T of the upper triangle, the factor kept on "
                    "the device, one call for every right-hand side (nvmath-python)", needs_gpu=True,
           package="nvmath", distribution="paraflux[gpu]"),
), "auto", auto=_fastest_installed)



def _several_gpu_loop(on_gpu: bool) -> str:
    """multi-gpu-tiled where several GPUs are visible, else zgemm (cuBLAS on the one GPU, else BLAS)."""
    from .gpu_probe import gpu_count  # noqa: PLC0415 (CuPy is probed only when asked)

    return "multi-gpu-tiled" if on_gpu and gpu_count() > 1 else "zgemm"


SCATTERING_LOOP = replace(LOOP, choices=(  # many right-hand sides, the same S' and S every iteration
    Choice("auto", "multi-gpu-tiled on every visible GPU where there are several, else zgemm (cuBLAS on one GPU, "
                   "BLAS on the host): the coupling tiles cached across iterations on one device"),
    *LOOP.choices), default="auto", auto=_several_gpu_loop)

NEDELEC_ORDER = Parameter("order", "Nedelec order", 2, 1, 3, "first-kind Nedelec order: 1 (6 functions per "
                          "tetrahedron), 2 (20) or 3 (45)", integer=True, compare_values=(1, 2, 3))
ITERATION_TOL = Parameter("rtol", "Tolerance", 1e-4, 0.0, 1.0, "relative change of U on S (fixed-point) "
                          "or GMRES residual at which the iteration stops")
