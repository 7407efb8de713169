#!/usr/bin/env bash
# Builds .ngsolve/ for the offline GPU machine (Python 3.12): NGSolve's PyPI wheels (ngsolve, netgen-mesher,
# netgen-occt, ngsolve-openblas), for `paraflux bench scattering-ngsolve` there (NGSolve on the host's threads
# beside the study on the GPU, in one run). The wheels (77 MB) exceed one device call's 64 MiB, so they travel
# in two parts over two successive calls while the machine stays warm (30 s between calls):
#   carry .ngsolve/a:  mkdir -p /tmp/ngw && cp .ngsolve/a/* /tmp/ngw/
#   carry .ngsolve/b:  bash .ngsolve/b/install.sh
# then, carrying .carry (scripts/build-gpu-carry.sh), `source scripts/gpu-machine-env.sh` finds it.
# netgen-occt has a data folder (the OpenCASCADE libraries netgen loads through the wheel's record), so the
# wheels install with pip's --prefix, not --target. Needs: pip.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.venv/bin/python"
out="$root/.ngsolve"
grep -qx "/.ngsolve/" "$root/.git/info/exclude" 2>/dev/null || echo "/.ngsolve/" >> "$root/.git/info/exclude"
rm -rf "$out" && mkdir -p "$out/a" "$out/b"
get() {  # the wheels for CPython 3.12 on x86_64 Linux into a folder
    local into="$1"; shift
    "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        -d "$into" "$@"
}
get "$out/a" "netgen-occt==7.8.1" "netgen-mesher==6.2.2608"
get "$out/b" "ngsolve==6.2.2608" "ngsolve-openblas==0.3.33.post1"
cat > "$out/b/install.sh" <<'SH'
# Run in the checkout's root on the GPU machine after .ngsolve/a's wheels were copied to /tmp/ngw.
set -e
cp .ngsolve/b/*.whl /tmp/ngw/
python3 -m pip install -q --no-index --no-deps --no-compile --prefix /tmp/ngp /tmp/ngw/*.whl
site="$(dirname "$(find /tmp/ngp -type d -name ngsolve -path '*-packages/*' | head -1)")"
echo "$site" > /tmp/ngp/site
PYTHONPATH="$site" python3 -c "import ngsolve; print('ngsolve', ngsolve.__version__, 'in', '$site')"
rm -rf /tmp/ngw
SH
du -sh "$out/a" "$out/b"
