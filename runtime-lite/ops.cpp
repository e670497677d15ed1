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

Tensor Ops::Convolution(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> kernel,
                        int64_t num_filter, std::vector<int64_t> stride, std::vector<int64_t> pad,
                        std::vector<int64_t> dilate, int64_t num_group, bool no_bias, const std::string& name) const {
  std::vector<Tensor> in{x, weight};
  if (!no_bias) in.push_back(bias);
  return one("Convolution", in,
             with({{"kernel", kernel}, {"num_filter", num_filter}, {"stride", stride}, {"pad", pad},
                   {"dilate", dilate}, {"num_group", num_group}, {"no_bias", no_bias}}),
             name);
}

Tensor Ops::Pooling(const Tensor& x, std::vector<int64_t> kernel, const std::string& pool_type,
                    std::vector<int64_t> stride, std::vector<int64_t> pad, bool global_pool,
                    const std::string& pooling_convention, bool count_include_pad, const std::string& name) const {
  return one("Pooling", {x},
             with({{"kernel", kernel}, {"pool_type", pool_type}, {"stride", stride}, {"pad", pad},
                   {"global_pool", global_pool}, {"pooling_convention", pooling_convention},
                   {"count_include_pad", count_include_pad}}),
             name);
}

Tensor Ops::Deconvolution(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> kernel,
                          int64_t num_filter, std::vector<int64_t> stride, std::vector<int64_t> pad,
                          std::vector<int64_t> adj, std::vector<int64_t> dilate, int64_t num_group, bool no_bias,
                          std::vector<int64_t> target_shape, const std::string& name) const {
  std::vector<Tensor> in{x, weight};
  if (!no_bias) in.push_back(bias);
  return one("Deconvolution", in,
             with({{"kernel", kernel}, {"num_filter", num_filter}, {"stride", stride}, {"pad", pad}, {"adj", adj},
                   {"dilate", dilate}, {"num_group", num_group}, {"no_bias", no_bias},
                   {"target_shape", target_shape}}),
             name);
}

Tensor Ops::UpSampling(const std::vector<Tensor>& xs, int64_t scale, const std::string& sample_type,
                       int64_t num_filter, const std::string& multi_input_mode, const std::string& name) const {
  const int64_t args = sample_type == "bilinear" ? 2 : static_cast<int64_t>(xs.size());
  return one("UpSampling", xs,
             with({{"scale", scale}, {"sample_type", sample_type}, {"num_filter", num_filter},
                   {"num_args", args}, {"multi_input_mode", multi_input_mode}}),
             name);
}

Tensor Ops::UpSampling(const Tensor& x, int64_t scale, const std::string& sample_type, const std::string& name) const {
  return UpSampling(std::vector<Tensor>{x}, scale, sample_type, 0, "concat", name);
}

Tensor Ops::BilinearResize2D(const Tensor& x, int64_t height, int64_t width, double scale_height, double scale_width,
                             const std::string& mode, bool align_corners, const Tensor& like,
                             const std::string& name) const {
  std::vector<Tensor> in{x};
  if (mode == "like") in.push_back(like);
  return one("_contrib_BilinearResize2D", in,
             with({{"height", height}, {"width", width}, {"scale_height", scale_height},
                   {"scale_width", scale_width}, {"mode", mode}, {"align_corners", align_corners}}),
             name);
}

Tensor Ops::BatchNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& moving_mean,
                      const Tensor& moving_var, double eps, bool fix_gamma, int64_t axis, const std::string& name) const {
  return one("BatchNorm", {x, gamma, beta, moving_mean, moving_var},
             with({{"eps", eps}, {"fix_gamma", fix_gamma}, {"axis", axis}}), name);
}

Tensor Ops::LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t axis, double eps,
                      const std::string& name) const {
  return one("LayerNorm", {x, gamma, beta}, with({{"axis", axis}, {"eps", eps}}), name);
}

Tensor Ops::LeakyReLU(const Tensor& x, const std::string& act_type, double slope, const std::string& name) const {
  return one("LeakyReLU", {x}, with({{"act_type", act_type}, {"slope", slope}}), name);
}

Tensor Ops::PReLU(const Tensor& x, const Tensor& gamma, const std::string& name) const {
  return one("LeakyReLU", {x, gamma}, with({{"act_type", std::string("prelu")}}), name);
}

Tensor Ops::clip(const Tensor& x, double a_min, double a_max, const std::string& name) const {
  return one("clip", {x}, with({{"a_min", a_min}, {"a_max", a_max}}), name);
}

Tensor Ops::Concat(const std::vector<Tensor>& xs, int64_t dim, const std::string& name) const {
  return one("Concat", xs, with({{"dim", dim}, {"num_args", static_cast<int64_t>(xs.size())}}), name);
}

Tensor Ops::Embedding(const Tensor& indices, const Tensor& weight, int64_t input_dim, int64_t output_dim,
                      const std::string& name) const {
  return one("Embedding", {indices, weight}, with({{"input_dim", input_dim}, {"output_dim", output_dim}}), name);
}

Tensor Ops::transpose(const Tensor& x, std::vector<int64_t> axes, const std::string& name) const {
  return one("transpose", {x}, with({{"axes", axes}}), name);
}
Tensor Ops::expand_dims(const Tensor& x, int64_t axis, const std::string& name) const {
  return one("expand_dims", {x}, with({{"axis", axis}}), name);
}
Tensor Ops::squeeze(const Tensor& x, std::vector<int64_t> axis, const std::string& name) const {
  return one("squeeze", {x}, with({{"axis", axis}}), name);
}
Tensor Ops::dot(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, const std::string& name) const {
  return one("dot", {a, b}, with({{"transpose_a", transpose_a}, {"transpose_b", transpose_b}}), name);
}
Tensor Ops::batch_dot(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                      const std::string& name) const {
  return one("batch_dot", {a, b}, with({{"transpose_a", transpose_a}, {"transpose_b", transpose_b}}), name);
}
Tensor Ops::sum(const Tensor& x, std::vector<int64_t> axis, bool keepdims, const std::string& name) const {
  return one("sum", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::mean(const Tensor& x, std::vector<int64_t> axis, bool keepdims, const std::string& name) const {
  return one("mean", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end, std::vector<int64_t> step,
                  const std::string& name) const {
  return one("slice", {x}, with({{"begin", begin}, {"end", end}, {"step", step}}), name);
}
Tensor Ops::slice_axis(const Tensor& x, int64_t axis, int64_t begin, int64_t end, const std::string& name) const {
  return one("slice_axis", {x}, with({{"axis", axis}, {"begin", begin}, {"end", end}}), name);
}
std::vector<Tensor> Ops::split(const Tensor& x, int64_t num_outputs, int64_t axis, bool squeeze_axis,
                               const std::string& name) const {
  return invoke("SliceChannel", {x},
                with({{"num_outputs", num_outputs}, {"axis", axis}, {"squeeze_axis", squeeze_axis}}), name);
}
Tensor Ops::exp(const Tensor& x, const std::string& name) const { return one("exp", {x}, {}, name); }
Tensor Ops::log(const Tensor& x, const std::string& name) const { return one("log", {x}, {}, name); }
Tensor Ops::sqrt(const Tensor& x, const std::string& name) const { return one("sqrt", {x}, {}, name); }
Tensor Ops::erf(const Tensor& x, const std::string& name) const { return one("erf", {x}, {}, name); }

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
