"""`paraflux bench scattering`: the FE-IIIEE scattering study on PEC spheres of 1, 2 and 4 wavelengths'
diameter (error against the Mie series), a monostatic sweep of many incidences in one run, the NASA
almond and the other EMCC targets (ogive, double ogive, cone-sphere, cone-sphere with a gap) at their example
problems' settings, and the faceted aircraft's sweep of 1000 monostatic incidences in both polarisations
against one incidence (on a GPU). --cases picks the parts. The spheres compare the operator on the GPU (cuda-tiled) with the CPU cores (cpu-s), and the study's
linear solver (auto: cuDSS on a GPU) with the host's fastest factorisation; the sweep and the almond, many
incidences each, run the study's default loop (auto: multi-gpu-tiled where several GPUs are visible, else
zgemm, cuBLAS on a GPU where there is one, else BLAS on the host). Without a GPU the CPU rows run: the spheres' CPU
loop, the sweep and the EMCC targets."""

from __future__ import annotations

import argparse
import math
import os
import resource
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..problems import case_problem_path
from ..problems.scattering import parse_scattering
from ..problems.toml_input import read_toml
from ..scattering.aircraft import AIRCRAFT_LENGTH
from ..scattering.cases import EMCC_CASES
from ..scattering.mie import pec_sphere_rcs
from ..scattering.polarisations import PARTS as POLARISED_PARTS, polarised_rcs
from ..scattering.run import run_problem
from ..scattering.waves import dbsm
from ..truncation.fields import C0
from ..backend import get_backend, gpu_unavailable_reason
from ..variants import LINEAR_SOLVER, SCATTERING_LOOP
from .environment import gpu_facts, run_facts
from .sphere_accuracy import FAR_FIELD, rcs_record, sphere_accuracy
from .options import add_merge, given, listed, size, tuple_of, whole

FREQUENCY = 300e6  # Hz: lambda = 0.999 m
FORE_AFT_SYMMETRIC = ("ogive",)  # EMCC bodies that are their own mirror image across x = 0
NEAR_PEAK_DB = 20.0  # symmetry checked where the RCS is within this of the cut's peak (nulls excluded)
PARTS = ("spheres", "sweep", "almond", "emcc-targets", "aircraft-sweep")  # what --cases picks from
GPU_SPHERE_LOOPS = ("cuda-tiled", "cuda-tiled-fp32", "zgemm", "multi-gpu-tiled")  # --gpu-loop's choices


@dataclass(frozen=True)
class ScatteringBenchConfig:
    diameters: tuple[float, ...] = (1.0, 2.0, 4.0)  # wavelengths
    orders: tuple[int, ...] = (1, 2)
    cpu_up_to: float = 2.0  # diameters also run with the CPU loop; larger ones run at the largest order only
    sweep_incidences: int = 360
    almond_ghz: tuple[float, ...] = (1.19, 7.0)
    emcc_targets: tuple[str, ...] = EMCC_CASES  # at their example problems' frequencies and settings
    gpu_loop: str = "cuda-tiled"
    cpu_loop: str = "cpu-s"
    many_loop: str = SCATTERING_LOOP.default  # sweep and almond: auto (every GPU where several, else zgemm)
    separate_budget_s: float = 600.0  # the sweep's separate solves run one by one if they fit in this
    sweep_pairs: int = 3  # the sweep and its one incidence timed this many times each; the median ratio judged
    cpu_rows: bool = True  # the spheres up to cpu_up_to also with the CPU loop (and the host's factorisation)
    parts: tuple[str, ...] = PARTS
    aircraft_incidences: int = 1000  # half as many azimuths over 360 degrees, each in both polarisations
    aircraft_mhz: float | None = None  # None: the aircraft example's frequency
    aircraft_pairs: int = 3  # the aircraft sweep and its one incidence timed this many times each (median ratio)
    aircraft_on_host: bool = False  # the aircraft sweep also without a GPU (hours at the example's size)


def sphere_problem(diameter: float, order: int, loop: str, acceleration: str, **extra):
    """The PEC sphere of this diameter (wavelengths), its far field on sphere_accuracy's grid (every 2 degrees
    in theta, 10 in phi: the E- and H-plane cuts among them)."""
    wavelength = C0 / FREQUENCY
    data = {"problem": {"kind": "scattering", "case": "pec-sphere", "frequency": FREQUENCY},
            "geometry": {"radius": diameter * wavelength / 2},
            "far_field": dict(FAR_FIELD),
            "solver": {"order": order, "loop": loop, "acceleration": acceleration}}
    for table, values in extra.items():
        data.setdefault(table, {}).update(values)
    return parse_scattering(data, ".")


def mie_error_db(result) -> float:
    """Largest |dB error| of the co-polarised RCS in the E- and H-plane where Mie is within 20 dB of its peak."""
    p = result.problem
    return sphere_error_db(p.radius * p.length_scale, 2 * math.pi * p.frequency / C0, result.theta[0],
                           result.phi[0], result.sigma_theta[0], result.sigma_phi[0])


def _accuracy(result) -> dict:
    """A sphere row's errors against Mie: issue 43's 20 dB window (mie_error_db), sphere_accuracy's three
    measures, and the RCS of every direction of the first incidence."""
    p = result.problem
    angles = (result.theta[0], result.phi[0], result.sigma_theta[0], result.sigma_phi[0])
    accuracy = sphere_accuracy(p.radius * p.length_scale, 2 * math.pi * p.frequency / C0, *angles)
    return {"mie_error_db": mie_error_db(result), "mie_error_40db": accuracy.window_db,
            "backscatter_error_db": accuracy.backscatter_db, "far_field_l2": accuracy.l2_relative,
            "rcs": rcs_record(*angles)}


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
    counts = result.iteration_counts
    return {**labels, "dofs": result.n_dofs, "elements": result.mesh.n_elements, "iterations": iterations,
            "iterations_min": int(counts.min()), "converged": bool(result.converged.all()), "seconds": dict(t),
            "iteration_phases_s": dict(result.iteration_timings), "columns": result.columns,
            "assembly_phases_s": dict(result.assembly_timings), "total_s": float(sum(t.values())),
            "per_iteration_s": t["iterations"] / max(iterations, 1),
            "backend": result.backend, "linear_solver": result.linear_solver, "phase_devices": dict(result.devices),
            "factor_nonzeros": result.factor_nonzeros, "factor": dict(result.factor_details),
            "sprime_points": len(result.sprime_points),
            "host_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}  # the process's, so far


def device_facts() -> dict:
    """The GPU's facts where CuPy can use one, the device named "4 x <name>" where several are visible (the
    study's loop auto runs the operator on all of them); else the host's CPU, named as the device that ran."""
    if gpu_unavailable_reason():
        return {"device": f"host {get_backend('numpy').device} (no GPU)", "on_gpu": False}
    import cupy as cp  # noqa: PLC0415

    facts, count = gpu_facts(cp), cp.cuda.runtime.getDeviceCount()
    return {**facts, "on_gpu": True, "gpus": count,
            "device": f"{count} x {facts['device']}" if count > 1 else facts["device"]}


def _sphere_runs(cfg: ScatteringBenchConfig, d: float, on_gpu: bool) -> list[tuple[str, str, str]]:
    """(loop, acceleration, linear solver) of a diameter's rows: GMRES on the GPU loop; up to cfg.cpu_up_to also
    the fixed point, again with the host's factorisation where the study's own (auto) runs on the GPU, and
    the CPU loop with the host's. Without a GPU only the CPU-loop rows."""
    host = LINEAR_SOLVER.resolve("auto", on_gpu=False)
    runs = [(cfg.gpu_loop, "gmres", "auto")]
    if d <= cfg.cpu_up_to:  # the accelerations and factorisations compared, the CPU loop where it takes minutes
        runs.append((cfg.gpu_loop, "fixed-point", "auto"))
        if LINEAR_SOLVER.resolve("auto", on_gpu) != host:
            runs.append((cfg.gpu_loop, "fixed-point", host))
        if cfg.cpu_rows:
            runs.append((cfg.cpu_loop, "fixed-point", host))
    return [r for r in runs if on_gpu or r[0] == cfg.cpu_loop]


def _sphere_plan(cfg: ScatteringBenchConfig, on_gpu: bool) -> list[tuple[float, int, str, str, str]]:
    """(diameter, order, loop, acceleration, linear solver) of every sphere row, in the order they run."""
    return [(d, order, *run) for d in cfg.diameters if d > 0  # --diameters 0: no spheres (a run joined to another)
            for order in (cfg.orders if d <= cfg.cpu_up_to else cfg.orders[-1:])
            for run in _sphere_runs(cfg, d, on_gpu)]


def _warm_up(plan: list[tuple], log) -> None:
    """On a GPU, a 1-wavelength sphere for each order, loop and linear solver the rows use, results dropped: the
    process's first use of the device (CUDA kernels compiled or read from the cache, cuDSS and cuBLAS loaded)
    is then in no row. Without it, the 16-wavelength sphere's assembly on 2 x H200 took 9 s longer in the first
    process on the machine than in a second (one run each; the cause not isolated)."""
    for order, loop, solver in dict.fromkeys((order, loop, solver) for _, order, loop, _, solver in plan):
        run_problem(sphere_problem(1.0, order, loop, "gmres", solver={"linear_solver": solver}))
        log(f"warm-up: the 1-wavelength sphere, order {order}, {loop}, {solver}")


def _spheres(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    on_gpu = data["gpu"]["on_gpu"]
    plan = _sphere_plan(cfg, on_gpu)
    if on_gpu:
        _warm_up(plan, log)
    for d, order, loop, acceleration, solver in plan:
        result = run_problem(sphere_problem(d, order, loop, acceleration, solver={"linear_solver": solver}))
        row = _record(result, diameter_wavelengths=d, order=order, loop=loop, acceleration=acceleration,
                      device=data["gpu"]["device"], date=data["date"], warmed_up=on_gpu)
        row.update(_accuracy(result), commit=data.get("commit"))
        data["spheres"].append(row)
        log(f"sphere {d:g} lambda, order {order}, {loop}, {acceleration}, {row['linear_solver']}: "
            f"{row['dofs']:,} DOFs, {row['iterations']} iterations, {row['total_s']:.1f} s, "
            f"{row['mie_error_db']:.2f} dB (20 dB window), {row['mie_error_40db']:.2f} dB (40 dB), "
            f"backscatter {row['backscatter_error_db']:+.2f} dB, L2 {row['far_field_l2']:.3f}")
        checkpoint(data)


def _sweep_run(phi: list, loop: str):
    """The 1-wavelength sphere at order 1, monostatic, theta-polarised incidences at theta = 90 and these phi."""
    return run_problem(sphere_problem(1.0, 1, loop, "fixed-point", far_field={"monostatic": True},
                                      incidence={"theta_deg": 90.0, "phi_deg": phi}))


def _sweep(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    """n incidences around the equator in one run against one incidence alone (cfg.sweep_pairs times each,
    alternately; the pair of the median ratio recorded with every ratio), by the loop for many right-hand
    sides (zgemm: on the GPU where there is one); the n separate solves run one by one where n times the one
    incidence fits in cfg.separate_budget_s, else that product stands as a scaled estimate. The host's
    1-minute load average is recorded before and after each run. On a GPU two incidences run first and are
    dropped, so that neither timed run pays the process's first use of the device (CUDA context, cuDSS and
    cuBLAS handles, the compilation of the kernels one and many incidences use)."""
    n, loop = cfg.sweep_incidences, cfg.many_loop
    if n == 0:  # --rhs 0: no sweep (a run joined to an earlier one)
        return
    phi = [i * 360.0 / n for i in range(n)]
    if data["gpu"]["on_gpu"]:
        _sweep_run(phi[:2], loop)
    load = [os.getloadavg()[0]]
    pairs = []
    for _ in range(cfg.sweep_pairs):  # alternately, so that a slow spell of the host touches both
        many = _sweep_run(phi, loop)
        load.append(os.getloadavg()[0])
        pairs.append((many, _sweep_run(phi[:1], loop)))
        load.append(os.getloadavg()[0])
    ratios = [sum(m.timings.values()) / sum(o.timings.values()) for m, o in pairs]
    many, one = pairs[int(np.argsort(ratios)[len(ratios) // 2])]  # the pair of the median ratio
    one_s = float(sum(one.timings.values()))
    separate = [one] + ([_sweep_run([p], loop) for p in phi[1:]] if n * one_s <= cfg.separate_budget_s else [])
    co = dbsm(many.sigma_theta[:, 0])
    alone = dbsm(np.array([r.sigma_theta[0, 0] for r in separate]))
    data["sweeps"].append({
        "device": data["gpu"]["device"], "date": data["date"], "loop": loop, "incidences": n,
        "many": _record(many), "one": _record(one), "separate_measured": len(separate) == n,
        "separate_s": float(sum(sum(r.timings.values()) for r in separate)) if len(separate) == n else n * one_s,
        "alone_vs_together_db": float(np.abs(alone - co[:len(separate)]).max()),
        "alone_iterations_equal": all(int(r.iterations) == int(many.iteration_counts[i])
                                      for i, r in enumerate(separate)),
        "monostatic_spread_db": float(np.ptp(co)), "load_1min": load, "host_threads": os.cpu_count(),
        "far_field_over_columns": True, "warmed_up": bool(data["gpu"]["on_gpu"]), "warm_up_incidences": 2,
        "pair_ratios": ratios})
    log(f"sweep of {n} on {loop}: {data['sweeps'][-1]['many']['total_s']:.1f} s against {one_s:.1f} s for one")
    checkpoint(data)


def _almond(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    """On the GPU only (the CPU loops take hours at 7 GHz)."""
    for ghz in (g for g in cfg.almond_ghz if g > 0) if data["gpu"]["on_gpu"] else ():
        problem = parse_scattering({"problem": {"kind": "scattering", "case": "nasa-almond", "frequency": ghz * 1e9},
                                    "incidence": {"theta_deg": 90.0, "phi_deg": {"start": 0.0, "stop": 180.0,
                                                                                 "step": 10.0},
                                                  "polarization": "theta"},
                                    "far_field": {"monostatic": True},
                                    "solver": {"order": 2, "loop": cfg.many_loop}}, ".")
        result = run_problem(problem)
        row = _record(result, frequency_ghz=ghz, order=2, loop=cfg.many_loop, acceleration="fixed-point",
                      incidences=len(problem.incidences), device=data["gpu"]["device"], date=data["date"])
        row["rcs_theta_dbsm"] = [float(v) for v in dbsm(result.sigma_theta[:, 0])]
        data["almond"].append(row)
        log(f"almond {ghz:g} GHz: {row['dofs']:,} DOFs, {row['total_s']:.1f} s")
        checkpoint(data)


def emcc_problem(name: str):
    """The EMCC target's example problem with its azimuth cut (phi 0..180, theta = 90) joined by the mirror
    half (phi = 360 - each phi strictly between 0 and 180), the incidences the symmetry checks compare."""
    path = case_problem_path(name)
    data = read_toml(path)
    cut = data["incidence"]["phi_deg"]
    phi = np.arange(cut["start"], cut["stop"] + cut["step"] / 2, cut["step"])
    data["incidence"]["phi_deg"] = [float(p) for p in (*phi, *(360.0 - phi[(phi > 0) & (phi < 180)])[::-1])]
    return parse_scattering(data, path.parent)


def mirror_spread_db(phi, rcs_db, mirror) -> float:
    """Largest |dB| difference between the monostatic RCS at phi and at mirror(phi) (degrees, mod 360) over
    the pairs the cut holds both of, where either is within NEAR_PEAK_DB of the peak; nan where none."""
    at = {round(p % 360.0, 6): v for p, v in zip(phi, rcs_db)}
    peak = max(rcs_db)
    pairs = [(v, at[round(mirror(p) % 360.0, 6)]) for p, v in zip(phi, rcs_db) if round(mirror(p) % 360.0, 6) in at]
    near = [abs(a - b) for a, b in pairs if max(a, b) >= peak - NEAR_PEAK_DB]
    return float(max(near)) if near else float("nan")


def _emcc(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    """Each EMCC target at its example problem's frequency and settings: the monostatic azimuth cut,
    checked only by symmetry (no independent reference here): every body of revolution about x is its own
    mirror image across y = 0 (RCS(phi) = RCS(360 - phi)), the ogive also across x = 0 (RCS(180 - phi))."""
    for name in cfg.emcc_targets:
        problem = emcc_problem(name)
        result = run_problem(problem)
        phi = [float(i.phi_deg) for i in problem.incidences]
        rcs = [float(v) for v in dbsm(result.sigma_theta[:, 0])]
        row = _record(result, target=name, frequency_ghz=problem.frequency / 1e9, order=problem.solver.order,
                      loop=problem.solver.loop, acceleration=problem.solver.acceleration, incidences=len(phi),
                      device=data["gpu"]["device"], date=data["date"])
        cut = [i for i, p in enumerate(phi) if p <= 180.0]
        peak = max(cut, key=lambda i: rcs[i])
        row.update(phi_deg=phi, rcs_theta_dbsm=rcs, peak_dbsm=rcs[peak], peak_phi_deg=phi[peak],
                   mirror_y_db=mirror_spread_db(phi, rcs, lambda p: -p),
                   mirror_x_db=mirror_spread_db(phi, rcs, lambda p: 180.0 - p) if name in FORE_AFT_SYMMETRIC else None)
        data["emcc"].append(row)
        log(f"{name} {row['frequency_ghz']:g} GHz: {row['dofs']:,} DOFs, {row['iterations']} iterations, "
            f"{row['total_s']:.1f} s, peak {row['peak_dbsm']:.1f} dBsm, mirror {row['mirror_y_db']:.2f} dB")
        checkpoint(data)


def aircraft_problem(incidences: int, mhz: float | None = None):
    """The aircraft's example problem with incidences // 2 azimuths around the horizon, every 720 /
    incidences degrees from the nose, each in both polarisations (1: theta-polarised from the nose alone),
    at mhz (None: the example's frequency)."""
    path = case_problem_path("aircraft")
    data = read_toml(path)
    if mhz:
        data["problem"]["frequency"] = mhz * 1e6
    n = incidences // 2
    data["incidence"].update({"phi_deg": 0.0, "polarization": "theta"} if incidences == 1 else
                             {"phi_deg": [i * 360.0 / n for i in range(n)], "polarization": "both"})
    return parse_scattering(data, path.parent)


def _timed_pairs(many, one, pairs: int) -> tuple[list, tuple, list]:
    """(the ratios of total seconds many / one, the pair of results of the median ratio, the host's 1-minute
    load average before and after each run): many() and one() run alternately, pairs times each."""
    load, runs = [os.getloadavg()[0]], []
    for _ in range(pairs):  # alternately, so that a slow spell of the host touches both
        runs.append([many()])
        load.append(os.getloadavg()[0])
        runs[-1].append(one())
        load.append(os.getloadavg()[0])
    ratios = [sum(m.timings.values()) / sum(o.timings.values()) for m, o in runs]
    return ratios, tuple(runs[int(np.argsort(ratios)[len(ratios) // 2])]), load


def reciprocity_to_copolar_db(parts: dict) -> float:
    """The largest difference of the cross-polarised amplitudes, |sqrt(sigma_HV) - sqrt(sigma_VH)| (equal in
    back-scatter by reciprocity), in dB below the co-polarised peak amplitude (the largest of VV and HH):
    parts maps 'VV', 'HH', 'HV', 'VH' to RCS (dBsm) by azimuth. A dB difference of parts far below the peak
    says little of a reciprocity error; this measure puts it on the co-polarised parts' scale."""
    amplitude = {k: 10.0 ** (np.asarray(parts[k], dtype=float) / 20.0) for k in POLARISED_PARTS}
    peak = max(amplitude["VV"].max(), amplitude["HH"].max())
    return float(20.0 * np.log10(np.abs(amplitude["HV"] - amplitude["VH"]).max() / peak))


def aircraft_rcs(result) -> dict:
    """The monostatic sweep's azimuths (deg) and every part's RCS (dBsm) by azimuth; the largest |dB|
    difference of each part between mirrored azimuths (phi, 360 - phi: the aircraft is its own mirror image
    across y = 0) and between HV and VH (reciprocity), where either is within NEAR_PEAK_DB of its peak."""
    rcs = polarised_rcs(result)
    phi = [float(p) for p in rcs.inc_phi]
    parts = {p: [float(v) for v in rcs.dbsm(p)[:, 0]] for p in POLARISED_PARTS}
    hv, vh = np.array(parts["HV"]), np.array(parts["VH"])
    near = np.maximum(hv, vh) >= max(hv.max(), vh.max()) - NEAR_PEAK_DB
    return {"phi_deg": phi, "rcs_dbsm": parts,
            "mirror_db": {p: mirror_spread_db(phi, v, lambda a: -a) for p, v in parts.items()},
            "reciprocity_db": float(np.abs(hv - vh)[near].max())}


def _aircraft(cfg: ScatteringBenchConfig, log, checkpoint, data) -> None:
    """The faceted aircraft's monostatic sweep (aircraft_problem: cfg.aircraft_incidences incidences) in one
    run against one incidence, cfg.aircraft_pairs times each alternately, the pair of the median ratio
    recorded with every ratio, and its RCS (aircraft_rcs). On a GPU a two-incidence run at a quarter of the
    frequency (seconds, the same order and kernels) goes first and is dropped: the process's first use of
    the device, as for the sphere sweep; without a GPU it runs only where cfg.aircraft_on_host."""
    if cfg.aircraft_incidences == 0:
        return
    on_gpu = data["gpu"]["on_gpu"]
    if not (on_gpu or cfg.aircraft_on_host):
        log("aircraft sweep: not run without a GPU unless --cases names aircraft-sweep")
        return
    many, one = aircraft_problem(cfg.aircraft_incidences, cfg.aircraft_mhz), aircraft_problem(1, cfg.aircraft_mhz)
    if on_gpu:
        run_problem(aircraft_problem(2, many.frequency / 4e6))
    ratios, (result, alone), load = _timed_pairs(lambda: run_problem(many), lambda: run_problem(one),
                                                 cfg.aircraft_pairs)
    row = {"device": data["gpu"]["device"], "date": data["date"], "frequency_mhz": many.frequency / 1e6,
           "length_wavelengths": AIRCRAFT_LENGTH * many.frequency / C0, "incidences": len(many.incidences),
           "many": _record(result), "one": _record(alone), "pair_ratios": ratios, "load_1min": load,
           "host_threads": os.cpu_count(), "warmed_up": on_gpu, **aircraft_rcs(result)}
    data.setdefault("aircraft", []).append(row)
    log(f"aircraft sweep of {row['incidences']} at {row['frequency_mhz']:g} MHz: {row['many']['total_s']:.1f} s "
        f"against {row['one']['total_s']:.1f} s for one ({row['many']['dofs']:,} DOFs)")
    checkpoint(data)


def run_scattering_benchmark(cfg: ScatteringBenchConfig, command, log=print, checkpoint=lambda d: None) -> dict:
    data = {"benchmark": "scattering", **run_facts(command), "gpu": device_facts(), "config": asdict(cfg),
            "host_threads": os.cpu_count(), "spheres": [], "sweeps": [], "almond": [], "emcc": [], "aircraft": []}
    for name, part in zip(PARTS, (_spheres, _sweep, _almond, _emcc, _aircraft)):
        if name in cfg.parts:
            part(cfg, log, checkpoint, data)
    return data


def _sweeps_of(data: dict) -> list[dict]:
    """A results file's sweeps, each naming its host's cores where the file knows them; a file from before
    sweeps were a list holds one, run on its device, whose separate solves were always the scaled estimate."""
    if "sweeps" in data:  # a sweep the file's own run made ran on its host
        return [{"host_threads": data["host_threads"], **s} if s["date"] == data["date"] else s
                for s in data["sweeps"]]
    old = dict(data.get("sweep") or {})
    if not old:
        return []
    estimate = old.pop("separate_estimate_s")
    return [{**old, "device": data["gpu"]["device"], "date": data["date"], "loop": data["config"]["gpu_loop"],
             "separate_s": estimate, "separate_measured": False}]


def _on_device(rows: list, earlier: dict, dated: bool) -> list:
    """Rows of an earlier file, each naming its device and (dated) run date: files from before rows named
    them have the file's (an almond row was made by the file's own run; spheres may come from one it joined)."""
    stamp = {"device": earlier["gpu"]["device"], **({"date": earlier["date"]} if dated else {})}
    return [{**stamp, **r} for r in rows]


def _sphere_key(row: dict) -> tuple:
    return (row["device"], row["diameter_wavelengths"], row["order"], row["loop"], row["acceleration"],
            row["linear_solver"])


def _emcc_key(row: dict) -> tuple:
    return row["device"], row["target"], row["frequency_ghz"]


def _sweep_key(sweep: dict) -> tuple:
    return sweep["device"], sweep["incidences"], sweep["many"]["linear_solver"]


def merge(data: dict, earlier: dict) -> dict:
    """This run joined with an earlier one (--merge): the earlier run's sphere rows of a device, size, order,
    loop, acceleration and linear solver this run did not measure, its almond rows where this run has none,
    its EMCC target rows of a device, target and frequency this run did not measure, its sweeps on other
    devices, of other sizes or by another linear solver; the runs joined listed under "earlier_runs"."""
    out = dict(data)
    if not out["almond"]:
        out["almond"] = _on_device(earlier.get("almond", []), earlier, True)
    mine = {_emcc_key(r) for r in out.get("emcc", [])}
    out["emcc"] = out.get("emcc", []) + [r for r in earlier.get("emcc", []) if _emcc_key(r) not in mine]
    mine = {_sphere_key(r) for r in out["spheres"]}
    out["spheres"] = out["spheres"] + [r for r in _on_device(earlier.get("spheres", []), earlier, False)
                                       if _sphere_key(r) not in mine]
    mine = {_sweep_key(s) for s in out["sweeps"]}
    out["sweeps"] = out["sweeps"] + [s for s in _sweeps_of(earlier) if _sweep_key(s) not in mine]
    out["aircraft"] = _aircraft_merged(out.get("aircraft", []), earlier.get("aircraft", []))
    out.pop("sweep", None)
    joined = earlier.get("earlier_runs") or ([earlier["earlier_run"]] if earlier.get("earlier_run") else [])
    out["earlier_runs"] = [{k: earlier.get(k) for k in ("date", "command", "commit", "gpu")}, *joined]
    return out


def _aircraft_merged(rows: list[dict], earlier: list[dict]) -> list[dict]:
    """This run's aircraft sweeps and the earlier run's of a device, size and frequency this run did not measure."""
    key = lambda r: (r["device"], r["incidences"], r["frequency_mhz"])  # noqa: E731
    mine = {key(r) for r in rows}
    return rows + [r for r in earlier if key(r) not in mine]


def add_arguments(parser) -> None:
    """`paraflux bench scattering`'s own options."""
    parser.add_argument("--diameters", type=size, nargs="+", metavar="D",
                        help="PEC sphere diameters in wavelengths (default "
                             f"{listed(ScatteringBenchConfig.diameters)}); 0: no spheres")
    parser.add_argument("--orders", type=whole(1), nargs="+", metavar="P",
                        help=f"Nedelec orders of the spheres (default {listed(ScatteringBenchConfig.orders)})")
    parser.add_argument("--incidences", type=whole(0), metavar="N",
                        help=f"incidences of the monostatic sweep (default {ScatteringBenchConfig.sweep_incidences}); "
                             "0: no sweep")
    parser.add_argument("--ghz", type=size, nargs="+", metavar="F",
                        help="the NASA almond's frequencies in GHz (default "
                             f"{listed(ScatteringBenchConfig.almond_ghz)}; on a GPU); 0: no almond")
    parser.add_argument("--targets", type=emcc_target, nargs="+", metavar="NAME",
                        help=f"EMCC targets beside the almond (default {' '.join(EMCC_CASES)}), each at its example "
                             "problem's frequency and settings; none (or 0): no targets")
    parser.add_argument("--no-cpu-loop", action="store_true",
                        help="the spheres without the CPU loop's rows (cpu-s)")
    parser.add_argument("--gpu-loop", choices=GPU_SPHERE_LOOPS, metavar="LOOP",
                        help=f"the spheres' loop on a GPU, of {', '.join(GPU_SPHERE_LOOPS)} (default "
                             f"{ScatteringBenchConfig.gpu_loop})")
    _add_aircraft_arguments(parser)
    add_merge(parser, "the spheres, sweeps, almond, EMCC target and aircraft sweep rows")


def _add_aircraft_arguments(parser) -> None:
    """--cases and the aircraft sweep's options."""
    parser.add_argument("--cases", nargs="+", choices=PARTS, metavar="PART",
                        help=f"the parts to run, of {', '.join(PARTS)} (default all; the aircraft sweep on a GPU "
                             "only unless named here)")
    parser.add_argument("--aircraft-incidences", type=whole(0), metavar="N",
                        help="incidences of the aircraft's monostatic sweep, N / 2 azimuths over 360 degrees in "
                             f"both polarisations (default {ScatteringBenchConfig.aircraft_incidences}); 0: none")
    parser.add_argument("--aircraft-mhz", type=size, metavar="F",
                        help="the aircraft sweep's frequency in MHz (default its example's, 85)")
    parser.add_argument("--aircraft-pairs", type=whole(1), metavar="N",
                        help="times the aircraft sweep and its one incidence each run, alternately (default "
                             f"{ScatteringBenchConfig.aircraft_pairs})")


def emcc_target(text: str) -> str:
    """An argparse type: an EMCC target's name, or none (also 0) for no targets."""
    if text in EMCC_CASES or text in ("none", "0"):
        return text
    raise argparse.ArgumentTypeError(f"needs one of {', '.join(EMCC_CASES)} or none, got '{text[:30]}'")


def run(args, command, log, checkpoint) -> dict:
    """The benchmark as `paraflux bench scattering` asks for it."""
    config = given(ScatteringBenchConfig(), diameters=tuple_of(args.diameters), orders=tuple_of(args.orders),
                   sweep_incidences=args.incidences, almond_ghz=tuple_of(args.ghz),
                   cpu_rows=False if args.no_cpu_loop else None, parts=tuple_of(args.cases), gpu_loop=args.gpu_loop,
                   aircraft_incidences=args.aircraft_incidences, aircraft_mhz=args.aircraft_mhz or None,
                   aircraft_pairs=args.aircraft_pairs, aircraft_on_host="aircraft-sweep" in (args.cases or ()))
    if args.targets:  # given: those named, none where it says none
        config = replace(config, emcc_targets=tuple(t for t in args.targets if t not in ("none", "0")))
    return run_scattering_benchmark(config, command, log, checkpoint)
