"""ParaFlux main window: pick a study from the registry, a built-in case or a problem file and the
variants, solve in a background thread with progress and cancel, and see the field and summary."""

from __future__ import annotations

import io
import json
from collections import deque
import signal
import sys
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from paraflux.engine.errors import ParaFluxError
from paraflux.engine.problems import case_boundaries, load_case_problem, load_problem, problem_as_dict
from paraflux.engine.problems.toml_output import write_problem
from paraflux.engine.bem.fem_check import check_against_hex_fem
from paraflux.engine.studies import STUDIES, study_for_kind
from paraflux.engine.output import replace_atomically, write_text_atomic
from paraflux.engine.run_control import iteration_of
from paraflux.engine.studies.compare import compare_variants
from paraflux.engine.truncation.scaling import scaling_sweep

from . import gui_thread_gc
from .charts_view import ChartsView
from .compare_panel import ComparePanel
from .jobs import JobRunner
from .results_table import ResultsTable
from .sections import Section, SectionColumn
from .session import Session, check_session
from .result_view import ResultView
from .panels import make_panels
from .study_panels import StudyPanel


MINIMUM_SIZE = (1000, 600)  # pixels: every control stays usable down to this
LAYOUT_VERSION = 2
LOG_LINES = 10_000  # the run log (File > Save run log) keeps the latest lines
COMBO_CHARACTERS = 14  # a combo box is at least this wide; its open list shows the whole choice  # saved dock layouts of another version are not restored


def _widget_of(layout: QtWidgets.QLayout) -> QtWidgets.QWidget:
    widget = QtWidgets.QWidget()
    layout.setContentsMargins(0, 0, 0, 0)
    widget.setLayout(layout)
    return widget


def _fit_to_current(stack: QtWidgets.QStackedWidget) -> None:
    """Size a stack to its current page (the hidden pages stop counting in its size hint)."""
    for i in range(stack.count()):
        page = stack.widget(i)
        policy = QtWidgets.QSizePolicy.Preferred if page is stack.currentWidget() else QtWidgets.QSizePolicy.Ignored
        page.setSizePolicy(policy, policy)
    stack.adjustSize()


class MainWindow(QtWidgets.QMainWindow):
    """The controls of the selected study (one panel per registry entry), the result view and charts."""

    # the selected study's controls, under the names the window has always had
    study = property(lambda self: self.panel.study)
    materials = property(lambda self: self.panel.materials)
    axis_boxes = property(lambda self: self.panel.axis_boxes)
    parameter_edits = property(lambda self: self.panel.parameter_edits)
    unit_box = property(lambda self: self.panel.unit_box)
    compare_axis = property(lambda self: self.compare_panel.axis)  # the Compare box's parts (app/compare_panel.py)
    compare_choices = property(lambda self: self.compare_panel.choices)
    compare_button = property(lambda self: self.compare_panel.run_button)
    compare_table = property(lambda self: self.compare_panel.table)
    export_button = property(lambda self: self.compare_panel.export_button)
    comparison_rows = property(lambda self: self.compare_panel.rows)
    thread = property(lambda self: self.jobs.thread)  # the running (or last) job's thread
    formulation_box = property(lambda self: self.panels["magnetostatic"].formulation_box)
    problem_path = property(lambda self: self.model.source)  # the session model's (app/session.py)
    problem_data = property(lambda self: self.model.problem_data)
    last_result = property(lambda self: self.model.last_result)
    potential_box = property(lambda self: self.panels["magnetostatic"].potential_box)

    def __init__(self, remember_layout: bool = True):
        super().__init__()
        self.setWindowTitle("ParaFlux")
        self.setDockNestingEnabled(True)
        self.panels = make_panels()
        self.panels["truncation"].scaling_button.clicked.connect(self.run_scaling)
        self.panels["elastostatic-bem"].fem_check_button.clicked.connect(self.run_fem_check)
        self.panels["scattering"].open_target_button.clicked.connect(self.open_mesh)
        self.panels["scattering"].save_problem_button.clicked.connect(self.save_problem)
        self.panel: StudyPanel = self.panels["magnetostatic"]
        self.model = Session(self.panel.study.name)
        self.jobs = JobRunner(self, self.on_progress, self.on_failed)

        form = self._problem_controls()
        run_box = self._run_controls(form)
        compare_box = self.compare_panel = ComparePanel(self.study, self.show_error)
        compare_box.run_button.clicked.connect(self.compare)
        compare_box.table.itemSelectionChanged.connect(self.show_difference)
        self.use_case(self.case_box.currentText())
        self.setCentralWidget(self._build_view())
        self.controls = SectionColumn([Section("Problem", _widget_of(form)), Section("Variants", self.variant_pages),
                                       Section("Compare variants", compare_box)])
        model = QtWidgets.QWidget()  # the sections scroll; Solve, Cancel and the progress stay in sight below them
        model_layout = QtWidgets.QVBoxLayout(model)
        model_layout.setContentsMargins(0, 0, 0, 4)
        model_layout.addWidget(self.controls, 1)
        model_layout.addWidget(Section("Solve", run_box))
        self.controls_dock = self._dock("Model", model, QtCore.Qt.LeftDockWidgetArea)
        for box in model.findChildren(QtWidgets.QComboBox):  # long choices show whole in the open list
            if isinstance(box.parent().parent(), QtWidgets.QAbstractItemView):
                continue  # a table's cell: its column fits it, and the table scrolls
            box.setSizeAdjustPolicy(QtWidgets.QComboBox.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(COMBO_CHARACTERS)
        self.controls_dock.setMinimumWidth(self.controls.sizeHint().width())
        self.results_dock = self._dock("Results", self._results_area(), QtCore.Qt.RightDockWidgetArea)
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.compared: list = []  # the last comparison's results, first to last
        self.settings = QtCore.QSettings(QtCore.QSettings.IniFormat, QtCore.QSettings.UserScope,
                                         "ParaFlux", "ParaFlux")
        self.remember_layout = remember_layout
        self._build_menu()
        self.setMinimumSize(MINIMUM_SIZE[0], MINIMUM_SIZE[1])
        self.resize(1366, 768)
        self.share_space()
        if remember_layout:
            geometry, state = self.settings.value("geometry"), self.settings.value("window_state")
            if geometry is not None:
                self.restoreGeometry(geometry)
            if state is not None:
                self.restoreState(state, LAYOUT_VERSION)

    def _dock(self, title: str, widget: QtWidgets.QWidget, area) -> QtWidgets.QDockWidget:
        """A dock that can be moved, floated (detached) and closed; the View menu brings it back."""
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}_dock")
        dock.setWidget(widget)
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetMovable | QtWidgets.QDockWidget.DockWidgetFloatable
                         | QtWidgets.QDockWidget.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _results_area(self) -> QtWidgets.QSplitter:
        """The charts over the results table and the Compare table."""
        self.tables = QtWidgets.QTabWidget()
        self.tables.setDocumentMode(True)
        self.tables.addTab(self.summary, "Results")
        self.tables.addTab(self.compare_panel.table_page, "Compare")
        for panel in self.panels.values():  # a study's own result table, shown while it is selected
            if panel.result_table is not None:
                self.tables.addTab(panel.result_table, panel.result_table_title)
        self._show_result_tables()
        area = QtWidgets.QSplitter(QtCore.Qt.Vertical)
        area.addWidget(self.charts)
        area.addWidget(self.tables)
        area.setStretchFactor(0, 3)
        area.setStretchFactor(1, 1)
        area.setChildrenCollapsible(False)
        self.results_splitter = area
        return area

    def _show_result_tables(self) -> None:
        for panel in self.panels.values():
            if panel.result_table is not None:
                self.tables.setTabVisible(self.tables.indexOf(panel.result_table), panel is self.panel)

    def share_space(self) -> None:
        """The default split: the controls as wide as they need (at least a fifth of the window), the rest
        shared by the 3D view and the results (charts over tables), 55 : 45; the tables a quarter of the height."""
        width = self.width()
        controls = max(self.controls.sizeHint().width(), width // 5)
        rest = width - controls
        self.resizeDocks([self.controls_dock, self.results_dock], [controls, int(0.45 * rest)], QtCore.Qt.Horizontal)
        self.results_splitter.setSizes([3 * self.height() // 4, self.height() // 4])

    def _problem_controls(self) -> QtWidgets.QFormLayout:
        """Study selector, case, element count, problem and mesh files, and the study's own page."""
        form = QtWidgets.QFormLayout()
        self.study_box = QtWidgets.QComboBox()
        for name, study in STUDIES.items():
            self.study_box.addItem(study.title, name)
        self.study_box.setCurrentIndex(self.study_box.findData(self.panel.study.name))
        form.addRow("Study", self.study_box)
        self.case_box = QtWidgets.QComboBox()
        self.case_box.addItems(self.panel.cases)
        self.case_box.setPlaceholderText("(from the file)")  # shown while a file's own problem is open
        self.case_box.setCurrentIndex(0)
        form.addRow("Case", self.case_box)
        self.size_box = QtWidgets.QSpinBox()
        self.size_box.setRange(0, 50_000_000)
        self.size_box.setSingleStep(self.panel.size_step)
        self.size_box.setSpecialValueText("nominal")
        form.addRow("Elements", self.size_box)
        self.open_button = QtWidgets.QPushButton("Open problem...")
        self.open_button.clicked.connect(self.open_problem)
        self.problem_label = QtWidgets.QLabel("(built-in case)")
        form.addRow(self.open_button, self.problem_label)
        self.open_mesh_button = QtWidgets.QPushButton("Open mesh...")
        self.open_mesh_button.clicked.connect(self.open_mesh)
        self.open_mesh_button.setToolTip("any meshio mesh with named groups, for the selected study")
        form.addRow(self.open_mesh_button)
        self.study_pages = QtWidgets.QStackedWidget()
        for panel in self.panels.values():
            self.study_pages.addWidget(panel.page)
        self.study_pages.setCurrentWidget(self.panel.page)
        form.addRow(self.study_pages)
        self.variant_pages = QtWidgets.QStackedWidget()
        for panel in self.panels.values():
            self.variant_pages.addWidget(panel.variants_page)
        self.variant_pages.setCurrentWidget(self.panel.variants_page)
        for stack in (self.study_pages, self.variant_pages):
            _fit_to_current(stack)
        self.case_box.currentTextChanged.connect(self.use_case)
        self.case_box.textActivated.connect(self.use_case)  # re-picking the shown case returns to it
        self.study_box.currentIndexChanged.connect(lambda _: self.select_study(self.study_box.currentData()))

        return form

    def _run_controls(self, form: QtWidgets.QFormLayout) -> QtWidgets.QWidget:
        """Preview (in the problem form), then Solve and Cancel, the progress bar and the status line."""
        self.preview_button = QtWidgets.QPushButton("Preview mesh")
        self.preview_button.clicked.connect(self.preview)
        self.mesh_label = QtWidgets.QLabel("")
        self.mesh_label.setWordWrap(True)
        form.addRow(self.preview_button, self.mesh_label)
        self.solve_button = QtWidgets.QPushButton("Solve")
        self.solve_button.setDefault(True)
        self.solve_button.clicked.connect(self.solve)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress_bar = QtWidgets.QProgressBar()
        self.status = QtWidgets.QLabel("ready")
        self.status.setWordWrap(True)
        self.summary = ResultsTable()
        box = QtWidgets.QWidget()
        layout = QtWidgets.QGridLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.solve_button, 0, 0)
        layout.addWidget(self.cancel_button, 0, 1)
        layout.addWidget(self.progress_bar, 1, 0, 1, 2)
        layout.addWidget(self.status, 2, 0, 1, 2)
        return box

    def _build_view(self) -> QtWidgets.QWidget:
        """The result view with its warp control (the window's centre), and the charts (the Results dock)."""
        self.view = ResultView(self)
        self.view.probed.connect(self.statusBar().showMessage)
        self.charts = ChartsView(self)
        self.warp_box = QtWidgets.QDoubleSpinBox()
        self.warp_box.setRange(0.0, 1e12)
        self.warp_box.setDecimals(3)
        self.warp_box.setToolTip("factor the displacement is drawn at; 0 shows the undeformed body")
        self.warp_box.valueChanged.connect(self.view.set_warp_scale)
        view_bar = QtWidgets.QHBoxLayout()
        view_bar.setContentsMargins(4, 0, 4, 0)
        view_bar.addStretch(1)
        view_bar.addWidget(QtWidgets.QLabel("Displacement scale"))
        view_bar.addWidget(self.warp_box)
        self.view_bar = QtWidgets.QWidget()
        self.view_bar.setLayout(view_bar)
        self.view_bar.setVisible(False)
        view_area = QtWidgets.QWidget()
        view_layout = QtWidgets.QVBoxLayout(view_area)
        view_layout.setContentsMargins(0, 0, 0, 0)
        view_layout.addWidget(self.view_bar)
        view_layout.addWidget(self.view.interactor, 1)
        self.view.interactor.setMinimumSize(200, 200)
        return view_area

    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction("Open problem...", self.open_problem)
        file_menu.addAction("Save problem...", self.save_problem)
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
        self.sweep_action = self.menuBar().addMenu("&Tools").addAction("Sweep...", self.open_sweep)
        view_menu = self.menuBar().addMenu("&View")
        for dock in (self.controls_dock, self.results_dock):
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addAction("Reset layout", self.reset_layout)

    def reset_layout(self) -> None:
        """Every dock back in its place at the default split."""
        for dock, area in ((self.controls_dock, QtCore.Qt.LeftDockWidgetArea),
                           (self.results_dock, QtCore.Qt.RightDockWidgetArea)):
            dock.setFloating(False)
            self.addDockWidget(area, dock)
            dock.show()
        self.share_space()

    def select_study(self, name: str, load_case: bool = True) -> None:
        """Show the study's controls, cases and compare axes; with load_case, its first built-in case."""
        self.model.select_study(name)
        self.study_box.blockSignals(True)
        self.study_box.setCurrentIndex(self.study_box.findData(name))
        self.study_box.blockSignals(False)
        if self.panel is self.panels[name]:
            return
        self.panel.shown = None  # the view stops showing its result: neither kept nor redrawn later
        self.panel = self.panels[name]
        self.study_pages.setCurrentWidget(self.panel.page)
        self.variant_pages.setCurrentWidget(self.panel.variants_page)
        for stack in (self.study_pages, self.variant_pages):
            _fit_to_current(stack)
        self._show_result_tables()
        self.case_box.blockSignals(True)
        self.case_box.clear()
        self.case_box.addItems(self.panel.cases)
        self.case_box.setCurrentIndex(0)  # with a placeholder text Qt selects no item by itself
        self.case_box.blockSignals(False)
        self.size_box.setValue(0)
        self.size_box.setSingleStep(self.panel.size_step)
        self.compare_panel.set_study(self.study)
        self.view.clear()
        self.view.result, self.view.grid, self.view.solid = None, None, None
        self.view_bar.setVisible(False)
        self.summary.setRowCount(0)
        self.mesh_label.clear()
        for action in (self.export_vtu_action, self.export_png_action):
            action.setEnabled(False)
        if load_case:
            self.use_case(self.case_box.currentText())

    def session(self) -> dict:
        """What the window shows, as JSON-ready data: the study, the edited problem, the variants and
        parameters, the view."""
        return self.model.saved(self._edited(), self.case_box.currentText(), self.size_box.value(),
                                {name: box.currentText() for name, box in self.axis_boxes.items()},
                                self.panel.parameter_texts(), self.view.camera_position)

    def _edited(self) -> dict | None:
        """The problem as the table shows it, in its problem-file schema (None: a file that did not load)."""
        return self.panel.edited(self.model.problem_data) if self.model.problem_data else None

    def save_session(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save session", "session.paraflux.json",
                                                        "ParaFlux sessions (*.json)")
        if path:
            try:
                text = json.dumps(self.session(), indent=2)
            except ParaFluxError as exc:
                self.show_error(f"cannot save the session: {exc}")
                return
            try:
                write_text_atomic(Path(path), text)
            except OSError as exc:
                self.show_error(f"cannot write {path}: {exc}")

    def save_problem(self) -> None:
        source = self.model.source
        suggested = source.with_suffix(".toml") if source else Path("problem.toml")
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save problem", str(suggested), "Problem files (*.toml)")
        if path:
            self.write_problem(Path(path))

    def write_problem(self, path: Path) -> None:
        """The problem as shown as a TOML problem file that `paraflux solve` reads back the same, its file paths
        relative to it (engine/problems/toml_output.py)."""
        try:
            write_problem(self.current_problem(), path)
        except (OSError, ParaFluxError) as exc:
            self.show_error(f"cannot save the problem: {exc}")
            return
        self._log(f"saved problem {path}")

    def open_session(self) -> None:
        if self._refuse_while_busy():
            return
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open session", "", "ParaFlux sessions (*.json)")
        if path:
            self.restore_session(Path(path))

    def restore_session(self, path: Path) -> None:
        """Bring back a saved study and problem (validated like a file), its variants and the camera.
        Sessions saved before there was a choice of study are magnetostatic. Nothing changes unless the
        whole file is valid."""
        try:
            data = json.loads(path.read_text())
            study = check_session(data, self.size_box.maximum(), lambda study, name, value: (
                name not in self.panels[study].parameter_edits or self.panels[study].parameter_allows(name, value)))
        except (OSError, ValueError, ParaFluxError) as exc:
            self.show_error(f"cannot open session {path}: {exc}")
            return
        self.select_study(study, load_case=False)
        self._show_case(data.get("case") or (None if data.get("problem_path") else self.case_box.currentText()))
        self.size_box.setValue(int(data.get("elements") or 0))
        problem_path = Path(data["problem_path"]) if data.get("problem_path") else None
        if data["problem"] is not None:
            self.problem_label.setText(problem_path.name if problem_path else "(built-in case)")
            self._show_problem(data["problem"], problem_path,
                               case_boundaries(data["problem"]["problem"].get("case") or ""))
        elif problem_path is not None:  # saved while its file did not load: read the file again
            self.set_problem_path(problem_path)
        else:
            self.use_case(self.case_box.currentText())
        for name, choice in data.get("variants", {}).items():
            if name in self.axis_boxes:
                self.axis_boxes[name].setCurrentText(choice)
        for name, value in data.get("parameters", {}).items():
            if name in self.parameter_edits:
                self.panel.set_parameter(name, value)
        if data.get("camera"):
            self.view.camera_position = [tuple(v) for v in data["camera"]]

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent_problems():
            self.recent_menu.addAction(path, lambda p=path: self._refuse_while_busy() or self.set_problem_path(Path(p)))

    def recent_problems(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def export_solution(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Export solution into folder")
        result = self.model.last_result
        if folder and result is not None:
            try:
                written = study_for_kind(result.problem.kind).write(result, Path(folder))
            except (OSError, ParaFluxError) as exc:
                self.show_error(f"cannot export: {exc}")
                return
            self._log("exported " + ", ".join(str(p) for p in written))

    def export_png(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save view", "view.png", "PNG images (*.png)")
        if path:
            try:  # drawn into memory first, then written under a temporary name: no half-written PNG
                image = io.BytesIO()
                self.view.screenshot(image)
                replace_atomically(Path(path), lambda tmp: tmp.write_bytes(image.getvalue()))
            except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: no render window to read
                self.show_error(f"cannot save {path}: {exc}")
                return
            self._log(f"saved view {path}")

    def export_log(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save run log", "paraflux.log", "Logs (*.log *.txt)")
        if path:
            try:
                write_text_atomic(Path(path), "\n".join(self.log) + "\n")
            except OSError as exc:
                self.show_error(f"cannot write {path}: {exc}")

    def _log(self, message: str) -> None:
        self.log.append(f"{QtCore.QDateTime.currentDateTime().toString(QtCore.Qt.ISODate)} {message}")
        self.statusBar().showMessage(message, 5000)

    def open_problem(self) -> None:
        if self._refuse_while_busy():
            return
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open problem", "", "Problem files (*.toml)")
        if path:
            self.set_problem_path(Path(path))

    def set_problem_path(self, path: Path) -> None:
        """Use a problem file of any study (its kind selects the study); its [solver] settings become
        the selected variants."""
        recent = [str(path)] + [p for p in self.recent_problems() if p != str(path)]
        self.settings.setValue("recent", recent[:8])
        self._fill_recent()
        try:
            problem = load_problem(path)
        except ParaFluxError as exc:
            problem = None  # said now, and again when the user solves (after fixing the file, Solve reads it)
            self.show_error(f"cannot use {path.name}: {exc}")
        if problem is not None:
            self.select_study(study_for_kind(problem.kind).name, load_case=False)
        self.problem_label.setText(path.name)
        self._show_case(problem.case if problem is not None else None)
        if problem is None:
            self.model.show_problem(None, path)
            return
        self._show_problem(problem_as_dict(problem), path, case_boundaries(problem.case or ""))
        self.panel.use_problem_settings(problem)

    def use_case(self, name: str) -> None:
        """A built-in case with its example problem, editable in the table."""
        self.problem_label.setText("(built-in case)")
        try:
            self._show_problem(problem_as_dict(load_case_problem(name)), None, case_boundaries(name))
        except ParaFluxError as exc:
            self.show_error(str(exc))

    def open_mesh(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open mesh", "", self.panel.mesh_filter)
        if path:
            self.set_mesh_path(Path(path))

    def set_mesh_path(self, path: Path) -> None:
        """A bare mesh for the selected study, with its default materials (see the panel's bare_problem)."""
        try:
            data, boundary_names = self.panel.bare_problem(path)
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self.problem_label.setText(path.name)
        self._show_case(None)
        self._show_problem(data, path, boundary_names)
        if self.panel.preview_on_open:
            self.preview()

    def _show_case(self, name: str | None) -> None:
        """The case box names the built-in case a problem file builds, or is blank ("from the file") for a
        file's own geometry: it never names a case the window is not showing."""
        self.case_box.blockSignals(True)
        self.case_box.setCurrentIndex(self.case_box.findText(name) if name else -1)
        self.case_box.blockSignals(False)

    def _show_problem(self, data: dict, source: Path | None, boundary_names=()) -> None:
        self.model.show_problem(data, source)
        self.panels["elastostatic-bem"].fem_check_button.setEnabled(False)
        self.panel.show_problem(data, boundary_names)

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """Stop a running job before the window and its thread go away; remember the layout.

        A job stops at its next check; one inside a step it cannot interrupt (a dense factorisation)
        keeps running with the window hidden, and the window closes when it ends, so the
        thread is never destroyed while it runs.
        """
        if self.remember_layout:
            self.settings.setValue("geometry", self.saveGeometry())
            self.settings.setValue("window_state", self.saveState(LAYOUT_VERSION))
        if not self.jobs.stop_for_close(self.close):
            self.hide()
            event.ignore()
            return
        self.view.close()
        self.charts.close()
        super().closeEvent(event)

    def current_problem(self):
        """The problem as shown: the table's materials and boundaries, the combos, the size box."""
        return self.model.problem(self._edited(), self.panel.size_key, self.size_box.value(), self.panel.variants())

    def open_sweep(self) -> None:
        """The Sweep window on the current problem (app/sweep_panel.py)."""
        from .sweep_panel import SweepPanel  # noqa: PLC0415

        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self.sweep_panel = SweepPanel(problem, self.study, self)
        self.sweep_panel.setAttribute(QtCore.Qt.WA_DeleteOnClose)  # a closed one is not kept as the window's child
        self.sweep_panel.show()

    def solve(self) -> None:
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        study = self.study
        self.charts.start_live()
        self._start(lambda control: study.run(problem, control), self.on_finished, "solve")

    def preview(self) -> None:
        """Mesh the case (or read the mesh file) in the background and show it."""
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        panel = self.panel
        self._start(lambda control: panel.load_mesh(problem, control), self.on_previewed, "preview")

    def on_previewed(self, mesh) -> None:
        self.model.show(None)  # the view shows a mesh now
        self._idle()
        self.mesh_label.setText(f"{mesh.n_elements:,} elements, {mesh.n_nodes:,} nodes")
        self.panel.show_mesh(self.view, mesh)  # the study cannot change while a job runs
        self.view_bar.setVisible(False)
        self.status.setText("mesh ready")

    def compare(self) -> None:
        """Run the current problem once per checked choice of the chosen axis, in sequence."""
        axis, choices = self.compare_panel.checked()
        if len(choices) < 2:
            self.show_error("tick at least two choices to compare")
            return
        try:
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        study = self.study
        sets = study.compare_sets(axis, choices)
        self.charts.start_live()
        self._start(lambda control: compare_variants(study, problem, sets, control), self.on_compared, "compare")

    def run_scaling(self) -> None:
        """Truncation: time the checked loop strategies as S and the right-hand sides grow."""
        try:
            loops, sizes, rhs = self.panel.scaling_request()
            problem = self.current_problem()
        except ParaFluxError as exc:
            self.show_error(str(exc))
            return
        self._start(lambda control: scaling_sweep(problem, loops, sizes, rhs, control), self.on_scaled, "scaling")

    def on_scaled(self, rows) -> None:
        self._idle()
        self.compare_panel.show_scaling(rows)
        self.charts.show_scaling(rows)
        self.status.setText(f"scaling: {len(rows)} runs")
        self._log(f"scaling: {len(rows)} runs")

    def run_fem_check(self) -> None:
        """BEM: solve the last result's part with hexahedra and compare (engine/bem/fem_check.py)."""
        result = self.model.check_target
        self._start(lambda control: check_against_hex_fem(result, control=control), self.on_fem_checked, "fem-check")

    def on_fem_checked(self, check) -> None:
        self._idle()
        self.summary.show_rows(self.summary.rows() + [("p-FEM check", line, "") for line in check.lines()])
        self.status.setText(f"p-FEM check: largest difference {check.max_difference:.2e}")
        self._log(check.lines()[0])

    def _start(self, job, on_finished, name: str = "job") -> None:
        """Run job(control) in the job thread, on_finished(its value) after; name: what runs (the session's)."""
        if not self.jobs.start(job, on_finished):
            self.show_error("the last run has not ended yet: wait for it or cancel it first")
            return
        self.model.start(name)
        for widget in self._busy_widgets():
            widget.setEnabled(False)
        self.cancel_button.setEnabled(True)

    def _busy_widgets(self) -> list:
        """What must not start a second job or change the problem while one runs (one job at a time)."""
        return [self.solve_button, self.compare_button, self.preview_button, self.study_box, self.open_button,
                self.open_mesh_button, self.panels["truncation"].scaling_button,
                self.panels["scattering"].open_target_button,
                self.panels["elastostatic-bem"].fem_check_button]

    def _refuse_while_busy(self) -> bool:
        """True, with a dialog, when a job runs (the File menu's Open entries stay enabled)."""
        busy = self.jobs.running()
        if busy:
            self.show_error("a run is in progress: wait for it or cancel it first")
        return busy

    def on_compared(self, outcome) -> None:
        rows, results = outcome
        self.model.show(results[-1])  # the one drawn
        self._idle()
        self.compared = results
        self.compare_panel.show_comparison(rows)
        self._show_result(results[-1])
        self.charts.show_comparison(rows)
        self.tables.setCurrentWidget(self.compare_panel.table_page)
        self._finished_message(f"compared {len(rows)} variants: select one in the Compare table to see its "
                               "difference from the first")

    def show_difference(self) -> None:
        """The selected variant's field minus the first variant's, on the mesh (the view's shown field)."""
        row = self.compare_panel.selected_row()
        if row is None or len(self.compared) <= row:
            return
        first, chosen = self.compared[0], self.compared[row]
        panel = self.panels[study_for_kind(chosen.problem.kind).name]
        reason = self.view.show_difference(lambda r: panel.show_result(self.view, r), first, chosen,
                                           self.compare_panel.rows[row].label)
        self.status.setText(reason or f"showing {self.compare_panel.rows[row].label} minus "
                                      f"{self.compare_panel.rows[0].label}")

    def _finished_message(self, message: str) -> None:
        self.status.setText(message)
        self.statusBar().showMessage(message, 10_000)

    def cancel(self) -> None:
        self.jobs.cancel()

    def on_progress(self, fraction: float, message: str) -> None:
        self.progress_bar.setValue(int(100 * fraction))
        self.status.setText(message)
        reported = iteration_of(message)
        if reported is not None:
            self.charts.add_iteration(*reported)
        elif "iteration" not in message:  # phases go to the log, not every iteration
            self._log(message)

    def _idle(self, finished: bool = True) -> None:
        """The job ended (the progress bar full, or reset when it failed); one job at a time, so every control
        comes back."""
        self.model.finished()
        if finished:
            self.progress_bar.setValue(100)
        else:
            self.progress_bar.reset()
        for widget in self._busy_widgets():
            widget.setEnabled(True)
        self.panels["elastostatic-bem"].fem_check_button.setEnabled(self.model.can_check)
        self.cancel_button.setEnabled(False)

    def _show_result(self, result) -> StudyPanel:
        """Draw a result with its own study's panel; the warp control shows for solids."""
        panel = self.panels[study_for_kind(result.problem.kind).name]
        panel.show_result(self.view, result)
        self.view_bar.setVisible(self.view.solid is not None)
        if self.view.solid is not None:
            self.warp_box.blockSignals(True)
            self.warp_box.setValue(self.view.warp_scale)
            self.warp_box.blockSignals(False)
        return panel

    def on_finished(self, result) -> None:
        self.model.finished(result)
        self._idle()
        panel = self._show_result(result)
        self.summary.show_rows(panel.summary_rows(result))
        self.tables.setCurrentWidget(self.summary)
        self.mesh_label.setText(panel.mesh_text(result))
        panel.show_charts(self.charts, result)
        self.export_vtu_action.setEnabled(True)
        self.export_png_action.setEnabled(True)
        self._log(panel.log_line(result))
        self._finished_message(f"solve finished in {sum(result.timings.values()):.3g} s; {panel.done_message}")
        study = study_for_kind(result.problem.kind)
        short = study.shortfall(result) if study.shortfall else None
        if short:  # a result short of its target (exit 3 on the command line): shown, and said once
            self._log(f"failed: {short}")
            self.show_error(short)

    def on_failed(self, message: str) -> None:
        self._idle(finished=False)
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
    elif not window.grab().save(str(png)):
        reason = f"cannot write {png}"
    else:
        try:  # the 3D view's own rendering: the panels around it are never blank
            spread = float(window.view.screenshot(None, return_img=True).mean(axis=2).std())
            if spread < 10:
                reason = f"the rendered view is blank (grey-level spread {spread:.1f})"
        except RuntimeError as exc:  # no OpenGL context: nothing was rendered
            reason = f"the 3D view cannot render here ({exc})"
    window.close()
    if reason:
        print(f"paraflux-gui self-test: FAILED: {reason}", file=sys.stderr)
        return 1
    print(f"paraflux-gui self-test: ok, {window.view.result.mesh.n_elements} elements solved, wrote {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """paraflux-gui [PROBLEM.toml] opens the window; paraflux-gui --self-test [PNG] checks the install;
    paraflux-gui --screenshots DIR saves each study's solved default case at 1366x768 and 1920x1080."""
    argv = list(sys.argv if argv is None else argv)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(argv)
    gui_thread_gc.install(app)  # jobs run in a thread: Qt and VTK objects must not be freed there
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test(app, Path(argv[2] if len(argv) > 2 else "paraflux-self-test.png"))
    if len(argv) > 1 and argv[1] == "--screenshots":
        from . import screenshots  # noqa: PLC0415

        return screenshots.main(app, MainWindow, argv[2] if len(argv) > 2 else "docs/screenshots", argv[3:])
    window = MainWindow()
    if len(argv) > 1:
        window.set_problem_path(Path(argv[1]))
    window.show()
    end_on_sigterm(app)
    return app.exec()


def end_on_sigterm(app) -> QtCore.QTimer:
    """SIGTERM ends the event loop with exit code 143 once the step in hand (a file being saved) is done,
    so no half-written file stays; a timer lets Python see the signal while Qt waits for events."""
    signal.signal(signal.SIGTERM, lambda signum, frame: app.exit(143))
    timer = QtCore.QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(200)
    return timer


if __name__ == "__main__":
    sys.exit(main())
