"""`paraflux bench scattering-linear`: the scattering study's sparse direct solvers (variants.LINEAR_SOLVER)
on the free block of the FEM matrix of the PEC sphere at each Nedelec order: assembly, factorisation, one
block back-substitution of 1 and of 36 right-hand sides, the factors' nonzeros and memory where the solver
says, the threads each runs on and the host load before each row. Runs without a GPU."""

from __future__ import annotations

import ctypes
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp

from ..scattering.fem import discretise, surface_trace
from ..scattering.linear import PARDISO_SETTINGS, factorise
from ..scattering.mesh import volume_mesh
from ..scattering.run import surfaces_of
from ..scattering.system import fem_matrix
from ..truncation.fields import C0
from ..variants import LINEAR_SOLVER
from .environment import distribution_versions, run_facts
from .options import add_repeats, given, listed, size, tuple_of, whole
from .scattering import sphere_problem


@dataclass(frozen=True)
class LinearBenchConfig:
    """Sphere diameter (wavelengths, at the scattering benchmark's frequency, each order at its default
    elements per wavelength); right-hand-side counts; repeats (the fastest is kept, as the host is shared)."""

    diameter: float = 1.0
    orders: tuple[int, ...] = (1, 2)
    rhs: tuple[int, ...] = (1, 36)
    repeats: int = 2


def free_block(diameter: float, order: int) -> tuple[sp.csr_matrix, dict]:
    """The factorised block of the sphere's FEM matrix (n_free, n_free) complex CSR, and its facts: DOFs,
    free DOFs, tetrahedra, the block's nonzeros and the assembly's seconds (element matrices to CSR)."""
    problem = sphere_problem(diameter, order, "zgemm", "fixed-point")
    wavelength = C0 / problem.frequency
    body, inner, outer = surfaces_of(problem, wavelength)
    mesh = volume_mesh(body, inner, outer, wavelength / problem.density)
    start = time.perf_counter()
    disc = discretise(mesh, order)
    a, _, free = fem_matrix(disc, 2 * np.pi / wavelength, surface_trace(disc, "outer"))
    block = a[free][:, free].tocsr()
    facts = {"order": order, "dofs": disc.dofs.n_dofs, "free_dofs": len(free), "elements": mesh.n_elements,
             "matrix_nonzeros": int(block.nnz), "assembly_s": time.perf_counter() - start}
    return block, facts


def blas_threads(folder: str) -> int | None:
    """Threads of the BLAS pool loaded from a path containing folder (threadpoolctl), None where unknown."""
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415
    except ImportError:
        return None
    return next((p["num_threads"] for p in threadpool_info() if folder in p["filepath"]), None)


def pardiso_threads() -> int | None:
    """The OpenMP threads PARDISO states in its statistics (message level 1) for a small factorisation."""
    import pymklpardiso  # noqa: PLC0415

    libc = ctypes.CDLL(None)
    with tempfile.TemporaryFile(mode="w+") as log:
        saved = os.dup(1)
        os.dup2(log.fileno(), 1)
        try:
            pymklpardiso.PardisoSolver(sp.identity(8, dtype=complex, format="csr"), pymklpardiso.MTYPE_COMPLEX_SYM,
                                       msglvl=1)
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        log.seek(0)
        found = re.search(r"running on (\d+) OpenMP", log.read())
    return int(found.group(1)) if found else None


THREADS = {"umfpack": lambda: blas_threads("cvxopt"), "superlu": lambda: blas_threads("scipy"),
           "pardiso": pardiso_threads}  # UMFPACK and SuperLU thread only inside their BLAS


def _fastest(fn, repeats: int) -> tuple[float, object]:
    """The smallest wall time (s) of repeats calls of fn, and the last call's value."""
    best, value = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def solver_row(matrix: sp.csr_matrix, solver: str, cfg: LinearBenchConfig) -> dict:
    """One solver on one matrix: factorisation and back-substitution seconds, the largest relative residual
    of the back-substitutions, the factors' nonzeros and peak memory (bytes) where known, threads."""
    load = os.getloadavg()[0]
    seconds, factor = _fastest(lambda: factorise(matrix, solver, "the FEM system"), cfg.repeats)
    threads = THREADS.get(solver, lambda: None)()  # once the solver's libraries are loaded
    rng = np.random.default_rng(0)
    solves, residual = {}, 0.0
    for r in cfg.rhs:
        b = rng.standard_normal((matrix.shape[0], r)) + 1j * rng.standard_normal((matrix.shape[0], r))
        solves[str(r)], x = _fastest(lambda: factor.solve(b), cfg.repeats)
        residual = max(residual, float(np.linalg.norm(matrix @ x - b) / np.linalg.norm(b)))
    return {"solver": solver, "threads": threads, "load_before": load, "factorisation_s": seconds,
            "back_substitution_s": solves, "residual": residual, "factor_nonzeros": factor.nonzeros,
            "factor_memory_bytes": factor.memory_bytes}


def run_linear_benchmark(cfg: LinearBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    """Every installed linear solver at every order; the skipped ones with the reason."""
    facts = run_facts(command)
    facts["versions"].update(distribution_versions("cvxopt", "py-mkl-pardiso", "threadpoolctl"))
    solvers = [n for n in LINEAR_SOLVER.concrete if LINEAR_SOLVER.choice(n).unavailable(None) is None]
    data = {"benchmark": "scattering-linear", **facts, "config": asdict(cfg), "host_threads": os.cpu_count(),
            "load_before": os.getloadavg()[0], "pardiso_settings": {str(k): v for k, v in PARDISO_SETTINGS.items()},
            "not_installed": {n: LINEAR_SOLVER.choice(n).unavailable(None) for n in LINEAR_SOLVER.concrete
                              if n not in solvers},
            "orders": []}
    for order in cfg.orders:
        matrix, entry = free_block(cfg.diameter, order)
        entry["rows"] = []
        data["orders"].append(entry)
        log(f"order {order}: {entry['free_dofs']:,} free DOFs, assembly {entry['assembly_s']:.1f} s")
        for solver in solvers:
            row = solver_row(matrix, solver, cfg)
            entry["rows"].append(row)
            log(f"  {solver}: factorisation {row['factorisation_s']:.2f} s, back-substitution "
                + ", ".join(f"{r} RHS {s:.3f} s" for r, s in row["back_substitution_s"].items()))
            checkpoint(data)
    return data


def add_arguments(parser) -> None:
    """`paraflux bench scattering-linear`'s own options."""
    parser.add_argument("--diameter", type=size, metavar="D",
                        help=f"the PEC sphere's diameter in wavelengths (default {LinearBenchConfig.diameter:g})")
    parser.add_argument("--orders", type=whole(1), nargs="+", metavar="P",
                        help=f"Nedelec orders (default {listed(LinearBenchConfig.orders)})")
    parser.add_argument("--rhs", type=whole(1), nargs="+", metavar="N",
                        help="right-hand-side counts of the back-substitution (default "
                             f"{listed(LinearBenchConfig.rhs)})")
    add_repeats(parser, LinearBenchConfig.repeats, "repeats per measurement, the fastest kept")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench scattering-linear` asks for it."""
    config = given(LinearBenchConfig(), diameter=args.diameter, orders=tuple_of(args.orders), rhs=tuple_of(args.rhs),
                   repeats=args.repeats)
    return run_linear_benchmark(config, command, log, checkpoint)
