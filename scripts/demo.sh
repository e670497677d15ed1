#!/usr/bin/env bash
# The main job end to end on the bundled seed MLP: trace it in C++, export it,
# generate standalone C++ with hybgen, compile and run that code, verify it
# against the eager reference, and print each step.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" --target hybgen export_mlp mlp_tutorial
hybgen="$root/build/hybgen"
demo="$root/out/demo"
rm -rf "$demo" && mkdir -p "$demo"

step() { printf '\n== %s\n' "$*"; }

step "1. Trace: build the MLP in C++ (runtime-lite), run it eagerly and hybridized, export it"
"$root/build/examples/mlp/export_mlp" "$demo/seed_mlp"

step "2. Generate: hybgen seed_mlp.json -o generated/"
"$hybgen" "$demo/seed_mlp.json" -o "$demo/generated"

step "3. Compile the generated code as C++11 with strict flags and no exceptions, and run it"
cat > "$demo/main.cpp" <<'CPP'
#include <cstdio>
#include "seed_mlp.h"
int main() {
  alignas(64) static unsigned char arena[seed_mlp::kArenaBytes];
  static float input[512];
  for (int i = 0; i < 512; ++i) input[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  float output[2];
  if (seed_mlp_run(input, output, arena) != 0) return 1;
  std::printf("generated seed_mlp: output [%.6f, %.6f], arena %zu bytes\n", output[0], output[1],
              static_cast<std::size_t>(seed_mlp::kArenaBytes));
  return 0;
}
CPP
c++ -std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti -I"$demo/generated" \
  "$demo/main.cpp" "$demo/generated/seed_mlp.cpp" "$demo/generated/seed_mlp_weights.cpp" -o "$demo/seed_mlp_app"
"$demo/seed_mlp_app"

step "4. Verify: hybgen verify compares the generated code with the eager reference"
"$hybgen" verify "$demo/seed_mlp.json"

step "5. Inspect: nodes, FLOPs and the memory plan"
"$hybgen" inspect "$demo/seed_mlp.json"

step "6. The tutorial: eager vs hybridized (compiled in-process, and without a compiler) vs generated, timed"
"$root/build/examples/mlp/mlp_tutorial" --out-dir "$demo/tutorial"

printf '\nDone. Files are in %s\n' "$demo"
