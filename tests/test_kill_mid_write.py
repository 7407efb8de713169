"""Ctrl-C and SIGTERM half-way through each output writer (VTU, JSON, NPZ, CSV, session file): exit 130 or
143 with one line, and the output folder as it was before (no partial file, no folder made)."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("kill_mid_write.py")


@pytest.mark.parametrize("writer", ["vtu", "json", "npz", "csv", "session"])
@pytest.mark.parametrize("signal_name, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_mid_write_leaves_the_folder_as_it_was(tmp_path, writer, signal_name, code):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("kept")
    proc = subprocess.run([sys.executable, str(SCRIPT), writer, signal_name, str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["old.txt"]
    assert (out / "old.txt").read_text() == "kept"


def test_a_killed_run_removes_the_folders_it_made(tmp_path):
    out = tmp_path / "a" / "b" / "c"
    proc = subprocess.run([sys.executable, str(SCRIPT), "vtu", "SIGTERM", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip() == "paraflux: terminated"
    assert not (tmp_path / "a").exists()
