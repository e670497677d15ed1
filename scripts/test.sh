#!/usr/bin/env bash
# Builds everything and runs the whole test suite; exits non-zero when a test fails.
#
# Stages (docs/testing.md says where the time goes and how to run each alone):
#  1. the main build (build/, g++, Release), without the `unit` suites when
#     stage 3 runs them: each test binary is compiled once;
#  2. the main suite (ctest -j2 in build/), and beside it, at a lower priority,
#     the sanitizer build: clang with AddressSanitizer, UndefinedBehaviorSanitizer
#     (HYBGEN_SANITIZE) and the libFuzzer harnesses (HYBGEN_FUZZ) in
#     build-sanitize/. The suite leaves part of the two cores idle (tests wait
#     on compilers and emulators one at a time); the build takes that part;
#  3. the sanitizer suite: the `unit` tests under the sanitizers, every seed
#     corpus file through every harness, and each harness for a short seeded
#     fuzzing run (ctest -L fuzz; fuzz/README.md). Any sanitizer report or
#     fuzzing finding fails it.
# HYBGEN_SKIP_SANITIZE=1 skips the sanitizer stages (the main build and suite
# then hold the `unit` tests); HYBGEN_FUZZ_SECONDS (default 10) sets the
# fuzzing time per harness. Arguments go to the main suite's ctest (e.g.
# -R Registry).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --test
# The CUDA toolkit's usual home, for the tests that compile generated CUDA
# with nvcc (they are skipped where there is none).
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
sanitize=1
[ "${HYBGEN_SKIP_SANITIZE:-0}" = 1 ] && sanitize=0
start=$SECONDS
# The `unit` suites are built and run once: under the sanitizers when that
# stage runs, else here.
if ((sanitize)); then export HYBGEN_BUILD_UNIT_TESTS=OFF; else export HYBGEN_BUILD_UNIT_TESTS=ON; fi
"$root/scripts/build.sh"
echo "== main build: $((SECONDS - start)) s"

sanitize_dir="$root/build-sanitize"
sanitize_log="$sanitize_dir/build.log"
sanitize_pid=""
if ((sanitize)); then
  mkdir -p "$sanitize_dir"
  echo "== sanitizer build started beside the main suite (log: build-sanitize/build.log)"
  # Its own process group (setsid), so that a failing suite stops all of it.
  setsid nice -n 10 "$root/scripts/build-sanitize.sh" >"$sanitize_log" 2>&1 &
  sanitize_pid=$!
fi
stop_sanitizer_build() {
  if [ -n "$sanitize_pid" ]; then
    kill -- "-$sanitize_pid" 2>/dev/null || true
  fi
}
trap stop_sanitizer_build EXIT

suite_start=$SECONDS
cd "$root/build"
ctest --output-on-failure -j2 "$@"
echo "== main suite: passed in $((SECONDS - suite_start)) s"

((sanitize)) || exit 0
if ! wait "$sanitize_pid"; then
  sanitize_pid=""
  echo "== sanitizer build failed; the end of build-sanitize/build.log:"
  tail -n 60 "$sanitize_log"
  exit 1
fi
sanitize_pid=""
echo "== sanitizer build: done $((SECONDS - suite_start)) s after the main suite started"
sanitize_start=$SECONDS
cd "$sanitize_dir"
# Every report is fatal and prints its stack; leaks are reported at exit.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The unit tests run here alone, so hybridized blocks compile as they do for
# a user (the loaded code is not instrumented; the code that loads it is).
ctest --output-on-failure -j2 -L 'unit|fuzz'
echo "== sanitizer suite: passed in $((SECONDS - sanitize_start)) s; whole run $((SECONDS - start)) s"
