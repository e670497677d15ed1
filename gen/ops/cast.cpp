// Cast (amp_cast): hybgen computes in float32, so Cast to float32 passes
// values through and Cast to float16 rounds them to float16's precision and
// range (ties to even) while keeping them as float32, which a following
// Cast back to float32 keeps: the pair gives MXNet's float16 round trip.
// Casts to other types are refused by name.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

float round_to_half(float x);  // also used by the tests

namespace {

bool to_half(const Attrs& a) {
  const std::string& t = a.get_string("dtype");
  if (t == "float16") return true;
  if (t == "float32") return false;
  throw Error("Cast to " + t + " is not supported: generated code computes in float32 (float16 only as rounding)");
}

}  // namespace

float round_to_half(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t sign = u & 0x80000000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return x;
  if (a >= 0x38800000u) {
    const uint32_t rounded = (a + 0x0fffu + ((a >> 13) & 1u)) & ~0x1fffu;
    const uint32_t r = sign | (rounded > 0x477fe000u ? 0x7f800000u : rounded);
    float y;
    std::memcpy(&y, &r, sizeof y);
    return y;
  }
  // Subnormal float16: the nearest multiple of 2^-24, ties to even.
  const double scaled = std::fabs(static_cast<double>(x)) * 16777216.0;
  double q = std::nearbyint(scaled);  // the default rounding mode: ties to even
  const double y = q / 16777216.0;
  return static_cast<float>(sign ? -y : y);
}

namespace {

const OpRegistrar reg([] {
  OpDef d;
  d.name = "Cast";
  d.aliases = {"cast", "amp_cast"};
  d.summary = "type conversion: float32 passes through, float16 rounds to float16 values";
  d.input_names = {"data"};
  d.attrs = {{"dtype", AttrKind::kString, std::nullopt, "the target type",
              {"float16", "float32", "float64", "bfloat16", "uint8", "int8", "int32", "int64", "bool"}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    to_half(a);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const bool half = to_half(io.attrs);
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) io.out[0][i] = half ? round_to_half(io.in[0][i]) : io.in[0][i];
  };
  d.emit_scalar = [](const Attrs& a, const std::vector<std::string>& in) {
    return to_half(a) ? "hg_round_half(" + in[0] + ")" : in[0];
  };
  d.scalar_kernels = {"half"};
  d.is_identity = [](const Attrs& a) { return !to_half(a); };
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs half, single;
  half.set("dtype", std::string("float16"));
  single.set("dtype", std::string("float32"));
  d.examples = {{half, {{3, 7}}}, {single, {{4}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
