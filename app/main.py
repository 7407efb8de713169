"""ParaFlux main window: pick a built-in case or a problem file and the variants from the registry,
solve in a background thread with progress and cancel, and see the field, flux lines and summary."""

from __future__ import annotations

import copy
import json
import sys
import threading
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from paraflux.engine.errors import Cancelled, ParaFluxError, ProblemError
from paraflux.engine.backend import gpu_unavailable_reason
from paraflux.engine.magnetostatics.run import load_mesh
from paraflux.engine.mesh.cases import CASES
from paraflux.engine.output import magnetostatic_summary
from paraflux.engine.mesh.io import read_trimesh
from paraflux.engine.problems import load_case_problem, load_problem
from paraflux.engine.problems.magnetostatic import (FORMULATIONS, LENGTH_UNITS, POTENTIALS,
                                                    parse_magnetostatic, problem_to_dict)
from paraflux.engine.run_control import RunControl
from paraflux.engine.studies import STUDIES
from paraflux.engine.studies.compare import compare_variants, comparison_csv

from .charts_view import ChartsView
from .materials_table import MaterialsTable
from .result_view import ResultView


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
            self.finished.emit(self.job(control))
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
        self.worker: Worker | None = None
        self.last_result = None
        self.comparison_rows = []

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
        open_mesh_button = QtWidgets.QPushButton("Open mesh...")
        open_mesh_button.clicked.connect(self.open_mesh)
        self.formulation_box = QtWidgets.QComboBox()
        self.formulation_box.addItems(FORMULATIONS)
        self.potential_box = QtWidgets.QComboBox()
        self.potential_box.addItems(POTENTIALS)
        self.unit_box = QtWidgets.QComboBox()
        self.unit_box.addItems(list(LENGTH_UNITS))
        form.addRow(open_mesh_button, QtWidgets.QLabel("any meshio mesh with named groups"))
        form.addRow("Formulation", self.formulation_box)
        form.addRow("Potential", self.potential_box)
        form.addRow("Length unit", self.unit_box)
        self.materials = MaterialsTable()
        self.materials.setMinimumHeight(120)
        form.addRow(self.materials)
        self.problem_data: dict | None = None
        self.case_box.currentTextChanged.connect(self.use_case)
        self.case_box.textActivated.connect(self.use_case)  # re-picking the shown case returns to it
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
        self.parameter_edits = {}
        for parameter in self.study.parameters:
            edit = QtWidgets.QLineEdit(f"{parameter.default:g}")
            edit.setToolTip(parameter.description)
            self.parameter_edits[parameter.name] = edit
            form.addRow(parameter.label, edit)

        self.preview_button = QtWidgets.QPushButton("Preview mesh")
        self.preview_button.clicked.connect(self.preview)
        self.mesh_label = QtWidgets.QLabel("")
        form.addRow(self.preview_button, self.mesh_label)
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

        compare_box = QtWidgets.QGroupBox("Compare variants")
        compare_layout = QtWidgets.QVBoxLayout(compare_box)
        self.compare_axis = QtWidgets.QComboBox()
        self.compare_axis.addItems([axis.name for axis in self.study.axes])
        self.compare_axis.currentTextChanged.connect(self._fill_compare_choices)
        self.compare_choices = QtWidgets.QListWidget()
        self.compare_choices.setMaximumHeight(110)
        self.compare_button = QtWidgets.QPushButton("Run comparison")
        self.compare_button.clicked.connect(self.compare)
        self.compare_table = QtWidgets.QTableWidget(0, 0)
        self.export_button = QtWidgets.QPushButton("Export table as CSV...")
        self.export_button.clicked.connect(self.export_comparison)
        self.export_button.setEnabled(False)
        for widget in (self.compare_axis, self.compare_choices, self.compare_button, self.compare_table,
                       self.export_button):
            compare_layout.addWidget(widget)
        self._fill_compare_choices(self.compare_axis.currentText())
        self.use_case(self.case_box.currentText())

        layout = QtWidgets.QVBoxLayout()
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status)
        layout.addWidget(self.summary)
        layout.addWidget(compare_box)
        controls = QtWidgets.QWidget()
        controls.setLayout(layout)
        self.view = ResultView(self)
        self.view.probed.connect(self.statusBar().showMessage)
        self.charts = ChartsView(self)
        right = QtWidgets.QSplitter(QtCore.Qt.Vertical)
        right.addWidget(self.view.interactor)
        right.addWidget(self.charts.interactor)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        splitter = QtWidgets.QSplitter()
        splitter.addWidget(controls)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        self.setCentralWidget(splitter)
        self.splitter = splitter
        self.log: list[str] = []
        self.settings = QtCore.QSettings(QtCore.QSettings.IniFormat, QtCore.QSettings.UserScope,
                                         "ParaFlux", "ParaFlux")
        self._build_menu()
        self.resize(1280, 800)
        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.value("splitter")
        if state is not None:
            splitter.restoreState(state)

    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction("Open problem...", self.open_problem)
        file_menu.addAction("Open session...", self.open_session)
        file_menu.addAction("Save session...", self.save_session)
        self.recent_menu = file_menu.addMenu("Recent problems")
        self._fill_recent()
        file_menu.addSeparator()
        self.export_vtu_action = file_menu.addAction("Export solution (VTU + summary)...", self.export_solution)
        self.export_png_action = file_menu.addAction("Save view as PNG...", self.export_png)
        self.export_log_action = file_menu.addAction("Save run log...", self.export_log)
        for action in (self.export_vtu_action, self.export_png_action):
            action.setEnabled(False)

    def session(self) -> dict:
        """What the window shows, as JSON-ready data: the edited problem, the variants, the view."""
        data = self.materials.apply(self.problem_data) if self.problem_data else None
        if data is not None:
            data["problem"].update(formulation=self.formulation_box.currentText(),
                                   potential=self.potential_box.currentText(),
                                   length_unit=self.unit_box.currentText())
        return {"paraflux_session": 1, "problem": data, "case": self.case_box.currentText(),
                "elements": self.size_box.value(),
                "problem_path": str(self.problem_path) if self.problem_path else None,
                "variants": {name: box.currentText() for name, box in self.axis_boxes.items()},
                "camera": [list(v) for v in self.view.camera_position]}

    def save_session(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save session", "session.paraflux.json",
                                                        "ParaFlux sessions (*.json)")
        if path:
            try:
                Path(path).write_text(json.dumps(self.session(), indent=2))
            except OSError as exc:
                self.show_error(f"cannot write {path}: {exc}")

    def open_session(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open session", "", "ParaFlux sessions (*.json)")
        if path:
            self.restore_session(Path(path))

    def restore_session(self, path: Path) -> None:
        """Bring back a saved problem (validated like a file), its variants and the camera."""
        try:
            data = json.loads(path.read_text())
            if data.get("paraflux_session") != 1:
                raise ValueError("not a ParaFlux session file")
            if data["problem"] is not None:
                parse_magnetostatic(copy.deepcopy(data["problem"]), Path.cwd())
        except (OSError, ValueError, KeyError, ParaFluxError) as exc:
            self.show_error(f"cannot open session {path}: {exc}")
            return
        self.case_box.blockSignals(True)
        self.case_box.setCurrentText(data.get("case") or self.case_box.currentText())
        self.case_box.blockSignals(False)
        self.size_box.setValue(int(data.get("elements") or 0))
        self.problem_path = Path(data["problem_path"]) if data.get("problem_path") else None
        self.problem_label.setText(self.problem_path.name if self.problem_path else "(built-in case)")
        if data["problem"] is not None:
            self._show_problem(data["problem"])
        for name, choice in data.get("variants", {}).items():
            if name in self.axis_boxes:
                self.axis_boxes[name].setCurrentText(choice)
        if data.get("camera"):
            self.view.camera_position = [tuple(v) for v in data["camera"]]

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent_problems():
            self.recent_menu.addAction(path, lambda p=path: self.set_problem_path(Path(p)))

    def recent_problems(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def export_solution(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Export solution into folder")
        if folder and self.last_result is not None:
            try:
                written = self.study.write(self.last_result, Path(folder))
            except (OSError, ParaFluxError) as exc:
                self.show_error(f"cannot export: {exc}")
                return
            self._log("exported " + ", ".join(str(p) for p in written))

    def export_png(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save view", "view.png", "PNG images (*.png)")
        if path:
            try:
                self.view.screenshot(path)
            except (OSError, ValueError) as exc:
                self.show_error(f"cannot save {path}: {exc}")
                return
            self._log(f"saved view {path}")

    def export_log(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save run log", "paraflux.log", "Logs (*.log *.txt)")
        if path:
            try:
                Path(path).write_text("\n".join(self.log) + "\n")
            except OSError as exc:
                self.show_error(f"cannot write {path}: {exc}")

    def _log(self, message: str) -> None:
        self.log.append(f"{QtCore.QDateTime.currentDateTime().toString(QtCore.Qt.ISODate)} {message}")
        self.statusBar().showMessage(message, 5000)

    def open_problem(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open problem", "", "Problem files (*.toml)")
        if path:
            self.set_problem_path(Path(path))

    def set_problem_path(self, path: Path) -> None:
        """Use a problem file; its [solver] settings become the selected variants."""
        self.problem_path = path
        self.problem_label.setText(path.name)
        recent = [str(path)] + [p for p in self.recent_problems() if p != str(path)]
        self.settings.setValue("recent", recent[:8])
        self._fill_recent()
        try:
            problem = load_problem(path)
        except ParaFluxError:
            self.problem_data = None  # the error is reported when the user solves
            return
        self._show_problem(problem_to_dict(problem))
        for name, box in self.axis_boxes.items():
            box.setCurrentText(getattr(problem.solver, name))
        for name, edit in self.parameter_edits.items():
            edit.setText(f"{getattr(problem.solver, name):g}")

    def use_case(self, name: str) -> None:
        """A built-in case with its example problem, editable in the table."""
        self.problem_path = None
        self.problem_label.setText("(built-in case)")
        try:
            self._show_problem(problem_to_dict(load_case_problem(name)))
        except ParaFluxError as exc:
            self.show_error(str(exc))

    def open_mesh(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open mesh", "",
                                                        "Meshes (*.msh *.vtu *.vtk *.xdmf *.med);;All files (*)")
        if path:
            self.set_mesh_path(Path(path))

    def set_mesh_path(self, path: Path) -> None:
        """A bare mesh: every region gets mu_r = 1 and no current, every boundary starts natural."""
        try:
            mesh = read_trimesh(path)
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self.problem_path = path
        self.problem_label.setText(path.name)
        data = {"problem": {"kind": "magnetostatic", "formulation": self.formulation_box.currentText(),
                            "potential": self.potential_box.currentText(), "mesh": str(path),
                            "length_unit": self.unit_box.currentText()},
                "regions": {name: {"mu_r": 1.0, "current_density": 0.0} for name in mesh.region_names}}
        self._show_problem(data, mesh.boundary_names)

    def _show_problem(self, data: dict, boundary_names=()) -> None:
        self.problem_data = data
        head = data["problem"]
        self.formulation_box.setCurrentText(head["formulation"])
        self.potential_box.setCurrentText(head["potential"])
        self.unit_box.setCurrentText(head["length_unit"])
        self.materials.show_problem(data, boundary_names)

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """Stop a running solve before the window and its thread go away; remember the layout."""
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("splitter", self.splitter.saveState())
        self.cancel()
        if self.thread is not None and self.thread.isRunning():
            self.thread.quit()
            self.thread.wait(10_000)
        self.view.close()
        self.charts.close()
        super().closeEvent(event)

    def current_problem(self):
        """The problem as shown: the table's materials and boundaries, the combos, the size box."""
        if self.problem_data is None:  # a problem file that does not load: report why
            problem = load_problem(self.problem_path)
        else:
            data = self.materials.apply(self.problem_data)
            data["problem"].update(formulation=self.formulation_box.currentText(),
                                   potential=self.potential_box.currentText(),
                                   length_unit=self.unit_box.currentText())
            if "case" in data["problem"]:
                data.pop("case", None)
                if self.size_box.value():
                    data["case"] = {"elements": self.size_box.value()}
            problem = parse_magnetostatic(data, Path.cwd())
        variants = {name: box.currentText() for name, box in self.axis_boxes.items()}
        for name, edit in self.parameter_edits.items():
            try:
                variants[name] = float(edit.text())
            except ValueError:
                raise ProblemError(f"{name} must be a number, got '{edit.text()}'") from None
        return self.study.with_variants(problem, variants)

    def solve(self) -> None:
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self._start(lambda control: self.study.run(problem, control), self.on_finished)

    def preview(self) -> None:
        """Mesh the case (or read the mesh file) in the background and show it."""
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self._start(lambda control: load_mesh(problem), self.on_previewed)

    def on_previewed(self, mesh) -> None:
        self._idle()
        self.mesh_label.setText(f"{mesh.n_elements:,} elements, {mesh.n_nodes:,} nodes")
        self.view.show_mesh(mesh)
        self.status.setText("mesh ready")

    def compare(self) -> None:
        """Run the current problem once per checked choice of the chosen axis, in sequence."""
        axis = self.compare_axis.currentText()
        choices = [self.compare_choices.item(i).text() for i in range(self.compare_choices.count())
                   if self.compare_choices.item(i).checkState() == QtCore.Qt.Checked]
        if len(choices) < 2:
            self.show_error("tick at least two choices to compare")
            return
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        sets = [{axis: choice} for choice in choices]
        self._start(lambda control: compare_variants(self.study, problem, sets, control), self.on_compared)

    def _start(self, job, on_finished) -> None:
        self.thread = QtCore.QThread(self)
        self.worker = Worker(job)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.progress.connect(self.on_progress)
        self.worker.finished.connect(on_finished)
        self.worker.failed.connect(self.on_failed)
        self.worker.finished.connect(self.thread.quit)
        self.worker.failed.connect(self.thread.quit)
        for button in (self.solve_button, self.compare_button, self.preview_button):
            button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.thread.start()

    def _fill_compare_choices(self, axis_name: str) -> None:
        self.compare_choices.clear()
        reason = gpu_unavailable_reason()
        for choice in self.study.axis(axis_name).choices:
            item = QtWidgets.QListWidgetItem(choice.name)
            item.setToolTip(choice.description)
            usable = not (choice.needs_gpu and reason)
            item.setFlags((item.flags() | QtCore.Qt.ItemIsUserCheckable) if usable
                          else item.flags() & ~QtCore.Qt.ItemIsEnabled)
            item.setCheckState(QtCore.Qt.Unchecked)
            self.compare_choices.addItem(item)

    def on_compared(self, outcome) -> None:
        self._idle()
        rows, results = outcome
        self.comparison_rows = rows
        phases = list(dict.fromkeys(p for row in rows for p in row.timings))
        headers = ["variant", *[f"{p} (s)" for p in phases], "iterations", "difference"]
        self.compare_table.setColumnCount(len(headers))
        self.compare_table.setHorizontalHeaderLabels(headers)
        self.compare_table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = [row.label, *[f"{row.timings.get(p, float('nan')):.4g}" for p in phases],
                     str(row.iterations), f"{row.relative_difference:.2e}"]
            for c, text in enumerate(cells):
                self.compare_table.setItem(r, c, QtWidgets.QTableWidgetItem(text))
        self.export_button.setEnabled(True)
        self.view.show_result(results[-1])
        self.charts.show_comparison(rows)
        self.status.setText(f"compared {len(rows)} variants")

    def export_comparison(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export comparison", "comparison.csv",
                                                        "CSV files (*.csv)")
        if path:
            try:
                Path(path).write_text(comparison_csv(self.comparison_rows))
            except OSError as exc:
                self.show_error(f"cannot write {path}: {exc}")

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel_event.set()

    def on_progress(self, fraction: float, message: str) -> None:
        self.progress_bar.setValue(int(100 * fraction))
        self.status.setText(message)
        if "iteration" not in message:  # phases go to the log, not every iteration
            self._log(message)

    def _idle(self) -> None:
        for button in (self.solve_button, self.compare_button, self.preview_button):
            button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def on_finished(self, result) -> None:
        self._idle()
        self.last_result = result
        s = magnetostatic_summary(result)
        lines = [f"{k}: {v}" for k, v in s.items() if k not in ("probes", "timings")]
        lines += [f"probe {p['name']}: A = {p['A']:.6g}, B = {p['B']}" for p in s["probes"]]
        lines += [f"time {k}: {v:.3f} s" for k, v in s["timings"].items()]
        self.summary.setPlainText("\n".join(lines))
        self.mesh_label.setText(f"{result.mesh.n_elements:,} elements, {result.mesh.n_nodes:,} nodes")
        self.view.show_result(result)
        self.charts.show_result(result)
        self.export_vtu_action.setEnabled(True)
        self.export_png_action.setEnabled(True)
        self._log(f"solved: {result.mesh.n_elements} elements, {result.iterations} iterations, "
                  f"energy {result.energy:.6g}")
        self.status.setText("done: click the field to probe A and B")

    def on_failed(self, message: str) -> None:
        self._idle()
        self.status.setText(message)
        self._log(f"failed: {message}")
        if message != "cancelled":
            self.show_error(message)

    def show_error(self, message: str) -> None:
        QtWidgets.QMessageBox.critical(self, "ParaFlux", message)


def self_test(app, png: Path) -> int:
    """Open the window, solve a small built-in case on the CPU, render it, write png; 0 when the
    picture is not blank, 1 with the reason otherwise."""
    window = MainWindow()
    window.show()
    window.case_box.setCurrentText("open-slot")
    window.size_box.setValue(1500)
    window.axis_boxes["backend"].setCurrentText("numpy")
    errors: list[str] = []
    window.show_error = errors.append  # collected, not shown in a modal dialog
    done = QtCore.QEventLoop()
    window.solve_button.click()
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: done.quit() if window.solve_button.isEnabled() else None)
    timer.start(50)
    QtCore.QTimer.singleShot(120_000, done.quit)
    done.exec()
    app.processEvents()
    reason = ""
    if errors or window.view.result is None:
        reason = "the solve failed: " + "; ".join(errors) if errors else "the solve did not finish"
    else:
        image = window.grab().toImage().convertToFormat(QtGui.QImage.Format_Grayscale8)
        values = [image.pixelColor(x, y).value() for x in range(0, image.width(), 7)
                  for y in range(0, image.height(), 7)]
        mean = sum(values) / len(values)
        spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        if not window.grab().save(str(png)):
            reason = f"cannot write {png}"
        elif spread < 10:
            reason = f"the rendered window is blank (grey-level spread {spread:.1f})"
    window.close()
    if reason:
        print(f"paraflux-gui self-test: FAILED: {reason}", file=sys.stderr)
        return 1
    print(f"paraflux-gui self-test: ok, {window.view.result.mesh.n_elements} elements solved, wrote {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """paraflux-gui [PROBLEM.toml] opens the window; paraflux-gui --self-test [PNG] checks the install."""
    argv = list(sys.argv if argv is None else argv)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(argv)
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test(app, Path(argv[2] if len(argv) > 2 else "paraflux-self-test.png"))
    window = MainWindow()
    if len(argv) > 1:
        window.set_problem_path(Path(argv[1]))
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
