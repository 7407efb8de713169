"""Running out of memory: one SolverError line (exit 3) naming the memory needed and free, from the one
helper engine.backend.out_of_memory; on the GPU, per GPU study, with CuPy's pool limited to 1 MiB."""

from pathlib import Path

import pytest

from paraflux.engine.backend import out_of_memory
from paraflux.engine.cli import main


PEC_SPHERE = Path(__file__).resolve().parents[1] / "resources" / "problems" / "pec-sphere.toml"


class OutOfMemoryError(MemoryError):
    """CuPy's type and message, without CuPy."""


def test_a_gpu_out_of_memory_names_the_bytes_needed():
    error = out_of_memory(OutOfMemoryError("Out of memory allocating 3,221,225,472 bytes (allocated so far: "
                                           "0 bytes)."), "the FMM solve of 3,000 DOFs", "use a coarser mesh")
    assert str(error).startswith("the GPU ran out of memory for the FMM solve of 3,000 DOFs: it needed 3.00 GiB")
    assert str(error).endswith("; use a coarser mesh")


def test_a_host_out_of_memory_names_the_bytes_needed_and_free():
    error = out_of_memory(MemoryError("Unable to allocate 7.45 GiB for an array with shape (1000000000,) and "
                                      "data type float64"), "assembling", "use a lower order")
    assert "the host ran out of memory for assembling: it needed 7.45 GiB with " in str(error)
    assert " GiB free; use a lower order" in str(error)


def test_other_exceptions_are_not_out_of_memory():
    assert out_of_memory(ValueError("Unable to allocate"), "x", "y") is None


@pytest.fixture
def small_gpu_pool(own_gpu_pool):
    own_gpu_pool.set_limit(size=1 << 20)


@pytest.mark.gpu
@pytest.mark.parametrize("args", [
    ["--case", "transformer", "--backend", "cupy"],
    ["--case", "cantilever", "--backend", "cupy", "--integration", "aii", "--size", "2000"],
    ["--case", "bracket", "--backend", "cupy", "--method", "fmm"],
    ["--case", "sphere-in-box", "--loop", "cuda-s"],
    [str(PEC_SPHERE), "--loop", "cuda-tiled"],
], ids=["magnetostatic", "elasticity", "elastostatic-bem", "truncation", "scattering"])
def test_each_gpu_study_out_of_gpu_memory_says_so_in_one_line(tmp_path, capsys, small_gpu_pool, args):
    out = tmp_path / "out"
    code = main(["solve", *args, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 3, err
    assert len(err.splitlines()) == 1 and "the GPU ran out of memory for" in err and "it needed" in err
    assert "free of" in err and "the pool limited to 1.0 MiB" in err, err
    assert not out.exists()


def fallback_run():
    """A study run that runs out of GPU memory unless its problem's backend is numpy."""
    from paraflux.engine.errors import OutOfMemory

    def run(problem, control):
        if problem.solver.backend != "numpy":
            raise OutOfMemory("the GPU ran out of memory for this run: it needed 9.00 GiB", "GPU")
        return "solved on the CPU"
    return run


def test_backend_auto_falls_back_to_the_cpu_when_the_gpu_is_full():
    from paraflux.engine.backend import with_cpu_fallback
    from paraflux.engine.errors import OutOfMemory
    from paraflux.engine.problems import load_case_problem
    from paraflux.engine.run_control import RunControl
    from paraflux.engine.studies import STUDIES

    study = STUDIES["magnetostatic"]
    run = with_cpu_fallback(fallback_run(), study.apply_variants)
    said = []
    problem = load_case_problem("open-slot")
    assert problem.solver.backend == "auto"
    assert run(problem, RunControl(progress=lambda f, m: said.append(m))) == "solved on the CPU"
    assert said == ["the GPU ran out of memory for this run: it needed 9.00 GiB; running on the CPU instead"]
    with pytest.raises(OutOfMemory, match="needed 9.00 GiB"):  # asked for the GPU: no fallback
        run(study.apply_variants(problem, {"backend": "cupy"}), RunControl())


@pytest.mark.gpu
@pytest.mark.parametrize("args", [
    ["--case", "transformer"], ["--case", "cantilever", "--size", "2000"], ["--case", "bracket", "--method", "fmm"],
], ids=["magnetostatic", "elasticity", "elastostatic-bem"])
def test_backend_auto_on_a_full_gpu_solves_on_the_cpu(tmp_path, capsys, small_gpu_pool, args):
    import json

    out = tmp_path / "out"
    assert main(["solve", *args, "--backend", "auto", "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["backend"] in ("numpy", "auto (numpy)")
