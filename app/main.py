"""ParaFlux main window: pick a built-in case or a problem file and the variants from the registry,
solve in a background thread with progress and cancel, and see the field, flux lines and summary."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from paraflux.engine.errors import Cancelled, ParaFluxError
from paraflux.engine.backend import gpu_unavailable_reason
from paraflux.engine.mesh.cases import CASES
from paraflux.engine.output import magnetostatic_summary
from paraflux.engine.problems import load_case_problem, load_problem
from paraflux.engine.run_control import RunControl
from paraflux.engine.studies import STUDIES

from .result_view import ResultView


class SolveWorker(QtCore.QObject):
    """Runs a study in a QThread; engine progress and results come back as signals."""

    progress = QtCore.Signal(float, str)
    finished = QtCore.Signal(object)
    failed = QtCore.Signal(str)

    def __init__(self, study, problem):
        super().__init__()
        self.study, self.problem = study, problem
        self.cancel_event = threading.Event()

    @QtCore.Slot()
    def run(self) -> None:
        control = RunControl(progress=self.progress.emit, cancel=self.cancel_event.is_set)
        try:
            self.finished.emit(self.study.run(self.problem, control))
        except Cancelled:
            self.failed.emit("cancelled")
        except ParaFluxError as exc:
            self.failed.emit(str(exc))
        except MemoryError:
            self.failed.emit("out of memory; use a coarser mesh")
        except Exception as exc:  # a bug: keep the window alive and say what happened
            self.failed.emit(f"internal error: {type(exc).__name__}: {exc}")


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self):
        super().__init__()
        self.setWindowTitle("ParaFlux")
        self.study = STUDIES["magnetostatic"]
        self.problem_path: Path | None = None
        self.thread: QtCore.QThread | None = None
        self.worker: SolveWorker | None = None
        self.last_result = None

        form = QtWidgets.QFormLayout()
        self.case_box = QtWidgets.QComboBox()
        self.case_box.addItems(list(CASES))
        form.addRow("Case", self.case_box)
        self.size_box = QtWidgets.QSpinBox()
        self.size_box.setRange(0, 50_000_000)
        self.size_box.setSingleStep(1000)
        self.size_box.setSpecialValueText("nominal")
        form.addRow("Elements", self.size_box)
        open_button = QtWidgets.QPushButton("Open problem...")
        open_button.clicked.connect(self.open_problem)
        self.problem_label = QtWidgets.QLabel("(built-in case)")
        form.addRow(open_button, self.problem_label)
        self.axis_boxes = {}
        reason = gpu_unavailable_reason()
        for axis in self.study.axes:
            box = QtWidgets.QComboBox()
            for i, choice in enumerate(axis.choices):
                box.addItem(choice.name)
                box.setItemData(i, choice.description, QtCore.Qt.ToolTipRole)
                if choice.needs_gpu and reason:
                    box.model().item(i).setEnabled(False)
                    box.setItemData(i, f"unavailable: {reason}", QtCore.Qt.ToolTipRole)
            box.setCurrentText(axis.default)
            self.axis_boxes[axis.name] = box
            form.addRow(axis.label, box)

        self.solve_button = QtWidgets.QPushButton("Solve")
        self.solve_button.clicked.connect(self.solve)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.solve_button)
        buttons.addWidget(self.cancel_button)
        self.progress_bar = QtWidgets.QProgressBar()
        self.status = QtWidgets.QLabel("ready")
        self.summary = QtWidgets.QPlainTextEdit()
        self.summary.setReadOnly(True)

        layout = QtWidgets.QVBoxLayout()
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status)
        layout.addWidget(self.summary)
        controls = QtWidgets.QWidget()
        controls.setLayout(layout)
        self.view = ResultView(self)
        self.view.probed.connect(self.statusBar().showMessage)
        splitter = QtWidgets.QSplitter()
        splitter.addWidget(controls)
        splitter.addWidget(self.view.interactor)
        splitter.setStretchFactor(1, 1)
        self.setCentralWidget(splitter)
        self.resize(1280, 800)

    def open_problem(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open problem", "", "Problem files (*.toml)")
        if path:
            self.set_problem_path(Path(path))

    def set_problem_path(self, path: Path) -> None:
        """Use a problem file; its [solver] settings become the selected variants."""
        self.problem_path = path
        self.problem_label.setText(path.name)
        try:
            settings = load_problem(path).solver
        except ParaFluxError:
            return  # reported when the user solves
        for name, box in self.axis_boxes.items():
            box.setCurrentText(getattr(settings, name))

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """Stop a running solve before the window and its thread go away."""
        self.cancel()
        if self.thread is not None and self.thread.isRunning():
            self.thread.quit()
            self.thread.wait(10_000)
        self.view.close()
        super().closeEvent(event)

    def current_problem(self):
        if self.problem_path is not None:
            problem = load_problem(self.problem_path)
        else:
            problem = load_case_problem(self.case_box.currentText(), self.size_box.value() or None)
        variants = {name: box.currentText() for name, box in self.axis_boxes.items()}
        return self.study.with_variants(problem, variants)

    def solve(self) -> None:
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self.thread = QtCore.QThread(self)
        self.worker = SolveWorker(self.study, problem)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.progress.connect(self.on_progress)
        self.worker.finished.connect(self.on_finished)
        self.worker.failed.connect(self.on_failed)
        self.worker.finished.connect(self.thread.quit)
        self.worker.failed.connect(self.thread.quit)
        self.solve_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.thread.start()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel_event.set()

    def on_progress(self, fraction: float, message: str) -> None:
        self.progress_bar.setValue(int(100 * fraction))
        self.status.setText(message)

    def _idle(self) -> None:
        self.solve_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def on_finished(self, result) -> None:
        self._idle()
        self.last_result = result
        s = magnetostatic_summary(result)
        lines = [f"{k}: {v}" for k, v in s.items() if k not in ("probes", "timings")]
        lines += [f"probe {p['name']}: A = {p['A']:.6g}, B = {p['B']}" for p in s["probes"]]
        lines += [f"time {k}: {v:.3f} s" for k, v in s["timings"].items()]
        self.summary.setPlainText("\n".join(lines))
        self.view.show_result(result)
        self.status.setText("done: click the field to probe A and B")

    def on_failed(self, message: str) -> None:
        self._idle()
        self.status.setText(message)
        if message != "cancelled":
            self.show_error(message)

    def show_error(self, message: str) -> None:
        QtWidgets.QMessageBox.critical(self, "ParaFlux", message)


def main(argv: list[str] | None = None) -> int:
    """paraflux-gui [PROBLEM.toml]: open the window, with a problem file when one is given."""
    argv = list(sys.argv if argv is None else argv)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(argv)
    window = MainWindow()
    if len(argv) > 1:
        window.set_problem_path(Path(argv[1]))
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
