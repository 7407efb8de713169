"""The PEC spheres of `bench scattering` against their size: the GPU rows at the default order drawn as time
per phase and memory against diameter, and a model on paper of larger spheres fitted to them (each phase's
seconds and the factor's bytes as a power of the unknowns, the unknowns as a power of the diameter),
labelled as a model, never as a measurement."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..output import replace_atomically

PHASES = ("mesh", "assembly", "factorisation", "iterations", "far field")
FIT_FROM = 8.0  # wavelengths: smaller spheres are dominated by fixed costs (a run's first row pays its start-up)
MODEL_DIAMETERS = (50.0, 100.0)
MODEL_GPUS, MODEL_NODES = 8, 2  # the several-GPU model: 8 GPUs, as one node and as 2 nodes of 4
GPU_MEMORY_BYTES = 80e9  # one H100's
BYTES_PER_VALUE = 16  # complex128


def scaling_rows(spheres: list[dict], order: int = 2) -> list[dict]:
    """The spheres' GPU rows (operator cuda-tiled, GMRES) at this order, one per diameter (its latest run),
    by diameter: one loop, so that the fit follows the size, not a change of loop (cuda-tiled-fp32 rows are
    in the table beside them)."""
    rows = {}
    for r in spheres:
        if r["loop"] == "cuda-tiled" and r["acceleration"] == "gmres" and r["order"] == order:
            if r["diameter_wavelengths"] not in rows or r.get("date", "") > rows[r["diameter_wavelengths"]].get("date", ""):
                rows[r["diameter_wavelengths"]] = r
    return [rows[d] for d in sorted(rows)]


@dataclass(frozen=True)
class PowerLaw:
    """y = coefficient * x ** exponent, fitted by least squares on logarithms."""

    coefficient: float
    exponent: float

    def __call__(self, x):
        return self.coefficient * np.asarray(x, dtype=float) ** self.exponent


def power_law(x, y) -> PowerLaw | None:
    """The least-squares power law through (x, y) (n,) positive; None with fewer than two points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = (x > 0) & (y > 0)
    if keep.sum() < 2:
        return None
    exponent, log_c = np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)
    return PowerLaw(float(np.exp(log_c)), float(exponent))


def _factor_bytes(r: dict) -> float:
    return float(r.get("factor", {}).get("peak_device_bytes") or 0.0)


def _law(fitted: list[dict], value) -> PowerLaw | None:
    """value(row) as a power of the rows' unknowns (power_law)."""
    return power_law([r["dofs"] for r in fitted], [value(r) for r in fitted])


def _currents_mb(fitted: list[dict], dofs: float) -> float:
    """The operator's input per iteration and right-hand side at this many unknowns, MB: J and M on S' (6
    complex values a quadrature point), S' points fitted to the rows' own counts; NaN where they have none."""
    points = _law(fitted, lambda r: r.get("sprime_points", 0))
    return float("nan") if points is None else 6 * BYTES_PER_VALUE * float(points(dofs)) / 1e6


def model_lines(rows: list[dict]) -> list[str]:
    """Markdown bullets: the fitted growth and what it predicts at MODEL_DIAMETERS (seconds per phase on one
    GPU, the factor's memory and how many GPUs hold it, the operator's data per iteration)."""
    fitted = [r for r in rows if r["diameter_wavelengths"] >= FIT_FROM]
    if len(fitted) < 2:
        return ["- Model: fewer than two GPU rows of at least "
                f"{FIT_FROM:g} wavelengths at this order; nothing to fit."]
    d = [r["diameter_wavelengths"] for r in fitted]
    dofs = power_law(d, [r["dofs"] for r in fitted])
    laws = {name: _law(fitted, lambda r, name=name: r["seconds"].get(name, 0.0)) for name in PHASES}
    factor = _law(fitted, _factor_bytes)
    commits = list(dict.fromkeys(r.get("commit", "?") for r in fitted))
    span = f"{min(d):g} to {max(d):g} wavelengths, {len(fitted)} rows" + (
        f" of {len(commits)} versions of the code ({', '.join(commits)}: the growth mixes their changes)"
        if len(commits) > 1 else "")
    lines = [f"- Model, not a measurement: fitted to the GPU rows of order {fitted[0]['order']} from {span}. "
             f"Unknowns grow as diameter^{dofs.exponent:.2f} (the meshed shell is thin: its volume grows as the "
             "area); " + ", ".join(f"{name} as unknowns^{law.exponent:.2f}" for name, law in laws.items() if law)
             + (f"; cuDSS's factor as unknowns^{factor.exponent:.2f}" if factor else "") + "."]
    for diameter in MODEL_DIAMETERS:
        n = float(dofs(diameter))
        seconds = {name: float(law(n)) for name, law in laws.items() if law}
        memory = float(factor(n)) if factor else float("nan")
        gpus = int(np.ceil(memory / GPU_MEMORY_BYTES)) if factor else 0
        lines.append(
            f"- Model at {diameter:g} wavelengths: {n / 1e6:.0f} M unknowns; on one GPU, as measured code scales: "
            + ", ".join(f"{name} {s:,.0f} s" for name, s in seconds.items())
            + f" (total {sum(seconds.values()):,.0f} s); factor {memory / 1e9:,.0f} GB, at least {gpus} GPUs of "
            f"80 GB to hold it (cuDSS's multi-GPU mode, not measured here)." + _traffic(fitted, n))
    return lines


def operator_efficiency(spheres: list[dict]) -> tuple[float, dict] | None:
    """The operator's measured speedup per GPU: the multi-gpu-tiled row with the most GPUs against the one-GPU
    cuda-tiled row of the same (recorded) commit, diameter and order ((one-GPU seconds / its seconds) / its
    GPUs, that row); None where no such pair was measured."""
    def operator_s(r: dict) -> float:
        return float(r.get("iteration_phases_s", {}).get("operator", 0.0))

    pairs = []
    for many in (r for r in spheres if r["loop"] == "multi-gpu-tiled" and r.get("commit") and operator_s(r) > 0):
        one = next((r for r in spheres if r["loop"] == "cuda-tiled" and r.get("commit") == many["commit"]
                    and r["diameter_wavelengths"] == many["diameter_wavelengths"] and r["order"] == many["order"]
                    and operator_s(r) > 0), None)
        gpus = int(many["device"].split(" x ")[0]) if " x " in many["device"] else 1
        if one is not None and gpus > 1:
            pairs.append((gpus, operator_s(one) / operator_s(many) / gpus, many))
    if not pairs:
        return None
    _, efficiency, row = max(pairs, key=lambda p: p[0])
    return efficiency, row


def several_gpu_lines(rows: list[dict], spheres: list[dict]) -> list[str]:
    """Markdown bullets: the model at MODEL_DIAMETERS on MODEL_GPUS GPUs, in one node and over MODEL_NODES:
    memory per unknown and per GPU, time per phase (the operator divided as measured on several GPUs, the other
    phases as they run today, on one GPU or the host), what crosses the network each iteration."""
    fitted = [r for r in rows if r["diameter_wavelengths"] >= FIT_FROM and r.get("iteration_phases_s")]
    measured = operator_efficiency(spheres)
    if len(fitted) < 2 or measured is None:
        return [f"- Model on {MODEL_GPUS} GPUs: needs two GPU rows of at least {FIT_FROM:g} wavelengths and a "
                "multi-gpu-tiled row beside a one-GPU row of its run (with the operator's time); not both "
                "measured."]
    efficiency, row = measured
    dofs = power_law([r["diameter_wavelengths"] for r in fitted], [r["dofs"] for r in fitted])
    operator = _law(fitted, lambda r: r["iteration_phases_s"]["operator"])
    rest = _law(fitted, lambda r: r["seconds"]["iterations"] - r["iteration_phases_s"]["operator"])
    others = {name: _law(fitted, lambda r, name=name: r["seconds"].get(name, 0.0))
              for name in PHASES if name != "iterations"}
    factor, host = _law(fitted, _factor_bytes), _law(fitted, lambda r: r.get("host_peak_bytes", 0))
    lines = [f"- Model on {MODEL_GPUS} GPUs, not a measurement: the operator divided by {MODEL_GPUS} x "
             f"{efficiency:.2f}, the efficiency per GPU measured on {row['device']} ({row['diameter_wavelengths']:g} "
             f"wavelengths, commit {row.get('commit', '?')}); every other phase as it runs today (the mesh and the "
             "host's share of the assembly on the host, the factorisation and back-substitutions on one GPU: "
             "cuDSS's multi-GPU and multi-node modes are not measured)."]
    for diameter in MODEL_DIAMETERS:
        n = float(dofs(diameter))
        seconds = {name: float(law(n)) for name, law in others.items() if law}
        seconds["iterations"] = (float(operator(n)) / (MODEL_GPUS * efficiency) if operator else 0.0) + (
            float(rest(n)) if rest else 0.0)
        currents = _currents_mb(fitted, n)
        factor_n, host_n = (float(law(n)) if law else float("nan") for law in (factor, host))
        per_gpu = factor_n / MODEL_GPUS
        lines.append(
            f"- Model at {diameter:g} wavelengths on {MODEL_GPUS} GPUs: "
            + ", ".join(f"{name} {s:,.0f} s" for name, s in seconds.items())
            + f" (total {sum(seconds.values()):,.0f} s); memory per unknown: factor {_bytes(factor_n / n)}, "
            f"host {_bytes(host_n / n)} (the process's peak); {_per_gpu(per_gpu)}. Over "
            f"{MODEL_NODES} nodes of {MODEL_GPUS // MODEL_NODES} GPUs, each iteration and right-hand side sends J "
            f"and M on S' ({currents:,.0f} MB) to the other node, which returns E at its half of S's points (S has "
            f"as many as S': {currents / 4:,.0f} MB); the factorisation's own traffic over the nodes (cuDSS's "
            "multi-node mode) is not modelled.")
    return lines


def _per_gpu(per_gpu: float) -> str:
    if not np.isfinite(per_gpu):
        return "the factor per GPU not modelled (no factor in the rows)"
    return (f"the factor {per_gpu / 1e9:,.0f} GB per GPU if spread evenly "
            f"({'within' if per_gpu <= GPU_MEMORY_BYTES else 'more than'} an 80 GB GPU)")


def _bytes(value: float) -> str:
    return f"{value:,.0f} B" if np.isfinite(value) else "not recorded in the rows"


def _traffic(fitted: list[dict], dofs: float) -> str:
    """The sentence on the operator's input per iteration and right-hand side (_currents_mb); none without
    S' points in the rows."""
    megabytes = _currents_mb(fitted, dofs)
    if not np.isfinite(megabytes):
        return ""
    return (f" The operator's input per iteration and right-hand side, the currents on S', is {megabytes:,.0f} MB: "
            "split by points over several GPUs, every GPU receives all of it and returns its share of the fields on "
            "S; across nodes that crosses the network once an iteration.")


def write_scaling_png(path: Path, rows: list[dict]) -> Path | None:
    """Seconds per phase and memory against diameter for rows (scaling_rows), as a PNG at path; None without
    two rows."""
    if len(rows) < 2:
        return None
    import matplotlib  # noqa: PLC0415 (only when a figure is written)

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415

    d = [r["diameter_wavelengths"] for r in rows]
    figure = Figure(figsize=(10, 4.2), layout="constrained")
    times, memory = figure.subplots(1, 2)
    for name in PHASES:
        times.loglog(d, [max(r["seconds"].get(name, 0.0), 1e-3) for r in rows], "o-", label=name)
    times.loglog(d, [r["total_s"] for r in rows], "k.-", lw=2, label="total")
    times.set(xlabel="sphere diameter (wavelengths)", ylabel="seconds", title="Time per phase, one GPU")
    times.legend(fontsize=8)
    memory.loglog(d, [_factor_bytes(r) / 2**30 or np.nan for r in rows], "o-", label="factor on the GPU (cuDSS)")
    memory.loglog(d, [r.get("host_peak_bytes", np.nan) / 2**30 for r in rows], "s-", label="host peak (process)")
    memory.set(xlabel="sphere diameter (wavelengths)", ylabel="GiB", title="Memory")
    memory.legend(fontsize=8)
    for axes in (times, memory):  # the diameters measured as plain numbers, not powers of ten
        axes.set_xticks(d, [f"{x:g}" for x in d], minor=False)
        axes.set_xticks([], minor=True)
    devices = ", ".join(dict.fromkeys(r["device"] for r in rows))
    figure.suptitle(f"PEC spheres, order {rows[0]['order']}, on {devices}", fontsize=10)
    return replace_atomically(Path(path), lambda tmp: figure.savefig(tmp, format="png", dpi=110))
