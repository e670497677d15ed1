#!/usr/bin/env bash
# Packs the two binaries gpu_check.sh needs, hybgen and export_zoo, with the
# shared libraries they load that a CUDA machine's image may lack (OpenBLAS,
# protobuf, ONNX's, libgfortran, ...), into DIR/tools.tar.xz, for a GPU
# machine where they cannot be built (no protobuf, ONNX or OpenBLAS there):
#
#   bench/cuda/pack_tools.sh DIR       # BUILD: the build folder (default build)
#
# There: tar xJf DIR/tools.tar.xz -C /tmp, then
#   HYBGEN=/tmp/hybgen-tools/hybgen EXPORT_ZOO=/tmp/hybgen-tools/export_zoo bench/cuda/gpu_check.sh OUT
# (hybgen-tools/hybgen and export_zoo are scripts that run the binaries in
# bin/ with lib/ on LD_LIBRARY_PATH, so that nothing else sees those libraries).
# The C and C++ runtimes (libc, libm, libstdc++, libgcc_s) stay behind: the
# target's own are used, and must be as new as this machine's.
set -eu
dir=${1:?usage: pack_tools.sh DIR}
build=${BUILD:-build}
for b in "$build/hybgen" "$build/examples/export_zoo"; do
  [ -x "$b" ] || { echo "pack_tools.sh: $b is missing (cmake --build $build --target hybgen export_zoo)" >&2; exit 2; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
t=$stage/hybgen-tools
mkdir -p "$t/bin" "$t/lib" "$dir"
cp "$build/hybgen" "$build/examples/export_zoo" "$t/bin/"
strip "$t/bin/hybgen" "$t/bin/export_zoo" 2> /dev/null || true
for b in hybgen export_zoo; do
  printf '#!/bin/sh\nhere=$(cd "$(dirname "$0")" && pwd)\nLD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bin/%s" "$@"\n' \
    "$b" > "$t/$b"
  chmod +x "$t/$b"
done
ldd "$build/hybgen" "$build/examples/export_zoo" | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$t/lib/"; done
tar -C "$stage" -cJf "$dir/tools.tar.xz.tmp" hybgen-tools
mv "$dir/tools.tar.xz.tmp" "$dir/tools.tar.xz"
echo "wrote $dir/tools.tar.xz ($(du -h "$dir/tools.tar.xz" | cut -f1)): hybgen-tools/{hybgen,export_zoo}, lib/$(cd "$t/lib" && ls | tr '\n' ' ')"
