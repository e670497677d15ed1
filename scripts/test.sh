#!/usr/bin/env bash
# Builds everything and runs the whole test suite; exits non-zero when a test fails.
#
# Then the sanitizer stage (issue 22): a clang build with AddressSanitizer,
# UndefinedBehaviorSanitizer (HYBGEN_SANITIZE) and the libFuzzer harnesses
# (HYBGEN_FUZZ) in build-sanitize/, which runs the `unit` tests under the
# sanitizers, every seed corpus file through every harness, and each harness
# for a short seeded fuzzing run (ctest -L fuzz; fuzz/README.md). Any sanitizer
# report or fuzzing finding fails it. HYBGEN_SKIP_SANITIZE=1 skips the stage;
# HYBGEN_FUZZ_SECONDS (default 10) sets the fuzzing time per harness.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --test
# The CUDA toolkit's usual home, for the tests that compile generated CUDA
# with nvcc (they are skipped where there is none).
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
"$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j2 "$@"

[ "${HYBGEN_SKIP_SANITIZE:-0}" = 1 ] && exit 0
echo "== sanitizer stage: clang, ASan + UBSan, libFuzzer harnesses (build-sanitize/)"
start=$SECONDS
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -O1 with line tables only: reports keep file and line, the build is cheaper than -O2 -g.
cmake -S "$root" -B "$root/build-sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DHYBGEN_SANITIZE=ON -DHYBGEN_FUZZ=ON \
  -DHYBGEN_FUZZ_SECONDS="${HYBGEN_FUZZ_SECONDS:-10}" \
  -DHYBGEN_BUILD_EXAMPLES=OFF -DHYBGEN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$root/build-sanitize" -j2 --target hybgen_unit_tests fuzzers
echo "== sanitizer stage: built in $((SECONDS - start)) s"
cd "$root/build-sanitize"
# Every report is fatal and prints its stack; leaks are reported at exit.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Hybridized blocks run on the interpreter here; the Jit tests compile
# regardless (HybridizeOptions::compile set), so the loading code is checked.
export HYBGEN_JIT=0
ctest --output-on-failure -j2 -L 'unit|fuzz'
echo "== sanitizer stage: passed in $((SECONDS - start)) s"
