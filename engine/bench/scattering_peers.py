"""Benchmark: the NASA almond's monostatic RCS at 1.19 GHz by the scattering study (FE-IIIEE, host loop) and
by bempp-cl's EFIE (an independent boundary-element solver, PyPI `bempp-cl`, RWG functions, dense LU) on the
same triangle surface of the almond, both on this host, with the difference in dB and the time of each.
Runs without a GPU."""

from __future__ import annotations

import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import meshio
import numpy as np

from ..problems.scattering import parse_scattering
from ..scattering.cases import enclosing_ellipsoid
from ..scattering.run import run_problem
from ..scattering.waves import dbsm, unit_vectors
from ..truncation.almond import almond_surface
from ..truncation.fields import C0
from .environment import distribution_versions, run_facts
from .options import given, whole

GAPS = (0.1, 0.2)  # S' and S from the almond, wavelengths (the study's defaults)
DENSITY = 16.0  # S' and S elements per wavelength (the order-1 default)


@dataclass(frozen=True)
class PeersBenchConfig:
    """The almond with about `triangles` triangles at frequency_hz, monostatic at theta = 90 and these phi
    (degrees, phi = 0 looks at the tip), theta-polarised; the target (dB)."""

    frequency_hz: float = 1.19e9
    triangles: int = 1200
    phi_deg: tuple[float, ...] = (0.0, 45.0, 90.0, 135.0, 180.0)
    target_db: float = 1.0


def _write(surface, path: Path) -> str:
    meshio.write(path, meshio.Mesh(np.asarray(surface.points, dtype=float), [("triangle", surface.triangles)]))
    return path.name


def ours(cfg: PeersBenchConfig, body) -> dict:
    """The scattering study on the almond surface `body` with S' and S enclosing ellipsoids at the default
    gaps: co-polarised monostatic RCS (dBsm) per phi, DOFs, time per phase (s)."""
    wavelength = C0 / cfg.frequency_hz
    inner = enclosing_ellipsoid(body, GAPS[0] * wavelength, wavelength / DENSITY, "inner")
    outer = enclosing_ellipsoid(body, GAPS[1] * wavelength, wavelength / DENSITY, "outer")
    with tempfile.TemporaryDirectory() as folder:
        names = [_write(s, Path(folder) / f"{n}.vtu") for s, n in ((body, "body"), (inner, "sprime"), (outer, "s"))]
        data = {"problem": {"kind": "scattering", "frequency": cfg.frequency_hz, "scatterer": names[0],
                            "inner_surface": names[1], "outer_surface": names[2]},
                "incidence": {"theta_deg": 90.0, "phi_deg": list(cfg.phi_deg), "polarization": "theta"},
                "far_field": {"monostatic": True}, "solver": {"acceleration": "gmres", "loop": "zgemm"}}
        result = run_problem(parse_scattering(data, Path(folder)))
    return {"rcs_dbsm": dbsm(result.sigma_theta[:, 0]).tolist(), "dofs": result.n_dofs,
            "converged": bool(result.converged.all()), "iterations": result.iteration_counts.tolist(),
            "seconds": dict(result.timings), "total_s": float(sum(result.timings.values()))}


def _incident_trace(bempp, k: float, direction, polarization):
    """bempp-cl's callable for n x E_inc of exp(j k d . x) p on the surface (its e^{-jwt} convention;
    an RCS does not depend on the convention)."""
    d0, d1, d2 = (float(v) for v in direction)
    p0, p1, p2 = (float(v) for v in polarization)

    @bempp.complex_callable
    def trace(x, n, domain_index, result):
        phase = np.exp(1j * k * (d0 * x[0] + d1 * x[1] + d2 * x[2]))
        e0, e1, e2 = p0 * phase, p1 * phase, p2 * phase
        result[0] = e1 * n[2] - e2 * n[1]
        result[1] = e2 * n[0] - e0 * n[2]
        result[2] = e0 * n[1] - e1 * n[0]
    return trace


def bempp_efie(cfg: PeersBenchConfig, body) -> dict:
    """bempp-cl's EFIE (RWG trial, SNC test) on the same triangles, solved by one dense LU factorisation for
    every incidence (its unpreconditioned GMRES did not reach 1e-6 in 18,000 iterations here): co-polarised
    monostatic RCS (dBsm) per phi, DOFs, assembly and total seconds, the Numba threads it ran on, and the
    largest relative residual of the solves."""
    import scipy.linalg  # noqa: PLC0415
    import bempp_cl.api as bempp  # noqa: PLC0415
    import numba  # noqa: PLC0415

    k = 2 * math.pi * cfg.frequency_hz / C0
    start = time.perf_counter()
    grid = bempp.Grid(np.asarray(body.points, dtype=float).T.copy(), np.asarray(body.triangles).T.copy())
    rwg, snc = bempp.function_space(grid, "RWG", 0), bempp.function_space(grid, "SNC", 0)
    efie = bempp.operators.boundary.maxwell.electric_field(rwg, rwg, snc, k)
    matrix = efie.weak_form().to_dense()
    assembly = time.perf_counter() - start
    factor = scipy.linalg.lu_factor(matrix)
    r, th, _ = unit_vectors(np.full(len(cfg.phi_deg), 90.0), np.asarray(cfg.phi_deg, dtype=float))
    rcs, residual = [], 0.0
    for back, pol in zip(r, th):  # arriving from r^: travelling along -r^, E along theta^ (here -z)
        rhs = bempp.GridFunction(rwg, fun=_incident_trace(bempp, k, -back, pol), dual_space=snc).projections(snc)
        x = scipy.linalg.lu_solve(factor, rhs)
        residual = max(residual, float(np.linalg.norm(matrix @ x - rhs) / np.linalg.norm(rhs)))
        far = bempp.operators.far_field.maxwell.electric_field(rwg, back[:, None], k)
        pattern = (-far * bempp.GridFunction(rwg, coefficients=x))[:, 0]
        rcs.append(float(dbsm(4 * math.pi * abs(pattern @ pol) ** 2)))
    return {"rcs_dbsm": rcs, "dofs": rwg.global_dof_count, "residual": residual, "assembly_s": assembly,
            "total_s": time.perf_counter() - start, "numba_threads": numba.get_num_threads(),
            "version": distribution_versions("bempp-cl")["bempp-cl"]}


def run_peers_benchmark(cfg: PeersBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    body = almond_surface(cfg.triangles)
    data = {"benchmark": "scattering-peers", **run_facts(command), "config": asdict(cfg),
            "host_threads": os.cpu_count(), "load_before": os.getloadavg()[0], "triangles": len(body.triangles)}
    data["ours"] = ours(cfg, body)
    log(f"scattering study: {data['ours']['total_s']:.1f} s, RCS {np.round(data['ours']['rcs_dbsm'], 2)}")
    checkpoint(data)
    data["bempp"] = bempp_efie(cfg, body)
    log(f"bempp-cl EFIE: {data['bempp']['total_s']:.1f} s, RCS {np.round(data['bempp']['rcs_dbsm'], 2)}")
    return data


def add_arguments(parser) -> None:
    """`paraflux bench scattering-peers`' own options."""
    parser.add_argument("--triangles", type=whole(20), metavar="N",
                        help=f"the almond's triangles, about; at least 20 (default {PeersBenchConfig.triangles})")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench scattering-peers` asks for it."""
    return run_peers_benchmark(given(PeersBenchConfig(), triangles=args.triangles), command, log, checkpoint)
