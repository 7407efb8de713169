"""paraflux-gui --screenshots DIR: solve each study's first built-in case at its defaults (CPU) and save
the window at 1366x768 and 1920x1080 as DIR/<study>-<width>x<height>.png, the pictures the README shows."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from paraflux.engine.studies import STUDIES

SIZES = ((1366, 768), (1920, 1080))
SOLVE_TIMEOUT_MS = 600_000


def wait_until_idle(app, window, timeout_ms: int = SOLVE_TIMEOUT_MS) -> bool:
    """Run the event loop until the window's job has ended (True) or timeout_ms passed (False)."""
    done = QtCore.QEventLoop()
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: done.quit() if not window.jobs.running() and window.solve_button.isEnabled()
                          else None)
    timer.start(50)
    expired = QtCore.QTimer()
    expired.setSingleShot(True)
    expired.timeout.connect(done.quit)
    expired.start(timeout_ms)
    done.exec()
    app.processEvents()
    return expired.isActive()


def grab(app, window, size: tuple[int, int], path: Path) -> None:
    """Resize the window to size (pixels), let it lay out and render, and save it as path (PNG)."""
    window.resize(*size)
    app.processEvents()
    window.share_space()
    for _ in range(5):
        app.processEvents()
    window.view.render()
    window.charts.draw_all()
    app.processEvents()
    if not window.grab().save(str(path)):
        raise OSError(f"cannot write {path}")


def take_screenshots(app, make_window, folder: Path, studies=None) -> list[Path]:
    """One solve per study (the first case, CPU backends) in a window from make_window(remember_layout=False),
    grabbed at every size of SIZES; the paths written. A solve that fails or does not end raises RuntimeError
    naming the study."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in studies or STUDIES:
        window = make_window(remember_layout=False)
        errors: list[str] = []
        window.show_error = errors.append
        window.resize(*SIZES[0])
        window.show()
        window.select_study(name)
        for axis, box in window.axis_boxes.items():  # the CPU where a GPU choice is the default
            if axis == "backend" and box.findText("numpy") >= 0:
                box.setCurrentText("numpy")
        window.solve_button.click()
        if not wait_until_idle(app, window) or errors or window.last_result is None:
            window.close()
            raise RuntimeError(f"{name}: the solve did not finish: {'; '.join(errors) or 'timed out'}")
        for size in SIZES:
            path = folder / f"{name}-{size[0]}x{size[1]}.png"
            grab(app, window, size, path)
            written.append(path)
        window.close()
    return written


def main(app, make_window, folder: str, studies: list[str]) -> int:
    """Write the screenshots (of the named studies, or all); 0, or 1 with the reason on stderr."""
    unknown = [s for s in studies if s not in STUDIES]
    if unknown:
        print(f"paraflux-gui --screenshots: unknown studies {unknown}; choose from {list(STUDIES)}", file=sys.stderr)
        return 2
    try:
        for path in take_screenshots(app, make_window, Path(folder), studies):
            print(f"wrote {path}")
    except (RuntimeError, OSError) as exc:
        print(f"paraflux-gui --screenshots: {exc}", file=sys.stderr)
        return 1
    return 0
