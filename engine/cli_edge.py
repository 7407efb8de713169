"""The command line's edge: the exit-code policy, one-line usage errors, SIGTERM as an exception that
unwinds (so clean-up code runs) and the translation of any exception into one line and its exit code."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .errors import Cancelled, ParaFluxError, SolverError

EXIT_CODES = """exit codes:
  0    done
  2    the input is wrong: problem file, mesh file or option (one line names it)
  3    the numerics failed: singular or indefinite system, no convergence, out of memory
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM)
  1    a defect of ParaFlux itself (rerun with --debug for the traceback)"""

INPUT, NUMERICS, INTERRUPTED, TERMINATED, DEFECT = 2, 3, 130, 143, 1


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread so that every `finally` (temporary files, folders made)
    runs before the process ends. A BaseException, like KeyboardInterrupt, so `except Exception` lets it by."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line naming the mistake and the help to read."""

    def parse_args(self, args=None, namespace=None):
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:  # named with the help of the command they were given to
            command = getattr(parsed, "command", None)
            self.error(f"unrecognized arguments: {' '.join(extra)}", f"{self.prog} {command}" if command else None)
        return parsed

    def error(self, message: str, help_of: str | None = None):
        self.exit(INPUT, f"{self.prog.split()[0]}: error: {message} (see '{help_of or self.prog} --help')\n")


def raise_on_sigterm():
    """SIGTERM raises Terminated in the main thread from now on; returns the handler it replaced (None
    where main() runs in another thread, which cannot set handlers)."""
    def handler(signum, frame):
        raise Terminated()
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


def _chain(exc: BaseException):
    """exc and the exceptions it was raised from or during (Numba's SystemError carries the
    KeyboardInterrupt that stopped its compiled loop as its cause)."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def outcome(exc: BaseException) -> tuple[int, str]:
    """(exit code, the one line to print on stderr) for an exception that ended a command."""
    for link in _chain(exc):
        if isinstance(link, Terminated):
            return TERMINATED, "paraflux: terminated"
        if isinstance(link, (KeyboardInterrupt, Cancelled)):
            return INTERRUPTED, "paraflux: interrupted"
    if isinstance(exc, (SolverError, MemoryError)):
        return NUMERICS, f"paraflux: error: {sentence(exc)}"
    if isinstance(exc, (ParaFluxError, OSError)):  # OSError: a file or folder that cannot be read or written
        return INPUT, f"paraflux: error: {sentence(exc)}"
    return DEFECT, f"paraflux: {sentence(exc)} (rerun with --debug for the traceback)"


def sentence(exc: BaseException) -> str:
    """What the user reads about an exception that ended a run, the same on the command line and in the
    window's dialog: a ParaFlux error's or file error's own message, memory named by
    backend.out_of_memory, anything else as an internal error."""
    if isinstance(exc, (ParaFluxError, OSError)):
        return str(exc)
    if isinstance(exc, MemoryError):  # one a study did not name itself
        from .backend import out_of_memory  # noqa: PLC0415

        return str(out_of_memory(exc, "this run", "use a coarser mesh or a lower order"))
    return f"internal error: {type(exc).__name__}: {exc}"


def quiet_closed_pipe() -> None:
    """After a BrokenPipeError (e.g. `paraflux cases | head -1`): point stdout at /dev/null so that
    Python's flush at exit does not complain a second time."""
    import os  # noqa: PLC0415

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's capture)
        pass
