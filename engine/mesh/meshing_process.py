"""Built-in cases meshed in a child process when the run can be cancelled (the GUI): gmsh cannot be
interrupted inside a call, so Cancel ends that process instead, and a crash inside gmsh ends only it.
The child is started once and kept for the next case; runs that cannot be cancelled mesh in-process."""

from __future__ import annotations

import multiprocessing
import sys
import threading
from typing import Any, Callable

from ..errors import MeshError, ParaFluxError
from ..run_control import RunControl

POLL_SECONDS = 0.05  # how often the parent checks for Cancel while the child meshes

_lock = threading.Lock()  # one case at a time through the one child
_child: tuple[Any, Any] | None = None  # (process, parent end of the pipe)


def run_meshing(function: Callable[..., Any], *args: Any, control: RunControl | None = None) -> Any:
    """function(*args), a module-level meshing function whose result pickles. In a child process when
    control can cancel, calling control.check() meanwhile; in this process otherwise."""
    if control is None or not control.cancellable:
        return function(*args)
    with _lock:
        process, conn = _running_child()
        try:
            conn.send((function, args))
            while not conn.poll(POLL_SECONDS):
                if not process.is_alive():
                    break
                control.check()
            status, value = conn.recv()
        except (EOFError, OSError):
            code = _stop_child()
            raise MeshError(f"the meshing process ended unexpectedly (exit code {code}); gmsh may have run "
                            "out of memory or crashed on this case") from None
        except BaseException:  # Cancel, Ctrl-C, anything: a child still meshing would answer the next call
            _stop_child()
            raise
    if status == "error":
        raise value
    return value


def _running_child() -> tuple[Any, Any]:
    """The kept child, started (spawned, never forked: the parent has threads) when there is none. It
    runs module-level functions only, so it is started without the parent's __main__: a script with no
    `if __name__ == "__main__"` guard is not run again inside it."""
    global _child
    if _child is not None and _child[0].is_alive():
        return _child
    _stop_child()
    context = multiprocessing.get_context("spawn")
    parent_end, child_end = context.Pipe()
    process = context.Process(target=serve, args=(child_end,), name="paraflux-meshing", daemon=True)
    main = sys.modules["__main__"]
    hidden = {key: main.__dict__.get(key) for key in ("__file__", "__spec__") if key in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        process.start()
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(hidden)
    child_end.close()
    _child = (process, parent_end)
    return _child


def _stop_child() -> int | None:
    """End the kept child, if any; its exit code."""
    global _child
    if _child is None:
        return None
    process, conn = _child
    _child = None
    conn.close()
    if process.is_alive():
        process.kill()
    process.join(5)
    return process.exitcode


def serve(conn) -> None:
    """The child's loop: receive (function, args), send back ('ok', result) or ('error', exception);
    ends when the parent closes its end."""
    while True:
        try:
            function, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = ("ok", function(*args))
        except (ParaFluxError, MemoryError) as exc:
            reply = ("error", exc)
        except Exception as exc:  # noqa: BLE001 (a bug in a case: the parent shows it, the child lives on)
            reply = ("error", MeshError(f"meshing failed: {type(exc).__name__}: {exc}"))
        conn.send(reply)
        del reply  # an idle child holds no mesh
