#!/usr/bin/env bash
# Builds .cudss/ for the offline GPU machine (CUDA 13, CuPy and cuBLAS already there): cuDSS 0.8 for CUDA 13
# and nvmath-python 1.0 (the pair nvmath loads: libcudss.so.0), for linear_solver = "cudss". cuDSS's library
# (85 MB, incompressible) exceeds one device call's 64 MiB, so it travels in two parts over two successive
# calls while the machine stays warm (30 s between calls):
#   carry .cudss/a:  mkdir -p /tmp/cudss && cp .cudss/a/* /tmp/cudss/
#   carry .cudss/b:  bash .cudss/b/install.sh
# then, carrying .carry (scripts/build-gpu-carry.sh), `source scripts/gpu-machine-env.sh` finds it.
# Needs: pip, unzip, split.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.venv/bin/python"
out="$root/.cudss"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
grep -qx "/.cudss/" "$root/.git/info/exclude" 2>/dev/null || echo "/.cudss/" >> "$root/.git/info/exclude"
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$work" \
    "nvmath-python==1.0.0" "nvidia-cudss-cu13==0.8.0.10"
unzip -q -j "$work"/nvidia_cudss_cu13-*.whl '*/lib/libcudss.so.0' '*/lib/libcudss_mtlayer_gomp.so.0' -d "$work/lib"
rm -rf "$out" && mkdir -p "$out/a" "$out/b"
split -b 42M -d "$work/lib/libcudss.so.0" "$work/libcudss.part"
mv "$work/libcudss.part00" "$out/a/"
mv "$work/libcudss.part01" "$work/lib/libcudss_mtlayer_gomp.so.0" "$work"/nvmath_python-*.whl "$out/b/"
sum="$(md5sum "$work/lib/libcudss.so.0" | cut -d' ' -f1)"
cat > "$out/b/install.sh" <<EOF
# Run in the checkout's root on the GPU machine after .cudss/a's part was copied to /tmp/cudss.
set -e
lib=/tmp/site/nvidia/cu13/lib
mkdir -p "\$lib"
cat /tmp/cudss/libcudss.part00 .cudss/b/libcudss.part01 > "\$lib/libcudss.so.0"
echo "$sum  \$lib/libcudss.so.0" | md5sum -c --quiet
cp .cudss/b/libcudss_mtlayer_gomp.so.0 "\$lib/"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .cudss/b/nvmath_python-*.whl
rm -f /tmp/cudss/libcudss.part00
EOF
du -sh "$out/a" "$out/b"
