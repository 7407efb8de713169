"""meshio.read with every failure turned into one MeshError that names the file."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

from ..errors import MeshError


def read_meshio(path: str | Path, what: str = ""):
    """The meshio Mesh of path; MeshError (prefixed with what, e.g. "inner_surface: ") when the file is
    missing, empty or not a mesh meshio can parse."""
    import meshio  # noqa: PLC0415 (slow import, only needed here)

    path = Path(path)
    if not path.is_file():
        raise MeshError(f"{what}mesh file not found: {path}")
    if path.stat().st_size == 0:
        raise MeshError(f"{what}mesh file {path} is empty")
    said = io.StringIO()  # meshio prints some errors itself: they go into the message, not the terminal
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            mesh = meshio.read(path)
        if said.getvalue().strip():  # what it said about a file it did read, kept as a warning
            warnings.warn(f"meshio on {path}: {' '.join(said.getvalue().split())}", stacklevel=2)
        return mesh
    except SystemExit:  # meshio exits on a file no reader takes, and its XML readers on a truncated one
        text = " ".join(said.getvalue().split()).removeprefix("Error: ")
        raise MeshError(f"{what}cannot read mesh file {path}: it is malformed or incomplete"
                        + (f" (meshio: {text})" if text else "")) from None
    except Exception as exc:  # meshio raises many types on garbage
        raise MeshError(f"{what}cannot read mesh file {path}: {type(exc).__name__}: {exc}") from None
