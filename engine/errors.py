"""Errors that carry one clear, user-facing message; caught once at the CLI and GUI edge."""


class ParaFluxError(Exception):
    """Base class: the message names the problem and is shown to the user as is."""


class ProblemError(ParaFluxError):
    """A problem file or problem definition is malformed or inconsistent."""


class MeshError(ParaFluxError):
    """A mesh cannot be read or is not valid for the study (wrong cells, bad triangles)."""


class SolverError(ParaFluxError):
    """A solve failed: singular system, no convergence, device out of memory."""


class BackendError(ParaFluxError):
    """The requested array backend (e.g. CuPy on a GPU) is not available."""


class Cancelled(ParaFluxError):
    """The run was cancelled by the user."""
