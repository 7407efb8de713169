"""The Sweep window: vary numeric keys of the current problem and a variant axis, run the points on Dask
(locally or on a scheduler by address), follow them in a task table, cancel, and see the combined table
and plots. The sweep itself is engine.sweep; this module only gathers the form and shows what comes back:
the plots are the Figures engine.sweep draws for the PNGs, on a Qt canvas each."""

from __future__ import annotations

import csv
import os
import threading
from pathlib import Path

import shiboken6
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg, NavigationToolbar2QT
from PySide6 import QtCore, QtWidgets

from ..engine.cli_edge import sentence
from ..engine.errors import Cancelled, ParaFluxError
from ..engine.problems import problem_as_dict
from ..engine.sweep import (close_client, grid_points, make_client, numeric_keys, parse_sweep, run_sweep,
                            sweep_report_figures)

NONE = "(none)"


def _number(text: str) -> int | float:
    """A whole number where the text is one (an element count), a float otherwise."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return float(text)


def axis_values(text: str) -> dict:
    """A values field as a sweep axis: "start:stop:step" or numbers separated by commas."""
    parts = text.split(":")
    try:
        if len(parts) == 3:
            start, stop, step = (_number(p) for p in parts)
            return {"start": start, "stop": stop, "step": step}
        return {"values": [_number(v) for v in text.split(",") if v.strip()]}
    except ValueError:
        raise ParaFluxError(f"values {text!r}: give numbers separated by commas, or start:stop:step") from None


class SweepSignals(QtCore.QObject):
    """The sweep thread's reports, delivered in the GUI thread."""

    progress = QtCore.Signal(object)
    finished = QtCore.Signal(object)
    failed = QtCore.Signal(str)


def _sweep_job(signals: SweepSignals, cancel_event: threading.Event, spec, out: Path, scheduler, workers) -> None:
    """The sweep, in its own thread; reports through `signals`. It holds no reference to the panel, so the
    panel (a Qt widget) is never released in this thread, and it stays quiet if the panel is gone."""
    try:
        client = make_client(scheduler, workers, spec.retries)
        try:
            report = run_sweep(spec, out, client, signals.progress.emit, cancel_event.is_set)
        finally:
            close_client(client)
        signal, value = signals.finished, (report, out)
    except Cancelled as exc:  # names the points that finished
        signal, value = signals.failed, str(exc)
    except Exception as exc:  # the command line's sentence; a bug or a lost scheduler keeps the window alive
        signal, value = signals.failed, sentence(exc)
    if shiboken6.isValid(signals):
        signal.emit(value)


class SweepPanel(QtWidgets.QDialog):
    """A sweep of `problem` (the window's current problem, variants applied) under `study`."""

    def __init__(self, problem, study, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Sweep: {study.title}")
        self.base, self.study = problem_as_dict(problem), study
        self.cancel_event, self.thread, self.spec = threading.Event(), None, None
        self.signals = SweepSignals(self)
        self.signals.progress.connect(self.on_progress)
        self.signals.finished.connect(self.on_finished)
        self.signals.failed.connect(self.on_failed)
        controls = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(controls)
        layout.addWidget(self._build_form())
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        self.progress_bar = QtWidgets.QProgressBar()
        buttons = QtWidgets.QHBoxLayout()
        self.run_button, self.cancel_button = QtWidgets.QPushButton("Run sweep"), QtWidgets.QPushButton("Cancel")
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status)
        self.tabs = QtWidgets.QTabWidget()
        self.task_table, self.result_table = QtWidgets.QTableWidget(), QtWidgets.QTableWidget()
        self.tabs.addTab(self.task_table, "Tasks")
        self.tabs.addTab(self.result_table, "Table")
        self._lay_out(controls)

    def _lay_out(self, controls: QtWidgets.QWidget) -> None:
        """The controls in a scrolling pane above the tasks, table and plots, which take most of the height
        (a splitter between them); the window fits the screen."""
        scroll = QtWidgets.QScrollArea()
        scroll.setWidget(controls)
        scroll.setWidgetResizable(True)
        splitter = QtWidgets.QSplitter(QtCore.Qt.Vertical)
        splitter.addWidget(scroll)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 1)
        QtWidgets.QVBoxLayout(self).addWidget(splitter)
        screen = (self.screen() or QtWidgets.QApplication.primaryScreen()).availableGeometry()
        width, height = min(1000, screen.width() - 40), min(820, screen.height() - 60)
        self.resize(width, height)
        splitter.setSizes([min(300, height // 3), height])

    def _build_form(self) -> QtWidgets.QWidget:
        box = QtWidgets.QGroupBox("Axes and where to run")
        form = QtWidgets.QFormLayout(box)
        keys = [NONE, *[key for key, _ in numeric_keys(self.base)]]
        self.key_boxes, self.value_edits = [], []
        for i in range(2):
            key_box, values = QtWidgets.QComboBox(), QtWidgets.QLineEdit()
            key_box.addItems(keys)
            values.setPlaceholderText("e.g. 1, 2, 5 or start:stop:step")
            row = QtWidgets.QHBoxLayout()
            row.addWidget(key_box, 1)
            row.addWidget(values, 1)
            form.addRow(f"Key {i + 1}", row)
            self.key_boxes.append(key_box)
            self.value_edits.append(values)
        self.variant_box, self.variant_choices = QtWidgets.QComboBox(), QtWidgets.QListWidget()
        self.variant_box.addItems([NONE, *[a.name for a in self.study.axes]])
        self.variant_box.currentTextChanged.connect(self._fill_choices)
        self.variant_choices.setMaximumHeight(70)
        form.addRow("Variant axis", self.variant_box)
        form.addRow("Choices", self.variant_choices)
        self.zip_box = QtWidgets.QCheckBox("pair the axes' values (zip) instead of every combination")
        form.addRow("", self.zip_box)
        self.workers_box, self.scheduler_edit = QtWidgets.QSpinBox(), QtWidgets.QLineEdit()
        self.workers_box.setRange(0, os.cpu_count() or 1)  # the engine takes at most one per core
        self.workers_box.setSpecialValueText("one per core")
        self.scheduler_edit.setPlaceholderText("empty: a local cluster; or tcp://HOST:8786")
        form.addRow("Local workers", self.workers_box)
        form.addRow("Scheduler", self.scheduler_edit)
        self.out_edit = QtWidgets.QLineEdit(str(Path.cwd() / "sweep-out"))
        form.addRow("Output folder", self.out_edit)
        return box

    def _fill_choices(self, axis_name: str) -> None:
        self.variant_choices.clear()
        if axis_name == NONE:
            return
        for choice in self.study.axis(axis_name).choices:
            item = QtWidgets.QListWidgetItem(choice.name)
            item.setCheckState(QtCore.Qt.Unchecked)
            self.variant_choices.addItem(item)

    def sweep_data(self) -> dict:
        """The form as a sweep-file dictionary (base problem inline)."""
        axes = [{"key": box.currentText(), **axis_values(edit.text())}
                for box, edit in zip(self.key_boxes, self.value_edits) if box.currentText() != NONE]
        if self.variant_box.currentText() != NONE:
            checked = [self.variant_choices.item(i).text() for i in range(self.variant_choices.count())
                       if self.variant_choices.item(i).checkState() == QtCore.Qt.Checked]
            axes.append({"variant": self.variant_box.currentText(), "values": checked})
        return {"sweep": {"zip": self.zip_box.isChecked()}, "base": self.base, "axes": axes}

    def run(self) -> None:
        try:
            spec = parse_sweep(self.sweep_data(), Path.cwd())
            points = grid_points(spec)
        except ParaFluxError as exc:
            self.status.setText(f"error: {exc}")
            return
        self.spec = spec
        self._fill_tasks(spec, points)
        self._clear_plots()
        self.cancel_event.clear()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress_bar.setRange(0, len(points))
        self.progress_bar.setValue(0)
        self.status.setText(f"starting {len(points)} points...")
        out, scheduler = Path(self.out_edit.text()), self.scheduler_edit.text().strip() or None
        workers = self.workers_box.value() or None
        self.thread = threading.Thread(target=_sweep_job, daemon=True,
                                       args=(self.signals, self.cancel_event, spec, out, scheduler, workers))
        self.thread.start()

    def _fill_tasks(self, spec, points) -> None:
        names = [a.name for a in spec.axes]
        self.task_table.clear()
        self.task_table.setColumnCount(len(names) + 3)
        self.task_table.setHorizontalHeaderLabels(["point", *names, "status", "message"])
        self.task_table.setRowCount(len(points))
        self.task_rows = {}
        for row, point in enumerate(points):
            self.task_rows[point.key] = row
            cells = [point.key, *[str(point.values[n]) for n in names], "pending", ""]
            for column, text in enumerate(cells):
                self.task_table.setItem(row, column, QtWidgets.QTableWidgetItem(text))

    def on_progress(self, progress) -> None:
        for outcome in progress.latest:
            row, columns = self.task_rows[outcome.key], self.task_table.columnCount()
            self.task_table.item(row, columns - 2).setText(outcome.status)
            self.task_table.item(row, columns - 1).setText(outcome.message)
        self.progress_bar.setValue(progress.done + progress.failed)
        self.status.setText(f"{progress.done} done, {progress.running} running, {progress.failed} failed of "
                            f"{progress.total}" + (f"; dashboard {progress.dashboard}" if progress.dashboard else ""))

    def on_finished(self, outcome) -> None:
        report, out = outcome
        self._idle()
        columns = self.task_table.columnCount()
        for point in report.outcomes:  # points skipped as already done show too
            self.task_table.item(self.task_rows[point.key], columns - 2).setText(point.status)
        self.status.setText(f"{len(report.outcomes)} points: {len(report.outcomes) - len(report.failed)} done "
                            f"({report.skipped} from an earlier run), {len(report.failed)} failed; in {out}")
        self._show_table(out / "sweep.csv")
        self.show_plots(self.spec, report.outcomes)
        if self.tabs.count() > 2:  # the sweep's first picture
            self.tabs.setCurrentIndex(2)

    def _clear_plots(self) -> None:
        """Drop the last run's plot tabs (the tabs after Tasks and Table)."""
        while self.tabs.count() > 2:
            widget = self.tabs.widget(2)
            self.tabs.removeTab(2)
            widget.deleteLater()

    def show_plots(self, spec, outcomes) -> None:
        """A tab per figure the sweep draws (the PNGs' own figures), each on a canvas with its toolbar."""
        self._clear_plots()
        for name, figure in sweep_report_figures(spec, outcomes):
            page = QtWidgets.QWidget()
            layout = QtWidgets.QVBoxLayout(page)
            canvas = FigureCanvasQTAgg(figure)
            layout.addWidget(NavigationToolbar2QT(canvas, page))
            layout.addWidget(canvas, 1)
            index = self.tabs.addTab(page, figure.get_suptitle().splitlines()[0])
            self.tabs.setTabToolTip(index, f"plot-{name}.png")

    def _show_table(self, path: Path) -> None:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        self.result_table.clear()
        self.result_table.setColumnCount(len(rows[0]))
        self.result_table.setHorizontalHeaderLabels(rows[0])
        self.result_table.setRowCount(len(rows) - 1)
        for r, row in enumerate(rows[1:]):
            for c, text in enumerate(row):
                self.result_table.setItem(r, c, QtWidgets.QTableWidgetItem(text))

    def on_failed(self, message: str) -> None:
        self._idle()
        self.status.setText(message)

    def _idle(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def cancel(self) -> None:
        self.cancel_event.set()
        self.status.setText("cancelling...")

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self.cancel_event.set()
        if self.thread is not None:
            self.thread.join(30)
        super().closeEvent(event)
