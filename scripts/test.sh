#!/usr/bin/env bash
# Builds everything and runs the whole test suite; exits non-zero when a test fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --test
"$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j2 "$@"
