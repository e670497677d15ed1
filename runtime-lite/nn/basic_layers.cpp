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

}  // namespace hybgen::nn
