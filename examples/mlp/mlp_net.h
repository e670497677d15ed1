// The seed MLP of the Gluon hybridize tutorial, built the same way wherever
// it is needed (the tutorial, the export step of the build, the benchmark),
// so that every copy has the same weights.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime-lite/hybgen.h"

// Dense(256, relu) -> Dense(128, relu) -> Dense(2); in_units deferred to the first call.
inline std::shared_ptr<hybgen::nn::HybridSequential> make_seed_mlp(uint64_t seed = 42) {
  using namespace hybgen;
  auto net = std::make_shared<nn::HybridSequential>();
  net->add(std::make_shared<nn::Dense>(256, "relu"));
  net->add(std::make_shared<nn::Dense>(128, "relu"));
  net->add(std::make_shared<nn::Dense>(2));
  net->initialize(init::Xavier(), seed);
  return net;
}

// A batch x 512 input drawn from N(0, 1).
inline hybgen::Tensor seed_mlp_input(int64_t batch, uint64_t seed = 7) {
  return hybgen::Tensor::random_normal({batch, 512}, 0.0f, 1.0f, seed);
}
