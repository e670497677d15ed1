// Binary arithmetic with numpy broadcasting: broadcast_add/sub/mul/div/
// maximum/minimum/power/hypot, the comparisons and the logical ops (1.0f
// where true, 0.0f where not, as MXNet's give them for float tensors).
// MXNet's same-shape spellings (elemwise_add, _plus, _greater, ...) are
// aliases: same-shape inputs are the broadcast case with nothing to
// broadcast.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

struct BinaryOp {
  const char* name;
  std::vector<std::string> aliases;
  const char* expression;  // C++ of the elements {a} and {b}, as the kernel prints it
  float (*apply)(float, float);
  bool residual_epilogue = false;  // OpKernel::residual_epilogue
  bool positive_lhs = false;       // random test data of lhs in (0.1, 2): a power's base
  // The op on integer (and bool) operands, computed in int64 and stored
  // back into the operands' type; nullptr: float32 only.
  int64_t (*apply_int)(int64_t, int64_t) = nullptr;
  // On quantized int8/uint8 operands: TFLite's ADD or MUL into the output's
  // own scale (attributes out_scale, out_zero_point); kNone: not computed on them.
  enum class Quantized { kNone, kAdd, kMul } quantized = Quantized::kNone;
};

std::vector<TensorType> binary_infer(const Attrs& attrs, const std::vector<TensorType>& in, bool quantizable) {
  if (in[0].dtype != in[1].dtype)
    throw Error("lhs is " + dtype_name(in[0].dtype) + " but rhs is " + dtype_name(in[1].dtype));
  const Shape shape = broadcast_shapes(in[0].shape, in[1].shape);
  if (in[0].quantization.empty() != in[1].quantization.empty())
    throw Error("one operand is quantized and the other not (" + in[0].str() + ", " + in[1].str() + ")");
  if (!in[0].quantization.empty()) {
    if (!quantizable) throw Error("this op is computed in float; quantized operands need a dequantize first");
    for (const TensorType& t : in)
      if ((t.dtype != DType::kInt8 && t.dtype != DType::kUInt8) || t.quantization.axis)
        throw Error("quantized operands must be int8 or uint8 per tensor, not " + t.str());
  }
  if (!quantizable) return {TensorType{shape, in[0].dtype}};
  return {quantized_output(attrs, in[0], shape)};
}

template <class T, class F>
void broadcast_apply(const KernelIO& io, F apply);

// TFLite's quantized ADD and MUL on each pair of elements.
void quantized_binary_reference(const KernelIO& io, BinaryOp::Quantized kind) {
  const TensorType &a = io.in_types[0], &b = io.in_types[1], &out = io.out_types[0];
  const auto range = int32_range(out.dtype);
  const QuantizedAdd add = kind == BinaryOp::Quantized::kAdd
                               ? quantized_add_params(a.quantization, b.quantization, out.quantization, range)
                               : QuantizedAdd{};
  const Requantization mul = kind == BinaryOp::Quantized::kMul
                                 ? requantization(static_cast<double>(a.quantization.scale[0]) *
                                                  b.quantization.scale[0] / out.quantization.scale[0])
                                 : Requantization{};
  const auto za = static_cast<std::int32_t>(a.quantization.zero_point[0]),
             zb = static_cast<std::int32_t>(b.quantization.zero_point[0]),
             zo = static_cast<std::int32_t>(out.quantization.zero_point[0]);
  with_value_type(a.dtype, [&](auto value) {
    using T = decltype(value);
    broadcast_apply<T>(io, [&](T x, T y) {
      if (kind == BinaryOp::Quantized::kAdd) return static_cast<T>(quantized_add(x, y, add));
      return static_cast<T>(requantize_clamp((x - za) * (y - zb), mul, zo, range.first, range.second));
    });
  });
}

// The same, as an expression for generated code.
std::string quantized_binary_scalar(const ScalarSite& s, BinaryOp::Quantized kind) {
  const TensorType &a = s.in_types[0], &b = s.in_types[1];
  const Quantization& out = s.out_type.quantization;
  const auto range = int32_range(s.out_type.dtype);
  const std::string cast = "static_cast<" + dtype_c_type(s.out_type.dtype) + ">(";
  if (kind == BinaryOp::Quantized::kAdd)
    return cast + "hg_quantized_add(" + s.in[0] + ", " + s.in[1] + ", " +
           quantized_add_literal(quantized_add_params(a.quantization, b.quantization, out, range)) + "))";
  const Requantization mul =
      requantization(static_cast<double>(a.quantization.scale[0]) * b.quantization.scale[0] / out.scale[0]);
  return cast + "hg_quantized_mul(" + s.in[0] + ", " + int_str(a.quantization.zero_point[0]) + ", " + s.in[1] + ", " +
         int_str(b.quantization.zero_point[0]) + ", " + int_str(mul.multiplier) + ", " + int_str(mul.shift) + ", " +
         int_str(out.zero_point[0]) + ", " + int_str(range.first) + ", " + int_str(range.second) + "))";
}

template <class T, class F>
void broadcast_apply(const KernelIO& io, F apply) {
  const Shape& out = io.out_types[0].shape;
  const T* x = io.input<T>(0);
  const T* y = io.input<T>(1);
  T* z = io.output<T>(0);
  if (io.in_types[0].shape == out && io.in_types[1].shape == out) {  // nothing to broadcast: one flat loop
    const int64_t n = num_elements(out);
    for (int64_t i = 0; i < n; ++i) z[i] = apply(x[i], y[i]);
    return;
  }
  const auto sa = broadcast_strides(io.in_types[0].shape, out);
  const auto sb = broadcast_strides(io.in_types[1].shape, out);
  for_each_strided(out, sa, sb, [&](int64_t i, int64_t a, int64_t b) { z[i] = apply(x[a], y[b]); });
}

void binary_reference(const KernelIO& io, float (*apply)(float, float), int64_t (*apply_int)(int64_t, int64_t)) {
  if (io.in_types[0].dtype == DType::kFloat32) return broadcast_apply<float>(io, apply);
  with_value_type(io.in_types[0].dtype, [&](auto value) {
    using T = decltype(value);
    // Narrower types keep the low bits of the int64 result: two's-complement
    // wrapping, as ONNX Runtime's integer kernels give.
    broadcast_apply<T>(io, [&](T a, T b) {
      return static_cast<T>(apply_int(static_cast<int64_t>(a), static_cast<int64_t>(b)));
    });
  });
}

// Integer arithmetic that wraps instead of overflowing (unsigned in between).
int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }
int64_t int_add(int64_t a, int64_t b) { return wrap(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t int_sub(int64_t a, int64_t b) { return wrap(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t int_mul(int64_t a, int64_t b) { return wrap(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
// Truncates toward zero, as C++ and ONNX Runtime's integer Div.
int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) throw Error("integer division by zero");
  if (a == INT64_MIN && b == -1) return INT64_MIN;  // wraps
  return a / b;
}

std::vector<OpExample> binary_examples() {
  return {{Attrs{}, {{2, 3}, {2, 3}}},       {Attrs{}, {{2, 3, 4}, {4}}},   {Attrs{}, {{3, 1, 5}, {1, 4, 1}}},
          {Attrs{}, {{1}, {6, 2}}},          {Attrs{}, {{5, 1}, {5, 7}}}};
}

float truth(bool c) { return c ? 1.0f : 0.0f; }

void register_binary(const BinaryOp& op) {
  OpDef d;
  d.name = op.name;
  d.aliases = op.aliases;
  d.summary = std::string("elementwise ") + op.expression + " with numpy broadcasting";
  d.input_names = {"lhs", "rhs"};
  d.min_inputs = d.max_inputs = 2;
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  const BinaryOp::Quantized quantized = op.quantized;
  const bool quantizable = quantized != BinaryOp::Quantized::kNone;
  if (quantizable) d.attrs = with_output_quantization({});
  d.infer = [quantizable](const Attrs& a, const std::vector<TensorType>& in) {
    return binary_infer(a, in, quantizable);
  };
  auto apply = op.apply;
  auto apply_int = op.apply_int;
  d.reference = [apply, apply_int, quantized](const KernelIO& io) {
    if (!io.in_types[0].quantization.empty()) return quantized_binary_reference(io, quantized);
    binary_reference(io, apply, apply_int);
  };
  if (apply_int) d.reference_dtypes = float32_and_integer_dtypes();
  if (quantizable) d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  const std::string expression = op.expression;
  d.emit_scalar = [expression, quantized](const ScalarSite& s) {
    if (!s.in_types[0].quantization.empty()) return quantized_binary_scalar(s, quantized);
    return fill_operands(expression, {{"{a}", s.in[0]}, {"{b}", s.in[1]}});
  };
  if (op.residual_epilogue) {
    OpKernel cpp;
    cpp.residual_epilogue = true;
    register_kernel(Backend::kCpp, op.name, std::move(cpp));
  }
  if (op.positive_lhs) d.input_ranges = {positive_input(0)};
  d.examples = binary_examples();
  if (quantizable) {
    // Quantized: different scales and zero points, broadcast, uint8, an output scale below both inputs'.
    d.examples.push_back(quantized_example(
        with_output_quantization(Attrs{}, 0.07, 5),
        {quantized_data({2, 17}, DType::kInt8, 0.05f, -3), quantized_data({2, 17}, DType::kInt8, 0.03f, 10)}));
    d.examples.push_back(quantized_example(
        with_output_quantization(Attrs{}, 0.02, -100),
        {quantized_data({3, 1, 5}, DType::kInt8, 0.04f, 0), quantized_data({4, 1}, DType::kInt8, 0.06f, -20)}));
    d.examples.push_back(quantized_example(
        with_output_quantization(Attrs{}, 0.1, 128),
        {quantized_data({5, 3}, DType::kUInt8, 0.02f, 128), quantized_data({5, 3}, DType::kUInt8, 0.05f, 90)}));
  }
  OpRegistrar{std::move(d)};
}

const bool registered = [] {
  const BinaryOp ops[] = {
      {"broadcast_add",
       {"elemwise_add", "broadcast_plus", "_plus", "_add", "_Plus"},
       "{a} + {b}",
       [](float a, float b) { return a + b; },
       true,
       false,
       int_add,
       BinaryOp::Quantized::kAdd},
      {"broadcast_sub",
       {"elemwise_sub", "broadcast_minus", "_minus", "_sub", "_Minus"},
       "{a} - {b}",
       [](float a, float b) { return a - b; },
       false,
       false,
       int_sub},
      {"broadcast_mul",
       {"elemwise_mul", "_mul", "_Mul"},
       "{a} * {b}",
       [](float a, float b) { return a * b; },
       false,
       false,
       int_mul,
       BinaryOp::Quantized::kMul},
      {"broadcast_div",
       {"elemwise_div", "_div", "_Div"},
       "{a} / {b}",
       [](float a, float b) { return a / b; },
       false,
       false,
       int_div},
      {"broadcast_maximum",
       {"_maximum", "_Maximum"},
       "{a} > {b} ? {a} : {b}",
       [](float a, float b) { return a > b ? a : b; },
       false,
       false,
       [](int64_t a, int64_t b) { return a > b ? a : b; }},
      {"broadcast_minimum",
       {"_minimum", "_Minimum"},
       "{a} < {b} ? {a} : {b}",
       [](float a, float b) { return a < b ? a : b; },
       false,
       false,
       [](int64_t a, int64_t b) { return a < b ? a : b; }},
      {"broadcast_power",
       {"_power", "_Power"},
       "std::pow({a}, {b})",
       [](float a, float b) { return std::pow(a, b); },
       false,
       true},
      {"broadcast_hypot",
       {"_hypot", "_Hypot"},
       "std::hypot({a}, {b})",
       [](float a, float b) { return std::hypot(a, b); }},
      {"broadcast_equal",
       {"_equal", "_Equal"},
       "{a} == {b} ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a == b); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a == b; }},
      {"broadcast_not_equal",
       {"_not_equal", "_Not_Equal"},
       "{a} != {b} ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a != b); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a != b; }},
      {"broadcast_greater",
       {"_greater", "_Greater"},
       "{a} > {b} ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a > b); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a > b; }},
      {"broadcast_greater_equal",
       {"_greater_equal", "_Greater_Equal"},
       "{a} >= {b} ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a >= b); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a >= b; }},
      {"broadcast_lesser",
       {"_lesser", "_Lesser"},
       "{a} < {b} ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a < b); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a < b; }},
      {"broadcast_lesser_equal",
       {"_lesser_equal", "_Lesser_Equal"},
       "{a} <= {b} ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a <= b); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a <= b; }},
      {"broadcast_logical_and",
       {"_logical_and", "_Logical_And"},
       "{a} != 0.0f && {b} != 0.0f ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a != 0.0f && b != 0.0f); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a != 0 && b != 0; }},
      {"broadcast_logical_or",
       {"_logical_or", "_Logical_Or"},
       "{a} != 0.0f || {b} != 0.0f ? 1.0f : 0.0f",
       [](float a, float b) { return truth(a != 0.0f || b != 0.0f); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return a != 0 || b != 0; }},
      {"broadcast_logical_xor",
       {"_logical_xor", "_Logical_Xor"},
       "({a} != 0.0f) != ({b} != 0.0f) ? 1.0f : 0.0f",
       [](float a, float b) { return truth((a != 0.0f) != (b != 0.0f)); },
       false,
       false,
       [](int64_t a, int64_t b) -> int64_t { return (a != 0) != (b != 0); }},
  };
  for (const auto& op : ops) register_binary(op);
  return true;
}();

}  // namespace
}  // namespace hybgen
