// ONNX converters for the plain ops: each maps one ONNX op type onto
// registry ops (gen/ops/), following the ONNX operator spec per opset.
// Where the registry cannot express an attribute value the converter's check
// refuses it up front, so the importer lists it with every other problem.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "io/onnx/onnx_ops.h"
#include "io/onnx/onnx_matmul.h"
#include "io/onnx/onnx_pads.h"
#include "ir/error.h"

namespace hybgen {
namespace {

using onnx_util::normalize_axis;
using onnx_util::attrs_of;
using onnx_util::int_list;
using onnx_util::reshape;

// ---- elementwise ------------------------------------------------------------

void unary(const char* onnx_op, const char* op, Attrs attrs = {}) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op)
    .converts([op = std::string(op), attrs](OnnxContext& c) { c.set_output(0, c.add_node(op, attrs, {c.input(0)})); }));
}

const int unary_regs = [] {
  unary("Relu", "Activation", attrs_of("act_type", std::string("relu")));
  unary("Sigmoid", "Activation", attrs_of("act_type", std::string("sigmoid")));
  unary("Tanh", "Activation", attrs_of("act_type", std::string("tanh")));
  unary("Softplus", "Activation", attrs_of("act_type", std::string("softrelu")));
  unary("Softsign", "Activation", attrs_of("act_type", std::string("softsign")));
  unary("Sqrt", "sqrt");
  unary("Exp", "exp");
  unary("Log", "log");
  unary("Abs", "abs");
  unary("Neg", "negative");
  unary("Reciprocal", "reciprocal");
  return 0;
}();

const OnnxConverterRegistrar leaky_reg(OnnxConverter("LeakyRelu")
    .converts([](OnnxContext& c) {
          Attrs a;
          a.set("act_type", std::string("leaky"));
          a.set("slope", c.attr_float("alpha", 0.01));
          c.set_output(0, c.add_node("LeakyReLU", a, {c.input(0)}));
        })
    .handles({"alpha"}));

const OnnxConverterRegistrar elu_reg(OnnxConverter("Elu")
    .converts([](OnnxContext& c) {
          Attrs a;
          a.set("act_type", std::string("elu"));
          a.set("slope", c.attr_float("alpha", 1.0));
          c.set_output(0, c.add_node("LeakyReLU", a, {c.input(0)}));
        })
    .handles({"alpha"}));

// The registry's selu has SELU's fixed constants; ONNX's defaults are those
// constants rounded to float32.
const OnnxConverterRegistrar selu_reg(OnnxConverter("Selu")
    .converts([](OnnxContext& c) { c.set_output(0, c.add_node("LeakyReLU", attrs_of("act_type", std::string("selu")), {c.input(0)})); })
    .handles({"alpha", "gamma"})
    .checks([](OnnxCheck& k) {
          if (std::fabs(k.attr_float("alpha", 1.67326319217681884765625) - 1.6732632423543772) > 1e-6)
            k.refuse("alpha", "only SELU's own alpha (1.67326) is supported");
          if (std::fabs(k.attr_float("gamma", 1.05070102214813232421875) - 1.0507009873554805) > 1e-6)
            k.refuse("gamma", "only SELU's own gamma (1.0507) is supported");
        }));

// Clip: min/max attributes before opset 11, optional inputs after; constant
// bounds make one clip, runtime ones a maximum then a minimum (so min > max
// gives max everywhere, as ONNX says).
const OnnxConverterRegistrar clip_reg(OnnxConverter("Clip")
    .converts([](OnnxContext& c) {
          double lo = -FLT_MAX, hi = FLT_MAX;
          std::string x = c.input(0);
          if (c.opset() < 11) {
            lo = c.attr_float("min", lo);
            hi = c.attr_float("max", hi);
          } else {
            for (int i : {1, 2}) {
              if (!c.has_input(i)) continue;
              if (c.shape(i).size() > 1 || num_elements(c.shape(i)) != 1) c.fail(std::string(i == 1 ? "min" : "max") + " must be a scalar");
              if (c.is_constant(i)) {
                (i == 1 ? lo : hi) = c.constant(i).at_double(0);
                continue;
              }
              if (i == 1) {
                x = c.add_node("broadcast_maximum", {}, {x, c.input(1)}, "min");
                lo = -FLT_MAX;
              } else {
                // Constant min first, so min > max still gives max.
                if (lo > -FLT_MAX) {
                  Attrs a;
                  a.set("a_min", lo);
                  a.set("a_max", static_cast<double>(FLT_MAX));
                  x = c.add_node("clip", a, {x}, "min");
                  lo = -FLT_MAX;
                }
                x = c.add_node("broadcast_minimum", {}, {x, c.input(2)}, "max");
              }
            }
          }
          lo = std::max(lo, -static_cast<double>(FLT_MAX));
          hi = std::min(hi, static_cast<double>(FLT_MAX));
          if (lo > hi) lo = hi;  // ONNX: every value becomes max when min > max
          if (lo == -FLT_MAX && hi == FLT_MAX && x != c.input(0)) return c.set_output(0, x);
          Attrs a;
          a.set("a_min", lo);
          a.set("a_max", hi);
          c.set_output(0, c.add_node("clip", a, {x}));
        })
    .handles({"min", "max"}));

// Add/Sub/Mul/Div and the n-ary Sum/Max/Min: numpy broadcasting (opset >= 7).
void binary(const char* onnx_op, const char* op) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op).converts([op = std::string(op)](OnnxContext& c) {
    if (c.num_inputs() != 2) c.fail("takes 2 inputs");
    c.set_output(0, c.add_node(op, {}, {c.input(0), c.input(1)}));
  }));
}

void nary(const char* onnx_op, const char* op) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op).converts([op = std::string(op)](OnnxContext& c) {
            if (c.num_inputs() < 1) c.fail("needs at least 1 input");
            std::string acc = c.input(0);
            for (int i = 1; i < c.num_inputs(); ++i) acc = c.add_node(op, {}, {acc, c.input(i)}, std::to_string(i));
            if (c.num_inputs() == 1) acc = c.add_node("identity", {}, {acc});
            c.set_output(0, acc);
          }));
}

const int binary_regs = [] {
  binary("Add", "broadcast_add");
  binary("Sub", "broadcast_sub");
  binary("Mul", "broadcast_mul");
  binary("Div", "broadcast_div");
  nary("Sum", "broadcast_add");
  nary("Max", "broadcast_maximum");
  nary("Min", "broadcast_minimum");
  return 0;
}();

// ---- convolution and pooling ----------------------------------------------

std::vector<int64_t> per_axis(OnnxContext& c, const std::string& name, std::size_t spatial) {
  auto v = c.attr_ints(name, std::vector<int64_t>(spatial, 1));
  if (v.size() != spatial) c.fail(name + " has " + std::to_string(v.size()) + " values for " + std::to_string(spatial) + " spatial axes");
  for (int64_t x : v)
    if (x < 1) c.fail(name + " " + int_list(v) + " must be positive");
  return v;
}

}  // namespace

Attrs onnx_conv_attrs(OnnxContext& c, const Shape& x, const Shape& w) {
  if (x.size() < 3 || x.size() > 5)
    c.fail("input of rank " + std::to_string(x.size()) + "; Conv takes 1-D, 2-D or 3-D (NCW/NCHW/NCDHW)");
  const std::size_t spatial = x.size() - 2;
  if (w.size() != x.size()) c.fail("weight " + shape_str(w) + " does not match input " + shape_str(x));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const auto ks = c.attr_ints("kernel_shape", kernel);
  if (ks != kernel) c.fail("kernel_shape " + int_list(ks) + " differs from the weight's " + shape_str(w));
  Attrs a;
  a.set("kernel", kernel);
  a.set("num_filter", w[0]);
  const auto strides = per_axis(c, "strides", spatial), dilations = per_axis(c, "dilations", spatial);
  const WindowPads pads = window_pads(c, std::vector<int64_t>(x.begin() + 2, x.end()), kernel, strides, dilations);
  a.set("stride", strides);
  a.set("dilate", dilations);
  a.set("pad", pads.begin);
  a.set("pad_end", pads.end);
  a.set("num_group", c.attr_int("group", 1));
  return a;
}

namespace {

const OnnxConverterRegistrar conv_reg(OnnxConverter("Conv")
                                          .converts([](OnnxContext& c) {
                                            Attrs a = onnx_conv_attrs(c, c.shape(0), c.shape(1));
                                            std::vector<std::string> in = {c.input(0), c.input(1)};
                                            if (c.has_input(2))
                                              in.push_back(c.input(2));
                                            else
                                              a.set("no_bias", true);
                                            c.set_output(0, c.add_node("Convolution", a, in));
                                          })
                                          .handles({"kernel_shape", "strides", "dilations", "pads", "group",
                                                    "auto_pad"})
                                          .checks(check_window_pads));

void pool(const char* onnx_op, const char* type) {
  static std::vector<OnnxConverterRegistrar> regs;
  const bool avg = std::string(type) == "avg";
  regs.emplace_back(OnnxConverter(onnx_op)
    .converts([type = std::string(type), avg](OnnxContext& c) {
            if (c.has_output(1)) c.fail("the Indices output is not supported");
            const Shape x = c.shape(0);
            if (x.size() < 3 || x.size() > 5) c.fail("input of rank " + std::to_string(x.size()) + "; pooling takes NCW, NCHW or NCDHW");
            const std::size_t spatial = x.size() - 2;
            const auto kernel = c.attr_ints("kernel_shape");
            if (kernel.size() != spatial) c.fail("kernel_shape " + int_list(kernel) + " does not match the input's " + std::to_string(spatial) + " spatial axes");
            const auto strides = per_axis(c, "strides", spatial);
            const auto dil = per_axis(c, "dilations", spatial);
            for (int64_t d : dil)
              if (d != 1) {
                if (!avg) return onnx_dilated_max_pool(c, kernel, strides, dil);
                c.fail("dilations " + int_list(dil) + " are not supported");
              }
            for (std::size_t i = 0; i < spatial; ++i)
              if (kernel[i] < 1 || kernel[i] > (int64_t{1} << 30) || strides[i] > (int64_t{1} << 30))
                c.fail("kernel_shape " + int_list(kernel) + " or strides are out of range");
            WindowPads pads = window_pads(c, std::vector<int64_t>(x.begin() + 2, x.end()), kernel, strides, dil);
            const bool ceil = c.attr_int("ceil_mode", 0) != 0;
            for (std::size_t i = 0; i < spatial; ++i)
              if (pads.begin[i] >= kernel[i] || pads.end[i] >= kernel[i])
                c.fail("pads must be smaller than kernel_shape " + int_list(kernel));
            if (ceil) {
              // ONNX Runtime (as PyTorch) drops a last window that would start
              // in the end padding; MXNet's "full" convention keeps it. Such an
              // axis loses the end padding past its last kept window, which
              // gives the same windows and divisors under "full".
              for (std::size_t i = 0; i < spatial; ++i) {
                const int64_t in = x[i + 2], k = kernel[i], s = strides[i];
                const int64_t span = in + pads.begin[i] + pads.end[i] - k;
                const int64_t out = (span + s - 1) / s + 1;
                if ((out - 1) * s >= in + pads.begin[i]) {
                  pads.end[i] -= span % s;
                  if (pads.end[i] < 0) c.fail("ceil_mode: the last window starts in the padding");
                }
              }
            }
            if (c.attr_int("storage_order", 0) != 0) c.fail("storage_order = 1 (column-major indices) is not supported");
            Attrs a;
            a.set("kernel", kernel);
            a.set("pool_type", type);
            a.set("stride", strides);
            a.set("pad", pads.begin);
            a.set("pad_end", pads.end);
            a.set("pooling_convention", std::string(ceil ? "full" : "valid"));
            if (avg) a.set("count_include_pad", c.attr_int("count_include_pad", 0) != 0);
            c.set_output(0, c.add_node("Pooling", a, {c.input(0)}));
          })
    .handles(avg ? std::vector<std::string>{"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "count_include_pad"}
                 : std::vector<std::string>{"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations",
                                            "storage_order"})
    .checks([](OnnxCheck& k) {
      check_window_pads(k);
      if (k.attr_int("storage_order", 0) != 0) k.refuse("storage_order", "column-major indices are not supported");
    }));
}

void global_pool(const char* onnx_op, const char* type) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op)
    .converts([type = std::string(type)](OnnxContext& c) {
            const Shape x = c.shape(0);
            if (x.size() < 3 || x.size() > 5) c.fail("input of rank " + std::to_string(x.size()) + "; pooling takes NCW, NCHW or NCDHW");
            Attrs a;
            a.set("pool_type", type);
            a.set("global_pool", true);
            a.set("kernel", std::vector<int64_t>(x.begin() + 2, x.end()));
            c.set_output(0, c.add_node("Pooling", a, {c.input(0)}));
          }));
}

const int pool_regs = [] {
  pool("MaxPool", "max");
  pool("AveragePool", "avg");
  global_pool("GlobalMaxPool", "max");
  global_pool("GlobalAveragePool", "avg");
  return 0;
}();

const OnnxConverterRegistrar batch_norm_reg(OnnxConverter("BatchNormalization")
    .converts([](OnnxContext& c) {
          for (int i = 1; i < c.num_outputs(); ++i)
            if (c.has_output(i)) c.fail("output " + std::to_string(i) + " (training statistics) is not supported");
          if (c.shape(0).size() < 2) c.fail("input of rank " + std::to_string(c.shape(0).size()) + "; needs a channel axis");
          Attrs a;
          a.set("eps", c.attr_float("epsilon", 1e-5));
          a.set("fix_gamma", false);
          a.set("use_global_stats", true);
          a.set("axis", int64_t{1});
          c.set_output(0, c.add_node("BatchNorm", a, {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)}));
        })
    .handles({"epsilon", "spatial", "training_mode"})
    .ignores({"momentum", "is_test", "consumed_inputs"})
    .checks([](OnnxCheck& k) {
          if (k.attr_int("spatial", 1) != 1) k.refuse("spatial", "only spatial = 1 is supported");
          if (k.attr_int("training_mode", 0) != 0) k.refuse("training_mode", "training mode is not supported");
          if (k.num_inputs() != 5) k.refuse("", "needs 5 inputs (X, scale, B, mean, var)");
        }));

// ---- shapes -----------------------------------------------------------------

const OnnxConverterRegistrar flatten_reg(OnnxConverter("Flatten")
    .converts([](OnnxContext& c) {
          const Shape x = c.shape(0);
          const int64_t rank = static_cast<int64_t>(x.size());
          int64_t axis = c.attr_int("axis", 1);
          if (axis < -rank || axis > rank) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
          if (axis < 0) axis += rank;
          int64_t a = 1, b = 1;
          for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= x[static_cast<std::size_t>(i)];
          c.set_output(0, reshape(c, c.input(0), {a, b}));
        })
    .handles({"axis"}));

// ONNX Reshape's target: 0 copies the input's dim (unless allowzero), one -1 is inferred.
Shape reshape_target(OnnxContext& c, const Shape& in, const std::vector<int64_t>& spec, bool allowzero) {
  Shape out(spec.size());
  int infer = -1;
  int64_t known = 1;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      if (i >= in.size()) c.fail("shape " + int_list(spec) + ": 0 at axis " + std::to_string(i) + " past the input's rank");
      d = in[i];
    }
    if (d == -1) {
      if (infer >= 0) c.fail("shape " + int_list(spec) + " has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (d < 0) c.fail("shape " + int_list(spec) + " has a negative dimension");
    if (d == 0) c.fail("shape " + int_list(spec) + " makes an empty tensor");
    if (known > (int64_t{1} << 40) / d) c.fail("shape " + int_list(spec) + " is too large");
    known *= d;
    out[i] = d;
  }
  const int64_t total = num_elements(in);
  if (infer >= 0) {
    if (known == 0 || total % known) c.fail("cannot reshape " + shape_str(in) + " to " + int_list(spec));
    out[static_cast<std::size_t>(infer)] = total / known;
  }
  if (num_elements(out) != total) c.fail("cannot reshape " + shape_str(in) + " to " + int_list(spec));
  return out;
}

const OnnxConverterRegistrar reshape_reg(OnnxConverter("Reshape")
    .converts([](OnnxContext& c) {
          std::vector<int64_t> spec = c.opset() < 5 ? c.attr_ints("shape") : c.constant(1).as_ints();
          const Shape out = reshape_target(c, c.shape(0), spec, c.attr_int("allowzero", 0) != 0);
          c.set_output(0, reshape(c, c.input(0), out));
        })
    .handles({"allowzero"}));

const OnnxConverterRegistrar transpose_reg(OnnxConverter("Transpose")
    .converts([](OnnxContext& c) {
          const int64_t rank = static_cast<int64_t>(c.shape(0).size());
          std::vector<int64_t> perm(static_cast<std::size_t>(rank));
          for (int64_t i = 0; i < rank; ++i) perm[static_cast<std::size_t>(i)] = rank - 1 - i;
          perm = c.attr_ints("perm", perm);
          std::vector<int64_t> sorted = perm;
          std::sort(sorted.begin(), sorted.end());
          bool ok = static_cast<int64_t>(perm.size()) == rank;
          for (int64_t i = 0; ok && i < rank; ++i) ok = sorted[static_cast<std::size_t>(i)] == i;
          if (!ok) c.fail("perm " + int_list(perm) + " is not a permutation of the input's " + std::to_string(rank) + " axes");
          c.set_output(0, c.add_node("transpose", attrs_of("axes", perm), {c.input(0)}));
        })
    .handles({"perm"}));

const OnnxConverterRegistrar concat_reg(OnnxConverter("Concat")
    .converts([](OnnxContext& c) {
          const int64_t rank = static_cast<int64_t>(c.shape(0).size());
          const int64_t axis = normalize_axis(c.attr_int("axis"), rank, "Concat");
          std::vector<std::string> in;
          for (int i = 0; i < c.num_inputs(); ++i) {
            if (!c.has_input(i)) continue;
            const Shape s = c.shape(i);
            if (s.size() == static_cast<std::size_t>(rank) && s[static_cast<std::size_t>(axis)] == 0) continue;  // empty
            in.push_back(c.input(i));
          }
          if (in.empty()) c.fail("every input is empty");
          if (in.size() == 1) return c.set_output(0, c.add_node("identity", {}, in));
          Attrs a;
          a.set("dim", axis);
          a.set("num_args", static_cast<int64_t>(in.size()));
          c.set_output(0, c.add_node("Concat", a, in));
        })
    .handles({"axis"}));

const OnnxConverterRegistrar identity_reg(OnnxConverter("Identity")
    .converts([](OnnxContext& c) { c.set_output(0, c.input(0), c.dtype(0)); }));

const OnnxConverterRegistrar dropout_reg(OnnxConverter("Dropout")
    .converts([](OnnxContext& c) {
          if (c.has_output(1)) c.fail("the mask output is not supported");
          if (c.has_input(2) && c.constant(2).at_int(0) != 0) c.fail("training_mode = true is not supported");
          c.set_output(0, c.input(0));
        })
    .handles({"ratio", "is_test", "seed"})
    .ignores({"consumed_inputs"}));

// Squeeze/Unsqueeze: axes as an attribute before opset 13, an input after.
std::vector<int64_t> axes_of(OnnxContext& c) {
  if (c.opset() < 13) return c.attr_ints("axes", {});
  return c.has_input(1) ? c.constant(1).as_ints() : std::vector<int64_t>{};
}

Shape squeezed(OnnxContext& c, const Shape& in) {
  const auto axes = axes_of(c);
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (axes.empty()) {
    for (std::size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t k = normalize_axis(a, rank, "Squeeze");
      if (in[static_cast<std::size_t>(k)] != 1) c.fail("axis " + std::to_string(a) + " of " + shape_str(in) + " is not 1");
      drop[static_cast<std::size_t>(k)] = true;
    }
  }
  Shape out;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Shape unsqueezed(OnnxContext& c, const Shape& in) {
  const auto axes = axes_of(c);
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> add(static_cast<std::size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t k = normalize_axis(a, rank, "Unsqueeze");
    if (add[static_cast<std::size_t>(k)]) c.fail("axes " + int_list(axes) + " repeat an axis");
    add[static_cast<std::size_t>(k)] = true;
  }
  Shape out;
  std::size_t j = 0;
  for (std::size_t i = 0; i < add.size(); ++i) out.push_back(add[i] ? 1 : in[j++]);
  return out;
}

const OnnxConverterRegistrar squeeze_reg(OnnxConverter("Squeeze")
    .converts([](OnnxContext& c) { c.set_output(0, reshape(c, c.input(0), squeezed(c, c.shape(0)))); })
    .handles({"axes"}));

const OnnxConverterRegistrar unsqueeze_reg(OnnxConverter("Unsqueeze")
    .converts([](OnnxContext& c) { c.set_output(0, reshape(c, c.input(0), unsqueezed(c, c.shape(0)))); })
    .handles({"axes"}));

// Softmax/LogSoftmax: before opset 13 the input is flattened to 2-D at `axis`
// (default 1) and normalized over the second dimension; from 13 over one axis
// (default -1).
void softmax(const char* onnx_op, const char* op) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op)
    .converts([op = std::string(op)](OnnxContext& c) {
            const Shape x = c.shape(0);
            const int64_t rank = static_cast<int64_t>(x.size());
            if (c.opset() >= 13) {
              const int64_t axis = normalize_axis(c.attr_int("axis", -1), rank, c.op_type());
              return c.set_output(0, c.add_node(op, attrs_of("axis", axis), {c.input(0)}));
            }
            const int64_t axis = normalize_axis(c.attr_int("axis", 1), std::max<int64_t>(rank, 1), c.op_type());
            if (axis == rank - 1) return c.set_output(0, c.add_node(op, attrs_of("axis", int64_t{-1}), {c.input(0)}));
            int64_t a = 1, b = 1;
            for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= x[static_cast<std::size_t>(i)];
            const std::string flat = reshape(c, c.input(0), {a, b}, "flatten");
            const std::string s = c.add_node(op, attrs_of("axis", int64_t{-1}), {flat}, "softmax");
            c.set_output(0, reshape(c, s, x, "unflatten"));
          })
    .handles({"axis"}));
}

const int softmax_regs = [] {
  softmax("Softmax", "softmax");
  softmax("LogSoftmax", "log_softmax");
  return 0;
}();

// ---- matrix products ----------------------------------------------------------

// Gemm: Y = alpha * A' B' + beta * C. A constant B becomes FullyConnected's
// weight (N, K), pre-transposed and scaled by alpha at import; a constant C
// that is a row vector becomes its bias, scaled by beta.
const OnnxConverterRegistrar gemm_reg(OnnxConverter("Gemm")
    .converts([](OnnxContext& c) {
          const double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
          const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
          const Shape sa = c.shape(0), sb = c.shape(1);
          if (sa.size() != 2 || sb.size() != 2) c.fail("A " + shape_str(sa) + " and B " + shape_str(sb) + " must be 2-D");
          const int64_t m = ta ? sa[1] : sa[0], k = ta ? sa[0] : sa[1];
          const int64_t kb = tb ? sb[1] : sb[0], n = tb ? sb[0] : sb[1];
          if (k != kb) c.fail("A " + shape_str(sa) + " and B " + shape_str(sb) + " do not multiply (transA " + std::to_string(ta) + ", transB " + std::to_string(tb) + ")");
          std::string a = c.input(0);
          if (ta) a = c.add_node("transpose", attrs_of("axes", std::vector<int64_t>{1, 0}), {a}, "transA");
          const bool has_c = c.has_input(2) && beta != 0.0;
          Shape sc = has_c ? c.shape(2) : Shape{};
          if (has_c) onnx_util::broadcast_shapes(sc, {m, n}, c.where() + ": C");
          if (has_c && onnx_util::broadcast_shapes(sc, {m, n}, c.where()) != Shape{m, n})
            c.fail("C " + shape_str(sc) + " does not broadcast to (" + std::to_string(m) + ", " + std::to_string(n) + ")");
          // C as a bias: a constant broadcasting along rows.
          const bool c_is_bias = has_c && c.is_constant(2) && (sc.empty() || sc.back() == n || sc.back() == 1) &&
                                 (sc.size() < 2 || sc[0] == 1);
          std::string y;
          // A dequantized B and C (a QDQ model's) keep their integers for fold_qdq.
          const bool qdq_b = c.is_constant(1) && c.constant(1).dequantized && tb && alpha == 1.0;
          const bool qdq_c = c_is_bias && c.constant(2).dequantized && beta == 1.0 && sc == Shape{n};
          if (qdq_b) {
            Attrs fa;
            fa.set("num_hidden", n);
            std::vector<std::string> in = {a, c.input(1)};
            if (c_is_bias) {
              if (qdq_c) {
                in.push_back(c.input(2));
              } else {
                const OnnxConst& cc = c.constant(2);
                std::vector<float> bias(static_cast<std::size_t>(n));
                for (int64_t j = 0; j < n; ++j)
                  bias[static_cast<std::size_t>(j)] = static_cast<float>(beta * cc.at_double(cc.size() == 1 ? 0 : j));
                in.push_back(c.add_constant({n}, bias, "bias"));
              }
            } else {
              fa.set("no_bias", true);
            }
            y = c.add_node("FullyConnected", fa, in);
          } else if (c.is_constant(1)) {
            const OnnxConst& bc = c.constant(1);
            std::vector<float> w(static_cast<std::size_t>(n * k));
            for (int64_t j = 0; j < n; ++j)
              for (int64_t q = 0; q < k; ++q)
                w[static_cast<std::size_t>(j * k + q)] =
                    static_cast<float>(alpha * bc.at_double(tb ? j * k + q : q * n + j));
            const std::string wv = c.add_constant({n, k}, w, "weight");
            Attrs fa;
            fa.set("num_hidden", n);
            std::vector<std::string> in = {a, wv};
            if (c_is_bias) {
              const OnnxConst& cc = c.constant(2);
              std::vector<float> bias(static_cast<std::size_t>(n));
              for (int64_t j = 0; j < n; ++j)
                bias[static_cast<std::size_t>(j)] = static_cast<float>(beta * cc.at_double(cc.size() == 1 ? 0 : j));
              in.push_back(c.add_constant({n}, bias, "bias"));
            } else {
              fa.set("no_bias", true);
            }
            y = c.add_node("FullyConnected", fa, in);
          } else {
            Attrs da;
            da.set("transpose_b", tb);
            y = c.add_node("dot", da, {a, c.input(1)}, "dot");
            if (alpha != 1.0) y = c.add_node("_mul_scalar", attrs_of("scalar", alpha), {y}, "alpha");
          }
          if (has_c && !(c_is_bias && c.is_constant(1))) {
            std::string cv = c.input(2);
            if (beta != 1.0) cv = c.add_node("_mul_scalar", attrs_of("scalar", beta), {cv}, "beta");
            y = c.add_node("broadcast_add", {}, {y, cv}, "add_c");
          }
          c.set_output(0, y);
        })
    .handles({"alpha", "beta", "transA", "transB"})
    .ignores({"broadcast"}));

// MatMul (numpy matmul): a constant 2-D B makes FullyConnected (flatten =
// false, weight B^T) over any leading axes of A; otherwise dot (2-D) or
// batch_dot over equal batch axes.
const OnnxConverterRegistrar matmul_reg(OnnxConverter("MatMul")
    .converts([](OnnxContext& c) {
          const Shape sa = c.shape(0), sb = c.shape(1);
          if (sa.size() < 2 || sb.size() < 2) return onnx_matmul_broadcast(c);
          const int64_t k = sa.back(), kb = sb[sb.size() - 2], n = sb.back();
          if (k != kb) c.fail("A " + shape_str(sa) + " and B " + shape_str(sb) + " do not multiply");
          if (sb.size() == 2 && c.is_constant(1) && c.constant(1).dequantized && !c.at_import()) {
            // A QDQ model's weight: B^T as integers and a dequantize, for fold_qdq.
            const OnnxConst::Dequantized& d = *c.constant(1).dequantized;
            std::vector<int64_t> wt(static_cast<std::size_t>(n * k));
            for (int64_t j = 0; j < n; ++j)
              for (int64_t q = 0; q < k; ++q) wt[static_cast<std::size_t>(j * k + q)] = d.q.at_int(q * n + j);
            Quantization wq = d.quantization;
            if (wq.axis) wq.axis = 1 - *wq.axis;
            const std::string qw =
                c.add_quantized_constant(OnnxConst::of_ints({n, k}, std::move(wt), d.q.dtype), wq, "weight_q");
            Attrs fa;
            fa.set("num_hidden", n);
            fa.set("no_bias", true);
            fa.set("flatten", false);
            const std::string w = c.add_node("dequantize", {}, {qw}, "weight");
            return c.set_output(0, c.add_node("FullyConnected", fa, {c.input(0), w}));
          }
          if (sb.size() == 2 && c.is_constant(1)) {
            const OnnxConst& b = c.constant(1);
            std::vector<float> w(static_cast<std::size_t>(n * k));
            for (int64_t j = 0; j < n; ++j)
              for (int64_t q = 0; q < k; ++q) w[static_cast<std::size_t>(j * k + q)] = static_cast<float>(b.at_double(q * n + j));
            Attrs fa;
            fa.set("num_hidden", n);
            fa.set("no_bias", true);
            fa.set("flatten", false);
            return c.set_output(0, c.add_node("FullyConnected", fa, {c.input(0), c.add_constant({n, k}, w, "weight")}));
          }
          if (sa.size() == 2 && sb.size() == 2) return c.set_output(0, c.add_node("dot", {}, {c.input(0), c.input(1)}));
          if (sa.size() != sb.size() || !std::equal(sa.begin(), sa.end() - 2, sb.begin()))
            return onnx_matmul_broadcast(c);
          int64_t batch = 1;
          for (std::size_t i = 0; i + 2 < sa.size(); ++i) batch *= sa[i];
          const int64_t m = sa[sa.size() - 2];
          const std::string a3 = reshape(c, c.input(0), {batch, m, k}, "a3");
          const std::string b3 = reshape(c, c.input(1), {batch, k, n}, "b3");
          Shape out(sa.begin(), sa.end() - 1);
          out.push_back(n);
          c.set_output(0, reshape(c, c.add_node("batch_dot", {}, {a3, b3}, "batch_dot"), out, "out"));
        }));

}  // namespace
}  // namespace hybgen
