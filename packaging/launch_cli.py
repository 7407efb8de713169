"""Bundle entry point of paraflux (the command line).

PARAFLUX_EXTRA_SITE (folders separated by ':') is searched after the bundle's modules, so that a
CuPy installed for the bundle's Python version (pip install --target DIR cupy-cuda12x) is used
when the workstation has an NVIDIA GPU; without it the bundle runs on NumPy.
"""
import multiprocessing
import os
import sys

multiprocessing.freeze_support()  # paraflux sweep's local Dask workers are spawned copies of this executable
sys.path += [p for p in os.environ.get("PARAFLUX_EXTRA_SITE", "").split(os.pathsep) if p]  # never shadows NumPy

from paraflux.engine.cli import main  # noqa: E402

sys.exit(main())
