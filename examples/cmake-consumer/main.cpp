// Runs the generated tiny_mlp on a fixed input with a static arena and checks
// the result against values computed independently by make_tiny_mlp.py; then
// the same model generated with EXTERNAL_WEIGHTS, its weights read from the
// file hybgen wrote into a static buffer.
#include <cmath>
#include <cstdio>

#include "expected_output.h"
#include "tiny_mlp.h"
#include "tiny_mlp_ext.h"

namespace {

double worst_difference(const char* what, const float* prob) {
  double worst = 0;
  for (int i = 0; i < 3; ++i) {
    std::printf("%s prob[%d] = %.7f (expected %.7f)\n", what, i, prob[i], kExpectedOutput[i]);
    worst = std::fmax(worst, std::fabs(prob[i] - kExpectedOutput[i]));
  }
  return worst;
}

// The weights file's bytes, exactly as many as the generated code expects.
bool load_weights(const char* path, unsigned char* bytes, std::size_t size) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  const bool whole = std::fread(bytes, 1, size, f) == size && std::fgetc(f) == EOF;
  std::fclose(f);
  return whole;
}

}  // namespace

int main() {
  alignas(64) static unsigned char arena[tiny::kArenaBytes > 0 ? tiny::kArenaBytes : 1];
  float input[8];
  for (int i = 0; i < 8; ++i) input[i] = 0.25f * static_cast<float>(i) - 1.0f;
  float prob[3];
  if (tiny_mlp_run(input, prob, arena) != 0) {
    std::printf("tiny_mlp_run failed\n");
    return 1;
  }
  double worst = worst_difference("embedded", prob);

  alignas(tiny_ext::kWeightAlignment) static unsigned char weights[tiny_ext::kWeightBytes];
  alignas(64) static unsigned char ext_arena[tiny_ext::kArenaBytes];
  if (!load_weights(TINY_EXT_WEIGHTS_FILE, weights, sizeof weights)) {
    std::printf("%s: cannot read %lu bytes\n", TINY_EXT_WEIGHTS_FILE, static_cast<unsigned long>(sizeof weights));
    return 1;
  }
  if (tiny_mlp_ext_run(input, prob, weights, ext_arena) != 0) {
    std::printf("tiny_mlp_ext_run failed\n");
    return 1;
  }
  worst = std::fmax(worst, worst_difference("external", prob));
  std::printf("%s: max difference %.3g\n", worst < 1e-5 ? "OK" : "FAIL", worst);
  return worst < 1e-5 ? 0 : 1;
}
