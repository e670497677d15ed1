#include "runtime-lite/nn/basic_layers.h"

namespace hybgen::nn {

Dense::Dense(int64_t units, const std::string& activation, bool use_bias, int64_t in_units, bool flatten)
    : HybridBlock("dense"), units_(units), activation_(activation), use_bias_(use_bias), flatten_(flatten) {
  if (units <= 0) throw Error("Dense: units must be positive, got " + std::to_string(units));
  weight_ = &add_param("weight", {units, in_units});
  if (use_bias) {
    bias_ = &add_param("bias", {units});
    bias_->set_default_initializer(init::Zero());
  }
}

Tensor Dense::hybrid_forward(const Ops& F, const Tensor& x) {
  // Deferred in_units: the first input (concrete, or a symbol with a known shape) tells it.
  if (!weight_->shape_known() && x.has_shape()) {
    const Shape& s = x.shape();
    const int64_t in_units = flatten_ ? num_elements(Shape(s.begin() + 1, s.end())) : s.back();
    weight_->set_shape({units_, in_units});
  }
  Tensor y = F.FullyConnected(x, F.param(*weight_), use_bias_ ? F.param(*bias_) : Tensor(), units_, !use_bias_,
                              flatten_, "fwd");
  if (!activation_.empty()) y = F.Activation(y, activation_, activation_ + "_fwd");
  return y;
}

Activation::Activation(const std::string& act_type) : HybridBlock(act_type), act_type_(act_type) {}

Tensor Activation::hybrid_forward(const Ops& F, const Tensor& x) { return F.Activation(x, act_type_, "fwd"); }

Dropout::Dropout(double rate) : HybridBlock("dropout"), rate_(rate) {}

Tensor Dropout::hybrid_forward(const Ops& F, const Tensor& x) { return F.Dropout(x, rate_, "fwd"); }

LeakyReLU::LeakyReLU(double alpha, const std::string& act_type)
    : HybridBlock(act_type == "leaky" ? "leakyrelu" : act_type), alpha_(alpha), act_type_(act_type) {}

Tensor LeakyReLU::hybrid_forward(const Ops& F, const Tensor& x) { return F.LeakyReLU(x, act_type_, alpha_, "fwd"); }

PReLU::PReLU(int64_t in_channels, float alpha) : HybridBlock("prelu") {
  alpha_ = &add_param("alpha", {in_channels});
  alpha_->set_default_initializer(init::Constant(alpha));
}

Tensor PReLU::hybrid_forward(const Ops& F, const Tensor& x) { return F.PReLU(x, F.param(*alpha_), "fwd"); }

Embedding::Embedding(int64_t input_dim, int64_t output_dim)
    : HybridBlock("embedding"), input_dim_(input_dim), output_dim_(output_dim) {
  weight_ = &add_param("weight", {input_dim, output_dim});
}

Tensor Embedding::hybrid_forward(const Ops& F, const Tensor& x) {
  return F.Embedding(x, F.param(*weight_), input_dim_, output_dim_, "fwd");
}

Tensor HybridConcurrent::hybrid_forward(const Ops& F, const Tensor& x) {
  std::vector<Tensor> parts;
  for (const auto& child : children()) parts.push_back((*child)(x));
  return F.Concat(parts, axis_, "concat");
}

}  // namespace hybgen::nn
