"""One panel adapter per registered study: the controls the window shows for it (variant combos and
parameter fields built from the registry, the study's own problem settings and materials table), its
built-in cases, and how its problems, meshes and results reach the table, the view and the summary.
The window holds one panel per entry of STUDIES and shows the selected one."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from paraflux.engine.backend import gpu_unavailable_reason
from paraflux.engine.bem.fem_check import TWIN_CASES
from paraflux.engine.bem.run import bem_summary, read_grouped_surface, surface_of
from paraflux.engine.errors import ProblemError
from paraflux.engine.hexfem.run import load_hex_mesh
from paraflux.engine.magnetostatics.run import load_mesh
from paraflux.engine.mesh.hex_io import read_hexmesh
from paraflux.engine.mesh.io import read_trimesh
from paraflux.engine.output import elasticity_summary, magnetostatic_summary, truncation_summary
from paraflux.engine.problems.bem import LENGTH_UNITS as BEM_LENGTH_UNITS
from paraflux.engine.problems.elasticity import LENGTH_UNITS as ELASTIC_LENGTH_UNITS
from paraflux.engine.problems.magnetostatic import FORMULATIONS, LENGTH_UNITS, POTENTIALS
from paraflux.engine.problems.truncation import LENGTH_UNITS as SURFACE_LENGTH_UNITS
from paraflux.engine.studies import Study
from paraflux.engine.truncation.run import load_surfaces

from .problem_table import ProblemTable
from .results_table import summary_rows
from .materials_table import BemMaterialsTable, ElasticMaterialsTable, MaterialsTable
from .sources_table import SourcesTable
from .surface_view import FIELDS


def axis_box(axis, gpu_reason: str | None) -> QtWidgets.QComboBox:
    """A combo of the axis's choices; those that cannot run here (no GPU, a package missing) are greyed out
    with the reason."""
    box = QtWidgets.QComboBox()
    for i, choice in enumerate(axis.choices):
        box.addItem(choice.name)
        box.setItemData(i, choice.description, QtCore.Qt.ToolTipRole)
        reason = choice.unavailable(gpu_reason)
        if reason:
            box.model().item(i).setEnabled(False)
            box.setItemData(i, f"unavailable: {reason}", QtCore.Qt.ToolTipRole)
    box.setCurrentText(axis.default)
    return box


def parameter_field(parameter) -> QtWidgets.QWidget:
    """A spin box with the parameter's bounds for whole-number settings, a line edit otherwise."""
    if parameter.integer:
        field = QtWidgets.QSpinBox()
        field.setRange(int(parameter.minimum), int(parameter.maximum))
        field.setValue(int(parameter.default))
    else:
        field = QtWidgets.QLineEdit(f"{parameter.default:g}")
    field.setToolTip(parameter.description)
    return field


class StudyPanel:
    """The controls and conversions of one study; subclasses add the study's own problem settings."""

    size_step = 1000  # step of the window's element-count box
    size_key = "elements"  # the [case] key the element-count box sets
    mesh_filter = "All files (*)"
    done_message = "done"
    preview_on_open = False  # whether the window previews a mesh file as soon as it is opened
    result_table: QtWidgets.QWidget | None = None  # a table of the result the window shows beside the summary
    shown: tuple | None = None  # (view, result) last drawn, where the panel redraws it (its colouring or view box)
    result_table_title = ""

    def __init__(self, study: Study):
        self.study = study
        self.cases = tuple(c.name for c in study.cases)
        self.page = QtWidgets.QWidget()
        self.form = QtWidgets.QFormLayout(self.page)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.unit_box = QtWidgets.QComboBox()
        self.materials = self._materials_table()
        self.materials.setMinimumHeight(120)
        self._add_problem_controls()
        self.form.addRow(self.materials)
        self.variants_page = QtWidgets.QWidget()  # the window shows it in its own group
        self.variant_form = QtWidgets.QFormLayout(self.variants_page)
        self.variant_form.setContentsMargins(0, 0, 0, 0)
        reason = gpu_unavailable_reason()
        self.axis_boxes = {}
        for axis in study.axes:
            self.axis_boxes[axis.name] = axis_box(axis, reason)
            self.variant_form.addRow(axis.label, self.axis_boxes[axis.name])
        for axis in study.axes:
            if axis.applies_when:
                self._enable_with(self.axis_boxes[axis.name], *axis.applies_when)
        self.parameter_edits = {}
        for parameter in study.parameters:
            self.parameter_edits[parameter.name] = parameter_field(parameter)
            self.variant_form.addRow(parameter.label, self.parameter_edits[parameter.name])

    def _enable_with(self, box: QtWidgets.QComboBox, other: str, choice: str) -> None:
        """Grey box out, saying why, unless the axis `other` shows `choice` (e.g. nodes of exponential M2L)."""
        def follow(text: str) -> None:
            box.setEnabled(text == choice)
            box.setToolTip("" if text == choice else f"used only with {other} = {choice}")

        self.axis_boxes[other].currentTextChanged.connect(follow)
        follow(self.axis_boxes[other].currentText())

    def _materials_table(self) -> MaterialsTable:
        raise NotImplementedError

    def _add_problem_controls(self) -> None:
        raise NotImplementedError

    def variants(self) -> dict:
        """The chosen choice of every axis and the value of every parameter (ProblemError names a bad one)."""
        chosen: dict = {name: box.currentText() for name, box in self.axis_boxes.items()}
        for name, field in self.parameter_edits.items():
            if isinstance(field, QtWidgets.QSpinBox):
                chosen[name] = field.value()
                continue
            try:
                chosen[name] = float(field.text())
            except ValueError:
                raise ProblemError(f"{name} must be a number, got '{field.text()}'") from None
        return chosen

    def parameter_texts(self) -> dict:
        """Parameter fields as shown (numbers for spin boxes, text otherwise), for sessions."""
        return {name: field.value() if isinstance(field, QtWidgets.QSpinBox) else field.text()
                for name, field in self.parameter_edits.items()}

    def parameter_allows(self, name: str, value) -> bool:
        """Whether set_parameter can show value: a whole number within a spin box's range, or a number
        or text for a text field."""
        field = self.parameter_edits[name]
        if isinstance(value, bool):
            return False
        if isinstance(field, QtWidgets.QSpinBox):
            return isinstance(value, int) and field.minimum() <= value <= field.maximum()
        return isinstance(value, (int, float, str))

    def set_parameter(self, name: str, value) -> None:
        field = self.parameter_edits[name]
        if isinstance(field, QtWidgets.QSpinBox):
            field.setValue(int(value))
        else:
            field.setText(value if isinstance(value, str) else f"{value:g}")

    def use_problem_settings(self, problem) -> None:
        """Select the problem's solver settings (and e.g. its element order) in the variant controls."""
        for name, box in self.axis_boxes.items():
            box.setCurrentText(getattr(problem.solver, name))
        for name in self.parameter_edits:
            self.set_parameter(name, getattr(problem.solver, name) if hasattr(problem.solver, name)
                               else getattr(problem, name))

    def show_problem(self, data: dict, boundary_names=()) -> None:
        """Show a problem dictionary: its head settings in the combos, its materials in the table."""
        self.unit_box.setCurrentText(data["problem"]["length_unit"])
        self.materials.show_problem(data, boundary_names)

    def edited(self, data: dict) -> dict:
        """A copy of the problem dictionary with what the table and the problem controls show."""
        data = self.materials.apply(data)
        data["problem"]["length_unit"] = self.unit_box.currentText()
        return data

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        """A mesh file as a problem dictionary with default materials, and its boundary names."""
        raise NotImplementedError

    def load_mesh(self, problem, control):
        """The problem's mesh (engine call, for the preview; control can cancel its meshing)."""
        raise NotImplementedError

    def show_mesh(self, view, mesh) -> None:
        raise NotImplementedError

    def show_result(self, view, result) -> None:
        raise NotImplementedError

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        """(quantity, value, unit) rows of the results table."""
        raise NotImplementedError

    def log_line(self, result) -> str:
        raise NotImplementedError

    def show_charts(self, charts, result) -> None:
        """The charts under the view: time per phase and the residual history."""
        charts.show_result(result)

    def mesh_text(self, result) -> str:
        """The mesh line under Preview once a result is shown."""
        return f"{result.mesh.n_elements:,} elements, {result.mesh.n_nodes:,} nodes"


class MagnetostaticPanel(StudyPanel):
    size_step = 1000
    mesh_filter = "Meshes (*.msh *.vtu *.vtk *.xdmf *.med);;All files (*)"
    done_message = "done: click the field to probe A and B"

    def _materials_table(self) -> MaterialsTable:
        return MaterialsTable()

    def _add_problem_controls(self) -> None:
        self.formulation_box = QtWidgets.QComboBox()
        self.formulation_box.addItems(FORMULATIONS)
        self.potential_box = QtWidgets.QComboBox()
        self.potential_box.addItems(POTENTIALS)
        self.unit_box.addItems(list(LENGTH_UNITS))
        self.form.addRow("Formulation", self.formulation_box)
        self.form.addRow("Potential", self.potential_box)
        self.form.addRow("Length unit", self.unit_box)

    def show_problem(self, data: dict, boundary_names=()) -> None:
        self.formulation_box.setCurrentText(data["problem"]["formulation"])
        self.potential_box.setCurrentText(data["problem"]["potential"])
        super().show_problem(data, boundary_names)

    def edited(self, data: dict) -> dict:
        data = super().edited(data)
        data["problem"].update(formulation=self.formulation_box.currentText(),
                               potential=self.potential_box.currentText())
        return data

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        """Every region gets mu_r = 1 and no current, every boundary starts natural."""
        mesh = read_trimesh(path)
        data = {"problem": {"kind": "magnetostatic", "formulation": self.formulation_box.currentText(),
                            "potential": self.potential_box.currentText(), "mesh": str(path),
                            "length_unit": self.unit_box.currentText()},
                "regions": {name: {"mu_r": 1.0, "current_density": 0.0} for name in mesh.region_names}}
        return data, mesh.boundary_names

    def load_mesh(self, problem, control):
        return load_mesh(problem, control)

    def show_mesh(self, view, mesh) -> None:
        view.show_mesh(mesh)

    def show_result(self, view, result) -> None:
        view.show_result(result)

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        return summary_rows(magnetostatic_summary(result))

    def log_line(self, result) -> str:
        return (f"solved: {result.mesh.n_elements} elements, {result.iterations} iterations, "
                f"energy {result.energy:.6g}")


class ElasticityPanel(StudyPanel):
    size_step = 10
    mesh_filter = "Hexahedral meshes (*.msh *.inp *.vtu);;All files (*)"
    done_message = "done: click the body to probe displacement and stress"
    default_young, default_poisson = 210e9, 0.3  # steel, for the regions of a bare mesh

    def _materials_table(self) -> MaterialsTable:
        return ElasticMaterialsTable()

    def _add_problem_controls(self) -> None:
        self.unit_box.addItems(list(ELASTIC_LENGTH_UNITS))
        self.form.addRow("Length unit", self.unit_box)

    def edited(self, data: dict) -> dict:
        data = super().edited(data)
        data["problem"]["order"] = self.parameter_edits["order"].value()
        return data

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        """Every region starts as steel (E = 210 GPa, nu = 0.3), every boundary traction-free."""
        mesh = read_hexmesh(path)
        data = {"problem": {"kind": "elasticity", "order": self.parameter_edits["order"].value(),
                            "mesh": str(path), "length_unit": self.unit_box.currentText()},
                "regions": {name: {"young": self.default_young, "poisson": self.default_poisson}
                            for name in mesh.region_names}}
        return data, mesh.boundary_names

    def load_mesh(self, problem, control):
        return load_hex_mesh(problem, control)

    def show_mesh(self, view, mesh) -> None:
        view.show_hex_mesh(mesh)

    def show_result(self, view, result) -> None:
        view.show_solid_result(result)

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        return summary_rows(elasticity_summary(result))

    def log_line(self, result) -> str:
        return (f"solved: {result.mesh.n_elements} hexahedra, p = {result.problem.order}, "
                f"{result.iterations} iterations, strain energy {result.strain_energy:.6g} J")


class TruncationPanel(StudyPanel):
    """Frequency, length unit and dipole sources (a table plus a count of random ones); S coloured by |E|
    or its error; scaling runs of the loop strategies (the window connects scaling_button)."""

    size_step = 500
    size_key = "outer_elements"  # the box sizes S; S' keeps the case's (or the file's) inner_elements
    mesh_filter = "Surface meshes (*.msh *.vtu *.vtk *.obj *.stl *.ply);;All files (*)"
    done_message = "done: click S to probe |E| and its error"

    def __init__(self, study: Study):
        super().__init__(study)
        self.shown: tuple | None = None  # (view, result) last drawn, redrawn when the colouring changes
        scaling = QtWidgets.QGroupBox("Scaling (paper 003, Figs. 2-5)")
        layout = QtWidgets.QFormLayout(scaling)
        self.scaling_loops = QtWidgets.QListWidget()
        self.scaling_loops.setMaximumHeight(90)
        reason = gpu_unavailable_reason()
        for choice in study.axis("loop").choices:
            item = QtWidgets.QListWidgetItem(choice.name)
            item.setToolTip(choice.description)
            if choice.needs_gpu and reason:
                item.setFlags(item.flags() & ~QtCore.Qt.ItemIsEnabled)
            else:
                item.setFlags(item.flags() | QtCore.Qt.ItemIsUserCheckable)
            item.setCheckState(QtCore.Qt.Checked if choice.name in ("serial", "cpu-s") else QtCore.Qt.Unchecked)
            self.scaling_loops.addItem(item)
        self.scaling_sizes = QtWidgets.QLineEdit("400, 800, 1600")
        self.scaling_sizes.setToolTip("S triangle counts (numS), comma-separated")
        self.scaling_rhs = QtWidgets.QLineEdit("1, 10")
        self.scaling_rhs.setToolTip("right-hand-side counts, comma-separated (random dipoles inside S')")
        self.scaling_button = QtWidgets.QPushButton("Run scaling")
        layout.addRow("Loops", self.scaling_loops)
        layout.addRow("S triangles", self.scaling_sizes)
        layout.addRow("Right-hand sides", self.scaling_rhs)
        layout.addRow(self.scaling_button)
        self.form.addRow(scaling)

    def _materials_table(self) -> SourcesTable:
        return SourcesTable()

    def _add_problem_controls(self) -> None:
        self.unit_box.addItems(list(SURFACE_LENGTH_UNITS))
        self.frequency_edit = QtWidgets.QLineEdit("600e6")
        self.frequency_edit.setToolTip("frequency in Hz")
        self.random_box = QtWidgets.QSpinBox()
        self.random_box.setRange(0, 100_000)
        self.random_box.setToolTip("extra dipoles at random points inside S', one right-hand side each")
        self.field_box = QtWidgets.QComboBox()
        for name, title in FIELDS.items():
            self.field_box.addItem(title, name)
        self.field_box.currentIndexChanged.connect(self._redraw)
        add, remove = QtWidgets.QPushButton("Add dipole"), QtWidgets.QPushButton("Remove selected")
        add.clicked.connect(lambda: self.materials.add_row())
        remove.clicked.connect(self.materials.remove_selected)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        self.form.addRow("Length unit", self.unit_box)
        self.form.addRow("Frequency (Hz)", self.frequency_edit)
        self.form.addRow("Random dipoles", self.random_box)
        self.form.addRow("Colour S by", self.field_box)
        self.form.addRow(buttons)

    def _redraw(self) -> None:
        if self.shown is not None:
            self.show_result(*self.shown)

    def scaling_request(self) -> tuple[list[str], list[int], list[int]]:
        """The checked loops, S triangle counts and right-hand-side counts (ProblemError names a bad entry)."""
        loops = [self.scaling_loops.item(i).text() for i in range(self.scaling_loops.count())
                 if self.scaling_loops.item(i).checkState() == QtCore.Qt.Checked]
        try:
            sizes = [int(v) for v in self.scaling_sizes.text().replace(",", " ").split()]
            rhs = [int(v) for v in self.scaling_rhs.text().replace(",", " ").split()]
        except ValueError:
            raise ProblemError("S triangles and right-hand sides must be whole numbers separated by commas") from None
        return loops, sizes, rhs

    def use_problem_settings(self, problem) -> None:
        self.axis_boxes["loop"].setCurrentText(problem.solver.loop)
        self.axis_boxes["quadrature"].setCurrentText(str(problem.quadrature))

    def show_problem(self, data: dict, boundary_names=()) -> None:
        head = data["problem"]
        self.frequency_edit.setText(f"{head['frequency']:g}")
        self.random_box.setValue(data.get("random_sources", {}).get("count", 0))
        super().show_problem(data, boundary_names)

    def edited(self, data: dict) -> dict:
        data = super().edited(data)
        data["problem"]["frequency"] = self._frequency()
        data["problem"]["quadrature"] = int(self.axis_boxes["quadrature"].currentText())
        data.setdefault("solver", {})["loop"] = self.axis_boxes["loop"].currentText()
        seed = data.get("random_sources", {}).get("seed", 0)
        data.pop("random_sources", None)
        if self.random_box.value():
            data["random_sources"] = {"count": self.random_box.value(), "seed": seed}
        return data

    def _frequency(self) -> float:
        """The frequency field in Hz (ProblemError names a value that is not a number)."""
        text = self.frequency_edit.text().strip()
        try:
            return float(text)
        except ValueError:
            raise ProblemError(f"frequency must be a number in Hz, got '{text}'") from None

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        """The file is S'; a second dialog asks for S. One dipole along z at S''s node centroid."""
        frequency = self._frequency() if self.frequency_edit.text().strip() else 600e6
        outer, _ = QtWidgets.QFileDialog.getOpenFileName(None, "Open the outer surface S", str(path.parent),
                                                         self.mesh_filter)
        if not outer:
            raise ProblemError("the truncation study needs two surfaces: no outer surface S was chosen")
        from paraflux.engine.truncation.surfaces import read_surface  # noqa: PLC0415

        inner = read_surface(path, 1.0, "inner_surface")
        centre = [float(c) for c in inner.points.mean(axis=0)]
        data = {"problem": {"kind": "truncation", "inner_surface": str(path), "outer_surface": outer,
                            "length_unit": self.unit_box.currentText(),
                            "frequency": frequency,
                            "quadrature": int(self.axis_boxes["quadrature"].currentText())},
                "sources": [{"position": centre, "moment": [0.0, 0.0, 1.0], "moment_imag": [0.0, 0.0, 0.0]}]}
        return data, ()

    def load_mesh(self, problem, control):
        return load_surfaces(problem, control)

    def show_mesh(self, view, mesh) -> None:
        self.shown = None
        view.show_surfaces(mesh.inner, mesh.outer)

    def show_result(self, view, result) -> None:
        self.shown = (view, result)
        view.show_truncation(result, self.field_box.currentData())

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        return summary_rows(truncation_summary(result))

    def log_line(self, result) -> str:
        return (f"applied: {result.setup.loop}, {result.n_rhs} right-hand sides, relative error "
                f"{result.relative_error:.2e}, {result.gflops:.3g} GFLOP/s")


class BemPanel(StudyPanel):
    size_step = 100
    mesh_filter = "Surface meshes with physical groups (*.msh *.vtu);;All files (*)"
    done_message = "done: click the surface to probe displacement and stress"
    default_young, default_poisson = 210e9, 0.3  # steel, for a bare mesh

    def __init__(self, study: Study):
        super().__init__(study)
        self.fem_check_button = QtWidgets.QPushButton("Check against hexahedral p-FEM")
        self.fem_check_button.setToolTip("solve the same part with the elasticity study's hexahedra and compare "
                                         f"the displacements ({TWIN_CASES})")
        self.fem_check_button.setEnabled(False)
        self.form.addRow(self.fem_check_button)

    def _materials_table(self) -> MaterialsTable:
        return BemMaterialsTable()

    def _add_problem_controls(self) -> None:
        self.unit_box.addItems(list(BEM_LENGTH_UNITS))
        self.form.addRow("Length unit", self.unit_box)

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        """A steel body (E = 210 GPa, nu = 0.3), every group traction-free until one is fixed in the table."""
        grouped = read_grouped_surface(path, 1.0)
        data = {"problem": {"kind": "elastostatic-bem", "mesh": str(path), "length_unit": self.unit_box.currentText(),
                            "young": self.default_young, "poisson": self.default_poisson}}
        return data, grouped.names

    def load_mesh(self, problem, control):
        return surface_of(problem, control)

    def show_mesh(self, view, mesh) -> None:
        view.show_grouped_surface(mesh)

    def show_result(self, view, result) -> None:
        view.show_bem_result(result)

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        return summary_rows(bem_summary(result))

    def log_line(self, result) -> str:
        return (f"solved: {result.mesh.n_elements:,} triangles, {3 * result.mesh.n_nodes:,} DOFs, "
                f"{result.problem.solver.method}, {result.iterations} GMRES iterations")


class GenericPanel(StudyPanel):
    """The panel of a study without one of its own, built from what it declares: its cases, variant axes
    and parameters, every setting of its problem in a table, and its result fields in the view."""

    def _materials_table(self) -> ProblemTable:
        return ProblemTable()

    def _add_problem_controls(self) -> None:
        self.unit_box.setVisible(False)

    def show_problem(self, data: dict, boundary_names=()) -> None:
        self.materials.show_problem(data, boundary_names)

    def edited(self, data: dict) -> dict:
        return self.materials.apply(data)

    def use_problem_settings(self, problem) -> None:
        solver = getattr(problem, "solver", None)
        for name, box in self.axis_boxes.items():
            box.setCurrentText(str(getattr(solver, name, getattr(problem, name, box.currentText()))))
        for name in self.parameter_edits:
            value = getattr(solver, name, getattr(problem, name, None))
            if value is not None:
                self.set_parameter(name, value)

    def bare_problem(self, path: Path) -> tuple[dict, tuple[str, ...]]:
        raise ProblemError(f"the {self.study.title} study reads its meshes from a problem file: open one with "
                           "Open problem")

    def load_mesh(self, problem, control):
        preview = self.study.actions.get("mesh")
        if preview is None:
            raise ProblemError(f"the {self.study.title} study has no mesh preview; solve to see its result")
        return preview(problem, control)

    def show_mesh(self, view, mesh) -> None:
        view.show_field_mesh(mesh)

    def show_result(self, view, result) -> None:
        view.show_fields(result, self.study.fields(result))

    def summary_rows(self, result) -> list[tuple[str, str, str]]:
        """The study's own description, a line a row, then its timings."""
        return ([("", line, "") for line in self.study.describe(result)]
                + summary_rows({"timings": dict(result.timings)}))

    def log_line(self, result) -> str:
        return "solved: " + self.study.describe(result)[0]

    def show_charts(self, charts, result) -> None:
        charts.show_far_field(result, self.study.fields(result))

    def mesh_text(self, result) -> str:
        mesh = self.study.fields(result).mesh
        return "" if mesh is None else f"{mesh.n_elements:,} elements, {mesh.n_nodes:,} nodes"
