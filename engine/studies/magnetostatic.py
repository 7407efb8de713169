"""Registry entry of the 2D magnetostatics study (EBE-J-PCG and its reference)."""

from __future__ import annotations

from typing import Mapping

from ..magnetostatics.run import run_magnetostatic
from ..output import write_magnetostatic
from ..problems.magnetostatic import MagnetostaticProblem
from .registry import Choice, Study, VariantAxis, register

METHOD = VariantAxis("method", "Solver", (
    Choice("ebe-jpcg", "element-by-element Jacobi-preconditioned CG, no global matrix"),
    Choice("sparse-direct", "assembled sparse matrix, SciPy SuperLU (CPU reference)"),
), "ebe-jpcg")

BACKEND = VariantAxis("backend", "Backend", (
    Choice("numpy", "CPU, NumPy"),
    Choice("cupy", "CUDA GPU, CuPy", needs_gpu=True),
    Choice("auto", "CuPy when a usable GPU is present, NumPy otherwise"),
), "auto")


REDUCTION = VariantAxis("reduction", "Reduction", (
    Choice("auto", "library on NumPy, fused on the GPU"),
    Choice("adjacent", "shared-memory tree, interleaved addressing (paper 000, Fig. 5)"),
    Choice("sequential", "shared-memory tree, sequential addressing (paper 000, Fig. 6)"),
    Choice("warp-shuffle", "grid-stride loads and warp shuffles, two passes"),
    Choice("library", "CuPy's CUB sum on the GPU, NumPy's dot on the CPU"),
    Choice("fused", "inner products computed inside the product and update kernels"),
), "auto")


ACCUMULATE = VariantAxis("accumulate", "Accumulation", (
    Choice("atomic", "element contributions added with atomics (GPU) or one bincount (CPU)"),
    Choice("colored", "one conflict-free pass per colour group: bitwise identical from run to run"),
), "atomic")

COLORING = VariantAxis("coloring", "Colouring", (
    Choice("ccm", "classical: one colour per pass over the elements (paper 002, Algorithm 1)"),
    Choice("fcm", "fast colour marking: one pass, smallest colour free near the element (Algorithm 2)"),
    Choice("ofcm", "optimised FCM with a per-node tabu bit set of used colours (Algorithm 3)"),
    Choice("parallel", "Jones-Plassmann rounds on the GPU (CuPy) or vectorised NumPy"),
), "ofcm")

VARIANT_KEYS = ("method", "backend", "reduction", "accumulate", "coloring")


def _apply(problem: MagnetostaticProblem, variants: Mapping[str, str]) -> MagnetostaticProblem:
    return problem.with_solver(**{k: v for k, v in variants.items() if k in VARIANT_KEYS})


MAGNETOSTATIC = register(Study(
    name="magnetostatic",
    title="2D magnetostatics (EBE-J-PCG)",
    problem_kind="magnetostatic",
    mesh_kind="triangles-2d",
    field_dtype="real",
    max_devices=1,
    axes=(METHOD, BACKEND, REDUCTION, ACCUMULATE, COLORING),
    apply_variants=_apply,
    run=run_magnetostatic,
    write=write_magnetostatic,
))
