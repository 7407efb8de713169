"""Progress reporting and cancellation passed into long engine runs by the CLI, GUI or benchmarks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .errors import Cancelled


def _no_progress(fraction: float, message: str) -> None:
    """Default progress sink: ignore."""


def _never() -> bool:
    return False


@dataclass(frozen=True)
class RunControl:
    """progress(fraction in [0, 1], message) is called between steps; cancel() returning True stops the run."""

    progress: Callable[[float, str], None] = field(default=_no_progress)
    cancel: Callable[[], bool] = field(default=_never)

    @property
    def cancellable(self) -> bool:
        """Whether someone can cancel this run (then gmsh runs in a child process it can stop)."""
        return self.cancel is not _never

    def check(self) -> None:
        """Raise Cancelled when the user asked to stop."""
        if self.cancel():
            raise Cancelled("cancelled by the user")

    def report(self, fraction: float, message: str) -> None:
        self.check()
        self.progress(min(max(fraction, 0.0), 1.0), message)


# "<solver> iteration 12, residual 3.4e-05" (pcg.py, the EBE-J-PCG kernels) or "iteration 12: largest residual
# 3.4e-05 (...)" (the scattering iteration): the progress lines that carry a residual
_ITERATION = re.compile(r"iteration (\d+)[,:] (?:largest )?residual ([-+0-9.eE]+|nan|inf)")


def iteration_of(message: str) -> tuple[int, float] | None:
    """(iteration, relative residual) of a progress message that reports one, else None (for live charts)."""
    match = _ITERATION.search(message)
    return None if match is None else (int(match.group(1)), float(match.group(2)))
