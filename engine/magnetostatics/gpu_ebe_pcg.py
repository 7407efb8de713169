"""EBE-J-PCG on a CUDA GPU with CuPy: the CPU solver's algorithm with its data and recurrences on the device.

Kernels: kernels/ebe_pcg.cu (element products with atomic accumulation, CG updates) and
kernels/reductions.cu (inner products by variant). The host reads the residual history only
every `check_every` iterations; those iterations are captured once as a CUDA graph and replayed.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..backend import out_of_memory
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


def kernel_source(name: str) -> str:
    """kernels/<name>.cu with its local #include lines replaced by the headers' text (so CuPy's
    compile cache, keyed by source, sees header changes too)."""
    lines = []
    for line in (KERNELS / f"{name}.cu").read_text().splitlines():
        if line.startswith('#include "'):
            lines.append((KERNELS / line.split('"')[1]).read_text())
        else:
            lines.append(line)
    return "\n".join(lines)


@functools.lru_cache(maxsize=None)
def _module(name: str):
    import cupy  # noqa: PLC0415

    return cupy.RawModule(code=kernel_source(name), options=("--std=c++14",))


@functools.lru_cache(maxsize=None)
def kernel(module: str, name: str):
    """A kernel of kernels/<module>.cu, compiled once per process."""
    return _module(module).get_function(name)


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


def _solve(cp, system, rtol, max_iterations, reduction, k, control, groups) -> LinearSolution:
    n, n_el = system.n_nodes, system.connectivity.shape[0]
    n_free = int(n - system.fixed_nodes.size)
    max_iterations = max_iterations or default_max_iterations(n_free)
    # right-hand side and preconditioner built on the device, coloured too when the product is
    # (CuPy's bincount adds with atomics, so it would make the run irreproducible)
    device_op = EbeOperator(system, cp, groups)
    b, _ = lifted_right_hand_side(system, device_op)
    x_fixed = system.lifted_values()
    b_norm = float(cp.linalg.norm(b))
    if b_norm == 0.0:
        return LinearSolution(x_fixed, 0, 0.0, np.zeros(0))
    packed = pack_system(system, cp)
    conn, ke = packed.conn, packed.ke
    if groups is not None:  # store the element data grouped by colour: each launch reads one range
        order = cp.asarray(groups.permutation)
        conn, ke = cp.ascontiguousarray(conn[:, order]), cp.ascontiguousarray(ke[:, order])
        ranges = [(int(a), int(b - a)) for a, b in zip(groups.offsets[:-1], groups.offsets[1:]) if b > a]
        colored_blocks = [-(-count // BLOCK) for _, count in ranges]
        block_start = np.concatenate([[0], np.cumsum(colored_blocks)]).astype(int)
    inv_diag = 1.0 / device_op.diagonal()
    del device_op  # the full element matrices are not needed on the device any more
    x, r, z, p, q = (cp.zeros(n + 1) for _ in range(5))  # entry n: the dummy Dirichlet node
    scalars = cp.zeros(3)  # (p, Ap), then (r, z) in two slots used alternately
    history = cp.zeros(k)
    fused = reduction == "fused"
    reducer = DeviceReducer("warp-shuffle" if fused else reduction, n + 1)
    e_blocks, n_blocks = _blocks(n_el), _blocks(n)
    i_el, i_n = np.int32(n_el), np.int32(n)
    matvec = kernel("ebe_pcg", "ebe_matvec_atomic")
    update = kernel("ebe_pcg", "cg_update_xrz")
    update_p = kernel("ebe_pcg", "cg_update_p")
    if groups is not None:
        e_blocks = (int(block_start[-1]),)  # the fused (p, Ap) partials of all colour groups
    if fused:
        partial_e, partial_rz, partial_rr = cp.empty(e_blocks[0]), cp.empty(n_blocks[0]), cp.empty(n_blocks[0])
        matvec_pap = kernel("ebe_pcg", "ebe_matvec_atomic_pap")
        update_dots = kernel("ebe_pcg", "cg_update_xrz_dots")
        sum_partials = kernel("ebe_pcg", "sum_partials")
        i_eb, i_nb = np.int32(e_blocks[0]), np.int32(n_blocks[0])

    matvec_colored = kernel("ebe_pcg", "ebe_matvec_colored_pap" if fused else "ebe_matvec_colored")

    def product(x_in, with_energy: bool) -> None:
        """q += K x_in over all elements, atomically or colour by colour; with_energy: (x, Kx) partials."""
        if groups is None:
            if with_energy:
                matvec_pap(e_blocks, (BLOCK,), (i_el, i_n, conn, ke, x_in, q, partial_e))
            else:
                matvec(e_blocks, (BLOCK,), (i_el, i_n, conn, ke, x_in, q))
            return
        for (first, count), blocks, start in zip(ranges, colored_blocks, block_start):
            args = (np.int32(first), np.int32(count), i_el, i_n, conn, ke, x_in, q)
            if fused:  # the fused kernel always writes its partials; unused when with_energy is False
                args += (partial_e[start:start + blocks],)
            matvec_colored((blocks,), (BLOCK,), args)

    def iteration(j: int) -> None:
        old, new = np.int32(1 + j % 2), np.int32(1 + (j + 1) % 2)
        if fused:
            product(p, True)
            sum_partials((1,), (BLOCK,), (i_eb, partial_e, partial_e, scalars[0:1], scalars[0:1]))
            update_dots(n_blocks, (BLOCK,), (i_n, scalars, old, x, r, p, q, inv_diag, z, partial_rz, partial_rr))
            sum_partials((2,), (BLOCK,), (i_nb, partial_rz, partial_rr, scalars[new:new + 1], history[j:j + 1]))
        else:
            product(p, False)
            reducer.dot(p, q, n, scalars[0:1])
            update(n_blocks, (BLOCK,), (i_n, scalars, old, x, r, p, q, inv_diag, z))
            reducer.dot(r, z, n, scalars[new:new + 1])
            reducer.dot(r, r, n, history[j:j + 1])
        update_p(n_blocks, (BLOCK,), (i_n, scalars, old, new, z, p, q))

    def restart_from(residual) -> None:
        """Set r, z, p from a residual and (r, z) into slot 1 (the slot iteration 0 reads)."""
        r[:n] = residual
        z[:] = inv_diag_padded * r
        p[:] = z
        reducer.dot(r, z, n, scalars[1:2])

    inv_diag_padded = cp.concatenate([inv_diag, cp.zeros(1)])
    cp.cuda.get_current_stream().synchronize()  # the set-up above ran there; the solve stream must see it
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        restart_from(b)
        def launch_block() -> None:
            for j in range(k):
                iteration(j)

        run_block = launch_block  # the first block runs plainly: it loads every kernel before capture
        done, replacements, rel_history = 0, 0, []
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        while True:
            run_block()
            if done == 0 and reduction != "library":
                run_block = _capture(stream, launch_block)
            rr = history.get(stream=stream)
            rel = np.sqrt(np.maximum(rr, 0.0)) / b_norm
            rel_history.extend(rel.tolist())
            done += k
            if not np.all(np.isfinite(rel)):
                raise SolverError("EBE-J-PCG broke down on the GPU: the system is not positive definite "
                                  "(check that every mu_r is positive)")
            if np.any(rel <= rtol):
                product(x, False)  # q is zero after update_p
                true_residual = b - q[:n]
                q[:] = 0.0
                true_rel = float(cp.linalg.norm(true_residual)) / b_norm
                if true_rel <= rtol or replacements == MAX_REPLACEMENTS:
                    break
                replacements += 1
                restart_from(true_residual)
                continue
            if done >= max_iterations:
                raise SolverError(f"EBE-J-PCG did not converge: relative residual {rel[-1]:.3e} after "
                                  f"{done} iterations (rtol {rtol:g}); raise [solver] max_iterations or "
                                  "loosen rtol")
            control.report(done / max_iterations, f"EBE-J-PCG iteration {done}, residual {rel[-1]:.2e}")
        end.record(stream)
        end.synchronize()
        solution = x[:n].get(stream=stream)
    return LinearSolution(solution + x_fixed, done, true_rel, np.asarray(rel_history),
                          cp.cuda.get_elapsed_time(start, end) / 1e3)


def _capture(stream, launch_block):
    """Capture one block of iterations as a CUDA graph; return a callable that replays it.
    (CuPy's library reduction allocates, so that variant is not captured.)"""
    stream.begin_capture()
    try:
        launch_block()
    finally:
        graph = stream.end_capture()
    return lambda: graph.launch(stream)
