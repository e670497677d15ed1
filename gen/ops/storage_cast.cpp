// _storage_cast: float values from one storage type to another (float32,
// float16, bfloat16), rounding to nearest even. The pass half_storage puts
// it where --precision fp16/bf16 values enter and leave half storage, so a
// model's inputs and outputs stay float32. Unlike Cast (whose float16 keeps
// float32 storage, as MXNet's round trip does), its output holds halves.
#include <string>

#include "ir/error.h"
#include "ir/half.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

bool is_storage_dtype(DType dtype) { return dtype == DType::kFloat32 || is_half_dtype(dtype); }

float load(DType dtype, const void* data, int64_t i) {
  if (is_half_dtype(dtype)) return half_bits_to_float(dtype, static_cast<const uint16_t*>(data)[i]);
  return static_cast<const float*>(data)[i];
}

void store(DType dtype, void* data, int64_t i, float v) {
  if (is_half_dtype(dtype))
    static_cast<uint16_t*>(data)[i] = float_to_half_bits(dtype, v);
  else
    static_cast<float*>(data)[i] = v;
}

const OpRegistrar storage_cast_op([] {
  OpDef d;
  d.name = "_storage_cast";
  d.summary = "float values to another storage type (float32, float16, bfloat16), rounded to nearest even";
  d.input_names = {"data"};
  d.attrs = {{"dtype", AttrKind::kString, std::nullopt, "the storage type", {"float32", "float16", "bfloat16"}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;  // the planner shares a buffer only between values of the same bytes
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (!is_storage_dtype(in[0].dtype) || !in[0].quantization.empty())
      throw Error("data is " + dtype_name(in[0].dtype) + "; expected float32, float16 or bfloat16 values");
    return std::vector<TensorType>{TensorType{in[0].shape, parse_dtype(a.get_string("dtype"))}};
  };
  d.reference = [](const KernelIO& io) {
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) store(io.out_types[0].dtype, io.out[0], i, load(io.in_types[0].dtype, io.in[0], i));
  };
  d.reference_dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  // A fused loop holds float16 and bfloat16 values as floats (loaded exactly,
  // rounded when stored), so the expression rounds to the output's type.
  d.scalar_dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  d.emit_scalar = [](const ScalarSite& s) {
    const std::string& to = s.attrs.get_string("dtype");
    if (to == "float16") return "hg_round_half(" + s.in[0] + ")";
    if (to == "bfloat16") return "hg_round_bfloat16(" + s.in[0] + ")";
    return s.in[0];
  };
  d.scalar_kernels = {"half"};
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  auto to = [](const std::string& dtype) {
    Attrs a;
    a.set("dtype", dtype);
    return a;
  };
  d.examples = {{to("float16"), {{3, 7}}},
                {to("bfloat16"), {{5, 9}}},
                {to("float32"), {{4, 6}}, {TensorType{{4, 6}, DType::kFloat16}}},
                {to("float32"), {{2, 10}}, {TensorType{{2, 10}, DType::kBFloat16}}},
                {to("bfloat16"), {{3, 5}}, {TensorType{{3, 5}, DType::kFloat16}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
