"""`paraflux bench scattering`: the FE-IIIEE scattering study on PEC spheres of 1, 2 and 4 wavelengths'
diameter (error against the Mie series), a monostatic sweep of many incidences in one run, and the NASA
almond; the truncation operator on the GPU (cuda-tiled) and on the CPU cores (cpu-s)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..problems.scattering import parse_scattering
from ..scattering.mie import pec_sphere_rcs
from ..scattering.run import run_problem
from ..scattering.waves import dbsm
from ..truncation.fields import C0
from .environment import gpu_facts, run_facts

FREQUENCY = 300e6  # Hz: lambda = 0.999 m


@dataclass(frozen=True)
class ScatteringBenchConfig:
    diameters: tuple[float, ...] = (1.0, 2.0, 4.0)  # wavelengths
    orders: tuple[int, ...] = (1, 2)
    cpu_up_to: float = 2.0  # diameters also run with the CPU loop; larger ones run at the largest order only
    sweep_incidences: int = 360
    almond_ghz: tuple[float, ...] = (1.19, 7.0)
    gpu_loop: str = "cuda-tiled"
    cpu_loop: str = "cpu-s"


def sphere_problem(diameter: float, order: int, loop: str, acceleration: str, **extra):
    """The PEC sphere of this diameter (wavelengths), E- and H-plane cuts every 2 degrees."""
    wavelength = C0 / FREQUENCY
    data = {"problem": {"kind": "scattering", "case": "pec-sphere", "frequency": FREQUENCY},
            "geometry": {"radius": diameter * wavelength / 2},
            "far_field": {"theta_deg": {"start": 0.0, "stop": 180.0, "step": 2.0}, "phi_deg": [0.0, 90.0]},
            "solver": {"order": order, "loop": loop, "acceleration": acceleration}}
    for table, values in extra.items():
        data.setdefault(table, {}).update(values)
    return parse_scattering(data, ".")


def mie_error_db(result) -> float:
    """Largest |dB error| of the co-polarised RCS in the E- and H-plane where Mie is within 20 dB of its peak."""
    p = result.problem
    return sphere_error_db(p.radius * p.length_scale, 2 * math.pi * p.frequency / C0, result.theta[0],
                           result.phi[0], result.sigma_theta[0], result.sigma_phi[0])


def sphere_error_db(radius: float, k: float, theta, phi, sigma_theta, sigma_phi) -> float:
    """Largest |dB error| against Mie of sigma_theta at phi = 0 (E-plane) and sigma_phi at phi = 90 (H-plane),
    where Mie is within 20 dB of its peak: radius in m, k in 1/m, angles and sigma (n_dir,) in degrees and m^2
    for a wave arriving from theta = 0, theta-polarised."""
    worst = 0.0
    for cut, co, which in ((0.0, sigma_theta, 0), (90.0, sigma_phi, 1)):
        pick = phi == cut
        ref = dbsm(pec_sphere_rcs(radius, k, theta[pick])[which])
        near = ref > ref.max() - 20
        worst = max(worst, float(np.abs(dbsm(co[pick]) - ref)[near].max()))
    return worst


def _record(result, **labels) -> dict:
    t = result.timings
    iterations = int(result.iterations)
    return {**labels, "dofs": result.n_dofs, "elements": result.mesh.n_elements, "iterations": iterations,
            "converged": bool(result.converged.all()), "seconds": dict(t), "total_s": float(sum(t.values())),
            "per_iteration_s": t["iterations"] / max(iterations, 1), "backend": result.backend,
            "linear_solver": result.linear_solver}


def _spheres(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    for d in (d for d in cfg.diameters if d > 0):  # --sizes 0: no spheres (a run joined to an earlier one)
        for order in cfg.orders if d <= cfg.cpu_up_to else cfg.orders[-1:]:
            runs = [(cfg.gpu_loop, "gmres")]
            if d <= cfg.cpu_up_to:  # the accelerations compared and the CPU loop where it takes minutes at most
                runs += [(cfg.gpu_loop, "fixed-point"), (cfg.cpu_loop, "fixed-point")]
            for loop, acceleration in runs:
                result = run_problem(sphere_problem(d, order, loop, acceleration))
                row = _record(result, diameter_wavelengths=d, order=order, loop=loop, acceleration=acceleration)
                row["mie_error_db"] = mie_error_db(result)
                data["spheres"].append(row)
                log(f"sphere {d:g} lambda, order {order}, {loop}, {acceleration}: {row['dofs']:,} DOFs, "
                    f"{row['iterations']} iterations, {row['total_s']:.1f} s, {row['mie_error_db']:.2f} dB")
                checkpoint(data)


def _sweep(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    """n incidences around the equator in one run against one incidence alone (times n: a scaled estimate);
    the 1-wavelength sphere at order 1."""
    n = cfg.sweep_incidences
    step = 360.0 / n
    many = run_problem(sphere_problem(1.0, 1, cfg.gpu_loop, "fixed-point", far_field={"monostatic": True},
                                      incidence={"theta_deg": 90.0, "phi_deg": {"start": 0.0, "stop": 360 - step,
                                                                               "step": step}}))
    one = run_problem(sphere_problem(1.0, 1, cfg.gpu_loop, "fixed-point", far_field={"monostatic": True},
                                     incidence={"theta_deg": 90.0, "phi_deg": 0.0}))
    co = dbsm(many.sigma_theta[:, 0])
    data["sweep"] = {"incidences": n, "many": _record(many), "one": _record(one),
                     "separate_estimate_s": n * float(sum(one.timings.values())),
                     "monostatic_spread_db": float(np.ptp(co))}
    log(f"sweep of {n}: {data['sweep']['many']['total_s']:.1f} s against {data['sweep']['separate_estimate_s']:.0f} s")
    checkpoint(data)


def _almond(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    for ghz in cfg.almond_ghz:
        problem = parse_scattering({"problem": {"kind": "scattering", "case": "nasa-almond", "frequency": ghz * 1e9},
                                    "incidence": {"theta_deg": 90.0, "phi_deg": {"start": 0.0, "stop": 180.0,
                                                                                 "step": 10.0},
                                                  "polarization": "theta"},
                                    "far_field": {"monostatic": True},
                                    "solver": {"order": 2, "loop": cfg.gpu_loop}}, ".")
        result = run_problem(problem)
        row = _record(result, frequency_ghz=ghz, order=2, loop=cfg.gpu_loop, acceleration="fixed-point",
                      incidences=len(problem.incidences))
        row["rcs_theta_dbsm"] = [float(v) for v in dbsm(result.sigma_theta[:, 0])]
        data["almond"].append(row)
        log(f"almond {ghz:g} GHz: {row['dofs']:,} DOFs, {row['total_s']:.1f} s")
        checkpoint(data)


def run_scattering_benchmark(cfg: ScatteringBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    import cupy as cp  # noqa: PLC0415

    data = {"benchmark": "scattering", **run_facts(command), "gpu": gpu_facts(cp), "config": asdict(cfg),
            "spheres": [], "sweep": None, "almond": []}
    for part in (_spheres, _sweep, _almond):
        part(cfg, log, checkpoint, data)
    return data


def merge(data: dict, earlier: dict) -> dict:
    """This run joined with an earlier one (--merge): the earlier run's spheres, sweep and almond rows where
    this run has none; the earlier run's provenance kept under "earlier_run"."""
    out = dict(data)
    for part in ("spheres", "almond"):
        if not out[part]:
            out[part] = earlier.get(part, [])
    out["sweep"] = out["sweep"] or earlier.get("sweep")
    out["earlier_run"] = {k: earlier.get(k) for k in ("date", "command", "commit", "gpu")}
    return out
