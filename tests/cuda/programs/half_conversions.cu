// The layer's __half and __nv_bfloat16 conversions (what generated code
// stores under --precision fp16/bf16) against the generator's (gen/ir/half.h,
// which converts weights) and against rounding computed in double: every
// float16 and bfloat16 bit pattern converts to float exactly and back to
// itself, and floats across both types' ranges (normal, subnormal, ties,
// overflow) round to nearest even.
#include <cmath>
#include <cstdint>
#include <random>

#include "hg_test.cuh"
#include "ir/half.h"

namespace {

// The nearest value of a format with `bits` significant bits, exponents down
// to `min_exponent` (subnormals below) and largest finite `max`, ties to even:
// round-to-nearest in double, whose 53 bits hold every case here exactly.
double nearest(double x, int bits, int min_exponent, double max) {
  if (x == 0) return x;
  const double a = std::fabs(x);
  int e = std::ilogb(a);
  if (e < min_exponent) e = min_exponent;
  const double unit = std::ldexp(1.0, e - (bits - 1));
  double r = std::nearbyint(a / unit) * unit;                             // the default mode: ties to even
  const double overflow = max + std::ldexp(1.0, std::ilogb(max) - bits);  // halfway past max
  if (a >= overflow) r = INFINITY;
  return std::copysign(r, x);
}

bool same(float a, float b) { return std::isnan(a) ? std::isnan(b) : a == b && std::signbit(a) == std::signbit(b); }

}  // namespace

int main() {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const auto b = static_cast<unsigned short>(bits);
    const float h = __half2float(__ushort_as_half(b));
    CHECK(same(h, hybgen::half_to_float(b)));
    if (!std::isnan(h)) CHECK(__half_as_ushort(__float2half_rn(h)) == b);
    const float bf = __bfloat162float(__ushort_as_bfloat16(b));
    CHECK(same(bf, hybgen::bfloat16_to_float(b)));
    if (!std::isnan(bf)) CHECK(__bfloat16_as_ushort(__float2bfloat16_rn(bf)) == b);
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = any_bits(rng);
    if (i % 4 == 1) u = (u & 0x80000000u) | (0x33000000u + u % 0x14800000u);  // near float16's range
    if (i % 4 == 2) u = (u & 0xffffe000u) | 0x1000u;                          // float16 ties
    if (i % 4 == 3) u = (u & 0xffff0000u) | 0x8000u;                          // bfloat16 ties
    float f;
    memcpy(&f, &u, 4);
    const unsigned short h = __half_as_ushort(__float2half_rn(f));
    const unsigned short bf = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    CHECK(h == hybgen::float_to_half(f));
    CHECK(bf == hybgen::float_to_bfloat16(f));
    if (std::isnan(f)) {
      CHECK(std::isnan(__half2float(__ushort_as_half(h))) && std::isnan(__bfloat162float(__ushort_as_bfloat16(bf))));
      continue;
    }
    CHECK(same(__half2float(__ushort_as_half(h)), static_cast<float>(nearest(f, 11, -14, 65504.0))));
    CHECK(same(__bfloat162float(__ushort_as_bfloat16(bf)),
               static_cast<float>(nearest(f, 8, -126, 3.3895313892515355e38))));
  }
  printf("OK\n");
  return 0;
}
