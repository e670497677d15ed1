#!/usr/bin/env bash
# Installs the Debian packages hybgen builds with, if any is missing; with
# --test also what the test suite runs the NEON kernels with (an AArch64 cross
# compiler and qemu's user-mode emulator; without them those tests skip), the
# Cortex-M ones with (arm-none-eabi's compiler and newlib, qemu-system-arm), ONNX's
# backend node tests (libonnx-testdata), and
# what its sanitizer and fuzzing stage builds with (clang and its sanitizer and
# libFuzzer runtimes); with --fuzz the latter only (scripts/fuzz.sh).
# Safe to run again: installed packages are left alone.
set -euo pipefail
packages=(cmake make g++ nlohmann-json3-dev libcli11-dev libopenblas-dev libgtest-dev libonnx-dev libprotobuf-dev
  protobuf-compiler libflatbuffers-dev)
clang_packages=(clang libclang-rt-14-dev)
case "${1:-}" in
  --test)
    packages+=(g++-aarch64-linux-gnu qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
      libonnx-testdata "${clang_packages[@]}") ;;
  --fuzz) packages+=("${clang_packages[@]}") ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "Installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
