"""The one list of benchmarks, read by `paraflux bench`: each names how the command line's options make its
configuration, how it runs, how its JSON renders to Markdown and how an earlier run's JSON joins a new one.
A benchmark module runs and measures; its *_report module renders; only this file joins the two."""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import import_module
from pathlib import Path
from typing import Callable

from . import environment


@dataclass(frozen=True)
class BenchOptions:
    """What the command line passes: sizes (point, element, triangle or DOF counts, by benchmark), orders,
    right-hand-side counts, repeats, the several-GPU-only flag and frequencies in GHz; empty or None: the
    benchmark's default."""

    sizes: tuple[int, ...] = ()
    orders: tuple[int, ...] = ()
    rhs: tuple[int, ...] = ()
    repeats: int | None = None
    multi_gpu_only: bool = False
    ghz: tuple[float, ...] = ()


@dataclass(frozen=True)
class Benchmark:
    """run(options, command, log, checkpoint) -> results dict; module/report: the modules (under
    engine.bench) that run it and render it (report's render_markdown); merge(data, earlier) joins an
    earlier run's results; needs_gpu: refused without a usable GPU (sweeps
    time host workers too, and record GPU counts the machine lacks as not run; scattering runs its CPU rows); raw_only(options): write the JSON alone (a part to be joined with --merge)."""

    name: str
    module: str
    report: str
    run: Callable[..., dict]
    merges: bool = False
    needs_gpu: bool = True
    raw_only: Callable[[BenchOptions], bool] = lambda options: False

    def _module(self, name: str):
        return import_module(f"{__package__}.{name}")

    def render(self, data: dict) -> str:
        return self._module(self.report).render_markdown(data)

    def merge(self, data: dict, earlier: dict) -> dict:
        return self._module(self.module).merge(data, earlier)

    def file_name(self, options: BenchOptions) -> str:
        return f"{self.name}-multi-gpu" if self.raw_only(options) else self.name

    def write(self, data: dict, out_dir: Path) -> list[Path]:
        """out_dir/<name>.json and <name>.md, rendered before anything is written."""
        return environment.write_results(data, out_dir, self.name, self.render)


def _with(config, **changes):
    """config with the changes whose value was given (not empty, not None)."""
    return replace(config, **{k: v for k, v in changes.items() if v not in ((), None)})


def _ebe(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import ebe  # noqa: PLC0415

    return ebe.run_ebe_benchmark(_with(ebe.EbeBenchConfig(), sizes=o.sizes, repeats=o.repeats), command, log)


def _coloring(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import coloring  # noqa: PLC0415

    meshes = tuple(("transformer", n) for n in o.sizes)
    return coloring.run_coloring_benchmark(_with(coloring.ColoringBenchConfig(), meshes=meshes, repeats=o.repeats),
                                           command, log)


def _hex(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import hex as hex_bench  # noqa: PLC0415

    config = _with(hex_bench.HexBenchConfig(), orders=o.orders, elements=o.sizes[0] if o.sizes else None,
                   repeats=o.repeats)
    return hex_bench.run_hex_benchmark(config, command, log)


def _fmm(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import fmm  # noqa: PLC0415

    config = _with(fmm.FmmBenchConfig(), sizes=o.sizes, orders=o.orders, repeats=o.repeats)
    if o.orders == (0,):  # --orders 0: the peers at 1e-6 alone (the scheme runs kept from --merge)
        config = replace(config, orders=())
    return fmm.run_fmm_benchmark(config, command, log)


def _fmbem(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import fmbem  # noqa: PLC0415

    config = fmbem.FmbemBenchConfig()
    if o.sizes:  # Table 4 at these sizes only, unless orders asks for Tables 1-3 too
        config = replace(config, dofs=o.sizes, orders=o.orders)
    elif o.orders:  # Tables 1-3 at these orders only
        config = replace(config, orders=o.orders, dofs=())
    return fmbem.run_fmbem_benchmark(config, command, log, checkpoint)


def _truncation(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import truncation  # noqa: PLC0415

    config = _with(truncation.TruncationBenchConfig(multi_gpu_only=o.multi_gpu_only), outer_elements=o.sizes,
                   rhs=o.rhs, repeats=o.repeats)
    return truncation.run_truncation_benchmark(config, command, log, checkpoint)


def _scattering(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import scattering  # noqa: PLC0415

    config = _with(scattering.ScatteringBenchConfig(), diameters=tuple(float(s) for s in o.sizes), orders=o.orders,
                   sweep_incidences=o.rhs[0] if o.rhs else None,  # --sizes: diameters in wavelengths (0: none)
                   almond_ghz=o.ghz)  # --ghz 0: no almond
    return scattering.run_scattering_benchmark(config, command, log, checkpoint)


def _sweeps(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import sweeps  # noqa: PLC0415

    config = _with(sweeps.SweepsBenchConfig(), host_workers=o.sizes, gpus=o.orders,
                   frequencies=o.rhs[0] if o.rhs else None)  # --sizes host workers (0: one per core), --orders GPUs
    return sweeps.run_sweeps_benchmark(config, command, log, checkpoint)


def _scattering_peers(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import scattering_peers  # noqa: PLC0415

    config = _with(scattering_peers.PeersBenchConfig(), triangles=o.sizes[0] if o.sizes else None)
    return scattering_peers.run_peers_benchmark(config, command, log, checkpoint)


def _scattering_ngsolve(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import scattering_ngsolve  # noqa: PLC0415

    config = _with(scattering_ngsolve.NgsolveBenchConfig(), diameters=tuple(float(s) for s in o.sizes),
                   paraflux_orders=o.orders)  # --sizes: diameters in wavelengths, --orders: the study's orders
    return scattering_ngsolve.run_ngsolve_benchmark(config, command, log, checkpoint)


def _scattering_linear(o: BenchOptions, command, log, checkpoint) -> dict:
    from . import scattering_linear  # noqa: PLC0415

    config = _with(scattering_linear.LinearBenchConfig(), diameter=float(o.sizes[0]) if o.sizes else None,
                   orders=o.orders, rhs=o.rhs, repeats=o.repeats)  # --sizes: the diameter in wavelengths
    return scattering_linear.run_linear_benchmark(config, command, log, checkpoint)


BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark("ebe", "ebe", "ebe_report", _ebe),
    Benchmark("coloring", "coloring", "coloring_report", _coloring),
    Benchmark("hex", "hex", "hex_report", _hex, merges=True),
    Benchmark("fmm", "fmm", "fmm_report", _fmm, merges=True),
    Benchmark("truncation", "truncation", "truncation_report", _truncation, merges=True,
              raw_only=lambda o: o.multi_gpu_only),
    Benchmark("fmbem", "fmbem", "fmbem_report", _fmbem, merges=True),
    Benchmark("scattering", "scattering", "scattering_report", _scattering, merges=True, needs_gpu=False),
    Benchmark("scattering-peers", "scattering_peers", "scattering_peers_report", _scattering_peers,
              needs_gpu=False),
    Benchmark("scattering-ngsolve", "scattering_ngsolve", "scattering_ngsolve_report", _scattering_ngsolve,
              needs_gpu=False),
    Benchmark("scattering-linear", "scattering_linear", "scattering_linear_report", _scattering_linear,
              needs_gpu=False),
    Benchmark("sweeps", "sweeps", "sweeps_report", _sweeps, merges=True, needs_gpu=False),
)}
