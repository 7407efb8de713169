"""Benchmark: monostatic RCS, both polarisations, of the NASA almond and the EMCC ogive, double ogive and
cone-sphere, by the scattering study run through each target's example problem (resources/problems/*.toml) and by
bempp-cl's EFIE (an independent boundary-element solver, PyPI `bempp-cl`, RWG functions, dense LU) on the same
triangle surface, also refined on its facets, with the difference in dB and the time of each. The almond's
surface is the bench's own (its example's scatterer replaced by it); an EMCC body's is the one its example
builds at its defaults, so the study runs the example itself. Runs without a GPU."""

from __future__ import annotations

import copy
import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import argparse

import meshio
import numpy as np

from ..problems import case_problem_path
from ..problems.scattering import parse_scattering
from ..problems.toml_input import read_toml
from ..problems.scattering import ORDERS
from ..scattering.edges import EDGE_ANGLE_DEG, EDGE_GROWTH, EDGE_SIZE, sharp_edges
from ..scattering.emcc import BODIES, body_surface
from ..scattering.run import run_problem
from ..scattering.target import split_to_size
from ..scattering.waves import dbsm, unit_vectors
from ..truncation.almond import almond_surface
from ..truncation.fields import C0
from ..truncation.surfaces import TriSurface
from .environment import distribution_versions, host_threads, run_facts
from .options import add_merge, given, tuple_of, whole

ALMOND = "nasa-almond"  # its example's scatterer is replaced by the bench's almond of `triangles` triangles
TARGETS = (ALMOND, "ogive", "double-ogive", "cone-sphere")  # each the name of its example problem and case
POLARIZATIONS = ("theta", "phi")  # VV: sigma_theta of theta-polarised incidence; HH: sigma_phi of phi-polarised
SCATTERER = "scatterer.vtu"  # the shared surface, written beside the example's settings where it replaces its own
DENSE_MEMORY = 0.8  # a reference level is solved where its matrix and LU factors take at most this part of memory


@dataclass(frozen=True)
class PeersBenchConfig:
    """The targets (names of TARGETS), monostatic at theta = 90 and these phi (degrees, phi = 0 looks at the
    tip), each polarisation; the almond with about `triangles` triangles; the target (dB), judged where the
    finest reference is within region_db of its peak. The frequency and the study's settings are each
    example problem's. Where the difference comes from: bempp-cl also on the same facets with every triangle
    split into four, 1 to reference_splits times (where its dense matrix fits); the study also at these
    (order, elements per wavelength)."""

    triangles: int = 1200
    phi_deg: tuple[float, ...] = tuple(np.arange(0.0, 181.0, 5.0).tolist())
    target_db: float = 1.0
    region_db: float = 30.0
    reference_splits: int = 0
    settings: tuple[tuple[int, float], ...] = ()
    targets: tuple[str, ...] = TARGETS


def example_problem(example: dict, cfg: PeersBenchConfig, own: bool = False) -> dict:
    """An example's problem file (as read) with its incidences replaced by the bench's (theta = 90, every phi
    theta-polarised, then every phi phi-polarised) and, unless own, its case by the scatterer file SCATTERER."""
    data = copy.deepcopy(example)
    if not own:
        del data["problem"]["case"]
        data["problem"]["scatterer"] = SCATTERER
    n = len(cfg.phi_deg)
    data["incidence"] = {"theta_deg": 90.0, "phi_deg": list(cfg.phi_deg) * len(POLARIZATIONS),
                         "polarization": [p for p in POLARIZATIONS for _ in range(n)]}
    return data


def shared_surface(name: str, example: dict, cfg: PeersBenchConfig) -> TriSurface:
    """The surface both solvers take for target `name`: the almond of cfg.triangles triangles, or the EMCC body
    as its example problem builds it at its defaults (cases.emcc_case: edges of a wavelength / its density)."""
    if name == ALMOND:
        return almond_surface(cfg.triangles)
    problem = parse_scattering(example_problem(example, cfg, own=True), Path("."))
    return body_surface(name, C0 / problem.frequency / problem.density)


def ours(example: dict, cfg: PeersBenchConfig, body, setting: tuple[int, float] | None = None) -> dict:
    """The scattering study with the example's settings (but for setting: (order, elements per wavelength))
    on the surface `body`: the example itself where its case builds that very surface (an EMCC body at its
    defaults), else with body as its scatterer file. Co-polarised monostatic RCS (dBsm) per polarisation and
    phi, the settings it ran with, DOFs, time per phase (s)."""
    load = os.getloadavg()[0]
    own = setting is None and example["problem"].get("case") in BODIES
    data = example_problem(example, cfg, own)
    if setting is not None:
        data["solver"]["order"], data["geometry"]["elements_per_wavelength"] = setting
    with tempfile.TemporaryDirectory() as folder:
        meshio.write(Path(folder) / SCATTERER,
                     meshio.Mesh(np.asarray(body.points, dtype=float), [("triangle", body.triangles)]))
        problem = parse_scattering(data, Path(folder))
        result = run_problem(problem)
    n, s = len(cfg.phi_deg), problem.solver
    sigma = {"theta": result.sigma_theta[:n, 0], "phi": result.sigma_phi[n:, 0]}
    gamma = TriSurface("scatterer", result.mesh.points, result.mesh.surfaces["scatterer"])
    return {"settings": {"order": s.order, "elements_per_wavelength": problem.density,
                         "inner_gap": problem.inner_gap, "outer_gap": problem.outer_gap, "shells": problem.shells,
                         "acceleration": s.acceleration, "tolerance": s.tolerance, "loop": s.loop,
                         "linear_solver": result.linear_solver, "sharp_edges": len(sharp_edges(gamma)),
                         "edge_angle_deg": EDGE_ANGLE_DEG, "edge_size": EDGE_SIZE, "edge_growth": EDGE_GROWTH,
                         "case": problem.case},
            "rcs_dbsm": {p: dbsm(v).tolist() for p, v in sigma.items()},
            "iterations": {"theta": result.iteration_counts[:n].tolist(), "phi": result.iteration_counts[n:].tolist()},
            "converged": bool(result.converged.all()), "dofs": result.n_dofs, "tetrahedra": result.mesh.n_elements,
            "surface_triangles": {k: len(v) for k, v in result.mesh.surfaces.items()},
            "seconds": dict(result.timings), "total_s": float(sum(result.timings.values())),
            "threads": host_threads(), "load_before": load}


def _incident_trace(bempp, k: float, direction, polarization):
    """bempp-cl's vectorised callable for its tangential trace E_inc x n of exp(j k d . x) p (its e^{-jwt}
    convention; an RCS does not depend on the convention): plain NumPy, so no Numba compilation per wave."""
    d, p = np.asarray(direction, dtype=float), np.asarray(polarization, dtype=float)

    @bempp.callable(complex=True, vectorized=True)
    def trace(x, n, domain_index, result):  # x, n, result: (3, points)
        result[:] = np.cross(p[:, None] * np.exp(1j * k * (d @ x)), n, axis=0)
    return trace


def bempp_efie(frequency_hz: float, phi_deg, body) -> dict:
    """bempp-cl's EFIE (RWG trial, SNC test) on the same triangles, solved by one dense LU factorisation for
    every incidence (its unpreconditioned GMRES did not reach 1e-6 in 18,000 iterations here): co-polarised
    monostatic RCS (dBsm) per polarisation and phi at theta = 90, DOFs, assembly and total seconds, the
    threads it ran on, and the largest relative residual of the solves."""
    import scipy.linalg  # noqa: PLC0415
    import bempp_cl.api as bempp  # noqa: PLC0415

    load = os.getloadavg()[0]
    k = 2 * math.pi * frequency_hz / C0
    start = time.perf_counter()
    grid = bempp.Grid(np.asarray(body.points, dtype=float).T.copy(), np.asarray(body.triangles).T.copy())
    rwg, snc = bempp.function_space(grid, "RWG", 0), bempp.function_space(grid, "SNC", 0)
    matrix = bempp.operators.boundary.maxwell.electric_field(rwg, rwg, snc, k).weak_form().to_dense()
    assembly = time.perf_counter() - start
    factor = scipy.linalg.lu_factor(matrix)
    back, th, ph = unit_vectors(np.full(len(phi_deg), 90.0), np.asarray(phi_deg, dtype=float))
    far = bempp.operators.far_field.maxwell.electric_field(rwg, back.T.copy(), k)
    rcs, residual = {}, 0.0
    for name, pols in zip(POLARIZATIONS, (th, ph)):
        rhs = np.column_stack([bempp.GridFunction(rwg, fun=_incident_trace(bempp, k, -r, p), dual_space=snc)
                               .projections(snc) for r, p in zip(back, pols)])  # arriving from r^: along -r^
        x = scipy.linalg.lu_solve(factor, rhs)
        residual = max(residual, float((np.linalg.norm(matrix @ x - rhs, axis=0) / np.linalg.norm(rhs, axis=0)).max()))
        patterns = [(far * bempp.GridFunction(rwg, coefficients=x[:, i]))[:, i] for i in range(len(back))]
        rcs[name] = [float(dbsm(4 * math.pi * abs(f @ p) ** 2)) for f, p in zip(patterns, pols)]
    return {"rcs_dbsm": rcs, "dofs": rwg.global_dof_count, "residual": residual, "assembly_s": assembly,
            "total_s": time.perf_counter() - start, "threads": host_threads(), "load_before": load,
            "version": distribution_versions("bempp-cl")["bempp-cl"]}


def run_peers_benchmark(cfg: PeersBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    """Each target of cfg in turn (the results so far checkpointed after each solve)."""
    data = {"benchmark": "scattering-peers", **run_facts(command), "config": asdict(cfg),
            "host_threads": os.cpu_count(), "load_before": os.getloadavg()[0], "targets": []}
    for name in cfg.targets:
        data["targets"].append({"target": name})  # filled in place, so that each checkpoint holds it so far
        run_target(data["targets"][-1], cfg, log, lambda: checkpoint(data))
    return data


def run_target(record: dict, cfg: PeersBenchConfig, log, checkpoint) -> None:
    """Fills record ({"target": name}): the target's example, frequency and shared surface, the study's run at
    the example's settings and at cfg.settings, bempp-cl's on the shared surface and on it split
    (record["references"])."""
    name = record["target"]
    path = case_problem_path(name)
    example = read_toml(path)
    body = shared_surface(name, example, cfg)
    frequency = float(example["problem"]["frequency"])
    record.update({"config": asdict(cfg), "example": "/".join(path.parts[-3:]), "frequency_hz": frequency,
                   "triangles": len(body.triangles), "references": [], "settings": []})
    if name in BODIES:
        record["body"] = {"length_in": BODIES[name].length, "radius_in": BODIES[name].radius}
    record["ours"] = ours(example, cfg, body)
    log(f"{name}: scattering study {record['ours']['total_s']:.1f} s")
    checkpoint()
    record["bempp"] = bempp_efie(frequency, cfg.phi_deg, body)
    log(f"{name}: bempp-cl EFIE on {len(body.triangles):,} triangles {record['bempp']['total_s']:.1f} s")
    checkpoint()
    for splits in range(1, cfg.reference_splits + 1):
        split = split_surface(body, splits)
        if not dense_fits(len(split.triangles)):
            record["reference_skipped"] = {"splits": splits, "triangles": len(split.triangles)}
            break
        record["references"].append({"splits": splits, "triangles": len(split.triangles),
                                     **bempp_efie(frequency, cfg.phi_deg, split)})
        log(f"{name}: bempp-cl EFIE on {len(split.triangles):,} triangles {record['references'][-1]['total_s']:.1f} s")
        checkpoint()
    for setting in cfg.settings:
        record["settings"].append(ours(example, cfg, body, setting))
        log(f"{name}: scattering study at order {setting[0]}, {setting[1]:g} per wavelength: "
            f"{record['settings'][-1]['total_s']:.1f} s")
        checkpoint()


def dense_fits(triangles: int) -> bool:
    """Whether bempp-cl's dense EFIE matrix on a closed surface of this many triangles (3/2 unknowns a
    triangle), with its LU factors beside it, takes at most DENSE_MEMORY of this host's memory."""
    unknowns = 3 * triangles // 2
    return 2 * 16 * unknowns ** 2 <= DENSE_MEMORY * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def merge(data: dict, earlier: dict) -> dict:
    """data with the targets of an earlier run that it did not measure, each keeping the run (date, command,
    commit, and whether it was cut short) that measured it, in the order of TARGETS (a record from before there were several targets is the
    almond's alone)."""
    if earlier.get("benchmark") != "scattering-peers":
        raise ValueError("only scattering-peers results can be merged")
    have = {t["target"] for t in data["targets"]}
    run = {**{k: earlier[k] for k in ("date", "command", "commit")}, **({"cut_short": True} if earlier.get("cut_short")
                                                                       else {})}
    kept = [{"run": run, **{k: v for k, v in t.items() if k not in ("date", "command", "commit", "versions",
                                                                     "benchmark", "targets")}}
            for t in earlier.get("targets", [{**earlier, "target": ALMOND}]) if t["target"] not in have]
    return {**data, "targets": sorted(kept + data["targets"], key=lambda t: TARGETS.index(t["target"]))}


def split_surface(body, splits: int):
    """body with every triangle split into four at its edge midpoints, splits times: the same facets, so the
    same scatterer, with finer RWG functions on it."""
    p = np.asarray(body.points, dtype=float)[body.triangles]
    longest = float(np.linalg.norm(p - np.roll(p, 1, axis=1), axis=2).max())
    return split_to_size(body, longest / 2 ** splits * (1 + 1e-9))


def setting(text: str) -> tuple[int, float]:
    """An argparse type: ORDER:EPW, a Nedelec order and elements per wavelength (e.g. 3:8)."""
    try:
        order, density = text.split(":")
        value = int(order), float(density)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs ORDER:EPW, e.g. 3:8, got '{text[:20]}'") from None
    if value[0] not in ORDERS or not 2.0 <= value[1] <= 100.0:
        raise argparse.ArgumentTypeError(f"needs an order of {', '.join(map(str, ORDERS))} and 2 to 100 elements "
                                         f"per wavelength, got '{text[:20]}'")
    return value


def add_arguments(parser) -> None:
    """`paraflux bench scattering-peers`' own options."""
    parser.add_argument("--targets", nargs="+", choices=TARGETS, metavar="NAME",
                        help=f"the targets, each run through its example problem: {', '.join(TARGETS)} "
                             "(default all)")
    parser.add_argument("--triangles", type=whole(20), metavar="N",
                        help=f"the almond's triangles, about; at least 20 (default {PeersBenchConfig.triangles})")
    parser.add_argument("--reference-splits", type=whole(0), metavar="N",
                        help="bempp-cl also on the same facets with every triangle split into four, 1 to N times, "
                             "where its dense matrix fits in memory, to show how far the reference itself moves "
                             "(default 0)")
    parser.add_argument("--settings", type=setting, nargs="+", metavar="ORDER:EPW",
                        help="the study also at these Nedelec orders and elements per wavelength on the same "
                             "surface, e.g. 3:8 (default none)")
    add_merge(parser, "the targets")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench scattering-peers` asks for it."""
    config = given(PeersBenchConfig(), triangles=args.triangles, reference_splits=args.reference_splits,
                   settings=tuple_of(args.settings), targets=tuple(dict.fromkeys(args.targets or ())))
    return run_peers_benchmark(config, command, log, checkpoint)
