#!/usr/bin/env bash
# Prepares everything the AArch64 cross build needs (docs/aarch64.md), touching no amd64 package:
# the cross compiler and qemu-user from Debian, and the arm64 libraries qrt links (asmjit,
# protobuf, onnx, flatbuffers) downloaded as arm64 .debs and unpacked into a sysroot.
#   bash scripts/arm64_sysroot.sh              # sysroot in build-arm64-sysroot/
#   QRT_ARM64_SYSROOT=/opt/arm64 bash scripts/arm64_sysroot.sh
#   QRT_ARM64_LLVM=1 bash scripts/arm64_sysroot.sh   # with arm64 LLVM 19 for the ORC backend
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=${QRT_ARM64_SYSROOT:-$PWD/build-arm64-sysroot}

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
tools=(g++-aarch64-linux-gnu qemu-user-static)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
  need_update=1
fi
if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
  $sudo apt-get update -q
fi
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The arm64 libraries: downloaded, never installed (installing :arm64 packages would pull
# arm64 copies of libc and friends into the host's package set).
packages=(
  libasmjit-dev
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 zlib1g zlib1g-dev
  libonnx-dev libonnx1
  libflatbuffers-dev libflatbuffers2
  libgemmlowp-dev
)
# LLVM 19 for the ORC backend (about 80 MB more): its libraries and headers, and the arm64
# llvm-config, which meson runs under qemu-user through the wrapper written below.
llvm=${QRT_ARM64_LLVM:-0}
if [ "$llvm" = 1 ]; then
  packages+=(libllvm19 llvm-19 llvm-19-dev libedit2 libffi8 libxml2 libz3-4 libzstd1 libicu72 liblzma5 libtinfo6
             libbsd0 libmd0)
fi
# Architecture-independent headers, so that the cross build finds nothing of the host's.
headers=(doctest-dev nlohmann-json3-dev)
stamp="$sysroot/.qrt-sysroot"
want="${packages[*]} ${headers[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "arm64_sysroot: $sysroot is up to date" >&2
  exit 0
fi
rm -rf "$sysroot"
mkdir -p "$sysroot/debs"
(cd "$sysroot/debs" && apt-get download -q "${packages[@]/%/:arm64}" "${headers[@]}")
for deb in "$sysroot"/debs/*.deb; do
  dpkg -x "$deb" "$sysroot"
done
rm -rf "$sysroot/debs"
# Unpacked .so symlinks are absolute (/usr/lib/...): point them inside the sysroot.
find "$sysroot/usr/lib" -type l | while read -r link; do
  target=$(readlink "$link")
  case "$target" in
    /*) ln -sfn "$sysroot$target" "$link" ;;
  esac
done
# The cross file (meson/aarch64-linux-gnu.ini) reads the sysroot's path from here.
printf "[constants]\nsysroot = '%s'\n" "$sysroot" > "$sysroot/sysroot.ini"
if [ "$llvm" = 1 ]; then
  # The arm64 llvm-config reports the sysroot's paths (it locates itself), so meson's LLVM
  # dependency finds the arm64 headers and libLLVM there.
  cat > "$sysroot/llvm-config" <<WRAPPER
#!/bin/sh
exec env QEMU_LD_PREFIX=/usr/aarch64-linux-gnu \\
  QEMU_SET_ENV=LD_LIBRARY_PATH=$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu \\
  qemu-aarch64-static $sysroot/usr/lib/llvm-19/bin/llvm-config "\$@"
WRAPPER
  chmod +x "$sysroot/llvm-config"
  printf "[binaries]\nllvm-config = '%s'\n" "$sysroot/llvm-config" > "$sysroot/llvm.ini"
fi
echo "$want" > "$stamp"
echo "arm64_sysroot: ready in $sysroot" >&2
