#!/usr/bin/env bash
# For building texturevlm where its build dependencies cannot be installed (a GPU server
# or container with no network or no root): downloads Debian's packages of the Vulkan
# headers and loader, volk, glslc, the EGL/GL headers, nlohmann/json, stb and the DejaVu fonts (amd64) into ./.deps of this
# checkout, kept out of git. Carry the checkout to the machine, then build there:
#   bash python/fetch_build_deps.sh --unpack      # unpacks into .deps/root, prints the env
#   eval "$(bash python/fetch_build_deps.sh --env)"
#   pip install . --no-build-isolation
# Nothing is installed into /: the packages are unpacked inside the checkout.
set -euo pipefail
top=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
cd "$top"
root="$top/.deps/root"
packages=(libvulkan-dev libvulkan1 libvulkan-volk-dev glslc libshaderc1 libegl-dev libgl-dev nlohmann-json3-dev libstb-dev fonts-dejavu-core)

env_lines() {
  local lib="$root/usr/lib/x86_64-linux-gnu"
  echo "export CMAKE_PREFIX_PATH=\"$root/usr\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}\""
  echo "export PATH=\"$root/usr/bin:\$PATH\""
  echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
}

case "${1:-}" in
  --unpack)
    mkdir -p "$root"
    for f in .deps/*.deb; do dpkg-deb -x "$f" "$root"; done
    env_lines
    exit 0 ;;
  --env)
    env_lines
    exit 0 ;;
esac

grep -qx '/.deps/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.deps/' >> .git/info/exclude; }
mkdir -p .deps /tmp/amd64-lists/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists'
apt-get $o update -qq
(cd .deps && apt-get $o download -qq "${packages[@]}" 2>&1 | grep -v unsandboxed || true)
ls -1 .deps
