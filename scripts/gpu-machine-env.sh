# Source this on an offline GPU machine, in the checkout's root, to use ParaFlux from the checkout without
# installing it. Expects .carry/ from scripts/build-gpu-carry.sh (run where there is network): the Python
# packages the machine lacks as site312.tar.xz, gmsh's X and GL runtime .debs in debs/, and COMMIT (refresh
# it with `git rev-parse --short HEAD > .carry/COMMIT` after committing; the benchmarks record it).
# Then: python3 -m paraflux.engine.cli ..., python3 -m pytest -m gpu tests/... For cuDSS (linear_solver =
# "cudss", auto on a GPU) install .cudss/ first, in the two calls scripts/build-cudss-carry.sh describes; for
# NGSolve (bench scattering-ngsolve) .ngsolve/, in the two calls scripts/build-ngsolve-carry.sh describes.
if [ ! -d /tmp/site/dask ]; then
    mkdir -p /tmp/site /tmp/gl && tar -xJf .carry/site312.tar.xz -C /tmp/site
    for f in .carry/debs/*.deb; do dpkg -x "$f" /tmp/gl; done
fi
mkdir -p /tmp/pf/paraflux
for d in engine app resources; do ln -sfn "$PWD/$d" "/tmp/pf/paraflux/$d"; done
export PYTHONPATH=/tmp/pf:/tmp/site
export LD_LIBRARY_PATH=/tmp/gl/usr/lib/x86_64-linux-gnu:/tmp/gl/lib/x86_64-linux-gnu:/tmp/site/lib
if [ -f /tmp/site/nvidia/cu13/lib/libcudss.so.0 ]; then  # cuDSS from scripts/build-cudss-carry.sh, cuBLAS the image's
    LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$(ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib | head -1):$LD_LIBRARY_PATH
fi
if [ -f /tmp/ngp/site ]; then  # NGSolve from scripts/build-ngsolve-carry.sh, installed with --prefix /tmp/ngp
    PYTHONPATH=$PYTHONPATH:$(cat /tmp/ngp/site)
fi
export PYTHONUNBUFFERED=1 PARAFLUX_CACHE_DIR=/tmp/paraflux-cache
if [ -f .carry/COMMIT ]; then export PARAFLUX_COMMIT="$(cat .carry/COMMIT)"; fi
