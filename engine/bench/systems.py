"""Element systems of built-in cases, built before a benchmark or test calls a solver directly."""

from __future__ import annotations

from ..magnetostatics.run import build_system, element_properties, load_mesh
from ..problems import load_case_problem


def case_system(case: str, elements: int | None = None):
    """(problem, mesh in metres, element system) of a built-in case's example problem at about
    `elements` elements: what benchmarks and tests build before calling a solver directly."""
    problem = load_case_problem(case, elements)
    mesh = load_mesh(problem)
    mu, j = element_properties(problem, mesh)
    return problem, mesh, build_system(problem, mesh, mu, j)
