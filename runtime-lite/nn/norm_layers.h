// Normalisation layers: BatchNorm (inference form, with running statistics),
// LayerNorm, InstanceNorm and GroupNorm.
//
//   auto bn = std::make_shared<nn::BatchNorm>();          // channels deferred, axis 1
//   auto ln = std::make_shared<nn::LayerNorm>(-1, 1e-5);
//   auto gn = std::make_shared<nn::GroupNorm>(4);         // gamma/beta per group (MXNet 1.9)
#pragma once

#include "runtime-lite/block.h"

namespace hybgen::nn {

class BatchNorm : public HybridBlock {
 public:
  explicit BatchNorm(int64_t axis = 1, double momentum = 0.9, double epsilon = 1e-5, bool center = true,
                     bool scale = true, int64_t in_channels = 0);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& gamma() { return *gamma_; }
  Parameter& beta() { return *beta_; }
  Parameter& running_mean() { return *mean_; }
  Parameter& running_var() { return *var_; }

 private:
  int64_t axis_;
  double epsilon_;
  bool scale_;
  Parameter *gamma_, *beta_, *mean_, *var_;
};

class LayerNorm : public HybridBlock {
 public:
  explicit LayerNorm(int64_t axis = -1, double epsilon = 1e-5, int64_t in_channels = 0);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  int64_t axis_;
  double epsilon_;
  Parameter *gamma_, *beta_;
};

// Gluon's InstanceNorm: data (N, C, spatial...), gamma/beta (C,), channels
// deferred to the first input (axis 1 only, as hybgen's InstanceNorm op).
class InstanceNorm : public HybridBlock {
 public:
  explicit InstanceNorm(double epsilon = 1e-5, bool center = true, bool scale = true, int64_t in_channels = 0);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& gamma() { return *gamma_; }
  Parameter& beta() { return *beta_; }

 private:
  double epsilon_;
  Parameter *gamma_, *beta_;
};

// Gluon 1.9's GroupNorm: gamma/beta (num_groups,).
class GroupNorm : public HybridBlock {
 public:
  explicit GroupNorm(int64_t num_groups = 1, double epsilon = 1e-5, bool center = true, bool scale = true);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& gamma() { return *gamma_; }
  Parameter& beta() { return *beta_; }

 private:
  int64_t num_groups_;
  double epsilon_;
  Parameter *gamma_, *beta_;
};

}  // namespace hybgen::nn
