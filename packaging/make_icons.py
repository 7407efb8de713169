"""Render resources/icons/paraflux.svg to PNG icons of the usual sizes (run by `make package`)."""
import sys
from pathlib import Path

from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

svg, out = Path(sys.argv[1]), Path(sys.argv[2])
app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
renderer = QtSvg.QSvgRenderer(str(svg))
for size in (32, 48, 64, 128, 256):
    image = QtGui.QImage(size, size, QtGui.QImage.Format_ARGB32)
    image.fill(QtCore.Qt.transparent)
    painter = QtGui.QPainter(image)
    renderer.render(painter)
    painter.end()
    folder = out / f"{size}x{size}" / "apps"
    folder.mkdir(parents=True, exist_ok=True)
    if not image.save(str(folder / "paraflux.png")):
        sys.exit(f"cannot write {folder / 'paraflux.png'}")
