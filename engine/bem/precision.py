"""The multipole order for a requested precision of the FMM solve (the `precision` axis of the BEM study).

The precision is that of the whole solve: the relative 2-norm difference of the nodal displacements from the
direct solve's, which the translation error reaches amplified by the traction operator's cancellations (and,
for the cross-level schemes, by the system's inverse: docs/studies/fmbem.md), not the error of G alone. ORDERS gives,
per M2L scheme, the lowest order whose worst measured error over the tension bar (348 triangles), the hollow-
sphere octant (916) and the bracket (1,074; the worst in every case) is within each precision, with the
solve's defaults (separation 2, far-field points per fmm_operator.far_points_for). Measured on the CPU:

    standard (and batched-gemm, the same translations): p = 6 / 8 / 10 give 2.8e-4 / 1.5e-5 / 1.2e-6
    child-to-parent: 9.2e-4 / 4.0e-5 / 1.8e-5, and 4.5e-7 at p = 12
    parent-to-child: 4.4e-4 / 6.6e-4 / 3.2e-6, and 1.9e-6 at p = 12 (p = 8 is worse than p = 6 on the bracket)
    exponential (separation 1 only): 6.0e-3 / 2.6e-3 / 2.3e-4: 1e-3 from p = 10, 1e-4 at no measured order.
"""

from __future__ import annotations

from ..errors import ProblemError
from ..variants import BEM_PRECISION

PRECISIONS = tuple(name for name in BEM_PRECISION.names if name != "order")  # "order": use the order given

ORDERS: dict[str, dict[str, int]] = {
    "standard": {"1e-3": 6, "1e-4": 8, "1e-5": 10},
    "batched-gemm": {"1e-3": 6, "1e-4": 8, "1e-5": 10},
    "child-to-parent": {"1e-3": 6, "1e-4": 8, "1e-5": 12},
    "parent-to-child": {"1e-3": 6, "1e-4": 10, "1e-5": 10},
    "exponential": {"1e-3": 10},
}


def order_for(precision: str, scheme: str, order: int) -> int:
    """The multipole order to run: `order` itself for precision "order", else ORDERS' entry for the (resolved)
    M2L scheme; ProblemError where the scheme reaches that precision at no measured order."""
    if precision == "order":
        return order
    chosen = ORDERS[scheme].get(precision)
    if chosen is None:
        reached = [p for p in PRECISIONS if p in ORDERS[scheme]]
        raise ProblemError(f"the {scheme} M2L scheme does not reach a precision of {precision} at any measured "
                           f"order" + (f" (it reaches {', '.join(reached)})" if reached else "")
                           + "; choose standard, or give the order instead")
    return chosen
