#!/usr/bin/env bash
# Builds FMM3D (the Flatiron Institute's CPU FMM, paper 001's peer) from the fmm3dpy sdist on PyPI with OpenMP
# and the vectorised kernels, for x86-64-v3 (AVX2, FMA: the H100 host and this machine alike), into
# build/peers/fmm3d/lib together with the GNU Fortran runtime it needs, so the folder can be carried to a machine
# without a Fortran compiler. engine/bench/fmm3d_peer.py loads it through ctypes (FMM3D's C interface).
# Needs: gfortran, gcc, make, pip (apt-get install -y gfortran). Usage: scripts/build-fmm3d.sh [python]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${1:-$root/.venv/bin/python}"
out="$root/build/peers/fmm3d"
src="$out/src"
rm -rf "$out"
mkdir -p "$src" "$out/lib"
"$python" -m pip download --quiet --no-deps --no-binary fmm3dpy fmm3dpy -d "$src"
tar -xzf "$src"/fmm3dpy-*.tar.gz -C "$src" --strip-components=1
flags="-fPIC -O3 -march=x86-64-v3 -funroll-loops"
# make.inc replaces the makefile's -march=native before OMP=ON and FAST_KER=ON append -fopenmp and -lstdc++
# (flags given on make's command line would drop those)
cat > "$src/make.inc" <<MAKEINC
FFLAGS = $flags -std=legacy -w
CFLAGS = $flags -std=gnu17
CXXFLAGS = -std=c++11 -DSCTL_PROFILE=-1 $flags
MAKEINC
make -C "$src" -j"$(nproc)" lib OMP=ON FAST_KER=ON > "$out/build.log" 2>&1
grep -q -- "-fopenmp" "$out/build.log" || { echo "FMM3D was built without OpenMP" >&2; exit 1; }
cp "$src/lib/libfmm3d.so" "$out/lib/"
for name in libgfortran.so.5 libgomp.so.1 libquadmath.so.0; do  # the runtime the GPU machine lacks
    cp -L "$(gcc -print-file-name="$name")" "$out/lib/"
done
sed -n '/^Version:/p' "$src/PKG-INFO" > "$out/VERSION"
echo "FMM3D $(cat "$out/VERSION") built with OpenMP into $out/lib"
