"""Generated bad input (Hypothesis): problem dictionaries of every study's parser, damaged mesh files for
every mesh reader, sweep files and random command-line options. The only outcomes are a result or one
ProblemError / MeshError line (exit 2; 3 where a solve may fail), never another exception, and nothing left in the output
folder. The "ci" profile (default) runs 150 examples per property; `make fuzz` runs 10,000 (the "fuzz"
profile)."""

from __future__ import annotations

import contextlib
import io
import math
import os
import tempfile
import tomllib
from importlib import resources
from pathlib import Path

import meshio
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from paraflux.engine.bench.registry import BENCHMARKS
from paraflux.engine.cli import build_parser, main
from paraflux.engine.errors import MeshError, ProblemError
from paraflux.engine.mesh.hex_io import read_hexmesh
from paraflux.engine.mesh.io import read_trimesh
from paraflux.engine.problems.toml_input import read_toml
from paraflux.engine.bem.run import read_grouped_surface
from paraflux.engine.studies import STUDIES
from paraflux.engine.sweep import grid_points, parse_sweep
from paraflux.engine.truncation.surfaces import read_surface, uv_sphere

from .test_bad_input import GOOD_MESH_PROBLEM, square_mesh
from .test_bem_study import write_box_file
from .test_hex_mesh_problem import box_grid, write_msh22

settings.register_profile("ci", max_examples=150, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz", max_examples=10_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("PARAFLUX_FUZZ_PROFILE", "ci"))  # `make fuzz` sets "fuzz"

REFUSED = (ProblemError, MeshError)


def example_problems() -> dict[str, list[dict]]:
    """The shipped example problem files, by [problem] kind: a starting point per study's parser."""
    found: dict[str, list[dict]] = {}
    for path in (resources.files("paraflux.resources") / "problems").iterdir():
        if path.name.endswith(".toml"):
            data = tomllib.loads(path.read_text())
            found.setdefault(data["problem"]["kind"], []).append(data)
    return found


EXAMPLES = example_problems()
PARSERS = {study.problem_kind: study.parse for study in STUDIES.values()}  # the built-in studies' parsers

leaf = st.one_of(
    st.integers(), st.integers(min_value=-(10**400), max_value=10**400), st.floats(allow_nan=True),
    st.sampled_from([1e300, -1e300, 1e151, 0.0, -0.0, float("inf"), float("nan"), 2**63, -(2**63) - 1]),
    st.booleans(), st.text(max_size=8), st.sampled_from(["free", "fixed", "m", "mm", "cg", "auto"]))
value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=3), max_leaves=12)


def paths(data, prefix=()):
    """The key paths of a nested dict / list document, down to 6 levels."""
    yield prefix
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items if len(prefix) < 6 else ():
        yield from paths(v, (*prefix, k))


def mutated(data, draw) -> dict:
    """A copy of data with a few key paths replaced by generated values, deleted, or deeply nested."""
    import copy  # noqa: PLC0415

    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 4))):
        if not list(paths(data))[1:]:
            break
        where = draw(st.sampled_from(list(paths(data))[1:]))
        *parent, last = where
        holder = data
        for k in parent:
            holder = holder[k]
        action = draw(st.sampled_from(["replace", "delete", "deep", "add"]))
        if action == "replace":
            holder[last] = draw(value)
        elif action == "delete":
            del holder[last]
        elif action == "deep":
            deep = 1.0
            for _ in range(draw(st.integers(10, 3000))):
                deep = [deep]
            holder[last] = deep
        elif isinstance(holder, dict):
            holder[draw(st.text(max_size=6))] = draw(value)
    return data


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_parser_returns_a_problem_or_one_error(data):
    kind = data.draw(st.sampled_from(sorted(PARSERS)))
    base = data.draw(st.sampled_from(EXAMPLES[kind]))
    document = mutated(base, data.draw)
    try:
        PARSERS[kind](document, Path(tempfile.gettempdir()))
    except REFUSED as exc:
        assert str(exc) and "\n" not in str(exc)


@given(st.binary(max_size=200), st.integers(0, 400))
def test_damaged_toml_text_is_read_or_refused(noise, at):
    text = (resources.files("paraflux.resources") / "problems" / "cantilever.toml").read_bytes()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.toml"
        path.write_bytes(text[:at] + noise + text[at:])
        try:
            read_toml(path)
        except ProblemError as exc:
            assert "\n" not in str(exc)


SWEEPS = resources.files("paraflux.resources") / "sweeps"
SWEEP_FILES = [tomllib.loads(p.read_text()) for p in sorted(SWEEPS.iterdir(), key=lambda p: p.name)
               if p.name.endswith(".toml")]


def inline(sweep: dict) -> dict:
    """The sweep with its base problem inline ([base]) instead of by path, so mutations reach it too."""
    head = dict(sweep["sweep"])
    problem = tomllib.loads((Path(str(SWEEPS)) / head.pop("problem")).read_text())
    return {**sweep, "sweep": head, "base": problem}


@given(st.data())
def test_sweep_files_are_read_or_refused(data):
    sweep = data.draw(st.sampled_from(SWEEP_FILES))
    document = mutated(inline(sweep) if data.draw(st.booleans()) else sweep, data.draw)
    try:
        spec = parse_sweep(document, Path(str(SWEEPS)))
    except ProblemError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    if math.prod(len(a.values) for a in spec.axes) <= 1000:  # listing a million points is slow, not wrong
        with contextlib.suppress(ProblemError):
            grid_points(spec)


BENCHMARK_RESULTS = [p for p in sorted(Path(__file__).parents[1].glob("docs/benchmarks/*.json"))
                     if p.stem in BENCHMARKS]  # sweep-overhead.json is its own driver's
ODD_VALUES = st.sampled_from([None, "x", [], {}, 0, -1, 0.0, 1e308, 10**400, True, 2**63])


@given(st.data())
def test_damaged_benchmark_results_render_or_are_refused(data):
    """bench --render of a committed results file with values replaced or deleted (raw JSON also with
    1e999 or NaN): the report, or one line with exit 2 and no folder made."""
    import json  # noqa: PLC0415

    path = data.draw(st.sampled_from(BENCHMARK_RESULTS))
    results = json.loads(path.read_text())
    name = results["benchmark"]
    document = mutated(results, lambda strategy: data.draw(ODD_VALUES if strategy is value else strategy))
    try:
        text = json.dumps(document).replace("0.0", data.draw(st.sampled_from(["0.0", "1e999", "NaN"])), 1)
    except RecursionError:  # the "deep" mutation: nested past what json writes, and what it reads
        text = "[" * 3000 + "]" * 3000
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "r.json").write_text(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["bench", name, "--render", str(folder / "r.json"), "--out", str(folder / "a" / "b")])
        assert code in (0, 2), err.getvalue()
        if code:
            assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
            assert not (folder / "a").exists()


def write_valid(kind: str, path: Path) -> None:
    """A small valid file for one mesh reader."""
    if kind == "trimesh":
        square_mesh(path)
    elif kind == "hexmesh":
        points, hexes, clamp, tip = box_grid(2)
        write_msh22(path, points, [("hexahedron", hexes), ("quad", np.vstack([clamp, tip]))],
                    [np.array([1, 1]), np.array([2, 3])], {"steel": (1, 3), "clamp": (2, 2), "tip": (3, 2)})
    elif kind == "grouped":
        write_box_file(path)
    else:
        points, triangles = uv_sphere(6, 1.0)
        meshio.write(path, meshio.Mesh(points, [("triangle", triangles)]), file_format="gmsh22", binary=False)


READERS = {"trimesh": read_trimesh, "hexmesh": read_hexmesh, "grouped": lambda p: read_grouped_surface(p, 1e-3),
           "surface": lambda p: read_surface(p, 1.0, "inner_surface")}


def damage_cells(mesh: meshio.Mesh, draw) -> None:
    """Indices out of range (negative or past the last node), NaN or huge coordinates, or a block's cells
    relabelled with another type of the same node count."""
    what = draw(st.sampled_from(["index", "nan", "huge", "type", "duplicate"]))
    block = draw(st.integers(0, len(mesh.cells) - 1))
    cells = mesh.cells[block]
    if what == "index":
        cells.data[draw(st.integers(0, len(cells.data) - 1)), 0] = draw(
            st.sampled_from([-1, -3, len(mesh.points), 10**6]))
    elif what in ("nan", "huge"):
        mesh.points[draw(st.integers(0, len(mesh.points) - 1)), draw(st.integers(0, 2))] = (
            np.nan if what == "nan" else draw(st.sampled_from([1e200, -1e300, 1e151])))
    elif what == "type":
        other = {3: "triangle", 4: draw(st.sampled_from(["quad", "tetra"])), 2: "line", 8: "hexahedron"}
        mesh.cells[block] = meshio.CellBlock(other.get(cells.data.shape[1], "vertex"), cells.data)
    else:
        mesh.cells[block] = meshio.CellBlock(cells.type, np.vstack([cells.data, cells.data[:1]]))


@given(st.data())
def test_damaged_mesh_files_are_read_or_refused(data):
    kind = data.draw(st.sampled_from(sorted(READERS)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("mesh.msh")
        write_valid(kind, path)
        if data.draw(st.booleans()):  # damage in the file's bytes: truncated or overwritten
            raw = path.read_bytes()
            cut = data.draw(st.integers(0, len(raw)))
            path.write_bytes(raw[:cut] + data.draw(st.binary(max_size=40)))
        else:
            mesh = meshio.read(path)
            damage_cells(mesh, data.draw)
            with contextlib.suppress(Exception):  # meshio may refuse to write some damage: keep the file
                meshio.write(path, mesh, file_format="gmsh22", binary=False)
        try:
            READERS[kind](path)
        except REFUSED as exc:
            assert "\n" not in str(exc)


def solve_options():
    """(option, strategy of values) of `paraflux solve`, from the parser itself."""
    parser = build_parser()
    solve = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "solve")[1]
    found = []
    for action in solve._actions:
        if not action.option_strings or action.dest in ("help", "debug", "case", "out"):
            continue
        option = action.option_strings[0]
        if action.nargs == 0:
            found.append((option, st.just(None)))
            continue
        words = st.sampled_from(list(action.choices)) if action.choices else st.nothing()
        numbers = st.one_of(st.integers(-5, 50), st.integers(), st.floats(allow_nan=True), st.just(10**400))
        found.append((option, words | numbers.map(str) | st.text(max_size=6)))
    return found


OPTIONS = solve_options()


@given(st.data())
def test_solve_options_give_a_result_or_one_line(data):
    chosen = data.draw(st.lists(st.sampled_from(OPTIONS), max_size=3, unique_by=lambda o: o[0]))
    argv = []
    for option, values in chosen:
        text = data.draw(values)
        argv += [option] if text is None else [f"{option}={text}"]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        square_mesh(folder / "square.msh")
        (folder / "problem.toml").write_text(GOOD_MESH_PROBLEM)
        out = folder / "out"
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(["solve", str(folder / "problem.toml"), "--out", str(out), "--quiet", *argv])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code
        lines = err.getvalue().strip().splitlines()
        assert code in (0, 2, 3), (argv, err.getvalue())
        if code:
            assert len(lines) == 1 and "Traceback" not in lines[0], (argv, err.getvalue())
            assert not out.exists()
        else:
            assert sorted(p.name for p in out.iterdir()) == ["solution.vtu", "summary.json"]
