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

Tensor Ops::InstanceNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps,
                         const std::string& name) const {
  return one("InstanceNorm", {x, gamma, beta}, with({{"eps", eps}}), name);
}

Tensor Ops::GroupNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t num_groups, double eps,
                      const std::string& name) const {
  return one("GroupNorm", {x, gamma, beta}, with({{"num_groups", num_groups}, {"eps", eps}}), name);
}

Tensor Ops::L2Normalization(const Tensor& x, const std::string& mode, double eps, const std::string& name) const {
  return one("L2Normalization", {x}, with({{"mode", mode}, {"eps", eps}}), name);
}

Tensor Ops::LRN(const Tensor& x, int64_t nsize, double alpha, double beta, double knorm,
                const std::string& name) const {
  return one("LRN", {x}, with({{"nsize", nsize}, {"alpha", alpha}, {"beta", beta}, {"knorm", knorm}}), name);
}

Tensor Ops::LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t axis, double eps,
                      const std::string& name) const {
  return one("LayerNorm", {x, gamma, beta}, with({{"axis", axis}, {"eps", eps}}), name);
}

std::vector<Tensor> Ops::RNN(const Tensor& data, const Tensor& parameters, const Tensor& state,
                             const Tensor& state_cell, int64_t state_size, int64_t num_layers, const std::string& mode,
                             bool bidirectional, bool state_outputs, double p, const std::string& name) const {
  std::vector<Tensor> in{data, parameters, state};
  if (state_cell.defined()) in.push_back(state_cell);
  return invoke("RNN", in,
                with({{"state_size", state_size},
                      {"num_layers", num_layers},
                      {"mode", mode},
                      {"bidirectional", bidirectional},
                      {"state_outputs", state_outputs},
                      {"p", p}}),
                name);
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
Tensor Ops::max(const Tensor& x, std::vector<int64_t> axis, bool keepdims, const std::string& name) const {
  return one("max", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::min(const Tensor& x, std::vector<int64_t> axis, bool keepdims, const std::string& name) const {
  return one("min", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::prod(const Tensor& x, std::vector<int64_t> axis, bool keepdims, const std::string& name) const {
  return one("prod", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::norm(const Tensor& x, int64_t ord, std::vector<int64_t> axis, bool keepdims, const std::string& name) const {
  return one("norm", {x}, with({{"ord", ord}, {"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::argmax(const Tensor& x, int64_t axis, bool keepdims, const std::string& name) const {
  return one("argmax", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
Tensor Ops::argmin(const Tensor& x, int64_t axis, bool keepdims, const std::string& name) const {
  return one("argmin", {x}, with({{"axis", axis}, {"keepdims", keepdims}}), name);
}
std::vector<Tensor> Ops::topk(const Tensor& x, int64_t axis, int64_t k, const std::string& ret_typ, bool is_ascend,
                              const std::string& name) const {
  return invoke("topk", {x}, with({{"axis", axis}, {"k", k}, {"ret_typ", ret_typ}, {"is_ascend", is_ascend}}), name);
}
Tensor Ops::pick(const Tensor& x, const Tensor& index, int64_t axis, bool keepdims, const std::string& mode,
                 const std::string& name) const {
  return one("pick", {x, index}, with({{"axis", axis}, {"keepdims", keepdims}, {"mode", mode}}), name);
}
Tensor Ops::tile(const Tensor& x, std::vector<int64_t> reps, const std::string& name) const {
  return one("tile", {x}, with({{"reps", reps}}), name);
}
Tensor Ops::repeat(const Tensor& x, int64_t repeats, int64_t axis, const std::string& name) const {
  return one("repeat", {x}, with({{"repeats", repeats}, {"axis", axis}}), name);
}
Tensor Ops::stack(const std::vector<Tensor>& xs, int64_t axis, const std::string& name) const {
  return one("stack", xs, with({{"axis", axis}, {"num_args", static_cast<int64_t>(xs.size())}}), name);
}
Tensor Ops::reverse(const Tensor& x, std::vector<int64_t> axis, const std::string& name) const {
  return one("reverse", {x}, with({{"axis", axis}}), name);
}
Tensor Ops::Pad(const Tensor& x, std::vector<int64_t> pad_width, const std::string& mode, double constant_value,
                const std::string& name) const {
  return one("Pad", {x}, with({{"pad_width", pad_width}, {"mode", mode}, {"constant_value", constant_value}}), name);
}
Tensor Ops::Cast(const Tensor& x, const std::string& dtype, const std::string& name) const {
  return one("Cast", {x}, with({{"dtype", dtype}}), name);
}
Tensor Ops::take(const Tensor& a, const Tensor& indices, int64_t axis, const std::string& mode,
                 const std::string& name) const {
  return one("take", {a, indices}, with({{"axis", axis}, {"mode", mode}}), name);
}
Tensor Ops::one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value,
                    const std::string& name) const {
  return one("one_hot", {indices}, with({{"depth", depth}, {"on_value", on_value}, {"off_value", off_value}}), name);
}
Tensor Ops::slice_like(const Tensor& x, const Tensor& shape_like, std::vector<int64_t> axes,
                       const std::string& name) const {
  return one("slice_like", {x, shape_like}, with({{"axes", axes}}), name);
}
Tensor Ops::space_to_depth(const Tensor& x, int64_t block_size, const std::string& name) const {
  return one("space_to_depth", {x}, with({{"block_size", block_size}}), name);
}
Tensor Ops::depth_to_space(const Tensor& x, int64_t block_size, const std::string& name) const {
  return one("depth_to_space", {x}, with({{"block_size", block_size}}), name);
}
Tensor Ops::SequenceMask(const Tensor& x, const Tensor& sequence_length, double value, int64_t axis,
                         const std::string& name) const {
  return one("SequenceMask", {x, sequence_length},
             with({{"use_sequence_length", true}, {"value", value}, {"axis", axis}}), name);
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
Tensor Ops::expm1(const Tensor& x, const std::string& name) const { return one("expm1", {x}, {}, name); }
Tensor Ops::log2(const Tensor& x, const std::string& name) const { return one("log2", {x}, {}, name); }
Tensor Ops::log10(const Tensor& x, const std::string& name) const { return one("log10", {x}, {}, name); }
Tensor Ops::log1p(const Tensor& x, const std::string& name) const { return one("log1p", {x}, {}, name); }
Tensor Ops::rsqrt(const Tensor& x, const std::string& name) const { return one("rsqrt", {x}, {}, name); }
Tensor Ops::cbrt(const Tensor& x, const std::string& name) const { return one("cbrt", {x}, {}, name); }
Tensor Ops::rcbrt(const Tensor& x, const std::string& name) const { return one("rcbrt", {x}, {}, name); }
Tensor Ops::reciprocal(const Tensor& x, const std::string& name) const { return one("reciprocal", {x}, {}, name); }
Tensor Ops::abs(const Tensor& x, const std::string& name) const { return one("abs", {x}, {}, name); }
Tensor Ops::negative(const Tensor& x, const std::string& name) const { return one("negative", {x}, {}, name); }
Tensor Ops::square(const Tensor& x, const std::string& name) const { return one("square", {x}, {}, name); }
Tensor Ops::sign(const Tensor& x, const std::string& name) const { return one("sign", {x}, {}, name); }
Tensor Ops::floor(const Tensor& x, const std::string& name) const { return one("floor", {x}, {}, name); }
Tensor Ops::ceil(const Tensor& x, const std::string& name) const { return one("ceil", {x}, {}, name); }
Tensor Ops::trunc(const Tensor& x, const std::string& name) const { return one("trunc", {x}, {}, name); }
Tensor Ops::fix(const Tensor& x, const std::string& name) const { return one("fix", {x}, {}, name); }
Tensor Ops::round(const Tensor& x, const std::string& name) const { return one("round", {x}, {}, name); }
Tensor Ops::rint(const Tensor& x, const std::string& name) const { return one("rint", {x}, {}, name); }
Tensor Ops::sin(const Tensor& x, const std::string& name) const { return one("sin", {x}, {}, name); }
Tensor Ops::cos(const Tensor& x, const std::string& name) const { return one("cos", {x}, {}, name); }
Tensor Ops::tan(const Tensor& x, const std::string& name) const { return one("tan", {x}, {}, name); }
Tensor Ops::arctan(const Tensor& x, const std::string& name) const { return one("arctan", {x}, {}, name); }
Tensor Ops::sinh(const Tensor& x, const std::string& name) const { return one("sinh", {x}, {}, name); }
Tensor Ops::cosh(const Tensor& x, const std::string& name) const { return one("cosh", {x}, {}, name); }
Tensor Ops::arcsinh(const Tensor& x, const std::string& name) const { return one("arcsinh", {x}, {}, name); }
Tensor Ops::degrees(const Tensor& x, const std::string& name) const { return one("degrees", {x}, {}, name); }
Tensor Ops::radians(const Tensor& x, const std::string& name) const { return one("radians", {x}, {}, name); }
Tensor Ops::logical_not(const Tensor& x, const std::string& name) const { return one("logical_not", {x}, {}, name); }
Tensor Ops::BlockGrad(const Tensor& x, const std::string& name) const { return one("BlockGrad", {x}, {}, name); }
Tensor Ops::stop_gradient(const Tensor& x, const std::string& name) const { return one("stop_gradient", {x}, {}, name); }
Tensor Ops::make_loss(const Tensor& x, const std::string& name) const { return one("make_loss", {x}, {}, name); }
Tensor Ops::ones_like(const Tensor& x, const std::string& name) const { return one("ones_like", {x}, {}, name); }
Tensor Ops::zeros_like(const Tensor& x, const std::string& name) const { return one("zeros_like", {x}, {}, name); }
Tensor Ops::power(const Tensor& x, const Tensor& y, const std::string& name) const {
  return one("broadcast_power", {x, y}, {}, name);
}
Tensor Ops::power(const Tensor& x, float s, const std::string& name) const {
  return one("_power_scalar", {x}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::power(float s, const Tensor& x, const std::string& name) const {
  return one("_rpower_scalar", {x}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::broadcast_power(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_power", {a, b}, {}, name);
}
Tensor Ops::broadcast_hypot(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_hypot", {a, b}, {}, name);
}
Tensor Ops::equal(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_equal", {a, b}, {}, name);
}
Tensor Ops::equal(const Tensor& a, float s, const std::string& name) const {
  return one("_equal_scalar", {a}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::not_equal(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_not_equal", {a, b}, {}, name);
}
Tensor Ops::not_equal(const Tensor& a, float s, const std::string& name) const {
  return one("_not_equal_scalar", {a}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::greater(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_greater", {a, b}, {}, name);
}
Tensor Ops::greater(const Tensor& a, float s, const std::string& name) const {
  return one("_greater_scalar", {a}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::greater_equal(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_greater_equal", {a, b}, {}, name);
}
Tensor Ops::greater_equal(const Tensor& a, float s, const std::string& name) const {
  return one("_greater_equal_scalar", {a}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::lesser(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_lesser", {a, b}, {}, name);
}
Tensor Ops::lesser(const Tensor& a, float s, const std::string& name) const {
  return one("_lesser_scalar", {a}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::lesser_equal(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_lesser_equal", {a, b}, {}, name);
}
Tensor Ops::lesser_equal(const Tensor& a, float s, const std::string& name) const {
  return one("_lesser_equal_scalar", {a}, with({{"scalar", static_cast<double>(s)}}), name);
}
Tensor Ops::logical_and(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_logical_and", {a, b}, {}, name);
}
Tensor Ops::logical_or(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_logical_or", {a, b}, {}, name);
}
Tensor Ops::logical_xor(const Tensor& a, const Tensor& b, const std::string& name) const {
  return one("broadcast_logical_xor", {a, b}, {}, name);
}
Tensor Ops::where(const Tensor& condition, const Tensor& x, const Tensor& y, const std::string& name) const {
  return one("where", {condition, x, y}, {}, name);
}
Tensor Ops::add_n(const std::vector<Tensor>& xs, const std::string& name) const {
  return one("add_n", xs, with({{"num_args", static_cast<int64_t>(xs.size())}}), name);
}
Tensor Ops::broadcast_to(const Tensor& x, std::vector<int64_t> shape, const std::string& name) const {
  return one("broadcast_to", {x}, with({{"shape", shape}}), name);
}
Tensor Ops::broadcast_axis(const Tensor& x, std::vector<int64_t> axis, std::vector<int64_t> size,
                           const std::string& name) const {
  return one("broadcast_axis", {x}, with({{"axis", axis}, {"size", size}}), name);
}
Tensor Ops::broadcast_like(const Tensor& x, const Tensor& like, std::vector<int64_t> lhs_axes,
                           std::vector<int64_t> rhs_axes, const std::string& name) const {
  return one("broadcast_like", {x, like}, with({{"lhs_axes", lhs_axes}, {"rhs_axes", rhs_axes}}), name);
}

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
