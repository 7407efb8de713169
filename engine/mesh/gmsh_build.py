"""A guarded gmsh session and the conversion of its 2D mesh with physical groups to a TriMesh."""

from __future__ import annotations

import contextlib
import math
import signal
import threading

import numpy as np

from ..errors import MeshError
from .trimesh import TriMesh, make_trimesh

_GMSH_LOCK = threading.Lock()  # gmsh keeps global state: one model at a time in this process


@contextlib.contextmanager
def gmsh_session(name: str):
    """Initialise gmsh quietly (safe outside the main thread), yield the module, always finalise."""
    with _GMSH_LOCK, _python_signal_handlers_kept() as restore_handlers:
        try:
            import gmsh  # noqa: PLC0415 (heavy import, only when meshing)

            gmsh.initialize(argv=[], readConfigFiles=False, run=False, interruptible=False)
            restore_handlers()
        except (ImportError, OSError, AttributeError) as exc:  # missing libgmsh or its X/GL libraries
            raise MeshError(f"gmsh cannot start here ({exc}); built-in cases need gmsh and its runtime "
                            "libraries (libGLU, libXcursor, libXft, libXinerama), mesh files do not") from None
        try:
            gmsh.option.setNumber("General.Terminal", 0)
            gmsh.option.setNumber("General.Verbosity", 1)
            gmsh.model.add(name)
            yield gmsh
        finally:
            gmsh.finalize()


@contextlib.contextmanager
def _python_signal_handlers_kept():
    """gmsh's start resets SIGTERM to the system default at the C level, which would kill the process
    without the clean-up of cli_edge.raise_on_sigterm: Python's SIGINT and SIGTERM handlers are set again
    inside and after (in the main thread; other threads cannot set handlers and need not)."""
    main = threading.current_thread() is threading.main_thread()
    kept = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}

    def restore():
        for signum, handler in kept.items():
            if handler is not None:
                signal.signal(signum, handler)
    try:
        yield restore
    finally:
        restore()


def triangle_size(area: float, target: int) -> float:
    """gmsh element size (m) that meshes a surface of this area (m^2) with about target triangles: the
    edge of an equilateral triangle of area / target, times 1.04 (calibrated on gmsh's meshes)."""
    return 1.04 * math.sqrt(4 * area / (math.sqrt(3) * target))


def gmsh_nodes_and_groups(gmsh):
    """(points (n, 3), cells_of) of the current gmsh model, where cells_of(dim, gmsh_type, nodes_per_cell)
    returns the cells of every physical group of that dimension (node indices into points), the group
    index of each cell and the group names; any other element type raises MeshError."""
    node_tags, coords, _ = gmsh.model.mesh.getNodes()
    if len(node_tags) == 0:
        raise MeshError("gmsh produced no nodes")
    index = np.full(int(node_tags.max()) + 1, -1, dtype=np.int64)
    index[node_tags.astype(np.int64)] = np.arange(len(node_tags))

    def cells_of(dim: int, gmsh_type: int, nodes_per_cell: int):
        blocks, owners, names = [], [], []
        for _, tag in gmsh.model.getPhysicalGroups(dim):
            name = gmsh.model.getPhysicalName(dim, tag)
            for entity in gmsh.model.getEntitiesForPhysicalGroup(dim, tag):
                types, _, nodes = gmsh.model.mesh.getElements(dim, entity)
                for t, n in zip(types, nodes):
                    if t != gmsh_type:
                        raise MeshError(f"gmsh produced element type {t} in {name}; expected only type {gmsh_type}")
                    cells = index[np.asarray(n, dtype=np.int64).reshape(-1, nodes_per_cell)]
                    blocks.append(cells)
                    owners.append(np.full(len(cells), len(names), dtype=np.int32))
            names.append(name)
        if not blocks:
            return np.zeros((0, nodes_per_cell), np.int64), np.zeros(0, np.int32), tuple(names)
        return np.concatenate(blocks), np.concatenate(owners), tuple(names)

    return coords.reshape(-1, 3), cells_of


def trimesh_from_gmsh(gmsh) -> TriMesh:
    """Read the current gmsh model's 2D mesh: 2D physical groups as regions, 1D as boundaries."""
    points, cells_of = gmsh_nodes_and_groups(gmsh)
    triangles, region_index, region_names = cells_of(2, 2, 3)
    edges, edge_boundary, boundary_names = cells_of(1, 1, 2)
    return make_trimesh(points[:, :2], triangles, region_index, region_names, edges, edge_boundary,
                        boundary_names)
