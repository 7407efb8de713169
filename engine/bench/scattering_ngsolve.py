"""`paraflux bench scattering-ngsolve`: the PEC sphere (incidence from theta = 0, theta-polarised) by the
scattering study on this host's CPU with its default settings and loop, and by NGSolve (HCurl elements, a
radial PML, a sparse direct solver on every host thread) at several orders and mesh sizes, in one run; every
row's error against Mie is taken the way `paraflux bench scattering` takes it, so seconds compare at equal
error. Runs without a GPU."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field

import numpy as np

from ..scattering.run import run_problem
from ..truncation.fields import C0
from ..variants import ACCELERATION, SCATTERING_LOOP
from .environment import distribution_versions, host_threads, run_facts
from .options import given, listed, size, tuple_of, whole
from .ngsolve_peer import NgsolveLayout, solve_sphere
from .scattering import FREQUENCY, mie_error_db, sphere_error_db, sphere_problem


@dataclass(frozen=True)
class NgsolveBenchConfig:
    """Sphere diameters (wavelengths) at FREQUENCY; the study's Nedelec orders (each at its default elements
    per wavelength, its default loop and iteration); NGSolve's (order, largest edge in wavelengths) settings
    and its layout; NGSolve's threads (0: every host thread)."""

    diameters: tuple[float, ...] = (1.0,)
    paraflux_orders: tuple[int, ...] = (1, 2)
    ngsolve_settings: tuple[tuple[int, float], ...] = ((2, 0.25), (2, 0.2), (3, 0.3), (3, 0.25), (4, 0.35))
    layout: NgsolveLayout = field(default_factory=NgsolveLayout)
    threads: int = 0


def cut_angles(step_deg: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """theta, phi (2 n,) degrees: the E-plane (phi = 0) then the H-plane (phi = 90), theta 0..180 every step,
    the grid `paraflux bench scattering` reads its error on."""
    theta = np.arange(0.0, 180.0 + step_deg / 2, step_deg)
    return np.concatenate([theta, theta]), np.concatenate([np.zeros_like(theta), np.full_like(theta, 90.0)])


def paraflux_row(diameter: float, order: int) -> dict:
    """The study on the sphere with its defaults at this order: DOFs, seconds per phase, error (dB)."""
    loop, acceleration = SCATTERING_LOOP.default, ACCELERATION.default
    load = os.getloadavg()[0]
    result = run_problem(sphere_problem(diameter, order, loop, acceleration))
    return {"solver": "paraflux", "diameter_wavelengths": diameter, "order": order, "loop": loop,
            "acceleration": acceleration, "linear_solver": result.linear_solver, "dofs": result.n_dofs,
            "elements": result.mesh.n_elements, "iterations": result.iterations,
            "converged": bool(result.converged.all()), "threads": host_threads(), "load_before": load,
            "seconds": dict(result.timings), "total_s": float(sum(result.timings.values())),
            "mie_error_db": mie_error_db(result)}


def ngsolve_row(diameter: float, order: int, maxh: float, cfg: NgsolveBenchConfig) -> dict:
    """NGSolve on the sphere at this order and largest edge (wavelengths): DOFs, threads, seconds, error."""
    wavelength = C0 / FREQUENCY
    radius = diameter * wavelength / 2
    theta, phi = cut_angles()
    load = os.getloadavg()[0]
    run = solve_sphere(radius, wavelength, order, maxh, theta, phi, cfg.layout, cfg.threads or os.cpu_count())
    error = sphere_error_db(radius, 2 * math.pi / wavelength, theta, phi, run.sigma_theta, run.sigma_phi)
    return {"solver": "ngsolve", "diameter_wavelengths": diameter, "order": order, "maxh_wavelengths": maxh,
            "dofs": run.dofs, "free_dofs": run.free_dofs, "elements": run.elements, "threads": run.threads,
            "load_before": load, "seconds": run.seconds, "total_s": float(sum(run.seconds.values())),
            "mie_error_db": error}


def run_ngsolve_benchmark(cfg: NgsolveBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    import ngsolve  # noqa: PLC0415  (refused here, before the study's runs, where it is not installed)

    facts = run_facts(command)
    facts["versions"].update(distribution_versions("ngsolve", "netgen-mesher", "cvxopt", "miepython",
                                                   "threadpoolctl"))
    data = {"benchmark": "scattering-ngsolve", **facts, "config": asdict(cfg), "host_threads": os.cpu_count(),
            "load_before": os.getloadavg()[0], "ngsolve_build": {"mkl": bool(ngsolve.config.USE_MKL),
                                                                  "pardiso": bool(ngsolve.config.USE_PARDISO),
                                                                  "umfpack": bool(ngsolve.config.USE_UMFPACK)},
            "rows": []}

    def add(row: dict) -> None:
        data["rows"].append(row)
        log(f"{row['solver']} sphere {row['diameter_wavelengths']:g} lambda, order {row['order']}: "
            f"{row['dofs']:,} DOFs, {row['total_s']:.1f} s, {row['mie_error_db']:.2f} dB")
        checkpoint(data)

    for d in cfg.diameters:
        for order in cfg.paraflux_orders:
            add(paraflux_row(d, order))
        for order, maxh in cfg.ngsolve_settings:
            add(ngsolve_row(d, order, maxh, cfg))
    return data


def add_arguments(parser) -> None:
    """`paraflux bench scattering-ngsolve`'s own options."""
    parser.add_argument("--diameters", type=size, nargs="+", metavar="D",
                        help=f"PEC sphere diameters in wavelengths (default {listed(NgsolveBenchConfig.diameters)})")
    parser.add_argument("--orders", type=whole(1), nargs="+", metavar="P",
                        help="the scattering study's Nedelec orders (default "
                             f"{listed(NgsolveBenchConfig.paraflux_orders)}; NGSolve's settings are fixed)")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench scattering-ngsolve` asks for it."""
    config = given(NgsolveBenchConfig(), diameters=tuple_of(args.diameters), paraflux_orders=tuple_of(args.orders))
    return run_ngsolve_benchmark(config, command, log, checkpoint)
