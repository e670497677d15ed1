// The integer arithmetic of docs/quantization.md (templates/kernels/
// quantized.inc through gen/ops/quantized.h) on values worked by hand from
// TFLite's and gemmlowp's definitions, and the checks of quantized operands.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

TEST(QuantizedArithmetic, MultipliersAreTfLitesQ31AndShift) {
  EXPECT_EQ(requantization(0.5).multiplier, 1 << 30);
  EXPECT_EQ(requantization(0.5).shift, 0);
  EXPECT_EQ(requantization(1.0).multiplier, 1 << 30);
  EXPECT_EQ(requantization(1.0).shift, 1);
  EXPECT_EQ(requantization(0.75).multiplier, 1610612736);  // round(0.75 * 2^31)
  EXPECT_EQ(requantization(0.001).shift, -9);              // 0.001 = 0.512 * 2^-9
  EXPECT_EQ(requantization(0.0).multiplier, 0);
  // A fraction that rounds up to 2^31 is halved, its exponent raised.
  const Requantization near_one = requantization(1.0 - 1e-12);
  EXPECT_EQ(near_one.multiplier, 1 << 30);
  EXPECT_EQ(near_one.shift, 1);
  EXPECT_EQ(requantization(1e-12).multiplier, 0);  // below 2^-32
  EXPECT_THROW(requantization(4e9), Error);
  EXPECT_THROW(requantization(-0.5), Error);
}

// gemmlowp's SaturatingRoundingDoublingHighMul as it is written: a nudge by
// sign and a division truncating toward zero.
std::int32_t gemmlowp_doubling_high_mul(std::int32_t a, std::int32_t b) {
  const std::int64_t ab = static_cast<std::int64_t>(a) * b;
  const std::int64_t nudge = ab >= 0 ? (std::int64_t{1} << 30) : (1 - (std::int64_t{1} << 30));
  return static_cast<std::int32_t>((ab + nudge) / (std::int64_t{1} << 31));
}

TEST(QuantizedArithmetic, DoublingHighMulIsGemmlowpsDivision) {
  // With shift 0, requantize is the doubling high multiply alone.
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::int32_t> any(INT32_MIN, INT32_MAX), small(-3000, 3000),
      multiplier(1 << 30, INT32_MAX);
  for (int i = 0; i < 200000; ++i) {
    const std::int32_t x = i % 2 ? any(rng) : small(rng), m = multiplier(rng);
    ASSERT_EQ(requantize(x, Requantization{m, 0}), gemmlowp_doubling_high_mul(x, m)) << x << " * " << m;
  }
  for (const std::int32_t x : {0, 1, -1, 2, -2, 3, -3, INT32_MIN, INT32_MAX, INT32_MIN + 1})
    for (const std::int32_t m : {1 << 30, (1 << 30) + 1, INT32_MAX})
      EXPECT_EQ(requantize(x, Requantization{m, 0}), gemmlowp_doubling_high_mul(x, m)) << x << " * " << m;
}

TEST(QuantizedArithmetic, RequantizeRoundsAsGemmlowp) {
  const Requantization half = requantization(0.5);
  EXPECT_EQ(requantize(100, half), 50);
  // The doubling high multiply rounds ties upward; the shift right rounds them away from zero.
  EXPECT_EQ(requantize(3, half), 2);
  EXPECT_EQ(requantize(-3, half), -1);
  const Requantization quarter = requantization(0.25);  // multiplier 2^30, shift -1
  EXPECT_EQ(quarter.shift, -1);
  EXPECT_EQ(requantize(6, quarter), 2);              // 1.5: the high multiply gives 3, the shift rounds 1.5 to 2
  EXPECT_EQ(requantize(-6, quarter), -2);            // -1.5: -3, then away from zero
  EXPECT_EQ(requantize(2, requantization(3.0)), 6);  // shift > 0: a left shift first
  EXPECT_EQ(requantize_clamp(1000, half, -10, -128, 127), 127);
  EXPECT_EQ(requantize_clamp(-1000, half, -10, -128, 127), -128);
  EXPECT_EQ(requantize_clamp(20, half, -10, -128, 127), 0);
}

TEST(QuantizedArithmetic, WideRequantizeIsRequantizePlusZeroPoint) {
  // Ties of both roundings (x * 2^(e+31) / m), the extremes and random sums.
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::int32_t> any(INT32_MIN, INT32_MAX), small(-100000, 100000),
      multiplier(1 << 30, INT32_MAX);
  long checked = 0;
  // Right shifts of 23 to 31 with the zero point added after the shift (requantize_wide_late_fits).
  for (int e = 2; e <= 31; ++e)
    for (const std::int32_t zero_point : {-256, -128, -1, 0, 3, 127, 255, 256}) {
      std::vector<std::int32_t> ms{1 << 30, (1 << 30) + 1, INT32_MAX};
      for (int i = 0; i < 8; ++i) ms.push_back(multiplier(rng));
      for (const std::int32_t m : ms) {
        const Requantization r{m, -e};
        ASSERT_EQ(requantize_wide_fits(r, zero_point), e <= 22);
        ASSERT_TRUE(requantize_wide_late_fits(r, zero_point));
        std::vector<std::int32_t> xs{0, 1, -1, 2, -2, INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1};
        for (int i = 0; i < 400; ++i) xs.push_back(i % 2 ? any(rng) : small(rng));
        for (int i = 0; i < 200; ++i) {
          // A sum near a tie of the rounding shift: x = (2 j + 1) 2^(e-1), a = x 2^31 / m (+ -1, 0, 1).
          const std::int64_t j = small(rng) % (std::int64_t{1} << (e < 30 ? 30 - e : 0));  // |x| < 2^31
          const std::int64_t x = (2 * j + 1) * (std::int64_t{1} << (e - 1));
          const std::int64_t a = x * (std::int64_t{1} << 31) / m;
          for (std::int64_t d = -1; d <= 1; ++d)
            if (a + d >= INT32_MIN && a + d <= INT32_MAX) xs.push_back(static_cast<std::int32_t>(a + d));
        }
        for (const std::int32_t a : xs) {
          ASSERT_EQ(requantize_wide(a, r, zero_point), requantize(a, r) + zero_point)
              << a << " * " << m << " >> " << e << " + " << zero_point;
          ++checked;
        }
      }
    }
  EXPECT_GT(checked, 1000000);
  // Outside its range: a left shift, a shift of -1, too far right, a multiplier of 0.
  EXPECT_FALSE(requantize_wide_fits(Requantization{1 << 30, 0}, 0));
  EXPECT_FALSE(requantize_wide_fits(Requantization{1 << 30, -1}, 0));
  EXPECT_FALSE(requantize_wide_fits(Requantization{1 << 30, -23}, 0));
  EXPECT_FALSE(requantize_wide_fits(Requantization{0, -5}, 0));
  EXPECT_FALSE(requantize_wide_late_fits(Requantization{1 << 30, 0}, 0));
  EXPECT_FALSE(requantize_wide_late_fits(Requantization{1 << 30, -1}, 0));
  EXPECT_FALSE(requantize_wide_late_fits(Requantization{1 << 30, -22}, 257));
  EXPECT_TRUE(requantize_wide_late_fits(Requantization{1 << 30, -23}, 1000));
  // A multiplier of 0 (requantization's answer below 2^-32): the zero point whatever the sum.
  for (const std::int32_t zero_point : {-256, -128, 0, 5, 256})
    for (const std::int32_t a : {0, 1, -1, 12345, -12345, INT32_MIN, INT32_MAX}) {
      ASSERT_TRUE(requantize_wide_late_fits(Requantization{}, zero_point));
      ASSERT_EQ(requantize_wide(a, Requantization{}, zero_point), requantize(a, Requantization{}) + zero_point);
    }
}

TEST(QuantizedArithmetic, QuantizeRoundsHalfAwayFromZeroAndSaturates) {
  EXPECT_EQ(quantize_float(0.25f, 0.5f, 0, -128, 127), 1);    // 0.5 -> 1
  EXPECT_EQ(quantize_float(-0.25f, 0.5f, 0, -128, 127), -1);  // -0.5 -> -1
  EXPECT_EQ(quantize_float(0.7f, 0.1f, 3, -128, 127), 10);
  EXPECT_EQ(quantize_float(1e30f, 0.1f, 3, -128, 127), 127);
  EXPECT_EQ(quantize_float(-1e30f, 0.1f, 3, -128, 127), -128);
  EXPECT_EQ(quantize_float(-1.0f, 0.1f, 3, 0, 255), 0);
  EXPECT_EQ(quantize_float(std::nanf(""), 0.1f, 3, -128, 127), 3);
  // The float below one half rounds down, however the sum inside rounds.
  EXPECT_EQ(quantize_float(0.49999997f, 1.0f, 0, -128, 127), 0);
  EXPECT_EQ(quantize_float(-0.49999997f, 1.0f, 0, -128, 127), 0);
  EXPECT_EQ(quantize_float(1.49999988f, 1.0f, 0, -128, 127), 1);
  EXPECT_EQ(quantize_float(2.5f, 1.0f, 0, -128, 127), 3);
  EXPECT_EQ(quantize_float(-2.5f, 1.0f, 0, -128, 127), -3);
  // Every float quotient near a half, n + 0.5 +- 1e-4 for n up to 130, either sign, rounds half away from zero.
  for (int n = 0; n <= 130; ++n)
    for (float r = n + 0.4999f; r <= n + 0.5001f; r = std::nextafter(r, 1000.0f)) {
      const double rounded = std::floor(double(r) + 0.5);
      ASSERT_EQ(quantize_float(r, 1.0f, 0, -128, 127), std::fmin(127, rounded)) << r;
      ASSERT_EQ(quantize_float(-r, 1.0f, 0, -128, 127), -std::fmin(128, rounded)) << -r;
    }
  EXPECT_FLOAT_EQ(dequantize_value(13, 3, 0.1f), 1.0f);
}

TEST(QuantizedArithmetic, AddMatchesItsRealSumWithinOneStep) {
  const Quantization a = Quantization::per_tensor(0.05f, -3), b = Quantization::per_tensor(0.03f, 10),
                     out = Quantization::per_tensor(0.07f, 5);
  const QuantizedAdd p = quantized_add_params(a, b, out, {-128, 127});
  for (int x = -128; x <= 127; x += 7)
    for (int y = -128; y <= 127; y += 11) {
      const double real = 0.05 * (x + 3) + 0.03 * (y - 10);
      const double want = std::fmin(127, std::fmax(-128, std::round(real / 0.07) + 5));
      EXPECT_NEAR(quantized_add(x, y, p), want, 1.0) << x << " + " << y;
    }
}

TEST(QuantizedOperands, ConvolutionAndDenseRefuseWhatTheSchemeDoesNot) {
  const OpDef& fc = find_op("FullyConnected");
  Attrs attrs;
  attrs.set("num_hidden", int64_t{4});
  attrs.set("out_scale", 0.1);
  const Attrs a = normalize_attrs(fc, attrs);
  const TensorType data = quantized_data({2, 8}, DType::kInt8, 0.05f, 1);
  const TensorType bias{{4}, DType::kInt32};
  EXPECT_EQ(fc.infer(a, {data, quantized_weight({4, 8}, 4), bias})[0].quantization, Quantization::per_tensor(0.1f, 0));
  // An asymmetric weight, a float weight, a float bias, a missing out_scale, quantization on float data.
  TensorType asymmetric = quantized_weight({4, 8}, 1);
  asymmetric.quantization.zero_point = {3};
  EXPECT_THROW(fc.infer(a, {data, asymmetric, bias}), Error);
  EXPECT_THROW(fc.infer(a, {data, TensorType{{4, 8}}, bias}), Error);
  EXPECT_THROW(fc.infer(a, {data, quantized_weight({4, 8}, 4), TensorType{{4}}}), Error);
  Attrs no_scale;
  no_scale.set("num_hidden", int64_t{4});
  EXPECT_THROW(fc.infer(normalize_attrs(fc, no_scale), {data, quantized_weight({4, 8}, 4), bias}), Error);
  EXPECT_THROW(fc.infer(a, {TensorType{{2, 8}}, TensorType{{4, 8}}, TensorType{{4}}}), Error);
  // A float node keeps no out_scale attribute after normalisation.
  EXPECT_FALSE(normalize_attrs(fc, no_scale).has("out_scale"));
}

TEST(QuantizedArithmetic, LookupTableIsQuantizeOfTheFunctionOfEachValue) {
  const TensorType in = quantized_data({3}, DType::kInt8, 0.05f, 10);
  const TensorType out = quantized_data({3}, DType::kInt8, 1.0f / 256, -128);
  const ElementFunction sigmoid = [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
  const std::vector<std::int32_t> table = lookup_table(in, out, sigmoid);
  ASSERT_EQ(table.size(), 256u);
  for (int q = -128; q <= 127; ++q)
    EXPECT_EQ(table[static_cast<std::size_t>(q + 128)],
              quantize_float(sigmoid(dequantize_value(q, 10, 0.05f)), 1.0f / 256, -128, -128, 127));
  EXPECT_EQ(table[10 + 128], 0);  // sigmoid(0) = 0.5 = 128 / 256, less 128
  EXPECT_EQ(table[255], 127);     // sigmoid(5.85) saturates
  EXPECT_EQ(table[0], -128);      // sigmoid(-6.9) = 0.001: 0.26 steps
  // uint8: 256 entries from 0.
  EXPECT_EQ(lookup_table(quantized_data({3}, DType::kUInt8, 0.1f, 0), quantized_data({3}, DType::kUInt8, 0.1f, 0),
                         [](float x) { return x; })[200],
            200);
}

TEST(QuantizedArithmetic, SoftmaxExpTableAndProbabilities) {
  const std::vector<std::int32_t> table = softmax_exp_table(0.1f, 1.0);
  ASSERT_EQ(table.size(), 256u);
  EXPECT_EQ(table[0], 1 << 24);  // exp(0)
  EXPECT_EQ(table[10], static_cast<std::int32_t>(std::round(std::exp(-static_cast<double>(0.1f) * 10) * (1 << 24))));
  for (std::size_t d = 1; d < table.size(); ++d) EXPECT_LE(table[d], table[d - 1]);
  EXPECT_EQ(softmax_q30(1 << 24, 1 << 24), 1 << 30);  // probability 1
  EXPECT_EQ(softmax_q30(1, 3), 357913941);            // 2^30 / 3 rounded
  EXPECT_EQ(softmax_q30(2, 3), 715827883);            // 2^31 / 3 rounded up
  // A Q30 probability into TFLite's softmax output scale (1/256, -128): 0.5 -> 0.
  const Requantization r = softmax_output_requantization(Quantization::per_tensor(1.0f / 256, -128));
  EXPECT_EQ(requantize_clamp(1 << 29, r, -128, -128, 127), 0);
  EXPECT_EQ(requantize_clamp(1 << 30, r, -128, -128, 127), 127);
}

TEST(QuantizedOperands, ConcatOfDifferentQuantizationsNeedsAnOutputScale) {
  const OpDef& concat = find_op("Concat");
  const TensorType a = quantized_data({2, 3}, DType::kInt8, 0.1f, 0), b = quantized_data({2, 1}, DType::kInt8, 0.2f, 5);
  Attrs dim;
  dim.set("dim", int64_t{1});
  EXPECT_EQ(concat.infer(normalize_attrs(concat, dim), {a, a})[0], quantized_data({2, 6}, DType::kInt8, 0.1f, 0));
  EXPECT_THROW(concat.infer(normalize_attrs(concat, dim), {a, b}), Error);
  EXPECT_EQ(concat.infer(normalize_attrs(concat, with_output_quantization(dim, 0.3, -1)), {a, b})[0],
            quantized_data({2, 4}, DType::kInt8, 0.3f, -1));
  EXPECT_THROW(concat.infer(normalize_attrs(concat, dim), {a, TensorType{{2, 1}, DType::kInt8}}), Error);
  EXPECT_THROW(concat.infer(normalize_attrs(concat, with_output_quantization(dim, 0.3, 0)),
                            {TensorType{{2, 3}}, TensorType{{2, 1}}}),
               Error);
}

TEST(QuantizedOperands, OpsWithoutAnIntegerFormRefuseQuantizedData) {
  const OpDef& act = find_op("Activation");
  Attrs sigmoid;
  sigmoid.set("act_type", std::string("sigmoid"));
  // A table needs the output's scale.
  EXPECT_THROW(act.infer(normalize_attrs(act, sigmoid), {quantized_data({3}, DType::kInt8, 0.1f, 0)}), Error);
  const OpDef& layer_norm = find_op("LayerNorm");
  EXPECT_THROW(layer_norm.infer(normalize_attrs(layer_norm, {}),
                                {quantized_data({2, 3}, DType::kInt8, 0.1f, 0), TensorType{{3}}, TensorType{{3}}}),
               Error);
  const OpDef& log_softmax = find_op("log_softmax");
  EXPECT_THROW(log_softmax.infer(normalize_attrs(log_softmax, {}), {quantized_data({3}, DType::kInt8, 0.1f, 0)}),
               Error);
  Attrs relu;
  relu.set("act_type", std::string("relu"));
  EXPECT_THROW(act.infer(normalize_attrs(act, relu), {quantized_weight({3, 2}, 3)}), Error);    // per axis
  EXPECT_THROW(act.infer(normalize_attrs(act, relu), {TensorType{{3}, DType::kInt8}}), Error);  // not quantized
  const OpDef& sub = find_op("broadcast_sub");
  EXPECT_THROW(sub.infer(normalize_attrs(sub, {}),
                         {quantized_data({3}, DType::kInt8, 0.1f, 0), quantized_data({3}, DType::kInt8, 0.1f, 0)}),
               Error);
}

}  // namespace
}  // namespace hybgen
