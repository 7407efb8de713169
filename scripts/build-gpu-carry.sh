#!/usr/bin/env bash
# Builds .carry/ for the offline GPU machine (CPython 3.12 there, CuPy, Numba, SciPy already installed):
# site312.tar.xz, the Python packages ParaFlux needs that the machine lacks (the versions of this
# checkout's .venv), slimmed (gmsh's library without its data and examples, CVXOPT with UMFPACK alone) and
# xz-compressed to fit the device tool's 64 MiB; debs/, gmsh's X and GL runtime; COMMIT, this checkout's
# commit, which the benchmarks record. scripts/gpu-machine-env.sh unpacks it there. Carry .carry (and
# build/peers/fmm3d/lib from scripts/build-fmm3d.sh for FMM3D). Needs: pip, apt-get, xz.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.venv/bin/python"
out="$root/.carry"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
grep -qx "/.carry/" "$root/.git/info/exclude" 2>/dev/null || echo "/.carry/" >> "$root/.git/info/exclude"
version() { "$py" -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p'; }
packages=(gmsh meshio miepython cvxopt scikit-fem dask distributed partd locket tblib tornado zict rich-rst)
specs=()
for name in "${packages[@]}"; do specs+=("$name==$(version "$name")"); done
specs+=("dask-cuda")  # not in the host's .venv (no GPU here): the newest; its rapids-dask-dependency is not needed
specs+=("pybind11")  # KeOps's (bench fmm's brute-force peer) binder, compiled there at its first use
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
           --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any)
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${platforms[@]}" \
    -d "$work/wheels" "${specs[@]}"
"$py" -m pip wheel -q --no-deps -w "$work/wheels" "pykeops>=2.2" "keopscore>=2.2"  # pure Python, sdists only
"$py" -m pip install -q --no-deps --no-compile --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" --target "$work/site" "$work"/wheels/*.whl
site="$work/site"
rm -rf "$site"/{share,include,bin,shared-actions}
mkdir -p "$site/lib"  # pip --target drops the wheel's data folder, where libgmsh lives
unzip -q -j "$work"/wheels/gmsh-*.whl '*/data/lib/libgmsh*' -d "$site/lib"
for part in dsdp fftw3 glpk gmp gsl; do rm -f "$site"/cvxopt.libs/lib"$part"*; done  # UMFPACK needs none
for part in dsdp fftw glpk gsl; do rm -f "$site"/cvxopt/"$part"*.so; done
find "$site" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$out" && mkdir -p "$out/debs"
tar -cJf "$out/site312.tar.xz" -C "$site" .
lists="$work/apt"
mkdir -p "$lists/partial"
apt=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists="$lists")
apt-get "${apt[@]}" update -qq
(cd "$out/debs" && apt-get "${apt[@]}" download -q libglu1-mesa libgl1 libglx0 libglvnd0 libopengl0 libxrender1 \
    libxcursor1 libxfixes3 libxext6 libxft2 libfontconfig1 libxinerama1 libx11-6 libfreetype6 libexpat1 libxcb1 \
    libpng16-16 libbrotli1 libxau6 libxdmcp6 libbsd0 libmd0)
git -C "$root" rev-parse --short HEAD > "$out/COMMIT"
du -sh "$out"
