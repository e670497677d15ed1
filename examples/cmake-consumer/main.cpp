// Runs the generated tiny_mlp on a fixed input with a static arena and checks
// the result against values computed independently by make_tiny_mlp.py.
#include <cmath>
#include <cstdio>

#include "expected_output.h"
#include "tiny_mlp.h"

int main() {
  alignas(64) static unsigned char arena[tiny::kArenaBytes > 0 ? tiny::kArenaBytes : 1];
  float input[8];
  for (int i = 0; i < 8; ++i) input[i] = 0.25f * static_cast<float>(i) - 1.0f;
  float prob[3];
  if (tiny_mlp_run(input, prob, arena) != 0) {
    std::printf("tiny_mlp_run failed\n");
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < 3; ++i) {
    std::printf("prob[%d] = %.7f (expected %.7f)\n", i, prob[i], kExpectedOutput[i]);
    worst = std::fmax(worst, std::fabs(prob[i] - kExpectedOutput[i]));
  }
  std::printf("%s: max difference %.3g\n", worst < 1e-5 ? "OK" : "FAIL", worst);
  return worst < 1e-5 ? 0 : 1;
}
