"""`paraflux bench scattering-ngsolve`: the PEC sphere (incidence from theta = 0, theta-polarised) by the
scattering study with its defaults (on the GPU where there is one: cuDSS and cuBLAS; else the host), and by
NGSolve (HCurl elements, a radial PML, a sparse direct solver on every host thread) at several orders and mesh
sizes, on one machine in one run; every row's error against Mie is taken the way `paraflux bench scattering`
takes it, so seconds compare at equal error. Runs without a GPU."""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..scattering.run import run_problem
from ..truncation.fields import C0
from ..variants import ACCELERATION, NEDELEC_ORDER, SCATTERING_LOOP
from .environment import distribution_versions, host_threads, run_facts
from .options import add_merge, given, listed, size, tuple_of
from .ngsolve_peer import NgsolveLayout, solve_sphere
from .scattering import FREQUENCY, device_facts, mie_error_db, sphere_error_db, sphere_problem

WARM_UP_DIAMETER = 0.5  # wavelengths: a sphere solved at each order, unrecorded, before the timed rows on a GPU


@dataclass(frozen=True)
class NgsolveBenchConfig:
    """Sphere diameters (wavelengths) at FREQUENCY; the study's (Nedelec order, elements per wavelength, None:
    the order's default) settings, each with its default loop, iteration and linear solver; NGSolve's (order,
    largest edge in wavelengths) settings and its layout; NGSolve's threads (0: every host thread)."""

    diameters: tuple[float, ...] = (1.0,)
    paraflux_settings: tuple[tuple[int, float | None], ...] = ((1, None), (2, None))
    ngsolve_settings: tuple[tuple[int, float], ...] = ((2, 0.25), (2, 0.2), (3, 0.3), (3, 0.25), (4, 0.35))
    layout: NgsolveLayout = field(default_factory=NgsolveLayout)
    threads: int = 0


def cut_angles(step_deg: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """theta, phi (2 n,) degrees: the E-plane (phi = 0) then the H-plane (phi = 90), theta 0..180 every step,
    the directions both sides' errors are read on here."""
    theta = np.arange(0.0, 180.0 + step_deg / 2, step_deg)
    return np.concatenate([theta, theta]), np.concatenate([np.zeros_like(theta), np.full_like(theta, 90.0)])


def _paraflux_problem(diameter: float, order: int, density: float | None):
    geometry = {} if density is None else {"geometry": {"elements_per_wavelength": density}}
    cuts = {"far_field": {"theta_deg": {"start": 0.0, "stop": 180.0, "step": 2.0}, "phi_deg": [0.0, 90.0]}}
    return sphere_problem(diameter, order, SCATTERING_LOOP.default, ACCELERATION.default, **geometry, **cuts)


def paraflux_row(diameter: float, order: int, density: float | None) -> dict:
    """The study on the sphere at this order and elements per wavelength (None: the order's default), its other
    settings the defaults: DOFs, the device of each phase, seconds per phase, error (dB)."""
    problem = _paraflux_problem(diameter, order, density)
    load = os.getloadavg()[0]
    result = run_problem(problem)
    return {"solver": "paraflux", "diameter_wavelengths": diameter, "order": order, "density": problem.density,
            "default_density": density is None, "loop": problem.solver.loop, "backend": result.backend,
            "acceleration": problem.solver.acceleration, "linear_solver": result.linear_solver,
            "phase_devices": dict(result.devices), "dofs": result.n_dofs, "elements": result.mesh.n_elements,
            "iterations": result.iterations, "converged": bool(result.converged.all()), "threads": host_threads(),
            "load_before": load, "seconds": dict(result.timings), "total_s": float(sum(result.timings.values())),
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


def _warm_up(orders, log) -> None:
    """A small solve at each order, unrecorded, so that no timed row pays CuPy's kernel compiles or cuDSS's
    loading."""
    for order in sorted(set(orders)):
        log(f"warm-up: the {WARM_UP_DIAMETER:g}-wavelength sphere at order {order}, not recorded")
        run_problem(_paraflux_problem(WARM_UP_DIAMETER, order, None))


def run_ngsolve_benchmark(cfg: NgsolveBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    import ngsolve  # noqa: PLC0415  (refused here, before the study's runs, where it is not installed)

    facts = run_facts(command)
    facts["versions"].update(distribution_versions("ngsolve", "netgen-mesher", "nvmath-python", "miepython",
                                                   "threadpoolctl"))
    data = {"benchmark": "scattering-ngsolve", **facts, "gpu": device_facts(), "config": asdict(cfg),
            "host_threads": os.cpu_count(), "load_before": os.getloadavg()[0],
            "ngsolve_build": {"mkl": bool(ngsolve.config.USE_MKL), "pardiso": bool(ngsolve.config.USE_PARDISO),
                              "umfpack": bool(ngsolve.config.USE_UMFPACK)}, "rows": []}

    def add(row: dict) -> None:
        data["rows"].append({**row, "date": data["date"]})
        log(f"{row['solver']} sphere {row['diameter_wavelengths']:g} lambda, order {row['order']}: "
            f"{row['dofs']:,} DOFs, {row['total_s']:.1f} s, {row['mie_error_db']:.3f} dB")
        checkpoint(data)

    if data["gpu"]["on_gpu"] and cfg.paraflux_settings and cfg.diameters:
        _warm_up([order for order, _ in cfg.paraflux_settings], log)
    for d in cfg.diameters:
        for order, density in cfg.paraflux_settings:
            add(paraflux_row(d, order, density))
        for order, maxh in cfg.ngsolve_settings:
            add(ngsolve_row(d, order, maxh, cfg))
    return data


def _row_key(row: dict) -> tuple:
    setting = row.get("density") if row["solver"] == "paraflux" else row["maxh_wavelengths"]
    return row["solver"], row["diameter_wavelengths"], row["order"], setting


def merge(data: dict, earlier: dict) -> dict:
    """This run joined with an earlier one on the same machine (--merge): the earlier rows of a solver, sphere
    and setting this run did not measure; the runs joined listed under "earlier_runs". Rows from another
    machine are refused (the comparison is of one machine's GPU and host threads)."""
    where = (data["gpu"]["device"], data["host_threads"])
    if (earlier.get("gpu", {}).get("device"), earlier.get("host_threads")) != where:
        raise ValueError(f"only results from the same machine ({where[0]}, {where[1]} host threads) can be merged")
    mine = {_row_key(r) for r in data["rows"]}
    kept = [{"date": earlier["date"], **r} for r in earlier["rows"] if _row_key(r) not in mine]
    joined = earlier.get("earlier_runs", [])
    return {**data, "rows": data["rows"] + kept,
            "earlier_runs": [{k: earlier.get(k) for k in ("date", "command", "commit")}, *joined]}


def paraflux_setting(text: str) -> tuple[int, float | None]:
    """An argparse type: ORDER or ORDER:EPW, a Nedelec order and elements per wavelength (e.g. 2, 3:8)."""
    order, _, density = text.partition(":")
    try:
        value = int(order), (float(density) if density else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs ORDER or ORDER:EPW, e.g. 3:8, got '{text[:20]}'") from None
    if not NEDELEC_ORDER.minimum <= value[0] <= NEDELEC_ORDER.maximum or not 2.0 <= (value[1] or 2.0) <= 100.0:
        raise argparse.ArgumentTypeError(f"needs an order of {NEDELEC_ORDER.minimum} to {NEDELEC_ORDER.maximum} and 2 to "
                                         f"100 elements per wavelength, got '{text[:20]}'")
    return value


def ngsolve_setting(text: str) -> tuple[int, float]:
    """An argparse type: ORDER:MAXH, NGSolve's HCurl order (1 to 6) and largest edge in wavelengths."""
    try:
        order, maxh = text.split(":")
        value = int(order), float(maxh)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs ORDER:MAXH, e.g. 4:0.25, got '{text[:20]}'") from None
    if not 1 <= value[0] <= 6 or not 0.02 <= value[1] <= 1.0:
        raise argparse.ArgumentTypeError(f"needs an order of 1 to 6 and a largest edge of 0.02 to 1 wavelength, "
                                         f"got '{text[:20]}'")
    return value


def _shown(settings) -> str:
    return listed(f"{o}:{h:g}" if h else str(o) for o, h in settings)


def add_arguments(parser) -> None:
    """`paraflux bench scattering-ngsolve`'s own options."""
    parser.add_argument("--diameters", type=size, nargs="+", metavar="D",
                        help=f"PEC sphere diameters in wavelengths (default {listed(NgsolveBenchConfig.diameters)})")
    parser.add_argument("--paraflux", type=paraflux_setting, nargs="*", metavar="P[:EPW]",
                        help="the scattering study's settings: Nedelec order, optionally with elements per "
                             f"wavelength (default {_shown(NgsolveBenchConfig.paraflux_settings)}: each order at "
                             "its default density); given alone: no study rows")
    parser.add_argument("--ngsolve", type=ngsolve_setting, nargs="*", metavar="P:H",
                        help="NGSolve's settings: HCurl order and largest edge in wavelengths (default "
                             f"{_shown(NgsolveBenchConfig.ngsolve_settings)}); given alone: no NGSolve rows")
    add_merge(parser, "the rows")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench scattering-ngsolve` asks for it (--paraflux or --ngsolve given with no
    setting: that solver's rows left out)."""
    config = given(NgsolveBenchConfig(), diameters=tuple_of(args.diameters))
    if args.paraflux is not None:
        config = replace(config, paraflux_settings=tuple(args.paraflux))
    if args.ngsolve is not None:
        config = replace(config, ngsolve_settings=tuple(args.ngsolve))
    return run_ngsolve_benchmark(config, command, log, checkpoint)
