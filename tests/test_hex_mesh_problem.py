"""Hexahedral meshes (built-in case, gmsh / Abaqus / VTU files, validation) and the elasticity problem schema."""

import copy
import tomllib
from pathlib import Path

import meshio
import numpy as np
import pytest

from paraflux.engine.errors import MeshError, ProblemError
from paraflux.engine.mesh.gmsh_build import gmsh_session
from paraflux.engine.mesh.hex_cases import HEX_CASES, mesh_hex_case
from paraflux.engine.mesh.hex_io import read_hexmesh, write_hexmesh
from paraflux.engine.mesh.hexmesh import HEX_FACES, HEX_REF_NODES, face_owners, hex_jacobian_dets, make_hexmesh
from paraflux.engine.problems import (case_problem_path, load_case_problem, load_problem, parse_problem,
                                       problem_as_dict)
from paraflux.engine.problems.elasticity import ElasticBoundary, elasticity_to_dict, parse_elasticity
from paraflux.engine.studies import study_for_kind

CANTILEVER_TOML = case_problem_path("cantilever")


def box_grid(nx, ny=1, nz=1, size=(1.0, 0.1, 0.1)):
    """Structured hexahedra of a box: points, hexes (VTK order) and the faces at x = 0 and x = size[0]."""
    axes = [np.linspace(0.0, s, n + 1) for s, n in zip(size, (nx, ny, nz))]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    idx = np.arange(len(points)).reshape(nx + 1, ny + 1, nz + 1)
    c = lambda di, dj, dk: idx[di:nx + di, dj:ny + dj, dk:nz + dk].ravel()  # noqa: E731
    hexes = np.column_stack([c(0, 0, 0), c(1, 0, 0), c(1, 1, 0), c(0, 1, 0),
                             c(0, 0, 1), c(1, 0, 1), c(1, 1, 1), c(0, 1, 1)])

    def x_face(i):
        f = idx[i]
        return np.column_stack([f[:-1, :-1].ravel(), f[1:, :-1].ravel(), f[1:, 1:].ravel(), f[:-1, 1:].ravel()])

    return points, hexes, x_face(0), x_face(nx)


def write_msh22(path, points, cells, tags, names):
    """A gmsh 2.2 file written by meshio: cells [(type, array)], tags per block, names {name: (tag, dim)}."""
    mesh = meshio.Mesh(points, cells, cell_data={"gmsh:physical": tags, "gmsh:geometrical": tags},
                       field_data={n: np.array(v) for n, v in names.items()})
    meshio.write(path, mesh, file_format="gmsh22", binary=False)


def write_with_gmsh(path, points, hexes, groups, version):
    """A .msh file written by gmsh itself from a discrete model: hexes in the volume 'steel', each
    named group of quads {name: (k, 4) array} on its own surface."""
    with gmsh_session("discrete") as gmsh:
        volume = gmsh.model.addDiscreteEntity(3)
        gmsh.model.mesh.addNodes(3, volume, np.arange(1, len(points) + 1), points.ravel())
        gmsh.model.mesh.addElementsByType(volume, 5, [], (hexes + 1).ravel())
        gmsh.model.addPhysicalGroup(3, [volume], name="steel")
        for name, quads in groups.items():
            surface = gmsh.model.addDiscreteEntity(2)
            gmsh.model.mesh.addElementsByType(surface, 3, [], (quads + 1).ravel())
            gmsh.model.addPhysicalGroup(2, [surface], name=name)
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.write(str(path))


def unit_cube_mesh(hexes=None, faces=None):
    points, cube, _, _ = box_grid(1, 1, 1, (1.0, 1.0, 1.0))
    hexes = cube if hexes is None else hexes
    faces = np.zeros((0, 4), dtype=int) if faces is None else faces
    return make_hexmesh(points, hexes, np.zeros(len(hexes)), ("steel",), faces, np.zeros(len(faces)), ("tip",))


# --- the built-in case ---------------------------------------------------------------------------

def test_cantilever_nominal_mesh():
    mesh = mesh_hex_case("cantilever")
    assert HEX_CASES["cantilever"].length_unit == "m"
    assert (mesh.n_elements, mesh.n_nodes) == (10, 44)
    assert mesh.region_names == ("steel",)
    assert set(mesh.boundary_names) == {"clamp", "tip", "top", "bottom"}
    assert len(mesh.boundary_faces("clamp")) == 1 and len(mesh.boundary_faces("tip")) == 1
    assert len(mesh.boundary_faces("top")) == 10 and len(mesh.boundary_faces("bottom")) == 10
    assert np.allclose(mesh.points[mesh.boundary_nodes("clamp"), 0], 0.0)
    assert np.allclose(mesh.points[mesh.boundary_nodes("tip"), 0], 1.0)
    assert np.allclose(mesh.points[mesh.boundary_nodes("top"), 2], 0.1)
    dets = hex_jacobian_dets(mesh.points, mesh.hexes, np.vstack([HEX_REF_NODES, np.zeros((1, 3))]))
    assert dets.min() > 0
    assert 8 * dets[:, -1].sum() == pytest.approx(1.0 * 0.1 * 0.1)  # affine elements: volume = 8 det
    assert np.allclose(mesh.points.min(axis=0), 0) and np.allclose(mesh.points.max(axis=0), [1, 0.1, 0.1])


def test_cantilever_target_count_and_limits():
    mesh = mesh_hex_case("cantilever", elements=8000)
    assert abs(mesh.n_elements - 8000) <= 0.02 * 8000
    assert len(mesh.boundary_faces("clamp")) == len(mesh.boundary_faces("tip")) == 81  # 9 x 9 cross-section
    assert hex_jacobian_dets(mesh.points, mesh.hexes, np.zeros((1, 3))).min() > 0
    assert mesh_hex_case("cantilever", elements=1).n_elements == 1
    for bad in (0, 2_000_001):
        with pytest.raises(ProblemError, match="target element count must be from 1"):
            mesh_hex_case("cantilever", elements=bad)
    with pytest.raises(ProblemError, match="unknown case 'bridge'.*cantilever"):
        mesh_hex_case("bridge")


# --- geometry helpers ----------------------------------------------------------------------------

def test_jacobian_of_an_affine_hexahedron_is_constant():
    matrix = np.array([[2.0, 0.3, 0.1], [0.0, 1.5, -0.2], [0.1, 0.0, 0.7]])
    points = HEX_REF_NODES @ matrix.T + [1.0, 2.0, 3.0]
    rst = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    assert np.allclose(hex_jacobian_dets(points, np.arange(8)[None], rst), np.linalg.det(matrix))


def test_hex_faces_point_outward_and_owners_are_found():
    points, hexes, clamp, tip = box_grid(3)
    diagonal = hexes[0, [0, 1, 6, 7]]
    owner, local = face_owners(hexes, np.vstack([clamp, tip, diagonal]))
    assert owner.tolist() == [0, 2, -1] and local.tolist() == [5, 3, -1]  # r = -1 and r = +1 faces
    corners = points[hexes[0]]
    for face in HEX_FACES:
        p = corners[face]
        normal = np.cross(p[1] - p[0], p[3] - p[0])
        assert normal @ (p.mean(axis=0) - corners.mean(axis=0)) > 0


# --- files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [2.2, 4.1])
def test_gmsh_written_msh_round_trip(tmp_path, version):
    points, hexes, clamp, tip = box_grid(4, 2, 1)
    path = tmp_path / "beam.msh"
    write_with_gmsh(path, points, hexes, {"clamp": clamp, "tip": tip}, version)
    mesh = read_hexmesh(path)
    assert mesh.n_elements == 8 and mesh.n_nodes == len(points)
    assert mesh.region_names == ("steel",)
    assert sorted(mesh.boundary_names) == ["clamp", "tip"]
    assert len(mesh.boundary_faces("tip")) == 2
    assert np.allclose(mesh.points[mesh.boundary_nodes("tip"), 0], 1.0)
    assert np.allclose(mesh.element_coords(), points[hexes])


def test_case_written_by_gmsh_reads_like_the_case(tmp_path):
    path = tmp_path / "cantilever.msh"
    with gmsh_session("cantilever") as gmsh:
        case = HEX_CASES["cantilever"]
        case.build(gmsh, case.divisions(None))
        gmsh.model.mesh.generate(3)
        gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
        gmsh.write(str(path))
    from_file, from_case = read_hexmesh(path), mesh_hex_case("cantilever")
    assert from_file.n_elements == from_case.n_elements and from_file.n_nodes == from_case.n_nodes
    assert set(from_file.boundary_names) == set(from_case.boundary_names)
    problem_file = tmp_path / "cantilever.toml"
    problem_file.write_text(CANTILEVER_TOML.read_text().replace('case = "cantilever"', 'mesh = "cantilever.msh"'))
    problem = load_problem(problem_file)
    assert problem.mesh_path == path.resolve() and problem.case is None
    problem.validate_against_mesh(from_file)


def test_meshio_msh22_with_unused_nodes(tmp_path):
    points, hexes, clamp, tip = box_grid(2)
    points = np.vstack([points, [[5.0, 5.0, 5.0]]])  # a stray node no hexahedron uses
    path = tmp_path / "beam.msh"
    write_msh22(path, points, [("hexahedron", hexes), ("quad", np.vstack([clamp, tip])), ("vertex", [[12]])],
                [np.array([1, 1]), np.array([2, 3]), np.array([0])],
                {"steel": (1, 3), "clamp": (2, 2), "tip": (3, 2)})
    mesh = read_hexmesh(path)
    assert mesh.n_nodes == 12 and mesh.boundary_names == ("clamp", "tip")
    assert mesh.points.max() <= 1.0


def test_abaqus_inp(tmp_path):
    points, hexes, clamp, tip = box_grid(2)
    lines = ["*HEADING", "beam", "*NODE"]
    lines += [f"{i + 1}, {x:.17g}, {y:.17g}, {z:.17g}" for i, (x, y, z) in enumerate(points)]
    lines += ["*ELEMENT, TYPE=C3D8, ELSET=steel"]
    lines += [f"{e + 1}, " + ", ".join(str(n + 1) for n in h) for e, h in enumerate(hexes)]
    lines += ["*ELEMENT, TYPE=S4"]
    lines += [f"{10 + k}, " + ", ".join(str(n + 1) for n in q) for k, q in enumerate(np.vstack([clamp, tip]))]
    lines += ["*ELSET, ELSET=clamp", "10", "*ELSET, ELSET=tip", "11"]
    path = tmp_path / "beam.inp"
    path.write_text("\n".join(lines) + "\n")
    mesh = read_hexmesh(path)
    assert mesh.n_elements == 2 and mesh.region_names == ("steel",)
    assert sorted(mesh.boundary_names) == ["clamp", "tip"]
    assert np.allclose(mesh.points[mesh.boundary_nodes("clamp"), 0], 0.0)
    assert np.allclose(mesh.points[mesh.boundary_nodes("tip"), 0], 1.0)


def test_vtu_cell_sets_and_write_round_trip(tmp_path):
    points, hexes, clamp, tip = box_grid(3)
    none = np.zeros(0, dtype=int)
    source = meshio.Mesh(points, [("hexahedron", hexes), ("quad", np.vstack([clamp, tip]))],
                         cell_sets={"steel": [np.arange(3), none], "clamp": [none, [0]], "tip": [none, [1]]})
    meshio.write(tmp_path / "in.vtu", source)
    mesh = read_hexmesh(tmp_path / "in.vtu")
    assert mesh.region_names == ("steel",) and sorted(mesh.boundary_names) == ["clamp", "tip"]
    out = tmp_path / "out.vtu"
    write_hexmesh(out, mesh, {"u": mesh.points * 2}, {"region": mesh.region_index})
    back = meshio.read(out)
    assert np.allclose(back.point_data["u"], mesh.points * 2)
    assert back.cells_dict["hexahedron"].shape == (3, 8)
    assert not list(tmp_path.glob(".*"))


def test_file_errors(tmp_path):
    with pytest.raises(MeshError, match="mesh file not found"):
        read_hexmesh(tmp_path / "nothing.msh")
    garbage = tmp_path / "garbage.msh"
    garbage.write_bytes(b"\x00\x01 not a mesh")
    with pytest.raises(MeshError, match="cannot read mesh file"):
        read_hexmesh(garbage)
    tet = tmp_path / "tet.msh"
    write_msh22(tet, np.eye(4, 3), [("tetra", [[0, 1, 2, 3]])], [np.array([1])], {"steel": (1, 3)})
    with pytest.raises(MeshError, match="contains 1 tetra cells; only 8-node hexahedra are supported"):
        read_hexmesh(tet)
    points, hexes, _, _ = box_grid(1)
    hex20 = tmp_path / "hex20.msh"
    write_msh22(hex20, np.vstack([points, np.zeros((12, 3))]), [("hexahedron20", [np.arange(20)])],
                [np.array([1])], {"steel": (1, 3)})
    with pytest.raises(MeshError, match="contains 1 hexahedron20 cells; only 8-node hexahedra"):
        read_hexmesh(hex20)
    unnamed = tmp_path / "unnamed.msh"
    write_msh22(unnamed, points, [("hexahedron", hexes)], [np.array([7])], {"clamp": (2, 2)})
    with pytest.raises(MeshError, match="1 of 1 hexahedra belong to no named physical group"):
        read_hexmesh(unnamed)
    triangles = tmp_path / "triangles.msh"
    write_msh22(triangles, points, [("hexahedron", hexes), ("triangle", [[0, 1, 2]])],
                [np.array([1]), np.array([2])], {"steel": (1, 3), "tip": (2, 2)})
    with pytest.raises(MeshError, match="boundary 'tip' has triangle cells; boundaries must be 4-node"):
        read_hexmesh(triangles)
    flat = tmp_path / "flat.msh"
    write_msh22(flat, points, [("quad", [[0, 1, 3, 2]])], [np.array([1])], {"tip": (1, 2)})
    with pytest.raises(MeshError, match="has no hexahedra"):
        read_hexmesh(flat)


def test_validation_errors():
    points, cube, _, _ = box_grid(1, 1, 1, (1.0, 1.0, 1.0))
    two, _, _, _ = box_grid(2)
    _, two_hexes, _, _ = box_grid(2)
    inverted = two_hexes.copy()
    inverted[1] = inverted[1][[4, 5, 6, 7, 0, 1, 2, 3]]  # top and bottom swapped
    with pytest.raises(MeshError, match=r"inverted or degenerate hexahedra: 1 of 2 .* hexahedron 1 in region 'steel'"):
        make_hexmesh(two, inverted, [0, 0], ("steel",), np.zeros((0, 4)), [], ())
    flat = points.copy()
    flat[4:, 2] = 0.0  # top face collapsed onto the bottom
    with pytest.raises(MeshError, match="inverted or degenerate"):
        make_hexmesh(flat, cube, [0], ("steel",), np.zeros((0, 4)), [], ())
    with pytest.raises(MeshError, match="uses? a node twice|repeated node"):
        unit_cube_mesh(hexes=cube[:, [0, 1, 2, 3, 4, 5, 6, 6]])
    with pytest.raises(MeshError, match="refers to a node that does not exist"):
        unit_cube_mesh(hexes=cube + 1)
    with pytest.raises(MeshError, match="boundary 'tip' has 1 quadrilateral.*not a face of any hexahedron"):
        unit_cube_mesh(faces=np.array([[0, 1, 7, 6]]))  # a diagonal plane through the cube
    with pytest.raises(MeshError, match="non-finite"):
        make_hexmesh(np.where(points == 1.0, np.nan, points), cube, [0], ("steel",), np.zeros((0, 4)), [], ())
    with pytest.raises(MeshError, match="no hexahedra"):
        make_hexmesh(points, np.zeros((0, 8)), [], ("steel",), np.zeros((0, 4)), [], ())
    mesh = unit_cube_mesh(faces=box_grid(1, 1, 1, (1.0, 1.0, 1.0))[2])
    assert mesh.scaled(1e-3).points.max() == pytest.approx(1e-3)
    with pytest.raises(MeshError, match="no boundary 'clamp'; it has: tip"):
        mesh.boundary_nodes("clamp")


# --- the problem schema --------------------------------------------------------------------------

def cantilever_data():
    with CANTILEVER_TOML.open("rb") as fh:
        return tomllib.load(fh)


def edit(data, path, value):
    """Set data[a][b]... = value along the dotted path; value ... deletes the key."""
    *parents, last = path.split(".")
    for key in parents:
        data = data[key]
    if value is ...:
        del data[last]
    else:
        data[last] = value


BAD = [
    ("problem.kind", "magnetostatic", r"kind = 'magnetostatic' is not an elasticity problem"),
    ("problem.mesh", "beam.msh", r"\[problem\] needs exactly one of 'mesh'"),
    ("problem.case", ..., r"\[problem\] needs exactly one of 'mesh'"),
    ("problem.case", "bridge", r"\[problem\] case = 'bridge' is not a built-in 3D case; choose one of: cantilever"),
    ("problem.order", 0, r"\[problem\] order must be a whole number from 1 to 10, got 0"),
    ("problem.order", 11, r"\[problem\] order must be a whole number from 1 to 10, got 11"),
    ("problem.order", 2.5, r"\[problem\] order must be a int"),
    ("problem.order", True, r"\[problem\] order must be a int"),
    ("problem.length_unit", "cm", r"\[problem\] length_unit = 'cm' is not one of: m, mm"),
    ("problem.length_unit", "mm", r"case 'cantilever' is drawn in m"),
    ("problem.colour", "red", r"\[problem\] unknown key\(s\): colour"),
    ("case", {"elements": 0}, r"\[case\] elements must be from 1"),
    ("case", {"elements": 2_000_001}, r"\[case\] elements must be from 1"),
    ("case", {"cells": 10}, r"\[case\] unknown key\(s\): cells"),
    ("regions", {}, r"no \[regions.NAME\] tables"),
    ("regions.steel.young", -1.0, r"\[regions.steel\] young must be positive"),
    ("regions.steel.young", 1.7e308, r"regions.steel.young = 1.7e\+308 is too large"),
    ("regions.steel.young", "hard", r"\[regions.steel\] young must be a float"),
    ("regions.steel.young", ..., r"\[regions.steel\] is missing the key 'young'"),
    ("regions.steel.poisson", 0.5, r"\[regions.steel\] poisson must lie strictly between -1 and 0.5"),
    ("regions.steel.poisson", -1, r"\[regions.steel\] poisson must lie strictly between -1 and 0.5"),
    ("regions.steel.poisson", ..., r"\[regions.steel\] is missing the key 'poisson'"),
    ("regions.steel.density", 7850.0, r"\[regions.steel\] unknown key\(s\): density"),
    ("regions.steel", 3.0, r"\[regions.steel\] must be a table"),
    ("boundaries.tip.type", "force", r"\[boundaries.tip\] type = 'force' is not one of: fixed, displacement"),
    ("boundaries.tip.type", ..., r"\[boundaries.tip\] is missing the key 'type'"),
    ("boundaries.tip.value", [0.0, -1.0], r"\[boundaries.tip\] value must be a list of 3 numbers"),
    ("boundaries.tip.value", [0.0, 0.0, "free"], r"\[boundaries.tip\] value must be a list of 3 numbers"),
    ("boundaries.tip.value", [0.0, 0.0, float("inf")], r"boundaries.tip.value\[2\] = inf is not a finite number"),
    ("boundaries.tip.value", -1.0e6, r"\[boundaries.tip\] value must be a list of 3 numbers"),
    ("boundaries.tip.value", ..., r"\[boundaries.tip\] is missing the key 'value'"),
    ("boundaries.tip.scale", 2.0, r"\[boundaries.tip\] unknown key\(s\): scale"),
    ("boundaries.tip", {"type": "pressure", "value": [1.0, 2.0, 3.0]}, r"\[boundaries.tip\] value must be a float"),
    ("boundaries.tip", {"type": "pressure"}, r"\[boundaries.tip\] is missing the key 'value'"),
    ("boundaries.clamp.value", [0.0, 0.0, 0.0], r"\[boundaries.clamp\] a fixed boundary takes no value"),
    ("boundaries.clamp", {"type": "displacement", "value": [0.0, "fixed", 0.0]},
     r"\[boundaries.clamp\] value must be a list of 3 numbers or \"free\""),
    ("boundaries.clamp", {"type": "displacement", "value": ["free", "free", "free"]},
     r"\[boundaries.clamp\] every displacement component is \"free\""),
    ("boundaries.clamp", ..., r"at least one 'fixed' or 'displacement' boundary"),
    ("solver.method", "ebe-jpcg", r"\[solver\] method = 'ebe-jpcg' is not one of: cg, sparse-direct"),
    ("solver.integration", "fast", r"\[solver\] integration = 'fast' is not one of: numpy"),
    ("solver.preconditioner", "ilu", r"\[solver\] preconditioner = 'ilu' is not one of: jacobi, block-jacobi"),
    ("solver.backend", "tpu", r"\[solver\] backend = 'tpu' is not one of"),
    ("solver.rtol", 0.0, r"\[solver\] rtol must lie strictly between 1e-15 and 1"),
    ("solver.rtol", 1.5, r"\[solver\] rtol must lie strictly between 1e-15 and 1"),
    ("solver.rtol", "small", r"\[solver\] rtol must be a float"),
    ("solver.max_iterations", 0, r"\[solver\] max_iterations must be from 1 to 1,000,000"),
    ("solver.max_iterations", 10**7, r"\[solver\] max_iterations must be from 1 to 1,000,000, got 10000000"),
    ("solver.max_iterations", 10.5, r"\[solver\] max_iterations must be a int"),
    ("solver.check_every", 4, r"\[solver\] unknown key\(s\): check_every"),
    ("solver", "cg", r"^\[solver\] must be a table"),
    ("probes", {"name": "tip"}, r"\[\[probes\]\] must be an array of tables"),
    ("probes", [{"name": "tip", "point": [1.0, 0.05]}], r"\[\[probes\]\] 'tip': point must be a list of 3 numbers"),
    ("probes", [{"name": "tip"}], r"\[\[probes\]\] 'tip': point must be a list of 3 numbers"),
    ("probes", [{"name": "tip", "point": [1, 0, 0], "field": "u"}], r"\[probes #1\] unknown key\(s\): field"),
    ("output", {"folder": "out"}, r"\[problem file\] unknown key\(s\): output"),
]


@pytest.mark.parametrize("path, value, message", BAD, ids=[f"{p}={v!r}" for p, v, _ in BAD])
def test_schema_rejects_bad_input_naming_the_key(tmp_path, path, value, message):
    data = cantilever_data()
    edit(data, path, value)
    with pytest.raises(ProblemError, match=message):
        parse_elasticity(data, tmp_path)


def test_schema_accepts_every_variant_and_round_trips(tmp_path):
    data = cantilever_data()
    edit(data, "problem.case", ...)
    edit(data, "problem.mesh", "meshes/beam.msh")
    edit(data, "problem.length_unit", "mm")
    edit(data, "problem.order", 7)
    edit(data, "boundaries.clamp", {"type": "displacement", "value": [0.0, "free", 0.5]})
    edit(data, "boundaries.side", {"type": "pressure", "value": 2e5})
    edit(data, "boundaries.base", {"type": "fixed"})
    edit(data, "solver", {"method": "sparse-direct", "integration": "sumfact", "preconditioner": "jacobi",
                          "backend": "numpy", "rtol": 1e-6, "max_iterations": 50})
    problem = parse_elasticity(data, tmp_path)
    assert problem.mesh_path == (tmp_path / "meshes" / "beam.msh").resolve()
    assert problem.length_scale == 1e-3 and problem.order == 7
    assert ElasticBoundary("clamp", "displacement", (0.0, None, 0.5)) in problem.boundaries
    assert ElasticBoundary("side", "pressure", 2e5) in problem.boundaries
    assert ElasticBoundary("base", "fixed", None) in problem.boundaries
    assert parse_elasticity(elasticity_to_dict(problem), Path("/elsewhere")) == problem
    case = load_case_problem("cantilever", elements=500)
    assert case.case_elements == 500
    assert parse_elasticity(elasticity_to_dict(case), tmp_path) == case


def test_cantilever_problem_loads_and_fits_its_mesh():
    assert study_for_kind("elasticity").name == "elasticity"
    problem = load_case_problem("cantilever")
    assert problem.kind == "elasticity" and problem.case == "cantilever"
    assert (problem.order, problem.solver.method, problem.solver.integration) == (3, "cg", "numpy")
    assert problem.regions[0].young == 210e9 and problem.regions[0].poisson == 0.3
    tip = next(b for b in problem.boundaries if b.name == "tip")
    assert tip.type == "traction" and tip.value == (0.0, 0.0, -1.0e6)
    assert problem.probes[0].point == (1.0, 0.05, 0.05)
    problem.validate_against_mesh(mesh_hex_case("cantilever"))
    assert load_case_problem("open-slot").kind == "magnetostatic"
    with pytest.raises(ProblemError, match="unknown case 'bridge'; built-in cases: .*open-slot.*cantilever"):
        case_problem_path("bridge")


def test_problem_against_mesh_names_what_is_missing():
    mesh = mesh_hex_case("cantilever")
    problem = load_case_problem("cantilever")
    copper = copy.deepcopy(elasticity_to_dict(problem))
    copper["regions"]["copper"] = {"young": 110e9, "poisson": 0.34}
    with pytest.raises(ProblemError, match="unknown region 'copper' in \\[regions\\]; the mesh has: steel"):
        parse_elasticity(copper, Path(".")).validate_against_mesh(mesh)
    renamed = copy.deepcopy(elasticity_to_dict(problem))
    renamed["regions"] = {"iron": renamed["regions"]["steel"]}
    with pytest.raises(ProblemError, match="unknown region 'iron'"):
        parse_elasticity(renamed, Path(".")).validate_against_mesh(mesh)
    side = copy.deepcopy(elasticity_to_dict(problem))
    side["boundaries"]["side"] = {"type": "fixed"}
    with pytest.raises(ProblemError, match="unknown boundary 'side' in \\[boundaries\\]; the mesh has: clamp"):
        parse_elasticity(side, Path(".")).validate_against_mesh(mesh)
    two_regions = make_hexmesh(mesh.points, mesh.hexes, np.arange(mesh.n_elements) % 2, ("steel", "glue"),
                               mesh.faces, mesh.face_boundary, mesh.boundary_names)
    with pytest.raises(ProblemError, match=r"mesh region 'glue' has no material: add \[regions.glue\]"):
        problem.validate_against_mesh(two_regions)


def test_with_solver_and_with_order():
    problem = load_case_problem("cantilever")
    changed = problem.with_solver(method="sparse-direct", rtol=1e-6, max_iterations=None, check_every=8,
                                  reduction="fused")
    assert (changed.solver.method, changed.solver.rtol, changed.solver.max_iterations) == ("sparse-direct", 1e-6, None)
    assert changed.solver.integration == problem.solver.integration
    with pytest.raises(ProblemError, match="unknown method 'ebe-jpcg'"):
        problem.with_solver(method="ebe-jpcg")
    with pytest.raises(ProblemError, match="unknown integration 'fast'"):
        problem.with_solver(integration="fast")
    with pytest.raises(ProblemError, match="tolerance must lie between 1e-15 and 1"):
        problem.with_solver(rtol=2.0)
    assert problem.with_order(6).order == 6
    for bad in (0, 11, 2.5):
        with pytest.raises(ProblemError, match="order must be a whole number from 1 to 10"):
            problem.with_order(bad)


@pytest.mark.parametrize("path", sorted(CANTILEVER_TOML.parent.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_problem_round_trips_whatever_its_kind(path):
    problem = load_problem(path)
    assert parse_problem(problem_as_dict(problem), Path("/elsewhere")) == problem


def test_the_named_boundaries_of_every_case_are_those_its_mesh_has():
    from paraflux.engine.bem.cases import BEM_CASES, mesh_bem_case
    from paraflux.engine.mesh.cases import CASES, mesh_case
    from paraflux.engine.mesh.hex_cases import HEX_CASES, mesh_hex_case
    from paraflux.engine.problems import case_boundaries

    for name in CASES:
        assert set(case_boundaries(name)) == set(mesh_case(name, 500).boundary_names), name
    for name in HEX_CASES:
        assert set(case_boundaries(name)) == set(mesh_hex_case(name).boundary_names), name
    for name in BEM_CASES:
        _, group = mesh_bem_case(name, 400)
        assert len(case_boundaries(name)) == group.max() + 1, name
    assert case_boundaries("sphere-in-box") == ()
