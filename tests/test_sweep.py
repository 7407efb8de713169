"""Sweeps on a LocalCluster of two worker processes: equal to single runs, robust to a killed worker,
resumable, tolerant of bad points; and the sweep file's parser."""

from __future__ import annotations

import csv
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from paraflux.engine.cli_edge import Terminated
from paraflux.engine.errors import Cancelled, ProblemError
from paraflux.engine.problems import parse_problem
from paraflux.engine.studies import study_for_kind
from paraflux.engine.sweep import grid_points, parse_sweep, run_sweep, set_dotted
from paraflux.engine.sweep.task import scalar_numbers

BASE = {
    "problem": {"kind": "magnetostatic", "formulation": "planar", "potential": "scalar", "case": "open-slot",
                "length_unit": "mm"},
    "case": {"elements": 200},
    "regions": {"air": {"mu_r": 1.0}},
    "boundaries": {"AB": {"type": "dirichlet", "value": 700.0}, "CDE": {"type": "dirichlet", "value": 0.0}},
    "solver": {"method": "ebe-jpcg", "rtol": 1e-10},
    "probes": [{"name": "gap", "point": [0.0, 0.5]}],
}


def sweep_spec(tmp_path, axes, **head):
    return parse_sweep({"sweep": head, "base": BASE, "axes": axes}, tmp_path)


GRID = [{"key": "boundaries.AB.value", "values": [700.0, 800.0]},
        {"key": "case.elements", "start": 200, "stop": 300, "step": 50}]


@pytest.fixture(scope="module")
def client():
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 2}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with Client(cluster) as c:
        yield c
    cluster.close()


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_sweep_equals_single_runs(client, tmp_path):
    spec = sweep_spec(tmp_path, GRID)
    report = run_sweep(spec, tmp_path / "out", client)
    assert [o.status for o in report.outcomes] == ["done"] * 6
    rows = read_csv(tmp_path / "out" / "sweep.csv")
    assert len(rows) == 6 and len({r["point"] for r in rows}) == 6
    study = study_for_kind("magnetostatic")
    for point, outcome, row in zip(grid_points(spec), report.outcomes, rows):
        single = study.run(parse_problem(point.problem, tmp_path))
        summary = json.loads(Path(study.write(single, tmp_path / "single" / point.key)[-1]).read_text())
        assert outcome.rows == (scalar_numbers(summary),)  # bit for bit: JSON keeps every digit of a float
        assert float(row["energy"]) == summary["energy"] and int(row["case.elements"]) == point.values["case.elements"]
    assert (tmp_path / "out" / "plot-energy-vs-boundaries.AB.value.png").stat().st_size > 1000


def test_killed_worker_still_yields_every_point_once(client, tmp_path):
    spec = sweep_spec(tmp_path, [{"key": "case.elements", "start": 400, "stop": 1100, "step": 100}])
    pids = list(client.run(os.getpid).values())
    killed = threading.Event()

    def kill_once(progress):
        if progress.running and not killed.is_set():
            killed.set()
            os.kill(pids[0], signal.SIGKILL)

    report = run_sweep(spec, tmp_path / "out", client, kill_once)
    assert killed.is_set()
    assert [o.status for o in report.outcomes] == ["done"] * 8
    rows = read_csv(tmp_path / "out" / "sweep.csv")
    assert sorted(r["point"] for r in rows) == sorted(p.key for p in grid_points(spec))
    client.wait_for_workers(2, timeout=30)


def test_rerun_after_interrupt_computes_only_missing_points(client, tmp_path):
    spec = sweep_spec(tmp_path, GRID)
    def ctrl_c(progress):  # as Ctrl-C would, once a point has finished
        if progress.done:
            raise KeyboardInterrupt

    with pytest.raises(Cancelled, match=r"of 6 points finished .*: boundaries.AB.value=\d+.0, case.elements=\d+"):
        run_sweep(spec, tmp_path / "out", client, ctrl_c)
    points_dir = tmp_path / "out" / "points"
    before = {p.parent.name: p.stat().st_mtime_ns for p in points_dir.glob("*/point.json")}
    assert 1 <= len(before) < 6
    report = run_sweep(spec, tmp_path / "out", client)
    assert report.skipped == len(before) and [o.status for o in report.outcomes] == ["done"] * 6
    assert {k: (points_dir / k / "point.json").stat().st_mtime_ns for k in before} == before
    assert len(read_csv(tmp_path / "out" / "sweep.csv")) == 6


def test_bad_point_is_reported_and_the_rest_finish(client, tmp_path):
    spec = sweep_spec(tmp_path, [{"key": "regions.air.mu_r", "values": [1.0, -2.0, 2.0]}])
    report = run_sweep(spec, tmp_path / "out", client)
    assert [o.status for o in report.outcomes] == ["done", "failed", "done"]
    assert "mu_r" in report.failed[0].message
    rows = read_csv(tmp_path / "out" / "sweep.csv")
    assert [r["status"] for r in rows] == ["done", "failed", "done"] and rows[1]["message"]


def test_parquet_table_matches_the_csv(client, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    report = run_sweep(sweep_spec(tmp_path, [{"key": "regions.air.mu_r", "values": [1.0, 2.0]}]), tmp_path / "out",
                       client)
    table = pq.read_table(tmp_path / "out" / "sweep.parquet").to_pylist()
    assert [row["energy"] for row in table] == [o.rows[0]["energy"] for o in report.outcomes]


def test_variant_axis_and_zip(client, tmp_path):
    spec = sweep_spec(tmp_path, [{"variant": "method", "values": ["ebe-jpcg", "sparse-direct"]},
                                 {"key": "probes.0.point.1", "values": [0.5, 0.25]}], zip=True)
    report = run_sweep(spec, tmp_path / "out", client)
    assert [o.values for o in report.outcomes] == [{"method": "ebe-jpcg", "probes.0.point.1": 0.5},
                                                   {"method": "sparse-direct", "probes.0.point.1": 0.25}]
    energies = [o.rows[0]["energy"] for o in report.outcomes]
    assert energies[0] == pytest.approx(energies[1], rel=1e-8)  # an iterative and a direct solve agree


def write_sweep_files(folder: Path) -> Path:
    """folder/sweep.toml (two loads of the open slot) and the problem file it names; returns the sweep."""
    sweep = folder / "sweep.toml"
    sweep.write_text("[sweep]\nproblem = \"p.toml\"\n\n[[axes]]\nkey = \"boundaries.AB.value\"\nvalues = [1.0, 2.0]\n")
    problem = "".join(f"[{t}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in BASE[t].items())
                      for t in ("problem", "case", "solver"))
    problem += "[regions.air]\nmu_r = 1.0\n[boundaries.AB]\ntype = \"dirichlet\"\nvalue = 1.0\n" \
               "[boundaries.CDE]\ntype = \"dirichlet\"\nvalue = 0.0\n"
    (folder / "p.toml").write_text(problem)
    return sweep


def test_cli_runs_on_a_scheduler_by_address(client, tmp_path, capsys):
    from paraflux.engine.cli import main

    sweep = write_sweep_files(tmp_path)
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--scheduler", client.scheduler.address]) == 0
    captured = capsys.readouterr()
    assert "2 done, 0 running, 0 failed" in captured.err and "sweep.csv" in captured.out
    energies = [float(r["energy"]) for r in read_csv(tmp_path / "out" / "sweep.csv")]
    assert energies[1] == pytest.approx(4 * energies[0], rel=1e-9)  # energy goes with the square of the load


@pytest.mark.parametrize("stop, code, line", [
    (KeyboardInterrupt, 130, "paraflux: sweep cancelled: 0 of 2 points finished"),
    (Cancelled("cancelled by the user"), 130, "paraflux: sweep cancelled: 0 of 2 points finished"),
    (Terminated, 143, "paraflux: terminated"), (ProblemError("a bad point"), 2, "paraflux: error: a bad point")])
def test_cli_sweep_stopped_before_a_point_finished_leaves_no_folder(client, tmp_path, capsys, monkeypatch, stop,
                                                                   code, line):
    """Ctrl-C, Cancel, SIGTERM or an error before any point finished: one line, its exit code, and none of the
    folders the sweep made (a sweep stopped later keeps its finished points for the re-run)."""
    from paraflux.engine.cli import main
    from paraflux.engine.sweep import runner

    def stopped(*args):
        raise stop
    monkeypatch.setattr(runner, "_collect", stopped)
    out = tmp_path / "a" / "b"
    assert main(["sweep", str(write_sweep_files(tmp_path)), "--out", str(out), "--scheduler",
                 client.scheduler.address, "--quiet"]) == code
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(line)
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("option, message", [
    (["--workers", "0"], "(--workers) must be from 1 to"), (["--workers", "99999999999"], "(--workers) must be from 1"),
    (["--scheduler", "nonsense"], "no Dask scheduler answers at nonsense"),
    (["--scheduler", "tcp://127.0.0.1:1"], "no Dask scheduler answers at tcp://127.0.0.1:1")])
def test_cli_sweep_options_out_of_range_are_one_line(tmp_path, capsys, option, message):
    from paraflux.engine.cli import main

    out = tmp_path / "a" / "b"
    assert main(["sweep", str(write_sweep_files(tmp_path)), "--out", str(out), "--quiet", *option]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "a").exists()


def test_cli_sweep_ctrl_c_on_a_local_cluster_is_one_line(tmp_path):
    """Ctrl-C while the local workers run: the cancellation's line (no warnings from the workers, no
    traceback from distributed's event loop), and no folder unless a point finished."""
    import subprocess
    import sys

    sweep = write_sweep_files(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "paraflux.engine.cli", "sweep", str(sweep), "--out", "a/b",
                             "--workers", "1"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline()  # the dashboard's address: the tasks are submitted
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read().strip().splitlines()
    assert proc.wait(timeout=120) == 130 and first.startswith("dashboard:"), (first, rest)
    assert rest[-1].startswith("paraflux: sweep cancelled:"), rest
    assert not [line for line in rest[:-1] if " of 2" not in line], rest  # progress lines only
    left = [p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("a/**/*")]
    # the point running at Ctrl-C may finish while the workers stop: its folder then stays for the re-run
    assert not left or any(name.endswith("/point.json") for name in left), left
    assert not [name for name in left if ".partial" in name], left


def test_example_sweep_file_reads(tmp_path):
    from importlib import resources

    from paraflux.engine.sweep import load_sweep

    spec = load_sweep(Path(str(resources.files("paraflux.resources") / "sweeps" / "open-slot.toml")))
    points = grid_points(spec)
    assert len(points) == 6 and points[-1].values == {"boundaries.AB.value": 700.0, "case.elements": 1500}


def test_overhead_benchmark_measures_empty_tasks(client):
    from paraflux.engine.bench.sweep_overhead import batch_seconds_per_task, render, round_trip_seconds

    batch, trip = batch_seconds_per_task(client, 40, repeats=1), round_trip_seconds(client, 5)
    assert 0 < batch < 1 and 0 < trip < 1
    table = render({"host_threads": 2, "host_cpu": "x", "distributed": "v", "date": "d", "command": "c",
                    "rows": [{"workers": 2, "tasks": 40, "batch_s_per_task": batch, "round_trip_s": trip}]})
    assert f"| 2 | 40 | {1e3 * batch:.3f} |" in table


@pytest.mark.parametrize("axes, head, message", [
    ([{"key": "nowhere.at.all", "values": [1.0]}], {}, r"first point is not a valid problem.*unknown key\(s\): nowhere"),
    ([{"key": "solver.rtol", "values": [-1.0, 1e-8]}], {}, "first point is not a valid problem"),
    ([{"key": "boundaries.AB.type", "values": [1.0]}], {}, "is not a number"),
    ([{"key": "probes.3.point.0", "values": [1.0]}], {}, "has no item 3"),
    ([{"key": "case.elements", "start": 5, "stop": 1, "step": 1}], {}, "step > 0"),
    ([{"key": "case.elements", "values": [200, 300]}, {"variant": "method", "values": ["sparse-direct"]}],
     {"zip": True}, "same number of values"),
    ([{"key": "case.elements", "values": [200, 200]}], {}, "solve the same problem"),
    ([{"variant": "method", "values": [1]}], {}, "choice names"),
    ([{"variant": "method", "values": ["direct"]}], {}, "unknown method 'direct'"),
    ([{"variant": "order", "values": ["2"]}], {}, "has the variant axes method, backend"),
    ([], {}, "at least one"),
    ([{"key": "case.elements", "start": 0.0, "stop": float("inf"), "step": 1.0}], {},
     r"axes\[0\].stop = inf is not a finite number"),
    ([{"key": "case.elements", "start": 0.0, "stop": float("nan"), "step": 1.0}], {}, "stop = nan"),
    ([{"key": "case.elements", "start": 0.0, "stop": 1e150, "step": 1e-200}], {}, "inf values; a sweep axis takes"),
    ([{"key": "case.elements", "start": 0, "stop": 10**400, "step": 1}], {}, r"axes\[0\].stop = an integer of"),
    ([{"key": "case.elements", "values": [1e300]}], {}, r"axes\[0\].values\[0\] = 1e\+300 is too large"),
    ([{"key": "case.elements", "values": list(range(100_001))}], {}, "100,001 values"),
    ([{"key": "regions", "blocks": 10**12}], {}, "blocks must be a whole number from 1 to 100,000"),
    ([{"key": "case.elements", "start": 1, "stop": 100_000, "step": 1},
      {"key": "boundaries.AB.value", "start": 1, "stop": 100_000, "step": 1}], {}, "10,000,000,000 points"),
    ([{"key": "case.elements", "values": [200]}], {"zip": "no"}, "zip must be true or false"),
    ([{"key": "case.elements", "values": [200]}], {"retries": 10**30}, "sweep.retries = an integer"),
])
def test_bad_sweep_files_are_rejected_with_a_message(tmp_path, axes, head, message):
    """Each a class: numbers out of range or not finite named by key, grids too large to list, wrong types."""
    with pytest.raises(ProblemError, match=message):
        grid_points(sweep_spec(tmp_path, axes, **head))


@pytest.mark.parametrize("data, message", [
    ({"sweep": {}, "base": 3, "axes": GRID}, r"\[base\] must be a table"),
    ({"sweep": {"problem": 5}, "axes": GRID}, "problem must be the name of a problem file"),
    ({"sweep": {"problem": "a\0b"}, "axes": GRID}, "problem must be the name of a problem file"),
    ({"sweep": {}, "base": BASE, "axes": GRID, "x": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}, "nested more than 16"),
])
def test_bad_sweep_file_heads_are_rejected_with_a_message(tmp_path, data, message):
    with pytest.raises(ProblemError, match=message):
        parse_sweep(data, tmp_path)


def test_set_dotted_leaves_the_base_alone_and_ranges_include_stop(tmp_path):
    changed = set_dotted(BASE, "probes.0.point.1", 0.75)
    assert changed["probes"][0]["point"] == [0.0, 0.75] and BASE["probes"][0]["point"] == [0.0, 0.5]
    assert set_dotted({"problem": {}}, "case.elements", 300) == {"problem": {}, "case": {"elements": 300}}
    spec = sweep_spec(tmp_path, [{"key": "solver.rtol", "start": 0.1, "stop": 0.3, "step": 0.1}])
    assert spec.axes[0].values == (0.1, 0.2, pytest.approx(0.3))


def test_study_rows_hook_gives_the_rows():
    from types import SimpleNamespace

    from paraflux.engine.sweep.task import point_rows

    study = SimpleNamespace(sweep_rows=lambda result: [{"angle_deg": a, "rcs_dbsm": result * a} for a in (0, 90)])
    assert point_rows(study, 2.0, []) == ({"angle_deg": 0, "rcs_dbsm": 0.0}, {"angle_deg": 90, "rcs_dbsm": 180.0})


@pytest.mark.gpu
def test_sweep_on_the_gpu_cluster_matches_numpy(tmp_path):
    """One worker per GPU (LocalCUDACluster) where dask-cuda is installed, else a local process cluster:
    the CuPy backend's points equal the NumPy backend's to the solver's tolerance."""
    from paraflux.engine.sweep import close_client, make_client

    spec = sweep_spec(tmp_path, [{"variant": "backend", "values": ["numpy", "cupy"]}])
    try:
        import dask_cuda  # noqa: F401
        workers = None  # one per GPU
    except ImportError:
        workers = 2
    client = make_client(None, workers, spec.retries)
    try:
        report = run_sweep(spec, tmp_path / "out", client)
    finally:
        close_client(client)
    assert [o.status for o in report.outcomes] == ["done", "done"], [o.message for o in report.outcomes]
    numpy_run, cupy_run = (o.rows[0] for o in report.outcomes)
    assert cupy_run["energy"] == pytest.approx(numpy_run["energy"], rel=1e-8)


def test_blocks_axis_splits_a_list_over_points(tmp_path):
    probes = [{"name": f"p{i}", "point": [float(i), 0.5]} for i in range(5)]
    spec = parse_sweep({"sweep": {}, "base": {**BASE, "probes": probes},
                        "axes": [{"key": "probes", "blocks": 2}, {"key": "boundaries.AB.value", "values": [1.0, 2.0]}]},
                       tmp_path)
    points = grid_points(spec)
    assert [(p.values["probes"], len(p.problem["probes"])) for p in points] == [(0, 3), (0, 3), (1, 2), (1, 2)]
    assert points[0].problem["probes"] + points[2].problem["probes"] == probes
    with pytest.raises(ProblemError, match="6 blocks need a list of at least as many items"):
        parse_sweep({"sweep": {}, "base": {**BASE, "probes": probes}, "axes": [{"key": "probes", "blocks": 6}]},
                    tmp_path)


SPHERE = {"problem": {"kind": "scattering", "case": "pec-sphere", "frequency": 200e6},
          "geometry": {"radius": 0.2, "elements_per_wavelength": 6},
          "far_field": {"theta_deg": [0.0, 90.0, 180.0], "phi_deg": [0.0]}}


def test_sphere_frequency_by_radius_sweep_equals_the_single_runs(client, tmp_path):
    axes = [{"key": "problem.frequency", "values": [200e6, 250e6]},
            {"key": "geometry.radius", "values": [0.15, 0.2, 0.25]}]
    spec = parse_sweep({"sweep": {}, "base": SPHERE, "axes": axes}, tmp_path)
    report = run_sweep(spec, tmp_path / "out", client)
    assert [o.status for o in report.outcomes] == ["done"] * 6
    rows = read_csv(tmp_path / "out" / "sweep.csv")
    assert len(rows) == 6 * 3  # a row per point and far-field direction
    study = study_for_kind("scattering")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # as Dask's workers run BLAS: one thread, the same order of every sum
        for point, outcome in zip(grid_points(spec), report.outcomes):
            single = study.run(parse_problem(point.problem, tmp_path))
            assert outcome.rows == tuple(study.sweep_rows(single))  # the same numbers to the last digit
    assert (tmp_path / "out" / "plot-rcs-vs-problem.frequency.png").stat().st_size > 1000
    assert (tmp_path / "out" / "plot-rcs-vs-theta.png").stat().st_size > 1000


def test_example_sphere_sweep_file_reads():
    from importlib import resources

    from paraflux.engine.sweep import load_sweep

    spec = load_sweep(Path(str(resources.files("paraflux.resources") / "sweeps" / "pec-sphere.toml")))
    points = grid_points(spec)
    assert [p.values["problem.frequency"] for p in points] == [3e8, 3.5e8, 4e8, 4.5e8, 5e8, 5.5e8, 6e8]
    assert study_for_kind(parse_problem(points[0].problem, Path(spec.base_dir)).kind).name == "scattering"


def scattering_outcomes(frequencies, incidences, directions, sigma):
    """Point outcomes as a scattering sweep over problem.frequency makes them: a row per incidence
    (theta, phi, polarisation) and far-field direction (a list, or directions(incidence) -> list),
    sigma(f, incidence, theta, phi) -> (dBsm, dBsm)."""
    from paraflux.engine.sweep.task import PointOutcome

    outcomes = []
    for f in frequencies:
        rows = tuple({"incidence": i, "inc_theta_deg": it, "inc_phi_deg": ip, "polarization": pol,
                      "theta_deg": t, "phi_deg": p,
                      **dict(zip(("sigma_theta_dbsm", "sigma_phi_dbsm"), sigma(f, (it, ip, pol), t, p))),
                      "converged": True, "iterations": 3}
                     for i, (it, ip, pol) in enumerate(incidences)
                     for t, p in (directions((it, ip, pol)) if callable(directions) else directions))
        outcomes.append(PointOutcome(f"p{f:.0f}", {"problem.frequency": f}, "done", rows))
    return outcomes


def scattering_figures(outcomes, frequencies, axes=None):
    from paraflux.engine.problems import load_case_problem
    from paraflux.engine.sweep import sweep_report_figures
    from paraflux.engine.sweep.spec import Axis, SweepSpec

    base = study_for_kind("scattering").to_dict(load_case_problem("pec-sphere"))
    base["incidence"]["phi_deg"] = [0.0, 90.0]
    spec = SweepSpec(base, Path("."), axes or (Axis("key", "problem.frequency", tuple(frequencies)),))
    return dict(sweep_report_figures(spec, outcomes))


def legend_texts(figure) -> list[str]:
    return [t.get_text() for legend in figure.legends for t in legend.get_texts()]


def curves(ax, reference=False) -> list:
    """The panel's lines of results, or of the reference (drawn dotted)."""
    return [line for line in ax.get_lines() if (line.get_linestyle() == ":") == reference]


def line_data(ax, reference=False) -> list[tuple[list, list]]:
    return [(list(line.get_xdata()), list(line.get_ydata())) for line in curves(ax, reference)]


DIRECTIONS = [(t, p) for t in range(0, 181, 30) for p in (0.0, 90.0)]  # theta slowest, as the study tabulates them
FREQUENCIES = [300e6, 350e6, 400e6]


def sphere_like(f, incidence, t, p):
    """Distinct, finite values for each frequency, direction and component (a cross-polar 10 dB down)."""
    co = -10.0 + f / 1e8 + t / 60 + p / 45
    return (co, co - 10.0)


def test_scattering_sweep_plots_a_line_per_direction_component_and_frequency_and_a_panel_per_cut():
    """Against frequency: a line per chosen direction (back-scatter, forward) and component, x in MHz; against
    theta: a panel per cut (E- and H-plane), a line per frequency and component, theta increasing along each
    line (no zigzag between cuts); legend values formatted; every point equal to its table row."""
    outcomes = scattering_outcomes(FREQUENCIES, [(0.0, 0.0, "theta")], DIRECTIONS, sphere_like)
    figures = scattering_figures(outcomes, FREQUENCIES)
    assert list(figures) == ["rcs-vs-problem.frequency", "rcs-vs-theta"]
    by_frequency = figures["rcs-vs-problem.frequency"]
    (ax,) = by_frequency.get_axes()
    assert ax.get_xlabel() == "frequency (MHz)" and ax.get_ylabel() == "RCS (dBsm)"
    lines = line_data(ax)
    assert len(lines) == 2 * 2  # (back-scatter, forward) x (sigma_theta, sigma_phi)
    expected = sorted(([300.0, 350.0, 400.0], [sphere_like(f, None, t, 0.0)[c] for f in FREQUENCIES])
                      for t in (0, 180) for c in (0, 1))
    assert sorted(lines) == expected
    assert legend_texts(by_frequency) == ["back-scatter", "forward", "σθ", "σφ", "Mie series"]
    assert "incidence θ 0°, incidence φ 0°, θ-polarised" in by_frequency.get_suptitle()
    assert by_frequency.legends[0].get_title().get_text() == "direction"

    by_theta = figures["rcs-vs-theta"]
    panels = [a for a in by_theta.get_axes() if a.get_visible()]
    assert [a.get_title() for a in panels] == ["E-plane (φ 0°)", "H-plane (φ 90°)"]
    for ax, phi in zip(panels, (0.0, 90.0)):
        lines = line_data(ax)
        assert len(lines) == len(FREQUENCIES) * 2
        assert sorted(lines) == sorted(([float(t) for t in range(0, 181, 30)],
                                        [sphere_like(f, None, t, phi)[c] for t in range(0, 181, 30)])
                                       for f in FREQUENCIES for c in (0, 1))
    assert panels[0].get_xlabel() == "θ (°)"
    assert legend_texts(by_theta) == ["300 MHz", "350 MHz", "400 MHz", "σθ", "σφ", "Mie series"]


def test_a_sphere_sweep_draws_the_mie_series_beside_each_co_and_cross_polar_line():
    """The reference is the Mie series of the problem's sphere (radius 0.25 m) at each drawn point: in the
    E-plane sigma_theta is the series' E-plane RCS and sigma_phi none (an exact zero, below the floor: not
    drawn), in the H-plane the reverse; against frequency the back-scatter and forward values."""
    import math

    from paraflux.engine.scattering.mie import pec_sphere_rcs
    from paraflux.engine.scattering.waves import dbsm
    from paraflux.engine.truncation.fields import C0

    figures = sphere_figures()
    theta = [float(t) for t in range(0, 181, 30)]
    e_plane, h_plane = ([], [])
    for f in FREQUENCIES:
        e, h = pec_sphere_rcs(0.25, 2 * math.pi * f / C0, theta)
        e_plane.append((theta, list(dbsm(e))))
        h_plane.append((theta, list(dbsm(h))))
    panels = [a for a in figures["rcs-vs-theta"].get_axes() if a.get_visible()]
    for ax, expected in zip(panels, (e_plane, h_plane)):
        assert len(curves(ax, reference=True)) == len(FREQUENCIES)
        for (x, y), (x_ref, y_ref) in zip(line_data(ax, reference=True), expected):
            assert x == x_ref and y == pytest.approx(y_ref, abs=1e-9)
    (ax,) = figures["rcs-vs-problem.frequency"].get_axes()
    back, forward = ([float(dbsm(pec_sphere_rcs(0.25, 2 * math.pi * f / C0, [t])[0])[0]) for f in FREQUENCIES]
                     for t in (0.0, 180.0))
    lines = line_data(ax, reference=True)
    assert len(lines) == 2 and all(x == [300.0, 350.0, 400.0] for x, _ in lines)
    assert {tuple(round(v, 9) for v in y) for _, y in lines} == {tuple(round(v, 9) for v in m) for m in (back, forward)}


def test_scattering_sweep_leaves_out_a_component_far_below_the_peak_and_says_so():
    """A sphere's cross-polar component (an exact zero: -400 dBsm) is not drawn; the title says which."""
    def co_polar(f, incidence, t, p):
        co = -5.0 + t / 90
        return (co, -400.0) if p == 0.0 else (-400.0, co)

    outcomes = scattering_outcomes(FREQUENCIES, [(0.0, 0.0, "theta")], DIRECTIONS, co_polar)
    figures = scattering_figures(outcomes, FREQUENCIES)
    panels = [a for a in figures["rcs-vs-theta"].get_axes() if a.get_visible()]
    assert [len(curves(a)) for a in panels] == [3, 3]
    assert all(min(line.get_ydata()) > -100 for a in panels for line in curves(a))
    assert "σφ in E-plane (φ 0°); σθ in H-plane (φ 90°)" in figures["rcs-vs-theta"].get_suptitle()
    assert len(curves(figures["rcs-vs-problem.frequency"].get_axes()[0])) == 2  # sigma_theta at 0 and 180


def monostatic_figures():
    """19 incidences around the horizon (theta 90, phi 0 to 180), each with its back-scatter direction."""
    incidences = [(90.0, float(p), "theta") for p in range(0, 181, 10)]
    return scattering_figures(scattering_outcomes(FREQUENCIES, incidences, lambda inc: [inc[:2]],
                                                  lambda f, inc, t, p: (-20.0 + p / 30 + f / 1e8, -30.0 + p / 30)),
                              FREQUENCIES)


def test_monostatic_sweep_plots_against_the_angle_that_moves():
    """19 incidences around the horizon, each with its back-scatter direction: RCS against phi (a panel for
    the theta = 90 cut), no RCS against theta; against frequency 6 incidences (both components of each,
    12 lines), evenly spaced, the legend reading their phi, and the title saying so."""
    figures = monostatic_figures()
    assert list(figures) == ["rcs-vs-problem.frequency", "rcs-vs-phi"]
    (ax,) = figures["rcs-vs-phi"].get_axes()
    assert ax.get_title() == "" and "monostatic, θ-polarised incidence, θ 90° cut" in figures["rcs-vs-phi"].get_suptitle()
    assert ax.get_xlabel() == "φ (°)" and len(curves(ax)) == len(FREQUENCIES) * 2
    assert all(list(line.get_xdata()) == [float(p) for p in range(0, 181, 10)] for line in curves(ax))
    (ax,) = figures["rcs-vs-problem.frequency"].get_axes()
    by_frequency = figures["rcs-vs-problem.frequency"]
    assert len(curves(ax)) == 12 and "6 of 19 curves drawn, evenly spaced" in by_frequency.get_suptitle()
    assert legend_texts(by_frequency) == ["0°", "40°", "70°", "110°", "140°", "180°", "σθ", "σφ"]
    assert by_frequency.legends[0].get_title().get_text() == "incidence φ"


def blocks_figures():
    """Two incidences (from phi 0 and 90) split over two points by a blocks axis, at one frequency."""
    from paraflux.engine.sweep.spec import Axis
    from paraflux.engine.sweep.task import PointOutcome

    outcomes = [PointOutcome(f"b{block}", {"incidence.phi_deg": block}, "done", o.rows) for block, o in
                enumerate(scattering_outcomes([300e6], [(0.0, 90.0 * block, "theta")], DIRECTIONS, sphere_like)[0]
                          for block in (0, 1))]
    return scattering_figures(outcomes, (), (Axis("blocks", "incidence.phi_deg", (0, 1)),))


def test_incidences_split_in_blocks_plot_against_theta_a_panel_per_incidence_and_cut():
    """A blocks axis (no key axis): no RCS against a swept key; against theta a panel per incidence and cut,
    not a line per block."""
    figures = blocks_figures()
    assert list(figures) == ["rcs-vs-theta"]
    panels = [a for a in figures["rcs-vs-theta"].get_axes() if a.get_visible()]
    assert [a.get_title() for a in panels] == [f"incidence from θ 0°, φ {phi}°, θ-polarised, {cut}" for phi, cut in (
        (0, "E-plane (φ 0°)"), (0, "H-plane (φ 90°)"), (90, "H-plane (φ 0°)"), (90, "E-plane (φ 90°)"))]
    assert [len(curves(a)) for a in panels] == [2] * 4


def test_a_grid_without_back_scatter_plots_its_nearest_direction_against_frequency():
    directions = [(t, p) for t in (10.0, 45.0, 90.0, 135.0, 170.0) for p in (0.0, 90.0)]
    figures = scattering_figures(scattering_outcomes(FREQUENCIES, [(0.0, 0.0, "theta")], directions, sphere_like),
                                 FREQUENCIES)
    (ax,) = figures["rcs-vs-problem.frequency"].get_axes()
    assert len(curves(ax)) == 2 and "direction θ 10°, φ 0°" in figures["rcs-vs-problem.frequency"].get_suptitle()


def boxes_overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def sphere_figures():
    return scattering_figures(scattering_outcomes(FREQUENCIES, [(0.0, 0.0, "theta")], DIRECTIONS, sphere_like),
                              FREQUENCIES)


@pytest.mark.parametrize("make", [sphere_figures, monostatic_figures, blocks_figures])
def test_sweep_figures_are_legible(make):
    """Drawn as the PNG is: no two tick labels of an axis overlap, the legend lies outside every panel, and
    the title, labels and legend lie within the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for figure in make().values():
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        whole = figure.bbox
        legend = figure.legends[0].get_window_extent(renderer)
        texts = [figure._suptitle, *figure.legends[0].get_texts()]
        for ax in (a for a in figure.get_axes() if a.get_visible()):
            assert not boxes_overlap(legend, ax.get_window_extent(renderer))
            texts += [ax.xaxis.label, ax.yaxis.label, ax.title]
            for axis in (ax.xaxis, ax.yaxis):
                ticks = [t.get_window_extent(renderer) for t in axis.get_ticklabels()
                         if t.get_visible() and t.get_text()]
                assert 3 <= len(ticks) <= 8 or (axis is ax.yaxis and not ticks)  # a shared y axis labels once
                assert not any(boxes_overlap(a, b) for i, a in enumerate(ticks) for b in ticks[i + 1:])
        for text in texts:
            box = text.get_window_extent(renderer)
            assert whole.x0 <= box.x0 and box.x1 <= whole.x1 + 0.5 and whole.y0 <= box.y0 and box.y1 <= whole.y1 + 0.5


@pytest.mark.parametrize("key, message", [
    ("boundaries.NOPE.value", "sweep key boundaries.NOPE.value: the problem's mesh has no boundary 'NOPE'; "
                              "it has: AB, CDE, BC, EA"),
    ("regions.NOPE.mu_r", "sweep key regions.NOPE.mu_r: the problem's mesh has no region 'NOPE'; it has: air")])
def test_key_naming_what_the_mesh_lacks_is_refused_before_any_point_runs(tmp_path, capsys, key, message):
    """Exit 2 and one line, no cluster started and no folder made (today's sweep meshed every point and failed
    each with exit 3); a boundary the case's mesh has but the problem leaves natural is accepted."""
    from paraflux.engine.cli import main

    sweep = write_sweep_files(tmp_path)
    sweep.write_text(sweep.read_text().replace("boundaries.AB.value", key))
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"paraflux: error: {message}"]
    assert not (tmp_path / "out").exists()
    spec = sweep_spec(tmp_path, [{"key": "boundaries.BC.value", "values": [1.0, 2.0]}])
    assert len(grid_points(spec)) == 2


def test_boundary_names_of_a_mesh_file_are_read_without_meshing(tmp_path):
    """A problem on a mesh file: the file's named boundaries (not its regions) are what a key may name."""
    from importlib import resources

    problem = str(resources.files("paraflux.resources") / "problems" / "open-slot-from-file.toml")
    axes = [{"key": "boundaries.BC.value", "values": [1.0, 2.0]}]
    assert len(grid_points(parse_sweep({"sweep": {"problem": problem}, "axes": axes}, tmp_path))) == 2
    axes = [{"key": "boundaries.NOPE.value", "values": [1.0, 2.0]}]
    with pytest.raises(ProblemError, match=r"has no boundary 'NOPE'; it has: AB, CDE, BC, EA$"):
        parse_sweep({"sweep": {"problem": problem}, "axes": axes}, tmp_path)


def test_other_studies_plot_their_outputs_with_units_against_the_swept_key():
    """The open slot's energy and largest |B| against the potential on AB (A, the scalar potential), a line
    per mesh size labelled by value; the sweep file's plots choose among them."""
    from paraflux.engine.sweep.plots import sweep_figures
    from paraflux.engine.sweep.spec import Axis
    from paraflux.engine.sweep.table import table_rows
    from paraflux.engine.sweep.task import PointOutcome

    axes = (Axis("key", "boundaries.AB.value", (500.0, 700.0)), Axis("key", "case.elements", (500, 1000)))
    outcomes = [PointOutcome(f"{v}-{n}", {"boundaries.AB.value": v, "case.elements": n}, "done",
                             ({"energy": v * v * 1e-5 + n * 1e-9, "max_B": v * 1e-3, "iterations": n // 10},))
                for v in (500.0, 700.0) for n in (500, 1000)]
    columns, rows = table_rows(axes, outcomes)
    problem = parse_problem(BASE, Path("."))
    plots = study_for_kind("magnetostatic").sweep_plots(problem)
    figures = dict(sweep_figures(plots, axes, columns, rows, ("energy", "max_B")))
    assert list(figures) == ["energy-vs-boundaries.AB.value", "max_B-vs-boundaries.AB.value"]
    (ax,) = figures["energy-vs-boundaries.AB.value"].get_axes()
    assert ax.get_xlabel() == "potential on AB (A)" and ax.get_ylabel() == "stored energy (J/m)"
    assert legend_texts(figures["energy-vs-boundaries.AB.value"]) == ["500", "1000"]
    assert figures["energy-vs-boundaries.AB.value"].legends[0].get_title().get_text() == "target elements"
    assert [list(x) for x, _ in line_data(ax)] == [[500.0, 700.0]] * 2
    every = dict(sweep_figures(plots, axes, columns, rows))
    assert list(every) == ["energy-vs-boundaries.AB.value", "max_B-vs-boundaries.AB.value",
                           "iterations-vs-boundaries.AB.value"]
    zipped = dict(sweep_figures(plots, axes, columns, rows[::3], ("energy",), zipped=True))  # (500, 500), (700, 1000)
    assert [len(curves(a)) for a in zipped["energy-vs-boundaries.AB.value"].get_axes()] == [1]
