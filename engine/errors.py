"""Errors that carry one clear, user-facing message; caught once at the CLI and GUI edge."""


class ParaFluxError(Exception):
    """Base class: the message names the problem and is shown to the user as is."""


class ProblemError(ParaFluxError):
    """A problem file or problem definition is malformed or inconsistent."""


class MeshError(ParaFluxError):
    """A mesh cannot be read or is not valid for the study (wrong cells, bad triangles)."""


class SolverError(ParaFluxError):
    """A solve failed: singular system, no convergence, device out of memory."""


class OutOfMemory(SolverError):
    """A run needed more memory than the device had; where: "GPU" or "host" (backend.out_of_memory)."""

    def __init__(self, message: str, where: str):
        super().__init__(message)
        self.where = where


class BackendError(ParaFluxError):
    """The requested array backend (e.g. CuPy on a GPU) is not available."""


class Cancelled(ParaFluxError):
    """The run was cancelled by the user."""


def shown(value) -> str:
    """A value as a message shows it: an integer too long to print in full (Python refuses past 4,300
    digits) by its digit count, anything else by its repr cut to 60 characters."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
