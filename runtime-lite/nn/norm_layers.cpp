#include "runtime-lite/nn/norm_layers.h"

namespace hybgen::nn {
namespace {

int64_t channels_on(const Tensor& x, int64_t axis) {
  const Shape& s = x.shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  if (axis < -rank || axis >= rank) throw Error("axis " + std::to_string(axis) + " is out of range for " + shape_str(s));
  return s[static_cast<std::size_t>(axis < 0 ? axis + rank : axis)];
}

}  // namespace

BatchNorm::BatchNorm(int64_t axis, double /*momentum: training only*/, double epsilon, bool center, bool scale,
                     int64_t in_channels)
    : HybridBlock("batchnorm"), axis_(axis), epsilon_(epsilon), scale_(scale) {
  gamma_ = &add_param("gamma", {in_channels});
  beta_ = &add_param("beta", {in_channels});
  mean_ = &add_param("running_mean", {in_channels});
  var_ = &add_param("running_var", {in_channels});
  gamma_->set_default_initializer(init::One());
  beta_->set_default_initializer(init::Zero());  // stays zero when !center, as Gluon's
  mean_->set_default_initializer(init::Zero());
  var_->set_default_initializer(init::One());
  (void)center;
}

Tensor BatchNorm::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!gamma_->shape_known() && x.has_shape()) {
    const int64_t c = channels_on(x, axis_);
    for (Parameter* p : {gamma_, beta_, mean_, var_}) p->set_shape({c});
  }
  return F.BatchNorm(x, F.param(*gamma_), F.param(*beta_), F.param(*mean_), F.param(*var_), epsilon_, !scale_, axis_,
                     "fwd");
}

LayerNorm::LayerNorm(int64_t axis, double epsilon, int64_t in_channels)
    : HybridBlock("layernorm"), axis_(axis), epsilon_(epsilon) {
  gamma_ = &add_param("gamma", {in_channels});
  beta_ = &add_param("beta", {in_channels});
  gamma_->set_default_initializer(init::One());
  beta_->set_default_initializer(init::Zero());
}

Tensor LayerNorm::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!gamma_->shape_known() && x.has_shape()) {
    const int64_t c = channels_on(x, axis_);
    gamma_->set_shape({c});
    beta_->set_shape({c});
  }
  return F.LayerNorm(x, F.param(*gamma_), F.param(*beta_), axis_, epsilon_, "fwd");
}

InstanceNorm::InstanceNorm(double epsilon, bool center, bool scale, int64_t in_channels)
    : HybridBlock("instancenorm"), epsilon_(epsilon) {
  gamma_ = &add_param("gamma", {in_channels});
  beta_ = &add_param("beta", {in_channels});
  gamma_->set_default_initializer(init::One());   // stays one when !scale, as Gluon's
  beta_->set_default_initializer(init::Zero());  // stays zero when !center
  (void)center, (void)scale;
}

Tensor InstanceNorm::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!gamma_->shape_known() && x.has_shape()) {
    const int64_t c = channels_on(x, 1);
    gamma_->set_shape({c});
    beta_->set_shape({c});
  }
  return F.InstanceNorm(x, F.param(*gamma_), F.param(*beta_), epsilon_, "fwd");
}

GroupNorm::GroupNorm(int64_t num_groups, double epsilon, bool center, bool scale)
    : HybridBlock("groupnorm"), num_groups_(num_groups), epsilon_(epsilon) {
  if (num_groups <= 0) throw Error("GroupNorm: num_groups must be positive, got " + std::to_string(num_groups));
  gamma_ = &add_param("gamma", {num_groups});
  beta_ = &add_param("beta", {num_groups});
  gamma_->set_default_initializer(init::One());
  beta_->set_default_initializer(init::Zero());
  (void)center, (void)scale;
}

Tensor GroupNorm::hybrid_forward(const Ops& F, const Tensor& x) {
  return F.GroupNorm(x, F.param(*gamma_), F.param(*beta_), num_groups_, epsilon_, "fwd");
}

}  // namespace hybgen::nn
