#include "runtime-lite/ops.h"

#include "runtime-lite/invoke.h"
#include "runtime-lite/parameter.h"

namespace hybgen {
namespace {

Tensor one(const std::string& op, const std::vector<Tensor>& in, const Attrs& attrs, const std::string& name) {
  return invoke(op, in, attrs, name)[0];
}

Attrs with(std::initializer_list<std::pair<const char*, AttrValue>> items) {
  Attrs a;
  for (const auto& [k, v] : items) a.set(k, v);
  return a;
}

Tensor scalar_op(const char* op, const Tensor& a, float s) {
  return one(op, {a}, with({{"scalar", static_cast<double>(s)}}), "");
}

}  // namespace

Tensor Ops::param(Parameter& p) const { return symbolic_ ? p.var() : p.data(); }

Tensor Ops::FullyConnected(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t num_hidden, bool no_bias,
                           bool flatten, const std::string& name) const {
  std::vector<Tensor> in{x, weight};
  if (!no_bias) in.push_back(bias);
  return one("FullyConnected", in, with({{"num_hidden", num_hidden}, {"no_bias", no_bias}, {"flatten", flatten}}), name);
}

Tensor Ops::Activation(const Tensor& x, const std::string& act_type, const std::string& name) const {
  return one("Activation", {x}, with({{"act_type", act_type}}), name);
}

Tensor Ops::broadcast_add(const Tensor& a, const Tensor& b, const std::string& name) const { return one("broadcast_add", {a, b}, {}, name); }
Tensor Ops::broadcast_sub(const Tensor& a, const Tensor& b, const std::string& name) const { return one("broadcast_sub", {a, b}, {}, name); }
Tensor Ops::broadcast_mul(const Tensor& a, const Tensor& b, const std::string& name) const { return one("broadcast_mul", {a, b}, {}, name); }
Tensor Ops::broadcast_div(const Tensor& a, const Tensor& b, const std::string& name) const { return one("broadcast_div", {a, b}, {}, name); }
Tensor Ops::broadcast_maximum(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_maximum", {a, b}, {}, name);
}
Tensor Ops::broadcast_minimum(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_minimum", {a, b}, {}, name);
}

Tensor Ops::reshape(const Tensor& x, const std::vector<int64_t>& shape, bool reverse, const std::string& name) const {
  return one("Reshape", {x}, with({{"shape", shape}, {"reverse", reverse}}), name);
}
Tensor Ops::flatten(const Tensor& x, const std::string& name) const { return one("Flatten", {x}, {}, name); }
Tensor Ops::softmax(const Tensor& x, int64_t axis, const std::string& name) const {
  return one("softmax", {x}, with({{"axis", axis}}), name);
}
Tensor Ops::log_softmax(const Tensor& x, int64_t axis, const std::string& name) const {
  return one("log_softmax", {x}, with({{"axis", axis}}), name);
}
Tensor Ops::Dropout(const Tensor& x, double p, const std::string& name) const {
  return one("Dropout", {x}, with({{"p", p}}), name);
}
Tensor Ops::identity(const Tensor& x, const std::string& name) const { return one("_copy", {x}, {}, name); }

Tensor operator+(const Tensor& a, const Tensor& b) { return one("broadcast_add", {a, b}, {}, ""); }
Tensor operator-(const Tensor& a, const Tensor& b) { return one("broadcast_sub", {a, b}, {}, ""); }
Tensor operator*(const Tensor& a, const Tensor& b) { return one("broadcast_mul", {a, b}, {}, ""); }
Tensor operator/(const Tensor& a, const Tensor& b) { return one("broadcast_div", {a, b}, {}, ""); }
Tensor operator+(const Tensor& a, float s) { return scalar_op("_plus_scalar", a, s); }
Tensor operator-(const Tensor& a, float s) { return scalar_op("_minus_scalar", a, s); }
Tensor operator*(const Tensor& a, float s) { return scalar_op("_mul_scalar", a, s); }
Tensor operator/(const Tensor& a, float s) { return scalar_op("_div_scalar", a, s); }
Tensor operator+(float s, const Tensor& a) { return scalar_op("_plus_scalar", a, s); }
Tensor operator-(float s, const Tensor& a) { return scalar_op("_rminus_scalar", a, s); }
Tensor operator*(float s, const Tensor& a) { return scalar_op("_mul_scalar", a, s); }
Tensor operator/(float s, const Tensor& a) { return scalar_op("_rdiv_scalar", a, s); }

}  // namespace hybgen
