#!/usr/bin/env bash
# Runs one libFuzzer harness, without ever writing into the repository's
# corpus: new inputs go to WORK/corpus (a copy of the seed corpus), crash,
# leak, timeout and out-of-memory inputs to WORK/findings/.
#
#   run_harness.sh replay BINARY WORK CORPUS_DIR...        # each input once (-runs=0)
#   run_harness.sh fuzz BINARY WORK SECONDS MAX_LEN CORPUS_DIR [LIBFUZZER_ARG...]
#
# Prints "NAME: N executions (R/s), corpus C files, no findings" (or the
# findings) last; exits non-zero on a finding. Used by scripts/fuzz.sh and the
# `fuzz` ctest tests (fuzz/CMakeLists.txt).
set -uo pipefail
mode="$1" binary="$2" work="$3"
shift 3
name="$(basename "$binary")"
mkdir -p "$work/findings"
log="$work/$mode.log"
common=(-rss_limit_mb=4096 -timeout=20 -print_final_stats=1 "-artifact_prefix=$work/findings/")
# Any sanitizer report is fatal and shows its whole stack; leaks are findings.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Stacks with function names and lines need llvm-symbolizer (Debian: llvm-14).
if ! command -v llvm-symbolizer >/dev/null; then
  for s in /usr/lib/llvm-*/bin/llvm-symbolizer; do [ -x "$s" ] && export ASAN_SYMBOLIZER_PATH="$s"; done
fi

before="$(ls -1 "$work/findings" | sort)"
case "$mode" in
  replay)
    # The first folder takes what libFuzzer writes: a fresh scratch folder,
    # so the corpus folders given are only read.
    rm -rf "$work/replay-out"
    mkdir -p "$work/replay-out"
    "$binary" "${common[@]}" -runs=0 "$work/replay-out" "$@" >"$log" 2>&1
    rc=$?
    ;;
  fuzz)
    seconds="$1" max_len="$2" corpus="$3"
    shift 3
    mkdir -p "$work/corpus"
    cp -n "$corpus"/* "$work/corpus/" 2>/dev/null || true
    "$binary" "${common[@]}" "-max_total_time=$seconds" "-max_len=$max_len" "$@" "$work/corpus" >"$log" 2>&1
    rc=$?
    ;;
  *)
    echo "usage: run_harness.sh replay|fuzz BINARY WORK ..." >&2
    exit 2
    ;;
esac

new_findings="$(comm -13 <(echo "$before") <(ls -1 "$work/findings" | sort) | sed '/^$/d')"
runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
files="$(ls -1 "${work}/corpus" 2>/dev/null | wc -l)"
if [ "$rc" -ne 0 ] || [ -n "$new_findings" ]; then
  # The report: libFuzzer's and the sanitizer's lines around the finding.
  grep -v '^#[0-9]*[[:space:]]*\(NEW\|REDUCE\|pulse\|RELOAD\|INITED\)' "$log" | tail -80
  echo "$name ($mode): FINDING (exit $rc) after ${runs:-?} executions; inputs kept:"
  for f in $new_findings; do echo "  $work/findings/$f"; done
  [ -n "$new_findings" ] || echo "  (none written; see $log)"
  exit 1
fi
if [ "$mode" = replay ]; then
  echo "$name (replay): ${runs:-?} inputs, no findings"
else
  echo "$name: ${runs:-?} executions (${rate:-?}/s) in ${seconds}s, corpus $files files, no findings"
fi
