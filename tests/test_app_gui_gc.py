"""Garbage collection in the GUI thread only (app/gui_thread_gc.py)."""

import gc
import threading
import weakref

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from paraflux.app import gui_thread_gc  # noqa: E402


class Node:
    def __init__(self, log):
        self.me, self.log = self, log  # a cycle: only the collector frees it

    def __del__(self):
        self.log.append(threading.current_thread() is threading.main_thread())


def test_cyclic_garbage_made_in_a_job_thread_is_freed_in_the_gui_thread(qapp, qtbot):
    before = gc.isenabled()  # off already: the suite's window tests collect the same way (conftest)
    collector = gui_thread_gc.GuiThreadCollector(interval_ms=20)
    try:
        assert not gc.isenabled()
        freed = []

        def job():  # far past the first threshold: the automatic collector would run in this thread
            for _ in range(20 * gc.get_threshold()[0]):
                Node(freed)

        worker = threading.Thread(target=job)
        worker.start()
        worker.join()
        assert not freed  # nothing was collected in the job's thread
        qtbot.waitUntil(lambda: len(freed) > 0, timeout=5_000)
        assert all(freed)  # every one freed in the GUI thread
    finally:
        collector.uninstall()
    assert gc.isenabled() == before  # given back as it was


def test_install_keeps_one_collector_per_application(qapp):
    first = gui_thread_gc.install(qapp)
    try:
        assert gui_thread_gc.install(qapp) is first and first.parent() is qapp
    finally:
        first.uninstall()
        first.setParent(None)


def test_a_closed_windows_views_are_freed_in_the_gui_thread_while_a_job_thread_allocates(qapp, qtbot):
    """The case behind CI's random aborts: a closed window's PyVista views (VTK render windows) were
    freed by a collection that a job's thread triggered."""
    from PySide6 import QtCore

    from paraflux.app.main import MainWindow

    freed = []
    window = MainWindow()
    window.show()
    for view in (window.view, window.charts):
        weakref.finalize(view, lambda: freed.append(threading.current_thread() is threading.main_thread()))
    window.close()
    window.deleteLater()
    del window, view
    qapp.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    log = []
    worker = threading.Thread(target=lambda: [Node(log) for _ in range(20 * gc.get_threshold()[0])])
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: len(freed) == 2, timeout=5_000)
    assert freed == [True, True]
