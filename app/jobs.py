"""Runs the window's long jobs (solve, compare, preview, a study's actions) one at a time in a QThread:
the engine's progress and cancel adapted to Qt signals, and the thread retired safely between jobs."""

from __future__ import annotations

import threading

from PySide6 import QtCore

from paraflux.engine.backend import release_host_memory, release_job_memory
from paraflux.engine.cli_edge import sentence
from paraflux.engine.errors import Cancelled
from paraflux.engine.run_control import RunControl


class Worker(QtCore.QObject):
    """Runs job(control) in a QThread; engine progress and the outcome come back as signals."""

    progress = QtCore.Signal(float, str)
    finished = QtCore.Signal(object)
    failed = QtCore.Signal(str)

    def __init__(self, job):
        super().__init__()
        self.job = job
        self.cancel_event = threading.Event()

    @QtCore.Slot()
    def run(self) -> None:
        control = RunControl(progress=self.progress.emit, cancel=self.cancel_event.is_set)
        try:
            signal, outcome = self.finished, self.job(control)
        except Cancelled:
            signal, outcome = self.failed, "cancelled"
        except Exception as exc:  # the command line's sentence; a bug too keeps the window alive
            signal, outcome = self.failed, sentence(exc)
        try:  # before the window hears of the end: the job's cached memory is back when the next one starts
            release_job_memory()
        except Exception as exc:  # a device that cannot even free its cache: said, and the window stays alive
            signal, outcome = self.failed, sentence(exc)
        signal.emit(outcome)


class Relay(QtCore.QObject):
    """Calls a plain function in the thread this object lives in (the window's): a job's signal connected to a
    lambda directly would run it in the job's thread, where widgets must not be touched."""

    def __init__(self, function, parent: QtCore.QObject):
        super().__init__(parent)
        self.function = function

    @QtCore.Slot(object)
    def call(self, value) -> None:
        self.function(value)
        release_host_memory()  # what drawing the new result freed of the last one (meshes, figures) goes back too


class JobRunner:
    """One job at a time for a window (the QThread's parent): start, cancel, and whether one runs."""

    def __init__(self, parent: QtCore.QObject, on_progress, on_failed):
        self.parent = parent
        self.on_progress, self.on_failed = on_progress, on_failed
        self.thread: QtCore.QThread | None = None
        self.worker: Worker | None = None
        self.relay: Relay | None = None

    def start(self, job, on_finished) -> bool:
        """Run job(control) in a new thread; False if the last job's thread has not ended."""
        if not self.retire():
            return False
        self.thread = QtCore.QThread(self.parent)
        self.worker = Worker(job)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.progress.connect(self.on_progress)
        self.relay = Relay(on_finished, self.parent)
        self.worker.finished.connect(self.relay.call)
        self.worker.failed.connect(self.on_failed)
        # quit from the job's own thread (QThread.quit is thread-safe): a quit queued to the window's
        # thread could still be pending when the window, and the QThread with it, is destroyed
        self.worker.finished.connect(self.thread.quit, QtCore.Qt.DirectConnection)
        self.worker.failed.connect(self.thread.quit, QtCore.Qt.DirectConnection)
        self.thread.start()
        return True

    def retire(self) -> bool:
        """Let the last job's thread end, then delete it and its worker; False if it does not end.
        Jobs start only once the last one has reported, so its thread is at most leaving Worker.run;
        deleting the worker before it has left (as replacing the last reference to it could) would free
        an object the thread still uses."""
        if self.thread is None:
            return True
        if not self.thread.wait(10_000):
            return False
        self.thread.deleteLater()
        if self.relay is not None:  # after its call, which was queued before this
            self.relay.deleteLater()
        self.thread = self.worker = self.relay = None
        return True

    def running(self) -> bool:
        return self.thread is not None and self.thread.isRunning()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel_event.set()

    def stop_for_close(self, close) -> bool:
        """Cancel and let the thread end within 2 s; else call close() (queued, in the window's thread) once
        it ends and return False, so the window hides instead of destroying a running thread."""
        self.cancel()
        if self.running():
            self.thread.quit()  # its event loop ends once the job returns to it
        if self.running() and not self.thread.wait(2_000):
            self.thread.finished.connect(close, QtCore.Qt.QueuedConnection)
            return False
        return True
