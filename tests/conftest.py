"""Shared fixtures: GPU marker handling, structured meshes and helpers for writing problem files."""

from __future__ import annotations

import gc
import os
import signal

import numpy as np
import pytest

from paraflux.engine.backend import gpu_available, gpu_unavailable_reason
from paraflux.engine.mesh.trimesh import make_trimesh


def pytest_addoption(parser):
    parser.addoption("--run-package", action="store_true", help="build the desktop bundle and test it")


def pytest_configure(config):
    """A suite started as a shell's background job inherits SIGINT ignored, and so would every command-line
    process the signal tests start (Python keeps an ignored SIGINT ignored, so Ctrl-C would not reach it):
    the suite takes Python's default handler back, which its children see as the default disposition."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if "PARAFLUX_CACHE_DIR" not in os.environ:  # the FMM's tables (fmm/table_cache.py): not in the user's home
        import tempfile  # noqa: PLC0415

        os.environ["PARAFLUX_CACHE_DIR"] = config.paraflux_cache = tempfile.mkdtemp(prefix="paraflux-test-cache-")


def pytest_unconfigure(config):
    if getattr(config, "paraflux_cache", None):
        import shutil  # noqa: PLC0415

        shutil.rmtree(config.paraflux_cache, ignore_errors=True)


def pytest_runtest_logstart(nodeid, location):
    """Under `make test`, the running test's id in a file (one per pytest-xdist worker: TRACE.gw0, ...): named
    by the Makefile should the interpreter die."""
    trace = os.environ.get("PARAFLUX_TEST_TRACE")
    if trace:
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        with open(f"{trace}.{worker}" if worker else trace, "w") as f:
            f.write(nodeid)


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--run-package"):
        skip_package = pytest.mark.skip(reason="bundle tests run with `make package-test`")
        for item in items:
            if "package" in item.keywords:
                item.add_marker(skip_package)
    if gpu_available():
        return
    skip = pytest.mark.skip(reason=f"no GPU: {gpu_unavailable_reason()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def gui_garbage_collected_in_the_gui_thread(request):
    """For window tests, as in the app (app/gui_thread_gc.py): the last test's closed windows are deleted
    and collected here, in the GUI thread, and during the test only the GUI thread collects. Else a
    job's (or a sweep scheduler's) thread could collect them and destroy Qt and VTK objects outside the
    GUI thread (a crash). Collection is given back by pytest_runtest_protocol below, once pytest has
    dropped the test's fixtures: a window released then is still collected in the GUI thread."""
    if not {"qtbot", "qapp"} & set(request.fixturenames):
        yield
        return
    from PySide6 import QtCore  # noqa: PLC0415 (window tests only)

    from paraflux.app.gui_thread_gc import GuiThreadCollector  # noqa: PLC0415

    app = request.getfixturevalue("qapp")
    app.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
    gc.collect()
    request.node.gui_collector = (app, GuiThreadCollector())
    yield


_WINDOWS_MADE = []  # set once a window test ran: from then on only the main thread collects


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """After a window test and its fixtures are gone: delete its closed widgets and collect, in the GUI
    thread. Once a window test has run, automatic collection stays off for the rest of the session and
    the main thread collects between tests with gc's own thresholds: a Qt or VTK object that outlived its
    test (held by a cycle) is then never collected in another test's thread (a job's, a Dask scheduler's,
    a Numba pool's), which destroyed it outside the GUI thread (CI died with SIGABRT so, at random)."""
    yield
    app, collector = getattr(item, "gui_collector", (None, None))
    if collector is not None:
        from PySide6 import QtCore  # noqa: PLC0415 (window tests only)

        del item.gui_collector
        app.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
        collector.uninstall()
        collector.deleteLater()
        app.sendPostedEvents(None, QtCore.QEvent.DeferredDelete)
        _WINDOWS_MADE.append(item.nodeid)
    if _WINDOWS_MADE:
        from paraflux.app.gui_thread_gc import collect_due  # noqa: PLC0415 (PySide6 is there: a window ran)

        gc.disable()
        collect_due()


def structured_square(n: int, x0=0.0, x1=1.0, y0=0.0, y1=1.0):
    """Unit-square-like mesh of n x n cells split into crossing-free triangle pairs; boundaries
    named left/right/bottom/top, one region 'domain'."""
    xs, ys = np.linspace(x0, x1, n + 1), np.linspace(y0, y1, n + 1)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    points = np.column_stack([X.ravel(), Y.ravel()])
    idx = np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    triangles = np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    edges, owner = [], []
    for k, line in enumerate((idx[0, :], idx[-1, :], idx[:, 0], idx[:, -1])):
        edges.append(np.column_stack([line[:-1], line[1:]]))
        owner.append(np.full(n, k))
    return make_trimesh(points, triangles, np.zeros(len(triangles), dtype=int), ("domain",),
                        np.concatenate(edges), np.concatenate(owner), ("left", "right", "bottom", "top"))


@pytest.fixture
def own_gpu_pool():
    """A fresh CuPy memory pool as the allocator for one test, the earlier one back afterwards. Earlier tests'
    live arrays split the default pool's chunks, and the free parts of those serve allocations without the
    pool's limit or a release by free_all_blocks, so limits and releases are tested on a pool of one's own."""
    cp = pytest.importorskip("cupy")
    pool, before = cp.cuda.MemoryPool(), cp.cuda.get_allocator()
    cp.cuda.set_allocator(pool.malloc)
    yield pool
    cp.cuda.set_allocator(before)
    pool.free_all_blocks()
