"""The scattering-ngsolve benchmark: NGSolve's PEC sphere against Mie (skipped without ngsolve, which is the
optional extra `peers`), and its report from a small record."""

import math

import numpy as np
import pytest

from paraflux.engine.bench.scattering_ngsolve_report import render_markdown, verdict


def _row(solver, order, seconds, error, **extra):
    row = {"solver": solver, "diameter_wavelengths": 1.0, "order": order, "dofs": 1000 * order,
           "load_before": 0.5, "seconds": {"mesh": 1.0, "rest": seconds - 1.0}, "total_s": seconds,
           "mie_error_db": error}
    if solver == "paraflux":
        return {**row, "loop": "zgemm", "acceleration": "fixed-point", "linear_solver": "umfpack",
                "threads": {"numba": 2}, **extra}
    return {**row, "maxh_wavelengths": 0.2, "threads": 2, **extra}


def _record(rows):
    return {"benchmark": "scattering-ngsolve", "date": "d", "command": "c", "commit": "x", "host_cpu": "x86_64",
            "host_threads": 2, "load_before": 0.5, "versions": {"ngsolve": "6.2"},
            "config": {"layout": {"sprime_gap": 0.25, "pml_gap": 0.5, "pml_thickness": 0.4, "alpha": 1.5,
                                  "inverse": "sparsecholesky"}},
            "ngsolve_build": {"mkl": False, "pardiso": False, "umfpack": True}, "rows": rows}


def test_report_pairs_each_row_with_the_other_solvers_cheapest_row_at_the_same_or_smaller_error():
    rows = [_row("paraflux", 1, 20.0, 0.40), _row("paraflux", 2, 10.0, 0.10),
            _row("ngsolve", 2, 5.0, 1.00), _row("ngsolve", 3, 30.0, 0.30), _row("ngsolve", 3, 60.0, 0.05)]
    text = render_markdown(_record(rows))
    assert "| 1 | ParaFlux order 1, zgemm, fixed-point | 1,000 | numba 2 | 0.5 | mesh 1.00, rest 19.00 | 20.0 | 0.40 |" \
        in text
    assert "| 1 | NGSolve order 3, maxh 0.2 lambda | 3,000 | 2 (TaskManager) |" in text
    # ParaFlux order 1 (0.40 dB) meets NGSolve's cheapest at <= 0.40 dB: order 3 at 30 s
    assert ("- ParaFlux order 1, zgemm, fixed-point (0.40 dB, 20.0 s) against NGSolve order 3, maxh 0.2 lambda "
            "(0.30 dB, 30.0 s): ParaFlux faster, 1.5x.") in text
    assert "NGSolve order 2, maxh 0.2 lambda (1.00 dB, 5.0 s) against ParaFlux order 2" in text
    assert "(0.05 dB, 60.0 s): no ParaFlux setting run reached this error." in text
    assert verdict(rows) == "partly met" and "Verdict: **partly met**" in text
    assert verdict(rows[1:2] + rows[3:4]) == "met"
    assert verdict([_row("paraflux", 1, 20.0, 0.4), _row("ngsolve", 3, 5.0, 0.3)]) == "missed"
    # more accurate but slower: NGSolve reaches its 0.3 dB sooner than ParaFlux does
    assert verdict([_row("paraflux", 1, 20.0, 0.1), _row("ngsolve", 3, 5.0, 0.3)]) == "missed"
    assert verdict([_row("paraflux", 1, 5.0, 0.1), _row("ngsolve", 3, 20.0, 0.3)]) == "met"
    assert verdict([_row("paraflux", 1, 20.0, 0.1)]) == "not decided"
    assert "- ParaFlux order 1, zgemm, fixed-point: rest 19.0 s of 20.0 s (95 %)." in text
    assert "factorises with umfpack on the host" in text
    assert "2-wavelength sphere was not run (`--diameters 1 2` adds it)" in text
    assert "Verdict: **partly met**: ParaFlux faster in 3 of the 4 pairs above" in text
    table = [line.strip().strip("|").count("|") for line in text.splitlines() if line.startswith("|")]
    assert len(set(table)) == 1


TOLERANCE_DB = 0.5  # the bar for the study's default mesh; NGSolve order 3 at 0.3 wavelengths gave 0.28 dB


@pytest.mark.slow
def test_ngsolve_peer_reaches_mie_on_a_coarse_sphere():
    pytest.importorskip("ngsolve")
    from paraflux.engine.bench.ngsolve_peer import solve_sphere
    from paraflux.engine.bench.scattering import sphere_error_db
    from paraflux.engine.bench.scattering_ngsolve import cut_angles

    wavelength, radius = 1.0, 1.0 / (2 * math.pi)  # ka = 1
    theta, phi = cut_angles(10.0)
    run = solve_sphere(radius, wavelength, 3, 0.3, theta, phi, threads=1)
    assert run.threads == 1 and run.free_dofs < run.dofs
    assert sphere_error_db(radius, 2 * math.pi, theta, phi, run.sigma_theta, run.sigma_phi) < TOLERANCE_DB
    assert np.all(run.sigma_theta > 0) and set(run.seconds) == {"mesh", "assembly", "factorisation and solve",
                                                                 "far field"}

