"""Translation tables kept on disk between processes: the separation-2 M2L table takes 1.2 s to build at
p = 10 and 7 s at p = 14 (1,331 offsets of 240 x 240 at p = 14, 613 MB), every time a process makes its
first FMM of that order; loaded from the cache it takes a fraction of that.

The folder is PARAFLUX_CACHE_DIR, else $XDG_CACHE_HOME/paraflux/fmm, else ~/.cache/paraflux/fmm. A file's
name holds a digest of the code that builds the tables (operators.py, harmonics.py), so a changed formula
never reads an old table; a file that does not load whole, or has another shape, is built again; a folder
that cannot be written only means no cache. Files are written under a temporary name and renamed."""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

_SOURCES = ("operators.py", "harmonics.py")


def cache_dir() -> Path:
    """Where the tables are kept (see the module's docstring)."""
    if os.environ.get("PARAFLUX_CACHE_DIR"):
        return Path(os.environ["PARAFLUX_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "paraflux" / "fmm"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """12 hex digits of the table-building code: a new formula names new files."""
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()[:12]


def cached_table(name: str, shape: tuple[int, ...], build: Callable[[], np.ndarray]) -> np.ndarray:
    """The float64 array `name` of `shape` from the cache, else build() (then kept there when possible)."""
    path = cache_dir() / f"{name}-{code_digest()}.npy"
    try:
        table = np.load(path, allow_pickle=False)
        if table.shape == shape and table.dtype == np.float64:
            return table
    except (OSError, ValueError, EOFError):  # absent, truncated or not an array file
        pass
    table = build()
    _store(path, table)
    return table


def _store(path: Path, table: np.ndarray) -> None:
    """Write under a temporary name in the same folder and rename; drop the same table of older code. The
    name is unique per writer (mkstemp), not output.replace_atomically's fixed one: a sweep's workers may
    build the same table at once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".partial-", suffix=".npy", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, table, allow_pickle=False)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        stem = path.name.rsplit("-", 1)[0]
        for old in path.parent.glob(f"{stem}-*.npy"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:  # read-only or full disk: the table is still returned, only not kept
        pass
