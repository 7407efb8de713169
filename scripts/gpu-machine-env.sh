# Source this on an offline GPU machine to use ParaFlux from the checkout without installing it.
# Expects wheels of the pure-Python/gmsh dependencies in .whl/ and gmsh's X/GL runtime .debs in
# .whl/debs/ (downloaded beforehand on a machine with network: pip download, apt-get download).
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/site/lib /tmp/gl /tmp/pf/paraflux
for f in .whl/debs/*.deb; do dpkg -x "$f" /tmp/gl; done
python3 - <<'PY'
import glob, zipfile
wheel = zipfile.ZipFile(glob.glob(".whl/gmsh-*.whl")[0])
for name in wheel.namelist():
    if "/lib/libgmsh" in name:  # pip --target drops the wheel's data folder, where libgmsh lives
        open("/tmp/site/lib/" + name.rsplit("/", 1)[-1], "wb").write(wheel.read(name))
PY
for d in engine app resources; do ln -sfn "$PWD/$d" "/tmp/pf/paraflux/$d"; done
export PYTHONPATH=/tmp/pf:/tmp/site
export LD_LIBRARY_PATH=/tmp/gl/usr/lib/x86_64-linux-gnu:/tmp/gl/lib/x86_64-linux-gnu:/tmp/site/lib
export PYTHONUNBUFFERED=1
set +e
