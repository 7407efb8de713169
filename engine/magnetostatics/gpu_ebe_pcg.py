"""EBE-J-PCG on a CUDA GPU with CuPy: the CPU solver's algorithm with its data and recurrences on the device.

Kernels: kernels/ebe_pcg.cu (element products with atomic accumulation, CG updates) and
kernels/reductions.cu (inner products by variant). The host reads the residual history only
every `check_every` iterations; those iterations are captured once as a CUDA graph and replayed.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..backend import kernel_function, out_of_memory
from ..errors import SolverError
from ..variants import SOLVER_REDUCTIONS
from ..run_control import RunControl
from . import reductions
from .ebe_layout import pack_system
from .ebe_pcg import MAX_REPLACEMENTS, EbeOperator, default_max_iterations, lifted_right_hand_side
from .solution import LinearSolution
from .system import ElementSystem

KERNELS = Path(__file__).with_name("kernels")
BLOCK = reductions.BLOCK
DEFAULT_CHECK_EVERY = 32  # chosen by measurement: docs/benchmarks/ebe.md, "convergence-check interval"
GPU_REDUCTIONS = SOLVER_REDUCTIONS


@functools.lru_cache(maxsize=None)
def kernel(module: str, name: str):
    """A kernel of kernels/<module>.cu (its local headers inlined), compiled once per process."""
    return kernel_function(KERNELS / f"{module}.cu", name, ("--std=c++14",))


def _blocks(n: int) -> tuple[int]:
    return (max(1, -(-n // BLOCK)),)


class DeviceReducer:
    """dot(a, b, n, out): the inner product of the first n entries into the one-element view out."""

    def __init__(self, variant: str, n_max: int):
        import cupy as cp  # noqa: PLC0415

        self.cp = cp
        self.variant = variant
        if variant in ("adjacent", "sequential"):
            size = -(-n_max // BLOCK) + 1
            self.scratch = (cp.empty(size), cp.empty(size))
            self.first = kernel("reductions", f"dot_{variant}")
            self.rest = kernel("reductions", f"sum_{variant}")
        elif variant == "warp-shuffle":
            self.partial = cp.empty(reductions.MAX_SHUFFLE_BLOCKS)
            self.first = kernel("reductions", "dot_shuffle")
            self.rest = kernel("reductions", "sum_shuffle")
        elif variant == "library":
            self.product = cp.empty(n_max)
        else:
            raise SolverError(f"'{variant}' is not a stand-alone reduction")

    def dot(self, a, b, n: int, out) -> None:
        n64 = np.int64(n)
        if self.variant == "library":
            self.cp.sum(self.cp.multiply(a[:n], b[:n], out=self.product[:n]), out=out.reshape(()))
        elif self.variant == "warp-shuffle":
            grid = reductions.shuffle_grid(n)
            self.first((grid,), (BLOCK,), (n64, a, b, self.partial))
            self.rest((1,), (BLOCK,), (np.int64(grid), self.partial, out))
        else:
            blocks = -(-n // BLOCK)
            target = out if blocks == 1 else self.scratch[0]
            self.first((blocks,), (BLOCK,), (n64, a, b, target))
            source, count, flip = target, blocks, 1
            while count > 1:
                blocks = -(-count // BLOCK)
                target = out if blocks == 1 else self.scratch[flip]
                self.rest((blocks,), (BLOCK,), (np.int64(count), source, target))
                source, count, flip = target, blocks, 1 - flip


def solve_ebe_jpcg_gpu(system: ElementSystem, rtol: float = 1e-8, max_iterations: int | None = None,
                       reduction: str = "fused", check_every: int | None = None,
                       control: RunControl | None = None, groups=None) -> LinearSolution:
    """Solve the system by EBE-J-PCG on the current CUDA device; same stopping rule as solve_ebe_jpcg.

    groups: a ColorGroups of the elements for coloured accumulation (one launch per colour, no
    atomics: bitwise identical results from run to run), or None for atomic accumulation.
    """
    import cupy as cp  # noqa: PLC0415

    if reduction not in GPU_REDUCTIONS:
        raise SolverError(f"unknown reduction '{reduction}'; choose one of: {', '.join(GPU_REDUCTIONS)}")
    check_every = check_every or DEFAULT_CHECK_EVERY
    if check_every < 2 or check_every % 2:
        raise SolverError(f"check_every must be an even number of at least 2, got {check_every}")
    try:
        return _solve(cp, system, rtol, max_iterations, reduction, check_every, control or RunControl(), groups)
    except MemoryError as exc:
        raise out_of_memory(exc, f"EBE-J-PCG on {system.connectivity.shape[0]:,} elements",
                            "use a coarser mesh or the numpy backend") from None


class _DeviceIteration:
    """The device state of one EBE-J-PCG solve and its kernels: x, r, z, p, q (entry n: the dummy
    Dirichlet node), the scalars (p, Ap) and (r, z) in two slots used alternately, and a history of
    k squared residuals per block of iterations."""

    def __init__(self, cp, system, reduction: str, k: int, groups, device_op):
        n, n_el = system.n_nodes, system.connectivity.shape[0]
        self.cp, self.n, self.groups, self.fused = cp, n, groups, reduction == "fused"
        packed = pack_system(system, cp)
        self.conn, self.ke = packed.conn, packed.ke
        if groups is not None:  # store the element data grouped by colour: each launch reads one range
            order = cp.asarray(groups.permutation)
            self.conn, self.ke = cp.ascontiguousarray(self.conn[:, order]), cp.ascontiguousarray(self.ke[:, order])
            self.ranges = [(int(a), int(b - a)) for a, b in zip(groups.offsets[:-1], groups.offsets[1:]) if b > a]
            self.colored_blocks = [-(-count // BLOCK) for _, count in self.ranges]
            self.block_start = np.concatenate([[0], np.cumsum(self.colored_blocks)]).astype(int)
        inv_diag = 1.0 / device_op.diagonal()
        self.inv_diag_padded = cp.concatenate([inv_diag, cp.zeros(1)])
        self.inv_diag = inv_diag
        self.x, self.r, self.z, self.p, self.q = (cp.zeros(n + 1) for _ in range(5))
        self.scalars, self.history = cp.zeros(3), cp.zeros(k)
        self.reducer = DeviceReducer("warp-shuffle" if self.fused else reduction, n + 1)
        self.e_blocks, self.n_blocks = _blocks(n_el), _blocks(n)
        self.i_el, self.i_n = np.int32(n_el), np.int32(n)
        if groups is not None:
            self.e_blocks = (int(self.block_start[-1]),)  # the fused (p, Ap) partials of all colour groups
        self._kernels()

    def _kernels(self) -> None:
        cp = self.cp
        self.matvec, self.update = kernel("ebe_pcg", "ebe_matvec_atomic"), kernel("ebe_pcg", "cg_update_xrz")
        self.update_p = kernel("ebe_pcg", "cg_update_p")
        self.matvec_colored = kernel("ebe_pcg", "ebe_matvec_colored_pap" if self.fused else "ebe_matvec_colored")
        if self.fused:
            self.partial_e = cp.empty(self.e_blocks[0])
            self.partial_rz, self.partial_rr = cp.empty(self.n_blocks[0]), cp.empty(self.n_blocks[0])
            self.matvec_pap = kernel("ebe_pcg", "ebe_matvec_atomic_pap")
            self.update_dots = kernel("ebe_pcg", "cg_update_xrz_dots")
            self.sum_partials = kernel("ebe_pcg", "sum_partials")
            self.i_eb, self.i_nb = np.int32(self.e_blocks[0]), np.int32(self.n_blocks[0])

    def product(self, x_in, with_energy: bool) -> None:
        """q += K x_in over all elements, atomically or colour by colour; with_energy: (x, Kx) partials."""
        conn, ke, i_el, i_n, q = self.conn, self.ke, self.i_el, self.i_n, self.q
        if self.groups is None:
            if with_energy:
                self.matvec_pap(self.e_blocks, (BLOCK,), (i_el, i_n, conn, ke, x_in, q, self.partial_e))
            else:
                self.matvec(self.e_blocks, (BLOCK,), (i_el, i_n, conn, ke, x_in, q))
            return
        for (first, count), blocks, start in zip(self.ranges, self.colored_blocks, self.block_start):
            args = (np.int32(first), np.int32(count), i_el, i_n, conn, ke, x_in, q)
            if self.fused:  # the fused kernel always writes its partials; unused when with_energy is False
                args += (self.partial_e[start:start + blocks],)
            self.matvec_colored((blocks,), (BLOCK,), args)

    def iteration(self, j: int) -> None:
        old, new = np.int32(1 + j % 2), np.int32(1 + (j + 1) % 2)
        x, r, z, p, q, scalars, n_blocks, i_n = (self.x, self.r, self.z, self.p, self.q, self.scalars, self.n_blocks,
                                                  self.i_n)
        if self.fused:
            self.product(p, True)
            self.sum_partials((1,), (BLOCK,), (self.i_eb, self.partial_e, self.partial_e, scalars[0:1],
                                               scalars[0:1]))
            self.update_dots(n_blocks, (BLOCK,), (i_n, scalars, old, x, r, p, q, self.inv_diag, z, self.partial_rz,
                                                  self.partial_rr))
            self.sum_partials((2,), (BLOCK,), (self.i_nb, self.partial_rz, self.partial_rr, scalars[new:new + 1],
                                               self.history[j:j + 1]))
        else:
            self.product(p, False)
            self.reducer.dot(p, q, self.n, scalars[0:1])
            self.update(n_blocks, (BLOCK,), (i_n, scalars, old, x, r, p, q, self.inv_diag, z))
            self.reducer.dot(r, z, self.n, scalars[new:new + 1])
            self.reducer.dot(r, r, self.n, self.history[j:j + 1])
        self.update_p(n_blocks, (BLOCK,), (i_n, scalars, old, new, z, p, q))

    def restart_from(self, residual) -> None:
        """Set r, z, p from a residual and (r, z) into slot 1 (the slot iteration 0 reads)."""
        self.r[:self.n] = residual
        self.z[:] = self.inv_diag_padded * self.r
        self.p[:] = self.z
        self.reducer.dot(self.r, self.z, self.n, self.scalars[1:2])

    def true_relative_residual(self, b, b_norm: float):
        """(b - K x on the free nodes, its norm over ||b||); q is zero between iterations and left so."""
        self.product(self.x, False)
        residual = b - self.q[:self.n]
        self.q[:] = 0.0
        return residual, float(self.cp.linalg.norm(residual)) / b_norm


def _solve(cp, system, rtol, max_iterations, reduction, k, control, groups) -> LinearSolution:
    n_free = int(system.n_nodes - system.fixed_nodes.size)
    max_iterations = max_iterations or default_max_iterations(n_free)
    # right-hand side and preconditioner built on the device, coloured too when the product is
    # (CuPy's bincount adds with atomics, so it would make the run irreproducible)
    device_op = EbeOperator(system, cp, groups)
    b, _ = lifted_right_hand_side(system, device_op)
    x_fixed = system.lifted_values()
    b_norm = float(cp.linalg.norm(b))
    if b_norm == 0.0:
        return LinearSolution(x_fixed, 0, 0.0, np.zeros(0))
    state = _DeviceIteration(cp, system, reduction, k, groups, device_op)
    del device_op  # the full element matrices are not needed on the device any more
    cp.cuda.get_current_stream().synchronize()  # the set-up above ran there; the solve stream must see it
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        state.restart_from(b)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        done, true_rel, rel_history = _iterate(state, stream, b, b_norm, rtol, max_iterations, k, reduction, control)
        end.record(stream)
        end.synchronize()
        solution = state.x[:state.n].get(stream=stream)
    return LinearSolution(solution + x_fixed, done, true_rel, np.asarray(rel_history),
                          cp.cuda.get_elapsed_time(start, end) / 1e3)


def _iterate(state, stream, b, b_norm, rtol, max_iterations, k, reduction, control):
    """Blocks of k iterations (replayed from a CUDA graph after the first) until the true residual is
    below rtol, from r, z, p set from b; (iterations, true relative residual, recursive residual history)."""
    def launch_block() -> None:
        for j in range(k):
            state.iteration(j)

    run_block = launch_block  # the first block runs plainly: it loads every kernel before capture
    done, replacements, rel_history = 0, 0, []
    while True:
        run_block()
        if done == 0 and reduction != "library":
            run_block = _capture(stream, launch_block)
        rel = np.sqrt(np.maximum(state.history.get(stream=stream), 0.0)) / b_norm
        rel_history.extend(rel.tolist())
        done += k
        if not np.all(np.isfinite(rel)):
            raise SolverError("EBE-J-PCG broke down on the GPU: the system is not positive definite "
                              "(check that every mu_r is positive)")
        if np.any(rel <= rtol):
            residual, true_rel = state.true_relative_residual(b, b_norm)
            if true_rel <= rtol or replacements == MAX_REPLACEMENTS:
                return done, true_rel, rel_history
            replacements += 1
            state.restart_from(residual)
            continue
        if done >= max_iterations:
            raise SolverError(f"EBE-J-PCG did not converge: relative residual {rel[-1]:.3e} after "
                              f"{done} iterations (rtol {rtol:g}); raise [solver] max_iterations or "
                              "loosen rtol")
        control.report(done / max_iterations, f"EBE-J-PCG iteration {done}, residual {rel[-1]:.2e}")


def _capture(stream, launch_block):
    """Capture one block of iterations as a CUDA graph; return a callable that replays it.
    (CuPy's library reduction allocates, so that variant is not captured.)"""
    stream.begin_capture()
    try:
        launch_block()
    finally:
        graph = stream.end_capture()
    return lambda: graph.launch(stream)
