// The vector requantizations of templates/kernels/quantized_simd.inc
// (hg_requantize16_bytes with hg_requant16_lanes and hg_requant16_uniform on AVX-512, hg_requantize8_lanes
// on AVX2, and hg_requantize_row, which runs them over a row) against the
// scalar hg_requantize_clamp, bit for bit: a C++11 driver includes the
// kernels inside a namespace (as generated code does), is built with the
// strict flags for each x86 target this host runs, and requantizes the
// edges of int32 (0, +-1, INT32_MIN and MAX, the products that sit on a
// rounding tie) and seeded values, each lane with its own multiplier in
// [2^30, 2^31) or 0 and its own shift in [-31, 7], into int8 ranges with
// zero points and relu-like clamps.
#include <gtest/gtest.h>

#include "kernel_driver_support.h"

namespace hybgen {
namespace {

const char* kRequantizeDriver = R"DRV(namespace {

using namespace model::kernels;

std::uint64_t g_state = 88172645463325252ull;
std::uint32_t next() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return static_cast<std::uint32_t>(g_state >> 16);
}

std::int32_t random_sum() {
  static const std::int32_t edges[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1,
                                       1 << 30, -(1 << 30), 1 << 16, -(1 << 16), 64, -64, 96, -96};
  const std::uint32_t pick = next() % 4;
  if (pick == 0) return edges[next() % (sizeof edges / sizeof edges[0])];
  if (pick == 1) return static_cast<std::int32_t>(next());                          // any int32
  return static_cast<std::int32_t>(next()) >> static_cast<int>(8 + next() % 20);  // sums of a kernel's size
}

std::int32_t random_multiplier() {
  if (next() % 16 == 0) return next() % 2 ? 0 : (1 << 30);
  return static_cast<std::int32_t>((1u << 30) + next() % (1u << 30));
}

int random_shift() { return static_cast<int>(next() % 39) - 31; }

}  // namespace

int main() {
  long failures = 0, checked = 0;
  for (int round = 0; round < 4000; ++round) {
    HgRequantization rq;
    rq.out_zero_point = static_cast<std::int32_t>(next() % 64) - 32;
    rq.low = next() % 2 ? -128 : rq.out_zero_point;  // a relu folded into the clamp, or not
    rq.high = next() % 4 ? 127 : 100;
    rq.in_zero_point = 0;
    std::int32_t x[16], multiplier[16], shift[16];
    for (int i = 0; i < 16; ++i) {
      x[i] = random_sum();
      multiplier[i] = random_multiplier();
      shift[i] = random_shift();
    }
    std::int32_t got[16], left[16], right[16];
    for (int i = 0; i < 16; ++i) {
      left[i] = shift[i] > 0 ? shift[i] : 0;
      right[i] = shift[i] > 0 ? 0 : -shift[i];
    }
    __m128i bytes = _mm_setzero_si128();
    int lanes = 0;
#if defined(HG_SIMD_AVX512)
    lanes = 16;
    bytes = hg_requantize16_bytes(
        _mm512_loadu_si512(x),
        hg_requant16_lanes(_mm512_loadu_si512(multiplier), _mm512_loadu_si512(left), _mm512_loadu_si512(right)), rq);
#elif defined(HG_SIMD_AVX2)
    lanes = 8;
    bytes = hg_requantize8_lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)),
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(multiplier)),
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(left)),
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(right)), rq);
#endif
    std::int8_t b[16];
    std::memcpy(b, &bytes, 16);
    for (int i = 0; i < lanes; ++i) got[i] = b[i];
    for (int i = 0; i < lanes; ++i) {
      const std::int32_t want = hg_requantize_clamp(x[i], multiplier[i], shift[i], rq.out_zero_point, rq.low, rq.high);
      ++checked;
      if (got[i] != want && ++failures <= 10)
        std::printf("lanes: x %d multiplier %d shift %d: %d, want %d\n", x[i], multiplier[i], shift[i], got[i], want);
    }
    // A row of one multiplier and shift, of a length that leaves a tail.
    const long n = 1 + static_cast<long>(next() % 70);
    std::vector<std::int32_t> row(n);
    for (long i = 0; i < n; ++i) row[i] = random_sum();
    const std::int32_t offset = static_cast<std::int32_t>(next() % 2001) - 1000;
    std::vector<std::int8_t> out(n);
    hg_requantize_row(row.data(), n, offset, multiplier[0], shift[0], rq, out.data());
    for (long i = 0; i < n; ++i) {
      const std::int32_t want =
          hg_requantize_clamp(row[i] + offset, multiplier[0], shift[0], rq.out_zero_point, rq.low, rq.high);
      ++checked;
      if (out[i] != want && ++failures <= 10)
        std::printf("row: x %d multiplier %d shift %d: %d, want %d\n", row[i] + offset, multiplier[0], shift[0],
                    out[i], want);
    }
  }
  std::printf("RESULT failures %ld of %ld\n", failures, checked);
  return failures == 0 ? 0 : 1;
}
)DRV";

TEST(RequantizeKernels, VectorFormsEqualTheScalarOnEveryX86Path) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the vector forms checked here are x86's";
#else
  std::vector<std::pair<std::string, std::string> > targets;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    targets.push_back({"x86-64-v3", "-march=x86-64-v3 -DHG_TARGET_X86_64_V3=1"});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    targets.push_back({"x86-64-v4", "-march=x86-64-v4 -DHG_TARGET_X86_64_V4=1"});
  if (targets.empty()) GTEST_SKIP() << "this host runs neither AVX2 nor AVX-512";
  testing::check_kernel_driver("hybgen-requantize-test", {"epilogue", "simd", "quantized", "quantized_simd"},
                               kRequantizeDriver, targets, "-O2");
#endif
}

}  // namespace
}  // namespace hybgen
