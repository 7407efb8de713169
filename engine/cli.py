"""The `paraflux` command line: list cases and studies, solve problem files; options come from the study registry."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import textwrap
import time
import warnings

import numpy as np
from dataclasses import replace
from pathlib import Path

from .cli_edge import EXIT_CODES, NUMERICS, OneLineParser, outcome, quiet_closed_pipe, raise_on_sigterm
from .errors import Cancelled, ProblemError
from .variants import BACKEND, COLORING, RTOL


class ProgressBar:
    """progress(fraction, message) sink on stderr: a redrawn bar on a terminal, one line per phase otherwise."""

    def __init__(self, stream=None, enabled: bool = True):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.last_draw = 0.0
        self.last_phase = None

    def __call__(self, fraction: float, message: str) -> None:
        if not self.enabled:
            return
        if self.tty:
            now = time.monotonic()
            if now - self.last_draw < 0.1 and fraction < 1.0:
                return
            self.last_draw = now
            filled = int(30 * fraction)
            line = f"\r[{'#' * filled}{'.' * (30 - filled)}] {100 * fraction:3.0f}% {message}"
            self.stream.write(line[:119].ljust(119) + ("\n" if fraction >= 1.0 else ""))
            self.stream.flush()
        else:
            phase = message.split(" iteration")[0]
            if phase != self.last_phase:
                self.last_phase = phase
                print(f"[{100 * fraction:3.0f}%] {message}", file=self.stream, flush=True)


def _cmd_cases(args) -> int:
    from .studies.registry import all_cases  # noqa: PLC0415

    for _, case in all_cases():
        print(f"{case.name:13s} {case.label:13s} {case.title}")
        print(f"{'':13s} {case.description}")
    return 0


def _cmd_studies(args) -> int:
    """Every study (or the one named) with its variant axes and parameters: the options `paraflux solve` takes
    for its problems."""
    from .studies import STUDIES  # noqa: PLC0415

    for study in [STUDIES[args.study]] if args.study else STUDIES.values():
        print(f"{study.name}: {study.title} (problem kind '{study.problem_kind}')")
        for axis in study.axes:
            names = ", ".join(c.name + (" [GPU]" if c.needs_gpu else "") for c in axis.choices)
            used = f" (used only with --{axis.applies_when[0]} {axis.applies_when[1]})" if axis.applies_when else ""
            print(f"  {axis.option} {{{names}}} default {axis.default}{used}")
        for parameter in study.parameters:
            print(f"  {parameter.option} {parameter.minimum:g}..{parameter.maximum:g} default {parameter.default:g}: "
                  f"{parameter.description}")
    return 0


def _load(args):
    from .problems import load_case_problem, load_problem, parse_problem, problem_as_dict  # noqa: PLC0415

    if (args.problem is None) == (args.case is None):
        raise ProblemError("give either a problem file or --case NAME (see 'paraflux cases')")
    problem = load_problem(args.problem) if args.problem else load_case_problem(args.case)
    if args.size is not None:
        if problem.case is None:
            raise ProblemError("--size applies to built-in cases only; this problem reads a mesh file")
        try:  # the problem file's own checks of [case] elements
            problem = parse_problem(problem_as_dict(replace(problem, case_elements=args.size)), Path.cwd())
        except ProblemError as exc:
            raise ProblemError(f"--size {args.size}: {exc}") from None
        if problem.case_elements != args.size:  # a study whose cases are not sized by an element count
            raise ProblemError(f"--size does not apply to {problem.kind} problems")
    return problem


def _cmd_solve(args) -> int:
    from .problems.toml_input import check_iterations  # noqa: PLC0415
    from .run_control import RunControl  # noqa: PLC0415
    from .studies import STUDIES, study_for_kind  # noqa: PLC0415

    problem = _load(args)
    study = study_for_kind(problem.kind)
    variants = {axis.name: getattr(args, axis.name) for axis in study.axes
                if getattr(args, axis.name, None) is not None}
    for parameter in study.parameters:
        if parameter.name != "rtol" and getattr(args, parameter.name, None) is not None:
            variants[parameter.name] = getattr(args, parameter.name)
    own = {a.name for a in study.axes} | {p.name for p in study.parameters}
    other = [x.name for s in STUDIES.values() for x in (*s.axes, *s.parameters)
             if x.name not in own and getattr(args, x.name, None) is not None]
    if other:
        raise ProblemError(f"--{other[0].replace('_', '-')} does not apply to {study.title} problems")
    problem = study.with_variants(problem, variants)
    if args.rtol is not None:
        RTOL.check(args.rtol)
    check_iterations(args.max_iterations, "--max-iterations")
    if args.check_every is not None and problem.kind != "magnetostatic":
        raise ProblemError("--check-every applies to the magnetostatic study's GPU solver (EBE-J-PCG)")
    if args.check_every is not None and (args.check_every < 2 or args.check_every % 2):
        raise ProblemError(f"--check-every must be an even number of at least 2, got {args.check_every}")
    if args.out.exists() and not args.out.is_dir():
        raise ProblemError(f"--out {args.out} exists and is not a folder")
    problem = problem.with_solver(rtol=args.rtol, max_iterations=args.max_iterations,
                                  check_every=args.check_every)
    if args.devices is not None:
        if problem.kind != "truncation":
            raise ProblemError("--devices applies to the truncation study's multi-gpu-tiled loop")
        problem = problem.with_solver(devices=args.devices)
    result = study.run(problem, RunControl(progress=ProgressBar(enabled=not args.quiet)))
    written = study.write(result, args.out)
    for line in study.describe(result):
        print(line)
    for path in written:
        print(f"wrote {path}")
    short = study.shortfall(result) if study.shortfall else None
    if short:
        print(f"paraflux: error: {short}", file=sys.stderr)
        return NUMERICS
    return 0


def _cmd_color(args) -> int:
    from .backend import get_backend  # noqa: PLC0415
    from .coloring import color_elements  # noqa: PLC0415
    from .mesh.cases import CASES, mesh_case  # noqa: PLC0415
    from .mesh.io import read_trimesh, write_trimesh  # noqa: PLC0415

    if args.out:  # checked before the colouring, which may take a while
        if args.out.suffix.lower() not in (".vtu", ".vtk", ".msh"):
            raise ProblemError(f"--out {args.out}: use a .vtu, .vtk or .msh file")
        if not args.out.parent.is_dir():
            raise ProblemError(f"--out {args.out}: the folder {args.out.parent} does not exist")
    if args.mesh in CASES:
        mesh = mesh_case(args.mesh, elements=args.size)
    elif args.size is not None:
        raise ProblemError("--size applies to built-in cases only")
    elif not Path(args.mesh).exists() and not Path(args.mesh).suffix:  # a name, not a file
        from .problems import load_case_problem  # noqa: PLC0415

        try:
            kind = f"a case of the {load_case_problem(args.mesh).kind} study, not a 2D one"
        except ProblemError:
            kind = "neither a mesh file nor a built-in case"
        raise ProblemError(f"'{args.mesh}' is {kind}; colour one of: {', '.join(CASES)}, or a triangle mesh file")
    else:
        mesh = read_trimesh(args.mesh)
    if args.method != "parallel" and args.backend == "cupy":
        raise ProblemError(f"--backend cupy applies to the parallel method; {args.method} runs on one CPU core")
    backend = get_backend(args.backend).name if args.method == "parallel" else "numpy"
    groups = color_elements(mesh.triangles, mesh.n_nodes, args.method, not args.no_balance, backend)
    sizes = groups.sizes
    print(f"{mesh.n_elements} elements, {mesh.n_nodes} nodes; {args.method}"
          f"{'' if args.no_balance else ' + balancing'} on {backend}: {groups.n_colors} colours "
          f"(lower bound {groups.lower_bound}: most elements at one node) in {1e3 * groups.seconds:.2f} ms")
    print(f"group sizes: smallest {sizes.min()}, largest {sizes.max()}, ratio {groups.balance_ratio:.2f}")
    print("  " + ", ".join(f"{c}: {n}" for c, n in enumerate(sizes)))
    if args.out:
        write_trimesh(args.out, mesh, cell_data={"color": groups.colors,
                                                 "region": mesh.region_index.astype(np.int32)})
        print(f"wrote {args.out}")
    return 0


def _cmd_sweep(args) -> int:
    """Run a sweep file's points as Dask tasks; progress (done / running / failed) on stderr."""
    from .output import made_folder  # noqa: PLC0415
    from .sweep import close_client, holds_points, load_sweep, make_client, run_sweep  # noqa: PLC0415

    spec = load_sweep(args.sweep)
    if args.out.exists() and not args.out.is_dir():
        raise ProblemError(f"--out {args.out} exists and is not a folder")
    tty = sys.stderr.isatty()
    shown = {"dashboard": False, "last": None}

    def progress(p) -> None:
        if p.dashboard and not shown["dashboard"]:
            print(f"dashboard: {p.dashboard}", file=sys.stderr, flush=True)
            shown["dashboard"] = True
        line = f"{p.done} done, {p.running} running, {p.failed} failed, {p.queued} queued of {p.total}"
        if line != shown["last"] and not args.quiet:
            print(("\r" + line.ljust(70)) if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)
            shown["last"] = line

    try:  # a sweep that fails or is stopped before a point finished leaves no folder it made
        with made_folder(args.out, keep=holds_points):
            client = make_client(args.scheduler, args.workers, spec.retries)
            # (after distributed set its loggers up) its sync() logs a traceback through tornado when Ctrl-C
            # stops it: the cancellation's own line says it all
            logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
            try:
                report = run_sweep(spec, args.out, client, progress)
            finally:
                close_client(client)  # the local workers stop before the folder is judged
    except Cancelled as exc:
        print(("\n" if tty and not args.quiet else "") + f"paraflux: {exc}", file=sys.stderr)
        return 130
    print(("\n" if tty and not args.quiet else "") + f"{len(report.outcomes)} points: "
          f"{len(report.outcomes) - len(report.failed)} done ({report.skipped} already done before), "
          f"{len(report.failed)} failed", file=sys.stderr)
    for point in report.failed:
        print(f"failed {point.key} {point.values}: {point.message}", file=sys.stderr)
    for path in report.written:
        print(f"wrote {path}")
    return 3 if report.failed else 0


def _add_studies(sub, debug) -> None:
    """`paraflux studies [STUDY]`, one of the study registry's names."""
    from .studies import STUDIES  # noqa: PLC0415

    studies = sub.add_parser("studies", parents=[debug], help="list the studies and their variants",
                             description="List each study's variant options and parameters, the options "
                                         "`paraflux solve` takes for its problems.")
    studies.add_argument("study", nargs="?", choices=list(STUDIES), metavar="STUDY",
                         help=f"only this study: {', '.join(STUDIES)}")
    studies.set_defaults(func=_cmd_studies)


def _add_sweep_parser(sub, debug) -> None:
    sweep = sub.add_parser("sweep", parents=[debug], help="run a sweep file's points on Dask (local or a cluster)")
    sweep.add_argument("sweep", type=Path, help="sweep file (TOML): base problem and axes")
    sweep.add_argument("--out", type=_folder, default=Path("sweep-out"), help="output folder (default: sweep-out)")
    sweep.add_argument("--workers", type=int, help="local worker processes (default: one per core, or per GPU)")
    sweep.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://HOST:8786")
    sweep.add_argument("--quiet", action="store_true", help="no progress output")
    sweep.set_defaults(func=_cmd_sweep)


_KIND_OPTIONS = {"--check-every": "magnetostatic", "--devices": "truncation"}  # solver settings of one study


def _study_options(study) -> list[str]:
    """The options of `paraflux solve` that apply to a study's problems beyond the common ones: its tolerance,
    its own solver settings, its integer parameters and its variant axes."""
    names = ["--rtol"] if any(p.name == "rtol" for p in study.parameters) else []
    names += [option for option, kind in _KIND_OPTIONS.items() if kind == study.problem_kind]
    return names + [p.option for p in study.parameters if p.integer] + [a.option for a in study.axes]


def _solve_epilog(shown) -> str:
    """What `paraflux solve --help` says of the study options: whose they are and where each study's are shown."""
    from .studies import STUDIES  # noqa: PLC0415

    if shown is not None:
        return textwrap.fill(f"These are the options of {shown.title} problems (kind '{shown.problem_kind}'); "
                             "options of other studies are refused.", 79)
    lines = [textwrap.fill("study options: each study takes its own; `paraflux solve PROBLEM --help` (or `paraflux "
                           "solve --case NAME --help`) shows those of PROBLEM's study with their choices and "
                           "defaults:", 79)]
    lines += [textwrap.fill(f"{s.problem_kind}: {' '.join(_study_options(s))}", 79, initial_indent="  ",
                            subsequent_indent="    ") for s in STUDIES.values()]
    return "\n".join(lines)


def _add_solve(sub, debug, shown=None) -> None:
    """`paraflux solve`: a problem file or built-in case. Every study's options are accepted (one flag per axis
    name, its choices merged over the studies; an option of another study is refused by _cmd_solve, naming
    it); the help shows the common options and, where shown is a study (that of the problem asked about),
    that study's own, with its choices, defaults and ranges."""
    solve = sub.add_parser("solve", parents=[debug], help="solve a problem file or a built-in case",
                           description="Solve a problem file or a built-in case and write its results.",
                           epilog=_solve_epilog(shown), formatter_class=argparse.RawDescriptionHelpFormatter)
    visible = set(_study_options(shown)) if shown is not None else set()

    def help_for(option: str, text: str) -> str:
        return text if option in visible else argparse.SUPPRESS

    solve.add_argument("problem", nargs="?", type=Path, help="problem file (TOML)")
    solve.add_argument("--case", help="solve a built-in case with its example problem")
    solve.add_argument("--size", type=int, help="approximate element count for a built-in case")
    solve.add_argument("--out", type=_folder, default=Path("out"), help="output folder (default: out)")
    solve.add_argument("--rtol", type=float, help=help_for("--rtol", "relative residual tolerance of iterative "
                                                                      "solvers"))
    solve.add_argument("--max-iterations", type=int, help="iteration limit of iterative solvers")
    solve.add_argument("--check-every", type=int,
                       help=help_for("--check-every", "GPU EBE-J-PCG: iterations between convergence checks (even)"))
    solve.add_argument("--devices", type=int, help=help_for("--devices", "loop multi-gpu-tiled: how many GPUs (0: all)"))
    solve.add_argument("--quiet", action="store_true", help="no progress output")
    _add_study_options(solve, shown, help_for)
    solve.set_defaults(func=_cmd_solve)


def _add_study_options(solve, shown, help_for) -> None:
    """The studies' integer parameters and variant axes as options of solve: the shown study's with its own
    description, range, choices and default; the others' hidden (help_for(option, text) decides)."""
    from .studies import STUDIES  # noqa: PLC0415

    for study in [s for s in (shown,) if s is not None] + list(STUDIES.values()):  # the shown study's first
        for parameter in study.parameters:  # integer settings, e.g. the element order
            if parameter.integer and parameter.option not in solve._option_string_actions:
                solve.add_argument(parameter.option, dest=parameter.name, type=int,
                                   help=help_for(parameter.option, f"{parameter.description} ({parameter.minimum:g} "
                                                                   f"to {parameter.maximum:g})"))
    merged = {}
    for study in STUDIES.values():  # one flag per axis name, choices merged over studies
        for axis in study.axes:
            merged.setdefault(axis.name, []).extend(c.name for c in axis.choices)
    own = {axis.name: axis for axis in (shown.axes if shown is not None else ())}
    for name, choices in merged.items():
        axis = own.get(name)
        if axis is None:
            solve.add_argument("--" + name.replace("_", "-"), dest=name, choices=list(dict.fromkeys(choices)),
                               help=argparse.SUPPRESS)
            continue
        used = f"; used only with --{axis.applies_when[0]} {axis.applies_when[1]}" if axis.applies_when else ""
        solve.add_argument(axis.option, dest=name, choices=list(dict.fromkeys(choices)),
                           metavar="{" + ",".join(axis.names) + "}",
                           help=f"{axis.label} (default: the problem file's, else {axis.default}{used})")


def _asks_help(word: str) -> bool:
    return word == "-h" or (len(word) > 2 and "--help".startswith(word))


class _Probe(argparse.ArgumentParser):
    """A parser that raises instead of printing and exiting: used to read the problem a help is asked about."""

    def error(self, message: str):
        raise ValueError(message)


def _study_asked(argv: list[str]):
    """The study of the problem file or --case that `paraflux solve ... --help` names, or None (not such a
    request, or a problem that cannot be read here: the solve says why when it runs)."""
    from .errors import ParaFluxError  # noqa: PLC0415
    from .problems.toml_input import read_toml  # noqa: PLC0415
    from .studies import find_case, study_for_kind  # noqa: PLC0415

    if "solve" not in argv[:2] or not any(_asks_help(w) for w in argv):
        return None
    probe = _Probe(add_help=False)
    probe.add_argument("--debug", action="store_true")
    sub = probe.add_subparsers(dest="command", parser_class=_Probe)
    _add_solve(sub, _Probe(add_help=False))
    try:
        asked, _ = probe.parse_known_args([w for w in argv if not _asks_help(w)])
        if asked.case:
            return find_case(asked.case)[0]
        return study_for_kind(read_toml(asked.problem)["problem"]["kind"]) if asked.problem else None
    except (ValueError, ParaFluxError, KeyError, TypeError, RecursionError):
        return None


def _add_bench(sub, debug) -> None:
    """`paraflux bench NAME` (engine/bench/command.py): one subcommand per benchmark, each with its own options."""
    from .bench.command import add_bench_parser  # noqa: PLC0415

    add_bench_parser(sub, debug, _folder)


def _folder(text: str) -> Path:
    """An --out folder: a name is needed (an empty one would write into the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a path; an empty one would write into the current folder")
    return Path(text)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; argv, where given, may ask for the help of a problem's study
    (`paraflux solve PROBLEM --help`), which then lists that study's options."""
    parser = OneLineParser(prog="paraflux", description="ParaFlux GPU-parallel FEM/BEM workbench",
                           epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    debug = OneLineParser(add_help=False)  # --debug after the command too
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("cases", parents=[debug], help="list the built-in cases").set_defaults(func=_cmd_cases)
    _add_studies(sub, debug)

    _add_solve(sub, debug, _study_asked(argv) if argv is not None else None)
    color = sub.add_parser("color", parents=[debug], help="colour the elements of a mesh file or built-in case")
    color.add_argument("mesh", help="mesh file or built-in case name")
    color.add_argument("--method", choices=COLORING.names, default=COLORING.default)
    color.add_argument("--size", type=int, help="approximate element count for a built-in case")
    color.add_argument("--no-balance", action="store_true", help="skip the group-balancing pass")
    color.add_argument("--backend", choices=BACKEND.names, default=BACKEND.default,
                       help="where the parallel method runs")
    color.add_argument("--out", type=_folder, help="write the mesh with cell data 'color' (e.g. colors.vtu)")
    color.set_defaults(func=_cmd_color)

    _add_bench(sub, debug)
    _add_sweep_parser(sub, debug)
    return parser


def _run(args) -> int:
    """args.func(args) with every ending mapped to at most one line on stderr and its exit code
    (cli_edge.EXIT_CODES, cli_edge.outcome)."""
    try:
        return args.func(args)
    except SystemExit:
        raise
    except BrokenPipeError:  # the reader of our output left (`paraflux cases | head -1`): nothing to say
        quiet_closed_pipe()
        return 0
    except BaseException as exc:  # noqa: BLE001 (the edge: every ending becomes one line and a code)
        code, line = outcome(exc)
        if args.debug and code in (1, 2, 3):
            raise
        print(("\n" if code == 130 and sys.stderr.isatty() else "") + line, file=sys.stderr)  # after ^C
        return code


def main(argv: list[str] | None = None) -> int:
    """Run one command; every ending is an exit code of cli_edge.EXIT_CODES and at most one line on stderr."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    if not args.debug:  # an overflow is reported once, as an error naming it, not as NumPy's warnings
        warnings.filterwarnings("ignore", category=RuntimeWarning)
    previous = raise_on_sigterm()  # SIGTERM unwinds as cli_edge.Terminated: clean-up runs, exit 143
    try:
        return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
