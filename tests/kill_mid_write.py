"""Run one output writer and send this process a signal half-way through its file (test_kill_mid_write.py
runs it): python tests/kill_mid_write.py WRITER SIGNAL OUT_FOLDER. Exits with the CLI's code for the ending."""

import json
import os
import pathlib
import signal
import sys

import meshio
import numpy as np

from paraflux.engine.cli import main
from paraflux.engine.cli_edge import outcome, raise_on_sigterm
from paraflux.engine.output import write_all, write_text_atomic


def cut_and_signal(path, signum) -> None:
    """Cut the file just written to half its size (a write caught half-way), then deliver the signal."""
    path = pathlib.Path(path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2]) if path.exists() else None
    os.kill(os.getpid(), signum)


def patch(owner, name, signum, wanted=lambda path: True):
    """owner.name(path, ...) writes, then is cut half-way by the signal (for paths that wanted() picks)."""
    original = getattr(owner, name)

    def wrapped(target, *args, **kwargs):
        original(target, *args, **kwargs)
        if wanted(str(target)):
            cut_and_signal(target, signum)
    setattr(owner, name, wrapped)


def solve(out) -> int:
    return main(["solve", "--case", "open-slot", "--size", "50", "--out", str(out), "--quiet",
                 "--backend", "numpy"])


def run(writer: str, signum: int, out: pathlib.Path) -> int:
    if writer == "vtu":
        patch(meshio, "write", signum)
        return solve(out)
    if writer == "json":
        original = pathlib.Path.write_text

        def write_text(self, text, *args, **kwargs):
            original(self, text, *args, **kwargs)
            if self.name.endswith(".json.partial"):
                cut_and_signal(self, signum)
        pathlib.Path.write_text = write_text
        return solve(out)
    raise_on_sigterm()  # what the CLI installs; the window saves its files through write_text_atomic too
    try:
        if writer == "npz":
            patch(np, "savez", signum)
            write_all(out, lambda folder: (np.savez(folder / "fields_S.npz", E=np.ones((64, 3))),
                                           [folder / "fields_S.npz"])[1])
        else:  # csv, session
            original = pathlib.Path.write_text

            def write_text(self, text, *args, **kwargs):
                original(self, text, *args, **kwargs)
                cut_and_signal(self, signum)
            pathlib.Path.write_text = write_text
            name, text = (("comparison.csv", "variant,seconds\n" + "a,1.0\n" * 500) if writer == "csv" else
                          ("session.paraflux.json", json.dumps({"study": "magnetostatic", "case": "open-slot"})))
            write_text_atomic(out / name, text)
    except BaseException as exc:  # noqa: BLE001
        code, line = outcome(exc)
        print(line, file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], getattr(signal, sys.argv[2]), pathlib.Path(sys.argv[3])))
