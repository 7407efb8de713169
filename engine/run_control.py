"""Progress reporting and cancellation passed into long engine runs by the CLI, GUI or benchmarks."""

from __future__ import annotations

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
