#!/usr/bin/env bash
# Configures and builds hybgen into build/ (2 parallel jobs, Release).
# HYBGEN_BUILD_UNIT_TESTS=OFF leaves out the `unit` test suites (scripts/test.sh
# builds and runs them in the sanitizer build instead).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release \
  -DHYBGEN_BUILD_UNIT_TESTS="${HYBGEN_BUILD_UNIT_TESTS:-ON}" >/dev/null
cmake --build "$root/build" -j2 "$@"
