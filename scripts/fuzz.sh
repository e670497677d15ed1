#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang into build-fuzz/ and runs
# each for SECONDS (default 60) from a copy of its seed corpus; new inputs go to
# build-fuzz/fuzz/work/NAME/corpus, never into the repository. Prints, per
# harness, the executions and whether it found anything; crash, leak, timeout
# and out-of-memory inputs are kept in build-fuzz/fuzz/work/NAME/findings/.
# Exits non-zero on a finding. fuzz/README.md says more.
#
#   scripts/fuzz.sh                 # every harness, 60 s each
#   scripts/fuzz.sh 600 npy         # the .npy harness for 10 minutes
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
shift $(($# > 0 ? 1 : 0))
"$root/scripts/install-deps.sh" --fuzz

build="$root/build-fuzz"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DHYBGEN_FUZZ=ON -DHYBGEN_BUILD_TESTS=OFF -DHYBGEN_BUILD_EXAMPLES=OFF -DHYBGEN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j2 --target fuzzers

harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  mapfile -t harnesses < <(awk '/^[a-z]/ {print $1}' "$root/fuzz/harnesses.txt")
fi
failed=()
summary=()
for name in "${harnesses[@]}"; do
  max_len="$(awk -v n="$name" '$1 == n {print $2}' "$root/fuzz/harnesses.txt")"
  if [ -z "$max_len" ]; then
    echo "fuzz.sh: no harness '$name' in fuzz/harnesses.txt" >&2
    exit 2
  fi
  echo "== $name: fuzzing for ${seconds}s"
  if line="$("$root/fuzz/run_harness.sh" fuzz "$build/fuzz/fuzz_$name" "$build/fuzz/work/$name" "$seconds" "$max_len" \
        "$root/fuzz/corpus/$name")"; then
    summary+=("$(tail -1 <<<"$line")")
  else
    echo "$line"
    summary+=("$(grep -A100 ': FINDING' <<<"$line")")
    failed+=("$name")
  fi
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "findings in: ${failed[*]} (fuzz/README.md says how to reproduce and keep them as regressions)"
  exit 1
fi
