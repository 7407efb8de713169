"""The desktop bundle: `make package` builds it, and its self-test runs with no Python packages from
outside the bundle (an empty environment with a minimal PATH) under a virtual display."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.package


def test_bundle_builds_and_passes_its_self_test(tmp_path):
    subprocess.run(["make", "package"], cwd=ROOT, check=True)
    bundle = ROOT / "dist" / "ParaFlux"
    assert (ROOT / "dist" / "ParaFlux.tar.gz").is_file()
    for path in ("paraflux-gui", "paraflux", "share/applications/paraflux.desktop",
                 "share/metainfo/io.paraflux.ParaFlux.metainfo.xml", "share/icons/hicolor/256x256/apps/paraflux.png"):
        assert (bundle / path).exists(), path
    png = tmp_path / "self-test.png"
    xvfb = shutil.which("xvfb-run")
    assert xvfb, "xvfb-run is needed (make package-test installs it)"
    proc = subprocess.run([xvfb, "-a", "-s", "-screen 0 1280x1024x24", str(bundle / "paraflux-gui"), "--self-test",
                           str(png)], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    from PySide6 import QtGui

    image = QtGui.QImage(str(png)).convertToFormat(QtGui.QImage.Format_Grayscale8)
    pixels = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    assert pixels.std() > 10  # not blank
    cli = subprocess.run([str(bundle / "paraflux"), "cases"], env={"PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and "transformer" in cli.stdout
