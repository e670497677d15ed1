#!/usr/bin/env bash
# Configures and builds build-sanitize/: clang with AddressSanitizer and
# UndefinedBehaviorSanitizer (HYBGEN_SANITIZE) and the libFuzzer harnesses
# (HYBGEN_FUZZ); the `unit` test binaries and the fuzzers only. scripts/test.sh
# runs it beside the main suite, then `ctest -L 'unit|fuzz'` in that folder.
# HYBGEN_FUZZ_SECONDS (default 10) sets the fuzzing time per harness.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --fuzz
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -O1 with line tables only: reports keep file and line, the build is cheaper than -O2 -g.
# Unity batches of 16 sources: this build runs beside the main suite, where
# CPU time counts more than waiting on the largest batch (docs/testing.md).
cmake -S "$root" -B "$root/build-sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DHYBGEN_SANITIZE=ON -DHYBGEN_FUZZ=ON \
  -DHYBGEN_FUZZ_SECONDS="${HYBGEN_FUZZ_SECONDS:-10}" -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
  -DHYBGEN_BUILD_EXAMPLES=OFF -DHYBGEN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$root/build-sanitize" -j2 --target hybgen_unit_tests fuzzers "$@"
