// Gluon's basic layers: Dense, Activation, Dropout.
//
//   auto fc = std::make_shared<nn::Dense>(256, "relu");   // in_units inferred on the first call
//   auto act = std::make_shared<nn::Activation>("tanh");
//   auto drop = std::make_shared<nn::Dropout>(0.5);        // identity at inference
#pragma once

#include <string>

#include "runtime-lite/block.h"

namespace hybgen::nn {

// y = activation(x * W^T + b), W of shape (units, in_units).
class Dense : public HybridBlock {
 public:
  explicit Dense(int64_t units, const std::string& activation = "", bool use_bias = true, int64_t in_units = 0,
                 bool flatten = true);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

  Parameter& weight() { return *weight_; }
  Parameter& bias() { return *bias_; }
  int64_t units() const { return units_; }

 private:
  int64_t units_;
  std::string activation_;
  bool use_bias_, flatten_;
  Parameter* weight_;
  Parameter* bias_ = nullptr;
};

class Activation : public HybridBlock {
 public:
  explicit Activation(const std::string& act_type);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  std::string act_type_;
};

// Identity at inference; kept as a node so exported graphs match Gluon's.
class Dropout : public HybridBlock {
 public:
  explicit Dropout(double rate);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  double rate_;
};

}  // namespace hybgen::nn
