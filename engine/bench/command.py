"""`paraflux bench NAME`: a parser per benchmark of the registry, holding that benchmark's own options (declared in
its module), then the run (or a re-render of earlier results), the join of an earlier run and the writing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ..backend import get_backend
from ..cli_edge import OneLineParser
from ..errors import ProblemError
from ..output import write_json
from .environment import cut_short
from .registry import BENCHMARKS


class BenchParser(OneLineParser):
    """`paraflux bench NAME`'s parser: its benchmark's own options are added when it is first used (to parse or
    to show its help), so that the command line does not import every benchmark module to start; arguments
    left over are refused here, naming this benchmark's help."""

    def __init__(self, *args, benchmark=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.benchmark = benchmark

    def _own_options(self) -> None:
        if self.benchmark is not None:
            benchmark, self.benchmark = self.benchmark, None
            benchmark.add_arguments(self)

    def parse_known_args(self, args=None, namespace=None):
        self._own_options()
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed, extra

    def format_help(self) -> str:
        self._own_options()
        return super().format_help()

    def format_usage(self) -> str:
        self._own_options()
        return super().format_usage()


def add_bench_parser(sub, debug, folder) -> None:
    """`paraflux bench NAME` under the command line's subcommands (sub), one per entry of the benchmark
    registry, each with its own options; debug: the parent parser of --debug; folder: the --out type."""
    bench = sub.add_parser("bench", parents=[debug], help="run a benchmark and write docs/benchmarks/",
                           description="Run a benchmark (on the GPU where it needs one) and write its JSON and "
                                       "Markdown; `paraflux bench NAME --help` lists NAME's own options.")
    names = bench.add_subparsers(dest="name", required=True, metavar="NAME", parser_class=BenchParser)
    for b in BENCHMARKS.values():
        one = names.add_parser(b.name, parents=[debug], help=b.title, description=f"{b.name}: {b.title}.",
                               benchmark=b)
        one.add_argument("--out", type=folder, default=Path("docs/benchmarks"),
                         help="output folder (default docs/benchmarks)")
        one.add_argument("--render", type=Path, metavar="RESULTS.json",
                         help="only re-render the Markdown from this JSON")
    bench.set_defaults(func=run_command)


def read_json(path: Path, what: str) -> dict:
    """A benchmark results file (NaN, Infinity, numbers that overflow a double and integers beyond int64
    refused: no benchmark result holds them)."""
    try:
        return json.loads(Path(path).read_text(), parse_constant=_refuse_non_finite, parse_float=_finite_float,
                          parse_int=_int64)
    except (OSError, ValueError, RecursionError) as exc:
        reason = "arrays or objects nested too deeply" if isinstance(exc, RecursionError) else exc
        raise ProblemError(f"cannot read {what} {path}: {reason}") from None


def _refuse_non_finite(name: str):
    """json.loads' hook for NaN and Infinity."""
    raise ValueError(f"it holds {name}, not a finite number")


def _finite_float(text: str) -> float:
    """json.loads' hook for numbers with a fraction or exponent: 1e999 is refused, not read as infinity."""
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"it holds {text[:20]}, beyond double precision")
    return value


def _int64(text: str) -> int:
    """json.loads' hook for integers: at most int64's range (also spares Python's 4,300-digit limit)."""
    if len(text.lstrip("-")) > 19 or abs(int(text)) > 2**63 - 1:
        raise ValueError(f"it holds the integer {text[:20]}{'...' if len(text) > 20 else ''}, beyond int64")
    return int(text)


def _run(bench, args) -> list[Path]:
    """Run the benchmark with its own options (on the GPU where it needs one; a partial JSON kept in --out while
    it runs), join --merge, write."""
    if bench.needs_gpu:
        get_backend("cupy")  # a clear error when no GPU is usable
    args.out.mkdir(parents=True, exist_ok=True)
    partial = args.out / f"{bench.file_name(args)}.partial.json"  # finished parts survive a run cut short
    data = bench.run(args, ["paraflux", *sys.argv[1:]], lambda m: print(m, flush=True),
                     lambda d: write_json(partial, cut_short(d)))
    partial.unlink(missing_ok=True)
    merge = getattr(args, "merge", None)  # declared by the benchmarks that join earlier runs
    if merge:
        data = _merged(bench, data, merge)
    elif bench.is_raw_only(args):  # rendered once joined with the other part (--merge)
        write_json(args.out / f"{bench.file_name(args)}.json", data)
        return [args.out / f"{bench.file_name(args)}.json"]
    return bench.write(data, args.out)


def _merged(bench, data: dict, merge: Path | None) -> dict:
    """data joined with the earlier results in the file merge (None: data as it is)."""
    if not merge:
        return data
    try:
        return bench.merge(data, read_json(merge, "results to merge"))
    except (ValueError, KeyError) as exc:
        raise ProblemError(f"cannot merge {merge}: {exc}") from None


def run_command(args) -> int:
    """`paraflux bench NAME [options]`: run NAME, or re-render its results (--render); prints what it wrote."""
    bench = BENCHMARKS[args.name]
    if args.render:
        data = read_json(args.render, "benchmark results")
        if not isinstance(data, dict) or data.get("benchmark") != args.name:
            found = data.get("benchmark") if isinstance(data, dict) else type(data).__name__
            raise ProblemError(f"{args.render} holds '{found}' results, not '{args.name}'")
        data = _merged(bench, data, getattr(args, "merge", None))
        try:
            written = bench.write(data, args.out)
        except (KeyError, TypeError, AttributeError, IndexError, ValueError, ArithmeticError, StopIteration) as exc:
            raise ProblemError(f"{args.render} is not a complete '{args.name}' results file (at {exc!r})") from None
    else:
        written = _run(bench, args)
    for path in written:
        print(f"wrote {path}")
    return 0
