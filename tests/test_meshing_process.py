"""Built-in cases meshed in a child process when the run can be cancelled: the same mesh as in-process,
errors and crashes of the child reported by name, Cancel honoured while gmsh is inside one call."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("gmsh")

from paraflux.engine.errors import Cancelled, MeshError, ProblemError  # noqa: E402
from paraflux.engine.mesh import meshing_process  # noqa: E402
from paraflux.engine.mesh.cases import mesh_case  # noqa: E402
from paraflux.engine.run_control import RunControl  # noqa: E402


def cancellable(event: threading.Event | None = None) -> RunControl:
    return RunControl(cancel=(event or threading.Event()).is_set)


def exit_at_once(code: int):
    """Ends the process it runs in, as a crash inside gmsh would."""
    os._exit(code)


def divide_by_zero():
    return 1 / 0


def test_only_a_run_that_can_be_cancelled_meshes_in_a_child():
    assert cancellable().cancellable and not RunControl().cancellable
    assert meshing_process.run_meshing(os.getpid) == os.getpid()  # no control: this process
    assert meshing_process.run_meshing(os.getpid, control=cancellable()) != os.getpid()


def test_the_child_gives_the_mesh_meshed_here():
    here = mesh_case("open-slot", 1000)
    there = meshing_process.run_meshing(mesh_case, "open-slot", 1000, control=cancellable())
    assert np.array_equal(here.points, there.points) and np.array_equal(here.triangles, there.triangles)
    assert np.array_equal(here.region_index, there.region_index) and here.region_names == there.region_names
    assert np.array_equal(here.edges, there.edges) and here.boundary_names == there.boundary_names


def test_errors_in_the_child_come_back_by_name_and_the_child_lives_on():
    control = cancellable()
    with pytest.raises(ProblemError, match="unknown case 'nope'"):
        meshing_process.run_meshing(mesh_case, "nope", 1000, control=control)
    pid = meshing_process.run_meshing(os.getpid, control=control)
    with pytest.raises(MeshError, match="meshing failed: ZeroDivisionError"):
        meshing_process.run_meshing(divide_by_zero, control=control)
    assert meshing_process.run_meshing(os.getpid, control=control) == pid


def test_a_crash_of_the_child_is_a_mesh_error_and_the_next_case_gets_a_new_child():
    control = cancellable()
    pid = meshing_process.run_meshing(os.getpid, control=control)
    with pytest.raises(MeshError, match=r"ended unexpectedly \(exit code 3\)"):
        meshing_process.run_meshing(exit_at_once, 3, control=control)
    assert meshing_process.run_meshing(os.getpid, control=control) not in (pid, os.getpid())


def test_an_interrupted_call_leaves_no_answer_for_the_next_one():
    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        meshing_process.run_meshing(mesh_case, "transformer", 100_000, control=RunControl(cancel=interrupt))
    mesh = meshing_process.run_meshing(mesh_case, "open-slot", 500, control=cancellable())
    assert set(mesh.boundary_names) == {"AB", "BC", "EA", "CDE"}  # not the transformer it was asked before


def test_cancel_stops_gmsh_inside_one_call():
    meshing_process.run_meshing(os.getpid, control=cancellable())  # the child is started and kept
    event = threading.Event()
    threading.Timer(0.5, event.set).start()
    start = time.monotonic()
    with pytest.raises(Cancelled):  # meshing this case takes several seconds in one gmsh call
        meshing_process.run_meshing(mesh_case, "transformer", 300_000, control=cancellable(event))
    assert time.monotonic() - start < 2.0
    assert meshing_process.run_meshing(mesh_case, "open-slot", 500, control=cancellable()).n_elements > 0


def test_a_script_without_a_main_guard_is_not_run_again_in_the_child(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text("import threading\n"
                      "from paraflux.engine.mesh.cases import mesh_case\n"
                      "from paraflux.engine.mesh.meshing_process import run_meshing\n"
                      "from paraflux.engine.run_control import RunControl\n"
                      "control = RunControl(cancel=threading.Event().is_set)\n"
                      "print('elements', run_meshing(mesh_case, 'open-slot', 500, control=control).n_elements)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.count("elements") == 1, proc.stderr
