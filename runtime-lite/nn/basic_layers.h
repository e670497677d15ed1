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

class Flatten : public HybridBlock {
 public:
  Flatten() : HybridBlock("flatten") {}
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.flatten(x, "flatten"); }
  using HybridBlock::hybrid_forward;
};

// LeakyReLU(alpha), and the ELU / SELU / GELU activations of the same op.
class LeakyReLU : public HybridBlock {
 public:
  explicit LeakyReLU(double alpha, const std::string& act_type = "leaky");
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  double alpha_;
  std::string act_type_;
};

class ELU : public LeakyReLU {
 public:
  explicit ELU(double alpha = 1.0) : LeakyReLU(alpha, "elu") {}
};

class SELU : public LeakyReLU {
 public:
  SELU() : LeakyReLU(0.0, "selu") {}
};

class GELU : public LeakyReLU {
 public:
  GELU() : LeakyReLU(0.0, "gelu") {}
};

// A learned negative slope per channel (axis 1).
class PReLU : public HybridBlock {
 public:
  explicit PReLU(int64_t in_channels = 1, float alpha = 0.25f);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  Parameter* alpha_;
};

// Rows of a (input_dim, output_dim) table picked by index.
class Embedding : public HybridBlock {
 public:
  Embedding(int64_t input_dim, int64_t output_dim);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& weight() { return *weight_; }

 private:
  int64_t input_dim_, output_dim_;
  Parameter* weight_;
};

// Runs every child on the same input and concatenates the results along
// `axis` (Gluon's HybridConcurrent; Inception and SqueezeNet branches).
class HybridConcurrent : public HybridBlock {
 public:
  explicit HybridConcurrent(int64_t axis = -1) : HybridBlock("hybridconcurrent"), axis_(axis) {}
  void add(std::shared_ptr<Block> block) { register_child(std::move(block)); }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  int64_t axis_;
};

}  // namespace hybgen::nn
