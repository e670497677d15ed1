// float16 and bfloat16 values as their bits, converted to and from float:
// for weight files stored in half precision and for --precision fp16/bf16,
// whose generated code stores halves. Rounding is to nearest, ties to even,
// with float16's subnormals and infinities (as CUDA's __float2half_rn and
// __float2bfloat16_rn); integer arithmetic, so no compiler flag changes it.
#pragma once

#include <cstdint>
#include <cstring>

#include "ir/tensor_type.h"

namespace hybgen {

inline float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t float_to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 31) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));  // inf or NaN
  if (exponent != 0) return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  return bits_to_float(sign | float_to_bits(static_cast<float>(mantissa) * 5.9604644775390625e-8f));  // * 2^-24
}

inline uint16_t float_to_half(float f) {
  const uint32_t u = float_to_bits(f), a = u & 0x7fffffffu;
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // 65520 and up: inf
  if (a >= 0x38800000u)                                                // normal: drop 13 mantissa bits, to nearest even
    return static_cast<uint16_t>(sign | ((a + 0x0fffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
  if (a <= 0x33000000u) return sign;  // at most 2^-25: zero (2^-25 ties to even)
  const uint32_t m = (a & 0x007fffffu) | 0x00800000u;
  const int shift = 126 - static_cast<int>(a >> 23);  // in units of 2^-24: m >> shift
  uint32_t q = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

inline float bfloat16_to_float(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bfloat16(float f) {
  const uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN stays NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// The bits of `value` in half dtype `dtype` (float16 or bfloat16), and back.
inline uint16_t float_to_half_bits(DType dtype, float value) {
  return dtype == DType::kFloat16 ? float_to_half(value) : float_to_bfloat16(value);
}
inline float half_bits_to_float(DType dtype, uint16_t bits) {
  return dtype == DType::kFloat16 ? half_to_float(bits) : bfloat16_to_float(bits);
}

}  // namespace hybgen
