#!/usr/bin/env bash
# Install the Debian/Ubuntu libraries ParaFlux needs when they are missing and we are root:
# gmsh's X/GL runtime libraries and the ones Qt's xcb platform plugin loads (the window, make run);
# Xvfb and Mesa's software drivers for GUI tests on a machine with no display ("test").
set -euo pipefail
want=(libglu1-mesa libxcursor1 libxft2 libxinerama1 libxrender1 libfontconfig1 libgomp1 libgl1
      libgl1-mesa-dri libegl1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1
      libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-image0 libxcb-render-util0 libdbus-1-3)
if [ "${1:-}" = "test" ]; then
  want+=(xvfb xauth)
fi
missing=()
for pkg in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "note: missing system packages (${missing[*]}); install them with apt-get as root" >&2
  exit 0
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
