"""The one list of benchmarks, read by `paraflux bench`: each names the module that declares its own options
and runs it, and the module that renders its JSON to Markdown. A benchmark module runs and measures; its
*_report module renders; only this file joins the two."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Callable

from . import environment


@dataclass(frozen=True)
class Benchmark:
    """`paraflux bench NAME`: module (under engine.bench) declares its options (add_arguments(parser)), runs it
    (run(args, command, log, checkpoint) -> results dict) and joins an earlier run's results to a new one's
    (merge(data, earlier), where it declares --merge); report renders the results (render_markdown); title: its
    line in `paraflux bench --help`; needs_gpu: refused without a usable GPU (sweeps time host workers too, and
    record GPU counts the machine lacks as not run; scattering runs its CPU rows); renamed: the options its
    recorded commands may name that are now called otherwise (old name, new name). A module's raw_only(args),
    where it has one, says when the JSON alone is written (a part to be joined with --merge)."""

    name: str
    module: str
    report: str
    title: str
    needs_gpu: bool = True
    renamed: tuple[tuple[str, str], ...] = ()

    def _module(self, name: str):
        return import_module(f"{__package__}.{name}")

    def add_arguments(self, parser) -> None:
        self._module(self.module).add_arguments(parser)

    def run(self, args, command: list[str], log: Callable[[str], None], checkpoint: Callable[[dict], None]) -> dict:
        return self._module(self.module).run(args, command, log, checkpoint)

    def render(self, data: dict) -> str:
        return self._module(self.report).render_markdown(data)

    def merge(self, data: dict, earlier: dict) -> dict:
        return self._module(self.module).merge(data, earlier)

    def is_raw_only(self, args) -> bool:
        raw_only = getattr(self._module(self.module), "raw_only", None)
        return raw_only is not None and raw_only(args)

    def file_name(self, args) -> str:
        return f"{self.name}-multi-gpu" if self.is_raw_only(args) else self.name

    def write(self, data: dict, out_dir: Path) -> list[Path]:
        """out_dir/<name>.json and <name>.md, rendered before anything is written, then the figures its page
        links (the report module's write_figures(data, out_dir) -> paths, where it has one)."""
        written = environment.write_results(data, out_dir, self.name, self.render)
        figures = getattr(self._module(self.report), "write_figures", None)
        return written + (figures(data, out_dir) if figures else [])


_SIZES = "--sizes"  # before each benchmark had its own options, one option set served all (issue 44)

BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark("ebe", "ebe", "ebe_report", "EBE-J-PCG on the GPU against CPU and CSR solvers (paper 000)",
              renamed=((_SIZES, "--elements"),)),
    Benchmark("coloring", "coloring", "coloring_report", "element colouring methods and coloured accumulation "
              "(paper 002)", renamed=((_SIZES, "--elements"),)),
    Benchmark("hex", "hex", "hex_report", "element matrices of hierarchical hexahedra, p = 1 to 10 (paper 004)",
              renamed=((_SIZES, "--elements"),)),
    Benchmark("fmm", "fmm", "fmm_report", "the Laplace FMM's M2L schemes against FMM3D and the direct sum "
              "(paper 001)", renamed=((_SIZES, "--points"),)),
    Benchmark("truncation", "truncation", "truncation_report", "the FE-IIIEE truncation operator's loops on CPU "
              "threads and GPUs (paper 003)", renamed=((_SIZES, "--triangles"),)),
    Benchmark("fmbem", "fmbem", "fmbem_report", "FMBEM elastostatics on the bracket, Tables 1-4 (paper 001)",
              renamed=((_SIZES, "--dofs"),)),
    Benchmark("scattering", "scattering", "scattering_report", "PEC spheres against Mie, a monostatic sweep, the "
              "NASA almond, the EMCC targets, the faceted aircraft's 1000 incidences", needs_gpu=False,
              renamed=((_SIZES, "--diameters"), ("--rhs", "--incidences"))),
    Benchmark("scattering-peers", "scattering_peers", "scattering_peers_report", "the NASA almond and the EMCC "
              "ogive, double ogive and cone-sphere against bempp-cl's EFIE, both polarisations (host)", needs_gpu=False, renamed=((_SIZES, "--triangles"),)),
    Benchmark("scattering-ngsolve", "scattering_ngsolve", "scattering_ngsolve_report", "the PEC sphere against "
              "NGSolve at equal error (the study on a GPU where there is one, NGSolve on the host threads)", needs_gpu=False, renamed=((_SIZES, "--diameters"),)),
    Benchmark("scattering-linear", "scattering_linear", "scattering_linear_report", "the sparse direct solvers on "
              "the scattering study's matrix (host)", needs_gpu=False, renamed=((_SIZES, "--diameter"),)),
    Benchmark("sweeps", "sweeps", "sweeps_report", "a frequency sweep on Dask: host workers and GPUs",
              needs_gpu=False, renamed=((_SIZES, "--workers"), ("--orders", "--gpus"), ("--rhs", "--frequencies"))),
)}
