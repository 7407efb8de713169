"""Markdown tables of `paraflux bench scattering`, rendered from the JSON record (no number typed by hand)."""

from __future__ import annotations

from pathlib import Path

from .rcs_polar import write_polar_png
from .scattering import reciprocity_to_copolar_db
from .sphere_accuracy import WINDOW_DB
from .sphere_scaling import model_lines, scaling_rows, several_gpu_lines, write_scaling_png
from .report import header, page, row, run_named, section, table, verdict

# issue 43's targets on one GPU: (sphere diameter in wavelengths, error against Mie in dB, seconds)
SPHERE_TARGETS = ((2.0, 0.2, 8.0), (2.0, 0.05, 25.0), (4.0, 0.3, 60.0))
TARGET_SWEEP_RATIO = 2.0  # a 360-incidence sweep in at most 2 times one incidence (issue 43)
TARGET_AIRCRAFT_RATIO = 3.0  # the aircraft's 1000 monostatic incidences in at most 3 times one on a GPU (issue 49)
TARGET_AIRCRAFT_INCIDENCES = 1000
AIRCRAFT_PLOT = "scattering-aircraft-rcs.png"  # beside the page, drawn from its first aircraft row
SCALING_PLOT = "scattering-scaling.png"  # beside the page: the spheres' time and memory against diameter
LARGE_SPHERE_TARGET = (20.0, 0.5, 60.0)  # issue 50: wavelengths, dB in the 40 dB window, seconds on one H100
SEVERAL_GPUS_DIAMETER = 16.0  # issue 50: 2 and 4 GPUs against 1 on one problem of this many wavelengths
LARGE_SPHERE_REMEDIES = {  # by the phase that took longest
    "iterations": "the truncation operator's dense product grows with the square of S's points; an O(N log N) "
                  "operator (a GPU Helmholtz FMM, issue 50's item 5, not built) would make it grow as the unknowns "
                  "do, and fewer iterations (a preconditioned GMRES) would divide it.",
    "assembly": "the DOF numbering, the surface traces and the surface mass matrices still built on the host "
                "(the FEM blocks and the weak flux's rows are built on the GPU); moving them to the device (issue "
                "50's item 3).",
    "factorisation": "cuDSS's analysis reorders on the host; its device reordering or multi-GPU mode (issue 50's "
                     "item 4, not measured).",
    "mesh": "gmsh's surface meshing of the scatterer on one host thread (the volume is meshed in layers).",
    "far field": "the far field's direct sum over S' for every direction (on the host's cores by Numba, on a GPU "
                 "by CuPy), which grows as directions times points; a type-3 non-uniform FFT would not."}
# Monostatic runs whose incidences shared theta were evaluated at the first incidence's direction before
# this fix (engine/scattering/run.py, _rcs); their times stand, their RCS values are not shown.
MONOSTATIC_FIX = "2026-11-25 09:00 UTC"


def _monostatic_rcs_valid(row: dict) -> bool:
    """Whether a sweep's or almond row's run came after the monostatic fix (rows name their run's date)."""
    return row["date"] >= MONOSTATIC_FIX


def _phase(row: dict, name: str) -> str:
    return f"{row['seconds'].get(name, float('nan')):.2f}"


def _assembly_and_factorisation(r: dict) -> tuple[str, str]:
    """The assembly's and the factorisation's cells, each naming the device it ran on; rows from before the
    two were timed apart have them together in the factorisation's cell."""
    devices = r.get("phase_devices")
    if not devices:
        return "", f"{_phase(r, 'assembly and factorisation')} (with the assembly, host)"
    return (f"{_phase(r, 'assembly')} ({devices['assembly']})",
            f"{_phase(r, 'factorisation')} ({devices['factorisation']})")


def run_cell(r: dict, data: dict) -> str:
    """Where and from what a row was measured: its device, its run's commit and date."""
    commits = {e["date"]: e.get("commit") for e in (data, *data.get("earlier_runs", []))}
    commit = r.get("commit") or commits.get(r.get("date")) or "commit not recorded"
    return f"{r.get('device', '')}, {commit}, {r.get('date', 'before 2026-11-27')}"


def _error_cells(r: dict) -> tuple[str, str, str, str]:
    """The 20 and 40 dB windows' errors, the backscatter's and the far field's L2 (rows from before issue 50
    have the first only)."""
    if "mie_error_40db" not in r:
        return f"{r['mie_error_db']:.2f}", "not measured", "not measured", "not measured"
    return (f"{r['mie_error_db']:.2f}", f"{r['mie_error_40db']:.2f}", f"{r['backscatter_error_db']:+.2f}",
            f"{r['far_field_l2']:.3f}")


def _sphere_table(data: dict) -> list[str]:
    rows = []
    for r in data["spheres"]:
        assembly, factorisation = _assembly_and_factorisation(r)
        rows.append((f"{r['diameter_wavelengths']:g}", r["order"], r["loop"], r["acceleration"], r["linear_solver"],
                     f"{r['dofs']:,}", f"{r['iterations']}{'' if r['converged'] else ' (not converged)'}",
                     _phase(r, "mesh"), assembly, factorisation, f"{r['per_iteration_s']:.3f}", f"{r['total_s']:.1f}",
                     *_error_cells(r), run_cell(r, data)))
    return section("PEC spheres against the Mie series", table(
        ["diameter (wavelengths)", "order", "loop", "iteration", "linear solver", "DOFs", "iterations", "mesh s",
         "assembly s", "factorisation s", "per iteration s", "total s", "error, 20 dB window (dB)",
         "error, 40 dB window (dB)", "backscatter error (dB)", "far-field L2", "run (device, commit, date)"],
        "rrlllrrrrrrrrrrrl", rows)) + _factor_table(data) + _scaling_section(data)


def _scaling_section(data: dict) -> list[str]:
    rows = scaling_rows(data["spheres"])
    figure = ([f"![Time per phase and memory against the sphere's diameter]({SCALING_PLOT})", ""]
              if len(rows) >= 2 else ["Fewer than two GPU rows at order 2: no figure.", ""])
    return section("Time and memory against size", [
        "The GPU rows at order 2 (GMRES, the operator cuda-tiled), the latest run of each diameter.", "",
        *figure, *model_lines(rows), *several_gpu_lines(rows, data["spheres"]), ""])


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f}"


def _factor_table(data: dict) -> list[str]:
    """The GPU factorisations' own figures (cuDSS's): the factor's size, the device memory it takes, its phases."""
    rows = [r for r in data["spheres"] if r.get("factor", {}).get("peak_device_bytes")]
    if not rows:
        return []
    return ["", "The factorisations on the GPU as cuDSS reports them (the free block of the FEM matrix; memory: "
            "cuDSS's estimates after its analysis; analysis: reordering and symbolic factorisation, on the host's "
            "threads; numeric: the factorisation on the GPU):", "", *table(
                ["diameter (wavelengths)", "order", "iteration", "factor nonzeros", "factor MiB", "GPU memory kept MiB",
                 "GPU memory peak MiB", "analysis s", "numeric s"], "rrlrrrrrr",
                [(f"{r['diameter_wavelengths']:g}", r["order"], r["acceleration"], f"{r['factor_nonzeros']:,}",
                  _mib(r["factor"]["factor_bytes"]), _mib(r["factor"]["permanent_device_bytes"]),
                  _mib(r["factor"]["peak_device_bytes"]), f"{r['factor']['analysis_s']:.2f}",
                  f"{r['factor']['numeric_s']:.3f}") for r in rows])]


def _sphere_target(spheres: list[dict], diameter: float, error_db: float, seconds: float) -> str:
    """A sphere target's verdict from the rows whose operator ran on the GPU: the fastest within the error, or
    the measured reason none is."""
    head = f"- Sphere of {diameter:g} wavelengths at <= {error_db:g} dB in <= {seconds:g} s on one GPU: "
    rows = [r for r in spheres if r["diameter_wavelengths"] == diameter and r["loop"].startswith("cuda")]
    if not rows:
        return head + f"{verdict(None)} (no GPU row of this size)."
    within = [r for r in rows if r["mie_error_db"] <= error_db]
    if not within:
        errors = {}
        for r in rows:
            errors[r["order"]] = min(errors.get(r["order"], float("inf")), r["mie_error_db"])
        listed = ", ".join(f"order {o}: {e:.2f} dB" for o, e in sorted(errors.items()))
        orders = sorted(errors)
        why = ""
        if len(orders) > 1 and errors[orders[-1]] >= 0.9 * errors[orders[-2]]:
            why = (f"; the error does not fall from order {orders[-2]} to order {orders[-1]}, so the element order is "
                   "not what limits it on these meshes")
        return (head + f"{verdict(False)}: no row reaches {error_db:g} dB ({listed}, the best of each order at its "
                f"default elements per wavelength){why}.")
    best = min(within, key=lambda r: r["total_s"])
    line = (f"{head}{verdict(best['total_s'] <= seconds)}, {best['total_s']:.1f} s (order {best['order']}, "
            f"{best['acceleration']}, linear solver {best['linear_solver']}, {best['mie_error_db']:.2f} dB, "
            f"{best['dofs']:,} DOFs, on {best['device']}).")
    if best["total_s"] > seconds:
        name, value = max(best["seconds"].items(), key=lambda kv: kv[1])
        line += f" Where the time went: {name}, {value:.1f} s of the {best['total_s']:.1f} s."
    return line


def _largest_sphere_target(spheres: list[dict], diameter: float = 8.0) -> str:
    """Issue 43's 'the 8-wavelength sphere solved on one GPU, its size, time and memory reported'."""
    head = f"- Sphere of {diameter:g} wavelengths solved on one GPU, its size, time and memory reported: "
    rows = [r for r in spheres if r["diameter_wavelengths"] == diameter and r["loop"].startswith("cuda")]
    if not rows:
        return head + f"{verdict(None)} (no GPU row of this size)."
    r = min(rows, key=lambda r: r["total_s"])
    factor = r.get("factor", {})
    memory = (f"; the factor's {r['factor_nonzeros']:,} nonzeros take {factor['peak_device_bytes'] / 2**30:.1f} GiB "
              "of GPU memory (cuDSS's estimate)" if factor.get("peak_device_bytes") else "")
    host = (f", the process's peak host memory {r['host_peak_bytes'] / 2**30:.1f} GiB" if r.get("host_peak_bytes")
            else "")
    return (f"{head}{verdict(r['converged'])}, order {r['order']}, {r['dofs']:,} DOFs ({r['elements']:,} "
            f"tetrahedra), {r['total_s']:.1f} s, {r['mie_error_db']:.2f} dB against Mie, linear solver "
            f"{r['linear_solver']}{memory}{host}.")


def _large_sphere_remedy(r: dict) -> str:
    """The measured reason a large sphere misses its time (its largest phase) and what would reach it."""
    name, value = max(r["seconds"].items(), key=lambda kv: kv[1])
    parts = r.get({"iterations": "iteration_phases_s", "assembly": "assembly_phases_s"}.get(name, ""), {})
    inside = (" (" + ", ".join(f"{k} {v:.1f} s" for k, v in parts.items()) + ")") if parts else ""
    return (f"Where the time went: {name}, {value:.1f} s of {r['total_s']:.1f} s{inside}. What would reach it: "
            f"{LARGE_SPHERE_REMEDIES.get(name, 'not analysed')}")


def _large_sphere_target(spheres: list[dict]) -> str:
    """Issue 50's one-GPU target, on the 40 dB window's error."""
    diameter, error_db, seconds = LARGE_SPHERE_TARGET
    head = (f"- Sphere of {diameter:g} wavelengths on one GPU in <= {seconds:g} s at <= {error_db:g} dB where Mie is "
            f"within {WINDOW_DB:g} dB of its peak (issue 50): ")
    rows = [r for r in spheres if r["diameter_wavelengths"] == diameter and r["loop"].startswith("cuda")
            and "mie_error_40db" in r]
    if not rows:
        return head + f"{verdict(None)} (no GPU row of this size with the 40 dB measure)."
    r = min(rows, key=lambda r: r["total_s"])
    met = r["total_s"] <= seconds and r["mie_error_40db"] <= error_db
    phases = ", ".join(f"{name} {value:.1f} s" for name, value in r["seconds"].items())
    return (f"{head}{verdict(met)}, {r['total_s']:.1f} s ({phases}), {r['mie_error_40db']:.2f} dB, backscatter "
            f"{r['backscatter_error_db']:+.2f} dB, L2 {r['far_field_l2']:.3f}, {r['dofs']:,} DOFs, on {r['device']}."
            + ("" if met else " " + _large_sphere_remedy(r)))


def _cold_start(many: dict, one: dict) -> str:
    """Where a pair's rows were not both warmed up (before the bench's warm-up): which ran first, and so may
    have paid the process's first use of the machine (kernels compiled, libraries loaded)."""
    if many.get("warmed_up") and one.get("warmed_up"):
        return ""
    which = "one row was not warmed up" if many.get("warmed_up") or one.get("warmed_up") else \
        "neither row was warmed up"
    dates = many.get("date"), one.get("date")
    if not all(dates):
        return f"; {which} (which ran first is not recorded): re-measure with the bench's warm-up"
    first = "the multi-GPU row" if dates[0] < dates[1] else "the one-GPU row" if dates[1] < dates[0] else "either row"
    return (f"; {which}, and {first} ran first ({dates[0]} against {dates[1]}): its times may hold the machine's "
            "cold start (CUDA kernels compiled, libraries loaded; not isolated). Re-measure with the bench's warm-up")


def _several_gpus_target(spheres: list[dict]) -> str:
    """Issue 50's several GPUs on one problem: each multi-gpu-tiled row at SEVERAL_GPUS_DIAMETER against the
    one-GPU cuda-tiled row of the same commit (the same machine's baseline, rerun beside it)."""
    head = f"- {SEVERAL_GPUS_DIAMETER:g}-wavelength sphere on 2 and 4 GPUs faster than on one (issue 50): "
    at = [r for r in spheres if r["diameter_wavelengths"] == SEVERAL_GPUS_DIAMETER and r["acceleration"] == "gmres"]
    parts = []
    for many in (r for r in at if r["loop"] == "multi-gpu-tiled"):
        one = next((r for r in at if r["loop"] == "cuda-tiled" and r.get("commit") == many.get("commit")
                    and r["order"] == many["order"]), None)
        if one is None:
            continue
        operator = [r.get("iteration_phases_s", {}).get("operator", float("nan")) for r in (many, one)]
        phases = ", ".join(f"{name} {many['seconds'][name]:.1f} s against {one['seconds'][name]:.1f} s"
                           for name in ("assembly", "factorisation"))
        parts.append(f"on {many['device']}: {verdict(many['total_s'] < one['total_s'])}, {many['total_s']:.1f} s "
                     f"against {one['total_s']:.1f} s on one of its GPUs (one run each; the operator "
                     f"{operator[0]:.1f} s against {operator[1]:.1f} s, {operator[1] / operator[0]:.2f}x; {phases})"
                     + _cold_start(many, one))
    if not parts:
        return head + f"{verdict(None)} (no multi-gpu-tiled row beside a one-GPU row of the same run)."
    return (head + "; ".join(parts) + ". Only the operator runs on every GPU: the mesh and the host's share of the "
            "assembly run on the host, the factorisation and back-substitutions on one GPU, so they do not shrink "
            "(issue 50's items 3 and 4: the assembly on the devices, cuDSS's multi-GPU mode; not built). 4 GPUs: "
            "not measured.")


def _targets(data: dict) -> list[str]:
    lines = section("Targets", ["Issue 43's targets, each judged from the rows above whose operator ran on the "
                                "GPU (the loop cuda-tiled).", ""])
    lines += [_sphere_target(data["spheres"], *goal) for goal in SPHERE_TARGETS]
    lines.append(_largest_sphere_target(data["spheres"]))
    lines.append(_large_sphere_target(data["spheres"]))
    lines.append(_several_gpus_target(data["spheres"]))
    lines += [*(_sweep_target(sweep, data["sweeps"]) for sweep in data["sweeps"]),
              *_over_gpus(data["sweeps"])] or [
        f"- {data['config']['sweep_incidences']}-incidence monostatic sweep under {TARGET_SWEEP_RATIO:g}x one "
        "incidence: **not measured** in the runs joined here."]
    lines.append(_aircraft_target(data.get("aircraft", [])))
    lines.append("- At every error NGSolve reaches on the 2- and 4-wavelength spheres, ParaFlux at least 3x faster on "
                 "the same machine: measured by `paraflux bench scattering-ngsolve` (NGSolve on the GPU machine's "
                 "host threads beside the study on its GPU), in [scattering-ngsolve.md](scattering-ngsolve.md), "
                 "which states the verdict.")
    lines.append("- 4 GPUs: the iteration's operator at least 3.5x one GPU at the largest size: measured by `paraflux "
                 "bench truncation --multi-gpu-only` (multi-gpu-tiled, the loop `auto` takes on several GPUs, at "
                 "numS = 32,422), in [truncation.md](truncation.md), whose Targets state the verdict, the reason "
                 "of a miss and what would reach it.")
    return lines


def _pairs(sweep: dict) -> str:
    """Where the sweep was timed several times: the median pair's standing among every pair's ratio."""
    ratios = sweep.get("pair_ratios", [])
    if len(ratios) < 2:
        return ""
    return (f", the median of {len(ratios)} pairs timed alternately, whose ratios were "
            + ", ".join(f"{r:.2f}" for r in sorted(ratios)) + "x")


def _warm_up(sweep: dict) -> str:
    """The sweep's warm-up as its line states it (records before warm_up_incidences dropped one incidence)."""
    if not sweep.get("warmed_up"):
        return ""
    n = sweep.get("warm_up_incidences", 1)
    return f"; both timed after a dropped {'one' if n == 1 else n}-incidence run"


def _sweep_target(sweep: dict, sweeps: list[dict]) -> str:
    """The sweep target's verdict for one sweep, its separate solves, and what its iterations did."""
    many, one = sweep["many"], sweep["one"]
    ratio = many["total_s"] / one["total_s"]
    met = ratio <= TARGET_SWEEP_RATIO
    separate = ("measured one by one" if sweep["separate_measured"]
                else "a scaled estimate: the one-incidence run times the incidences")
    line = (f"- {sweep['incidences']}-incidence monostatic sweep (1-wavelength sphere, order 1, loop {_loop(sweep)}, "
            f"backend {many['backend']}, linear solver {many['linear_solver']}) "
            f"on {sweep['device']} in <= {TARGET_SWEEP_RATIO:g}x one incidence: {verdict(met)}, {ratio:.2f}x "
            f"({many['total_s']:.1f} s against {one['total_s']:.1f} s{_pairs(sweep)}; {sweep['incidences']} "
            "separate solves: "
            f"{sweep['separate_s']:,.0f} s, {separate}). ")
    if not _monostatic_rcs_valid(sweep):
        return line + (f"Its RCS values were computed before the monostatic fix ({MONOSTATIC_FIX}) and are not "
                       f"shown. Its run of all incidences took {many['iterations']} iterations where one incidence "
                       f"took {one['iterations']}, and each iteration back-substituted every incidence column by "
                       "column (that run's record does not say why the iterations grew).")
    alone = ("the incidences run one by one differ" if sweep["separate_measured"] else
             "the incidence run alone (phi = 0) differs")
    counts = (f"{many['iterations']} iterations each" if many["iterations_min"] == many["iterations"] else
              f"{many['iterations_min']} to {many['iterations']} iterations each")
    return line + (f"The sphere's monostatic RCS varies by {sweep['monostatic_spread_db']:.3f} dB over the "
                   f"incidences; {alone} from the same in the "
                   f"sweep by at most {sweep['alone_vs_together_db']:.1e} dB, with "
                   f"{'the same' if sweep['alone_iterations_equal'] else 'different'} iteration counts. "
                   f"The {sweep['incidences']} incidences iterated as {many['columns']} columns (the numerical rank "
                   f"of their data on the scatterer), {counts}, against {one['iterations']} alone. "
                   + _largest_growth(many, one) + _before(sweep, sweeps) + _what_could_reach(sweep, met, sweeps))


def _loop(sweep: dict) -> str:
    """The sweep's loop and, where its record names it, where the operator ran."""
    where = sweep["many"].get("phase_devices", {}).get("operator")
    return f"{sweep['loop']}, operator on {where}" if where else sweep["loop"]


def _over_gpus(sweeps: list[dict]) -> list[str]:
    """Each sweep on several GPUs ("N x <name>") against the same sweep on one of them in the same run."""
    out = []
    for many_gpus in (s for s in sweeps if " x " in s["device"]):
        name = many_gpus["device"].split(" x ", 1)[1]
        one = next((s for s in sweeps if s["device"] == name and s["date"][:10] == many_gpus["date"][:10]
                    and s["incidences"] == many_gpus["incidences"]
                    and s["many"]["linear_solver"] == many_gpus["many"]["linear_solver"]), None)
        if one is None:
            continue
        a, b = one["many"], many_gpus["many"]
        op_a, op_b = a["iteration_phases_s"]["operator"], b["iteration_phases_s"]["operator"]
        name, seconds = max(_phases(a), key=lambda phase: phase[1])
        out.append(f"- The {many_gpus['incidences']}-incidence sweep split over {many_gpus['device']} against one "
                   f"(runs of {one['date']} and {many_gpus['date']}, linear solver {b['linear_solver']}): all "
                   f"incidences {b['total_s']:.1f} s against {a['total_s']:.1f} s "
                   f"({a['total_s'] / b['total_s']:.2f}x); the operator on {b['phase_devices']['operator']} "
                   f"{op_b:.2f} s against {op_a:.2f} s on {a['phase_devices']['operator']} ({op_a / op_b:.2f}x), "
                   f"{op_a / a['total_s']:.0%} of the one-GPU sweep's time, whose largest phase is {name} "
                   f"({seconds:.1f} s, back-substitution on the {a['phase_devices']['back-substitution']}).")
    return out


def _before(sweep: dict, sweeps: list[dict]) -> str:
    """A GPU sweep's back-substitution against the same sweep's on the same device by a host solver."""
    many = sweep["many"]
    host = [s for s in sweeps if s["device"] == sweep["device"] and s["incidences"] == sweep["incidences"]
            and s["many"].get("phase_devices", {}).get("back-substitution", "host") == "host"]
    if many.get("phase_devices", {}).get("back-substitution") != "GPU" or not host:
        return ""
    then = host[0]
    return (f" Before, by {then['many']['linear_solver']} on the host (run of {then['date']}): "
            f"{then['many']['total_s'] / then['one']['total_s']:.2f}x, its back-substitution "
            f"{then['many']['iteration_phases_s']['back-substitution']:.1f} s against "
            f"{many['iteration_phases_s']['back-substitution']:.2f} s here on the GPU.")


def _what_could_reach(sweep: dict, met: bool, sweeps: list[dict]) -> str:
    """For a missed target: what could reach it (a proposal; an estimate where another run measured the part)."""
    if met:
        return ""
    many = sweep["many"]
    if "no GPU" in sweep["device"]:
        gpu = [s for s in sweeps if s["incidences"] == sweep["incidences"] and s["many"]["backend"] == "cupy"
               and s["many"].get("iteration_phases_s") and many.get("iteration_phases_s")]
        measured = (f": on {gpu[0]['device']} the operator took {gpu[0]['many']['iteration_phases_s']['operator']:.2f} s "
                    f"for the same sweep against {many['iteration_phases_s']['operator']:.1f} s here" if gpu else
                    ", not measured here")
        return (" What could reach it: the operator's products over the columns on a GPU (the zgemm loop by "
                f"cuBLAS), where the host does them on its cores{measured}.")
    if many.get("phase_devices", {}).get("back-substitution") == "GPU":
        return _what_remains(sweep, sweeps)
    back = many.get("iteration_phases_s", {}).get("back-substitution", 0.0)
    faster = [s for s in sweeps if s["incidences"] == sweep["incidences"] and s["many"].get("iteration_phases_s")
              and s["many"].get("columns") == many.get("columns") and s["many"]["linear_solver"] == "pardiso"
              ] if many["linear_solver"] != "pardiso" else []
    if not faster or back < 0.5 * (many["total_s"] - sweep["one"]["total_s"]):
        return ""
    other = faster[0]["many"]["iteration_phases_s"]["back-substitution"]
    estimate = (many["total_s"] - back + other) / sweep["one"]["total_s"]
    return (f" What could reach it: the back-substitution by PARDISO, the `auto` linear solver where MKL is "
            f"installed (MKL's wheels are larger than what can be carried to the GPU machine, so {many['linear_solver']} "
            f"ran): on {faster[0]['device']} PARDISO back-substituted the same {many['columns']} columns in {other:.1f} s "
            f"against {back:.1f} s here, which would make this sweep {estimate:.2f}x one incidence (a scaled "
            "estimate: this run's other phases with that host's back-substitution).")


def _what_remains(sweep: dict, sweeps: list[dict]) -> str:
    """A GPU sweep's extra seconds over one incidence by phase, largest first; where the sweep computed its
    currents on S' and far field from the iterated columns, that phase against an earlier run on the same
    device and linear solver that computed them for every incidence."""
    many, one = sweep["many"], sweep["one"]
    grown = sorted(((b - a, name) for (name, a), (_, b) in zip(_phases(one), _phases(many))), reverse=True)
    parts = ", ".join(f"{name} +{extra:.2f} s" for extra, name in grown if extra >= 0.1)
    line = (f" What remains: the {many['total_s'] - one['total_s']:.1f} s over one incidence by phase: {parts} "
            "(each at least 0.1 s)." + _host_bound(many, one, grown))
    earlier = [s for s in sweeps if not s.get("far_field_over_columns") and s["device"] == sweep["device"]
               and s["incidences"] == sweep["incidences"] and s["many"]["linear_solver"] == many["linear_solver"]]
    if not sweep.get("far_field_over_columns") or not earlier:
        return line
    then = earlier[0]
    far = dict(_phases(many))["far field"] - dict(_phases(one))["far field"]
    far_then = dict(_phases(then["many"]))["far field"] - dict(_phases(then["one"]))["far field"]
    return line + (f" The currents on S' and the far field came from the {many['columns']} iterated columns, "
                   f"combined per incidence: far field +{far:.2f} s against +{far_then:.2f} s in the run of "
                   f"{then['date']} ({then['many']['total_s'] / then['one']['total_s']:.2f}x), which computed "
                   f"them for all {sweep['incidences']} solutions.")


HOST_BOUND = ("iterations: the rest (data's rank, norms, bookkeeping)", "iterations: currents on S'")


def _host_bound(many: dict, one: dict, grown: list) -> str:
    """For a GPU sweep over the target: the host-bound phases' extra seconds and the ratio without them."""
    extra = sum(e for e, name in grown if name in HOST_BOUND and e > 0)
    if (many["total_s"] - extra) / one["total_s"] >= TARGET_SWEEP_RATIO or extra <= 0:
        return ""
    bound = (many["total_s"] - extra) / one["total_s"]
    return (" What would reach it: the per-column work still on the host done on the GPU, where cuDSS leaves each "
            "iterate: the data's rank (an SVD of every incidence's load on the scatterer), the combined norms, and "
            "the currents on S' from the trace and flux products (a sparse product on the GPU in place of the host's "
            f"threads); those phases grew by {extra:.2f} s, and without that growth this sweep would be {bound:.2f}x "
            "one incidence (a bound, not a measurement: on the GPU they would not take zero time). The one "
            "incidence it is judged against got faster too (cuDSS, the far field on the GPU).")


def _largest_growth(many: dict, one: dict) -> str:
    """The phase whose seconds grew most from one incidence to all of them, and by how much."""
    grown = sorted(((b - a, name, a, b) for (name, a), (_, b) in zip(_phases(one), _phases(many))), reverse=True)
    total = many["total_s"] - one["total_s"]
    (extra, name, a, b), (extra2, name2, a2, b2) = grown[:2]
    return (f"Where the time went: {name} took {b:.1f} s against {a:.1f} s for one incidence ({extra / total:.0%} of "
            f"the extra time), {name2} {b2:.1f} s against {a2:.1f} s ({extra2 / total:.0%}), on {many['columns']} "
            f"columns against {one['columns']}.")


def _phases(row: dict) -> list[tuple[str, float]]:
    """Seconds per phase, the iterations split into their parts and the rest (rank, bookkeeping)."""
    t, inner = row["seconds"], row["iteration_phases_s"]
    out = [(k, v) for k, v in t.items() if k != "iterations"]
    at = list(t).index("iterations")
    parts = [(f"iterations: {k}", v) for k, v in inner.items()]
    parts.append(("iterations: the rest (data's rank, norms, bookkeeping)", t["iterations"] - sum(inner.values())))
    return out[:at] + parts + out[at:]


def _sweep_section(data: dict) -> list[str]:
    """Per sweep: device, load, and where the time went for one incidence and for all of them."""
    lines = section("Monostatic sweeps: many incidences in one run", [])
    for sweep in data["sweeps"]:
        many, one = sweep["many"], sweep["one"]
        step = 360 / sweep["incidences"]
        cores = sweep.get("host_threads") or data["host_threads"]  # sweeps recorded before they named it
        load = (f"; the host's 1-minute load average before and after each run: "
                f"{' / '.join(f'{v:.1f}' for v in sweep['load_1min'])} on {cores} cores"
                if "load_1min" in sweep else "; host load not recorded")
        lines.append(f"- {sweep['incidences']} incidences (theta = 90, phi every {step:g} degree"
                     f"{'' if step == 1 else 's'}, theta-polarised) on {sweep['device']}, loop {_loop(sweep)} "
                     f"(backend {many['backend']}), "
                     f"linear solver {many['linear_solver']}, run of {sweep['date']}{load}"
                     f"{_warm_up(sweep)}.")
        if not many.get("iteration_phases_s"):
            continue
        phases = [(name, f"{a:.2f}", f"{b:.2f}") for (name, a), (_, b) in zip(_phases(one), _phases(many))]
        lines += ["", *table(["phase", "one incidence s", f"{sweep['incidences']} incidences s"], "lrr", phases),
                  row(["total", f"{one['total_s']:.2f}", f"{many['total_s']:.2f}"])]
        lines.append("")
    return lines


def _almond_table(data: dict) -> list[str]:
    if not data["almond"]:
        return [*section("NASA almond", []), "Not measured in this run: the device time went to the spheres and the "
                "sweep. `paraflux solve resources/problems/nasa-almond.toml` runs the 1.19 GHz cut (19 incidences) "
                "on a CPU in about a minute; the test suite checks its reciprocity."]
    lines = section("NASA almond, monostatic azimuth cut (theta = 90, theta-polarised)", table(
        ["GHz", "order", "loop (backend)", "linear solver", "incidences", "DOFs", "iterations", "mesh s",
         "assembly s", "factorisation s", "iterations s", "total s", "RCS at phi = 0 / 90 / 180 (dBsm)", "run"],
        "rrllrrrrrrrrll"))
    for r in data["almond"]:
        rcs = r["rcs_theta_dbsm"]
        picks = (" / ".join(f"{rcs[i]:.1f}" for i in (0, len(rcs) // 2, -1)) if _monostatic_rcs_valid(r)
                 else f"not shown (computed before the monostatic fix, {MONOSTATIC_FIX})")
        assembly, factorisation = _assembly_and_factorisation(r)
        lines.append(row([f"{r['frequency_ghz']:g}", r["order"], f"{r['loop']} ({r['backend']})", r["linear_solver"],
                          r["incidences"], f"{r['dofs']:,}", r["iterations"], _phase(r, "mesh"), assembly,
                          factorisation, _phase(r, "iterations"), f"{r['total_s']:.1f}", picks,
                          r.get("date", "")]))
    lines.append("")
    if not any(r["frequency_ghz"] == 7.0 for r in data["almond"]):
        lines.append("The 7 GHz cut is not measured: it did not finish inside a device call with the cuda-tiled loop. ")
    lines.append("The independent reference for the almond, bempp-cl's EFIE on the same surface at 1.19 GHz, runs on "
                 "the host in its own benchmark, which judges the target \"the almond example at its defaults within "
                 "1 dB on both polarisations\" ([scattering-peers.md](scattering-peers.md)); the test suite checks the "
                 "almond's reciprocity.")
    return lines


def _emcc_table(data: dict) -> list[str]:
    """The EMCC targets beside the almond: each phase with its device, iterations, peak RCS, the symmetry checks."""
    rows = data.get("emcc", [])
    head = section("EMCC targets, monostatic azimuth cut (theta = 90, theta-polarised)", [])
    if not rows:
        return head + ["Not measured in the runs joined here (`paraflux bench scattering --targets ...`)."]
    cells = []
    for r in rows:
        assembly, factorisation = _assembly_and_factorisation(r)
        devices = r["phase_devices"]
        fore_aft = "" if r["mirror_x_db"] is None else f"{r['mirror_x_db']:.2f}"
        cells.append((r["target"], f"{r['frequency_ghz']:g}", r["order"], f"{r['loop']} ({r['backend']})",
                      r["incidences"], f"{r['dofs']:,}",
                      f"{r['iterations']}{'' if r['converged'] else ' (not converged)'}",
                      _phase(r, "mesh"), assembly, factorisation,
                      f"{_phase(r, 'iterations')} (operator {devices['operator']}, back-substitution "
                      f"{devices['back-substitution']})", _phase(r, "far field"), f"{r['total_s']:.1f}",
                      f"{r['peak_dbsm']:.1f} at {r['peak_phi_deg']:g}", f"{r['mirror_y_db']:.2f}", fore_aft,
                      r["device"]))
    return head + [
        "Each target at its example problem's frequency and settings (resources/problems/<target>.toml: the "
        "paper's lower frequency, order, GMRES, tolerance), its incidences the example's cut, phi = 0 (the tip) "
        "to 180 every 10 degrees, and the mirror half, phi = 360 - each phi between 0 and 180.", "",
        "**No independent reference exists here for these targets: their rows are checked only by symmetry.** "
        "Every body of revolution about x is its own mirror image across y = 0, so the monostatic RCS at phi "
        "must equal that at 360 - phi; the ogive is also its own mirror image across x = 0 (its RCS symmetric "
        "about phi = 90). The columns give the largest |dB| difference between mirrored incidences where either "
        "is within 20 dB of the cut's peak; S', S and the volume mesh are not exactly symmetric, so these "
        "differences measure the discretisation's asymmetry, not an error against the true RCS. Peak: the "
        "largest RCS over phi = 0 to 180.", "",
        *table(["target", "GHz", "order", "loop (backend)", "incidences", "DOFs", "iterations", "mesh s",
                "assembly s", "factorisation s", "iterations s", "far field s", "total s", "peak RCS dBsm (at phi)",
                "mirror y = 0 dB", "mirror x = 0 dB", "device"], "lrrlrrrrrrrrrrrrl", cells)]


def _aircraft_target(rows: list[dict]) -> str:
    """Issue 49's target, judged from the aircraft rows of its size on a GPU (the fastest ratio's device)."""
    head = (f"- Faceted aircraft, {TARGET_AIRCRAFT_INCIDENCES} monostatic incidences in both polarisations in <= "
            f"{TARGET_AIRCRAFT_RATIO:g}x one incidence on one GPU: ")
    judged = [r for r in rows if r["incidences"] == TARGET_AIRCRAFT_INCIDENCES and "no GPU" not in r["device"]]
    if not judged:
        return head + f"{verdict(None)} (no GPU row of {TARGET_AIRCRAFT_INCIDENCES} incidences)."
    r = judged[0]
    ratio = r["many"]["total_s"] / r["one"]["total_s"]
    return (f"{head}{verdict(ratio <= TARGET_AIRCRAFT_RATIO)}, {ratio:.2f}x ({r['many']['total_s']:.1f} s against "
            f"{r['one']['total_s']:.1f} s{_pairs(r)}; {r['frequency_mhz']:g} MHz, {r['many']['dofs']:,} DOFs, on "
            f"{r['device']}, run of {r['date']}).")


def _aircraft_section(data: dict) -> list[str]:
    """The aircraft sweeps: phases of all incidences and of one, their ratio, the RCS's symmetry checks and the
    polar plot of the first row."""
    rows = data.get("aircraft", [])
    head = section("Faceted aircraft: a monostatic sweep in both polarisations", [])
    if not rows:
        return head + ["Not measured in the runs joined here (`paraflux bench scattering --cases aircraft-sweep`)."]
    cells = []
    for r in rows:
        many, one = r["many"], r["one"]
        assembly, factorisation = _assembly_and_factorisation(many)
        mirror = " / ".join(f"{r['mirror_db'][p]:.2f}" for p in ("VV", "HH", "HV", "VH"))
        cells.append((r["device"], f"{r['frequency_mhz']:g}", f"{r['length_wavelengths']:.1f}", r["incidences"],
                      f"{many['dofs']:,}", many["columns"], f"{many['iterations_min']}-{many['iterations']}",
                      _phase(many, "mesh"), assembly, factorisation, _phase(many, "iterations"),
                      _phase(many, "far field"), f"{many['total_s']:.1f}", f"{one['total_s']:.1f}",
                      f"{many['total_s'] / one['total_s']:.2f}", mirror, f"{r['reciprocity_db']:.2f}",
                      f"{reciprocity_to_copolar_db(r['rcs_dbsm']):.1f}", r["date"]))
    first = rows[0]
    return head + [
        "The faceted aircraft (`resources/problems/aircraft.toml`, nose toward +x) lit from the horizon (theta = "
        "90) every 720 / N degrees over 360 degrees, each direction theta- and then phi-polarised (N incidences), "
        "in one run, against one theta-polarised incidence from the nose; each timed as often as the run's "
        "record lists ratios, alternately, the pair of the median ratio shown (on a GPU after a dropped "
        "two-incidence run at a quarter of the frequency, the process's first use of the device). Mirror: the largest |dB| difference of each part between phi and 360 - phi (the "
        "aircraft is its own mirror image across y = 0) where either is within 20 dB of the part's peak; HV vs "
        "VH: the same between the two cross-polarised parts, equal in back-scatter by reciprocity; HV - VH to "
        "the co-polar peak: the largest |sqrt(sigma_HV) - sqrt(sigma_VH)| in dB below the largest amplitude of VV "
        "and HH (a dB difference of parts far below the peak can be large while this is small). Neither is an error against an independent reference: none exists here for this "
        "target.", "",
        *table(["device", "MHz", "wavelengths long", "incidences", "DOFs", "columns", "iterations", "mesh s",
                "assembly s", "factorisation s", "iterations s", "far field s", "total s", "one incidence s",
                "ratio", "mirror VV / HH / HV / VH dB", "HV vs VH dB", "HV - VH to the co-polar peak dB", "run"],
               "lrrrrrrrrrrrrrrlrrl", cells), "",
        f"![Monostatic RCS of the faceted aircraft, both polarisations, against azimuth]({AIRCRAFT_PLOT})", "",
        f"The polar plot: the first row's sweep ({first['incidences']} incidences at {first['frequency_mhz']:g} MHz "
        f"on {first['device']}, run of {first['date']}), phi = 0 (the nose) at the top, dBsm from the centre out."]


def write_figures(data: dict, out_dir) -> list:
    """The spheres' scaling figure (SCALING_PLOT) and the aircraft's polar plot (AIRCRAFT_PLOT) from the first
    aircraft row, in out_dir, where there are rows to draw."""
    scaling = write_scaling_png(Path(out_dir) / SCALING_PLOT, scaling_rows(data["spheres"]))
    return [scaling] * (scaling is not None) + _aircraft_figure(data, out_dir)


def _aircraft_figure(data: dict, out_dir) -> list:
    rows = data.get("aircraft", [])
    if not rows:
        return []
    r = rows[0]
    title = (f"Faceted aircraft, monostatic RCS at θ = 90° against φ (0° at the nose)\n{r['frequency_mhz']:g} MHz "
             f"({r['length_wavelengths']:.1f} wavelengths long), {r['incidences']} incidences\n{r['device']}, "
             f"run of {r['date']}")
    return [write_polar_png(Path(out_dir) / AIRCRAFT_PLOT, r["phi_deg"], r["rcs_dbsm"], title)]


def _devices(rows: list[dict]) -> str:
    return ", ".join(dict.fromkeys(r["device"] for r in rows)) or "none"


def render_markdown(data: dict) -> str:
    lines = [*header("Scattering (FE-IIIEE): PEC spheres against Mie, a monostatic sweep, the NASA almond, the "
                     "other EMCC targets and a faceted aircraft",
                     f"- Device of the latest run: {data['gpu']['device']}", data),
             f"- Runs joined (--merge): {len(data.get('earlier_runs', []))} earlier runs; each sphere row names "
             "its own run (device, commit, date) in its table, the other rows their device and date; the JSON's "
             "earlier_runs holds every run's command.",
             f"- Where each part ran: spheres on {_devices(data['spheres'])}; sweeps as each says; almond on "
             f"{_devices(data['almond'])}; EMCC targets on {_devices(data.get('emcc', []))}. Loop cpu-s runs the "
             "operator on the host's cores; zgemm runs it by cuBLAS where "
             "its run's backend is cupy, by the host's BLAS where it is numpy.",
             "- Times: wall clock per phase of one run, one run each (mesh: the surfaces (gmsh; the larger spheres' "
             "scatterer a geodesic sphere since 2026-11-28) and the volume (gmsh; in prism layers where S' and S "
             "share the scatterer's triangulation, the larger spheres since 2026-11-28); assembly: the FEM "
             "matrix's blocks (on the GPU where the factorisation is, from 2026-11-28 built there from the element "
             "entries; else NumPy on the host), the surface traces and mass matrices on the host; factorisation: the free "
             "block's, by the row's linear solver on the device named (cuDSS on the GPU; UMFPACK, PARDISO or "
             "SuperLU on the host); iterations: block back-substitution on the factorisation's device and the "
             "truncation operator by the named loop; far field: on the host). The first row of a run also pays "
             "the process's one-time start-up (CuPy's kernel compiles, loading cuDSS). Rows dated before "
             "2026-11-27 factorised on the host and timed assembly and factorisation together.",
             "- Error: largest |dB| difference from the Mie series in the E-plane (sigma_theta, phi = 0) and the "
             "H-plane (sigma_phi, phi = 90), every 2 degrees, where Mie is within 20 dB of its peak (issue 43's "
             f"measure; above about 6 wavelengths that is the forward lobe alone) and within {WINDOW_DB:g} dB; the "
             "backscatter's error; the relative L2 error of the far-field amplitude over the sphere of directions "
             "(theta every 2 and phi every 10 degrees, weighted by sin theta; the phase is not compared). The JSON "
             "keeps every direction's RCS of the rows measured since."]
    return page(lines + _sphere_table(data) + _targets(data) + _sweep_section(data) + _almond_table(data)
                + _emcc_table(data) + _aircraft_section(data))
