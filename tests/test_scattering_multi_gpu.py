"""The scattering iteration's operator on every GPU: loop auto takes multi-gpu-tiled where several GPUs are
visible (zgemm otherwise), and a many-incidence run split over the GPUs, by S's points or by its columns,
gives the one-GPU run's RCS and iteration counts."""

import numpy as np
import pytest

from paraflux.engine import backend, gpu_probe
from paraflux.engine.scattering.run import run_problem
from paraflux.engine.scattering.waves import dbsm
from paraflux.engine.truncation import multi_gpu
from paraflux.engine.variants import LOOP, SCATTERING_LOOP
from tests.test_scattering import sphere

MANY = dict(geometry__elements_per_wavelength=6, far_field__monostatic=True,
            incidence__theta_deg=90.0, incidence__phi_deg=[float(p) for p in range(0, 360, 10)])


@pytest.mark.parametrize(("count", "on_gpu", "loop"), [(4, True, "multi-gpu-tiled"), (2, True, "multi-gpu-tiled"),
                                                       (1, True, "zgemm"), (0, False, "zgemm")])
def test_auto_loop_is_multi_gpu_tiled_on_several_gpus_else_zgemm(monkeypatch, count, on_gpu, loop):
    monkeypatch.setattr(gpu_probe, "gpu_count", lambda: count)
    assert SCATTERING_LOOP.resolve("auto", on_gpu) == loop
    assert SCATTERING_LOOP.default == "auto" and "auto" not in LOOP.names


def test_the_split_goes_by_incidences_once_every_gpu_gets_eight():
    assert [multi_gpu.split_for(n, 4) for n in (1, 10, 31, 32, 37)] == ["points"] * 3 + ["incidences"] * 2
    assert multi_gpu.split_for(8, 1) == "incidences" and multi_gpu.split_for(7, 1) == "points"


def test_a_run_without_a_gpu_names_where_its_operator_ran(monkeypatch):
    monkeypatch.setattr("paraflux.engine.scattering.iteration.gpu_unavailable_reason", lambda: "no GPU")
    monkeypatch.setattr("paraflux.engine.truncation.strategies.get_backend", lambda name: backend.get_backend("numpy"))
    result = run_problem(sphere(**{**MANY, "incidence__phi_deg": [0.0, 90.0]}))
    assert result.devices["operator"] == "host (zgemm)"


@pytest.mark.gpu
@pytest.mark.parametrize("per_gpu", [1, 10 ** 6], ids=["by-incidences", "by-points"])
def test_a_many_incidence_run_over_every_gpu_equals_one_gpu(monkeypatch, per_gpu):
    cp = pytest.importorskip("cupy")
    count = cp.cuda.runtime.getDeviceCount()
    if count < 2:
        pytest.skip("needs at least 2 GPUs")
    monkeypatch.setattr(multi_gpu, "INCIDENCES_PER_GPU", per_gpu)
    problem = sphere(**MANY)
    one = run_problem(problem.with_solver(loop="zgemm"))
    every = run_problem(problem.with_solver(loop="auto"))
    assert one.devices["operator"] == "GPU (zgemm)" and every.devices["operator"] == f"{count} GPUs (multi-gpu-tiled)"
    assert np.array_equal(every.iteration_counts, one.iteration_counts)
    assert np.abs(dbsm(every.sigma_theta) - dbsm(one.sigma_theta)).max() < 1e-6


def test_the_report_sets_a_sweep_over_several_gpus_against_one():
    from paraflux.engine.bench.scattering_report import _over_gpus  # noqa: PLC0415

    def sweep(device, total, operator, where):
        phases = {"back-substitution": total - operator - 1.0, "operator": operator}
        many = {"total_s": total, "linear_solver": "umfpack", "iteration_phases_s": phases,
                "seconds": {"mesh": 1.0, "iterations": total - 1.0},
                "phase_devices": {"operator": where, "back-substitution": "host"}}
        return {"device": device, "date": "2026-11-27 10:00 UTC", "incidences": 360, "loop": "auto", "many": many}

    one = sweep("NVIDIA H100", 40.0, 1.0, "GPU (zgemm)")
    four = sweep("4 x NVIDIA H100", 39.5, 0.5, "4 GPUs (multi-gpu-tiled)")
    [line] = _over_gpus([one, four, sweep("NVIDIA H200", 1.0, 1.0, "GPU (zgemm)")])
    assert "split over 4 x NVIDIA H100 against one" in line and "39.5 s against 40.0 s (1.01x)" in line
    assert "operator on 4 GPUs (multi-gpu-tiled) 0.50 s against 1.00 s on GPU (zgemm) (2.00x), 2% of" in line
    assert "largest phase is iterations: back-substitution (38.0 s, back-substitution on the host)" in line
    assert _over_gpus([four]) == []
