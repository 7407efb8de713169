"""What a sweep of each field study plots (Study.sweep_plots): its headline scalar outputs against the swept
key, with their units, and how its problem keys read (the scattering study's are in scattering_sweep.py)."""

from __future__ import annotations

from ..sweep.plots import Quantity, SweepPlot, SweepPlots

ITERATIONS = Quantity("iterations", "iterations")
COMMON_KEYS = (Quantity("case.elements", "target elements"), Quantity("solver.rtol", "solver rtol"),
               Quantity("solver.order", "expansion order"), Quantity("problem.order", "element order p"))


def _against(*outputs: Quantity) -> tuple[SweepPlot, ...]:
    """A figure per output against the first swept key (a line per value of the other axes)."""
    return tuple(SweepPlot(f"{q.column}-vs-{{x}}", f"{q.label} against {{x}}", (q,)) for q in outputs)


def magnetostatic_plots(problem) -> SweepPlots:
    """Energy, largest |B| and iterations; potentials in A (scalar) or Wb/m (A_z, A_phi)."""
    potential = "A" if problem.potential == "scalar" else "Wb/m"
    energy = "J" if problem.formulation == "axisymmetric" else "J/m"
    return SweepPlots(_against(Quantity("energy", "stored energy", energy), Quantity("max_B", "largest |B|", "T"),
                               ITERATIONS),
                      (*COMMON_KEYS, Quantity("boundaries.*.value", "potential on {}", potential),
                       Quantity("regions.*.mu_r", "μr of {}"),
                       Quantity("regions.*.current_density", "J in {}", "A/m²")))


def elasticity_plots(problem) -> SweepPlots:
    """Strain energy, largest displacement (mm) and iterations; Young's moduli in GPa."""
    return SweepPlots(_against(Quantity("strain_energy", "strain energy", "J"),
                               Quantity("max_displacement", "largest displacement", "mm", 1e3), ITERATIONS),
                      (*COMMON_KEYS, Quantity("regions.*.young", "E of {}", "GPa", 1e-9),
                       Quantity("regions.*.poisson", "ν of {}")))


def bem_plots(problem) -> SweepPlots:
    """Largest displacement (mm), largest von Mises stress (MPa) and GMRES iterations."""
    return SweepPlots(_against(Quantity("max_displacement", "largest displacement", "mm", 1e3),
                               Quantity("max_von_mises", "largest von Mises stress", "MPa", 1e-6), ITERATIONS),
                      (*COMMON_KEYS, Quantity("problem.young", "Young's modulus", "GPa", 1e-9),
                       Quantity("problem.poisson", "Poisson's ratio"),
                       Quantity("boundaries.*.value", "pressure on {}", "MPa", 1e-6),
                       Quantity("boundaries.*.value.*", "traction on {} [{}]", "MPa", 1e-6)))


def truncation_plots(problem) -> SweepPlots:
    """The field's relative error on S (E and curl E) and the operator's GFLOP/s."""
    return SweepPlots(
        (SweepPlot("error-vs-{x}", "relative error of E on S against {x}",
                   (Quantity("relative_error", "E"), Quantity("relative_error_curl", "curl E")),
                   y_label="relative error", log_y=True),
         *_against(Quantity("gflops", "operator speed", "GFLOP/s"))),
        (*COMMON_KEYS, Quantity("problem.frequency", "frequency", "MHz", 1e-6, named=False),
         Quantity("problem.quadrature", "quadrature points"), Quantity("case.inner_elements", "S' triangles"),
         Quantity("case.outer_elements", "S triangles")))
