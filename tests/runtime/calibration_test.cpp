// Calibration (runtime-lite/calibration.h) and the int8 graph it leads to,
// run by the reference interpreter against the float one.
#include "runtime-lite/calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "graph_builders.h"
#include "ir/error.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {
namespace {

TEST(ValueStatistics, MinMaxAndPercentileTails) {
  ValueStatistics s;
  std::vector<float> x;
  for (int i = 0; i < 10000; ++i) x.push_back(static_cast<float>(i % 100) / 100.0f - 0.25f);  // [-0.25, 0.74]
  s.add(x.data(), static_cast<int64_t>(x.size()));
  const float outliers[] = {-50.0f, 40.0f};  // two in 10002: beyond the 99.99th percentile of each tail
  s.add(outliers, 2);
  EXPECT_EQ(s.count(), 10002);
  EXPECT_FLOAT_EQ(s.min_max().min, -50.0f);
  EXPECT_FLOAT_EQ(s.min_max().max, 40.0f);
  const ValueRange p = s.percentile(99.99);
  // The histogram re-binned to width 50 / 2048 after the outlier: edges within a bin or two.
  EXPECT_NEAR(p.max, 0.74f, 0.06f);
  EXPECT_NEAR(p.min, -0.25f, 0.06f);
  EXPECT_EQ(s.percentile(100.0).max, 40.0f);
  // KL: the lone outliers are clipped. The search starts at 128 bins (one
  // per level), which the outlier's coarse bins make about 5.9.
  const ValueRange e = s.entropy();
  EXPECT_GT(e.max, 0.74f);
  EXPECT_LT(e.max, 6.0f);
  EXPECT_LT(e.min, -0.25f);
  EXPECT_GT(e.min, -6.0f);
}

// An image: mostly background (exact zeros), ink at 1, its edges between. The zeros must not
// make the KL search clip the ink.
TEST(ValueStatistics, EntropyIgnoresTheSpikeAtZero) {
  std::vector<float> x(10000, 0.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> edge(0.0f, 1.0f);
  for (std::size_t i = 0; i < x.size(); i += 10) {
    x[i] = 1.0f;
    x[i + 1] = edge(rng);
  }
  ValueStatistics s;
  s.add(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_GT(s.entropy().max, 0.9f);
  EXPECT_EQ(s.entropy().min, 0.0f);
}

TEST(Interpreter, ObserverSeesEveryNodeOutput) {
  Interpreter interp(testing::conv_relu_dense());
  std::map<std::string, float> peak;
  interp.set_value_observer([&](const std::string& value, const TensorType& type, const void* data) {
    const auto* x = static_cast<const float*>(data);
    float m = 0;
    for (int64_t i = 0; i < type.num_elements(); ++i) m = std::max(m, std::fabs(x[i]));
    peak[value] = m;
  });
  const auto out = interp.run({{"data", Tensor::random_normal({1, 2, 6, 6}, 0, 1, 5)}});
  EXPECT_EQ(peak.size(), 3u);
  float m = 0;
  for (int64_t i = 0; i < out[0].size(); ++i) m = std::max(m, std::fabs(out[0].data()[i]));
  EXPECT_EQ(peak["dense"], m);
  EXPECT_GE(peak["relu"], 0.0f);

  Interpreter optimized(compile_graph(testing::conv_relu_dense()));
  EXPECT_THROW(optimized.set_value_observer([](const std::string&, const TensorType&, const void*) {}), Error);
}

TEST(Calibrator, RangesCoverEveryValueAndRefuseNaN) {
  const Graph g = prepare_for_quantization(testing::conv_relu_dense());
  Calibrator cal(g);
  for (uint64_t seed = 0; seed < 4; ++seed) cal.add_batch({{"data", Tensor::random_normal({1, 2, 6, 6}, 0, 1, seed)}});
  const auto r = cal.ranges(CalibrationMethod::kMinMax);
  ASSERT_EQ(r.size(), 4u);  // data, conv, relu, dense
  EXPECT_LT(r.at("data").min, 0.0f);
  EXPECT_EQ(r.at("relu").min, 0.0f);
  EXPECT_LE(r.at("conv").min, r.at("relu").min);

  Tensor bad = Tensor::random_normal({1, 2, 6, 6}, 0, 1, 9);
  bad.data()[3] = std::nanf("");
  try {
    cal.add_batch({{"data", bad}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_calibration_method("entropy"), CalibrationMethod::kEntropy);
  EXPECT_THROW(parse_calibration_method("kl"), Error);
}

// On the data it was calibrated on (no value beyond its range, so nothing
// saturates), the int8 graph agrees with the float one within a few steps
// of its output.
TEST(Calibrator, QuantizedGraphTracksTheFloatOne) {
  const Graph g = prepare_for_quantization(testing::conv_relu_dense());
  std::vector<std::map<std::string, Tensor>> batches;
  for (uint64_t seed = 0; seed < 16; ++seed)
    batches.push_back({{"data", Tensor::random_normal({1, 2, 6, 6}, 0, 1, seed)}});
  Calibrator cal(g);
  for (const auto& b : batches) cal.add_batch(b);
  // Not entropy: on so few values its search clips the output by design.
  for (CalibrationMethod method : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile}) {
    const auto ranges = cal.ranges(method);
    const QuantizedGraph q = quantize_graph(g, ranges);
    Interpreter f(g), i8(q.graph);
    const float step = activation_quantization(ranges.at("dense")).scale[0];
    float worst = 0;
    for (const auto& in : batches) {
      const Tensor a = f.run(in)[0], b = i8.run(in)[0];
      for (int64_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::fabs(a.data()[k] - b.data()[k]));
    }
    EXPECT_LE(worst, 4 * step) << "method " << static_cast<int>(method);
  }
}

// Every int8 node, worst first; the output node's SQNR is what its
// dequantized graph output gives.
TEST(QuantizationSqnr, EveryInt8NodeWorstFirst) {
  const Graph g = prepare_for_quantization(testing::conv_relu_dense());
  std::vector<std::map<std::string, Tensor>> batches;
  for (uint64_t seed = 0; seed < 8; ++seed)
    batches.push_back({{"data", Tensor::random_normal({1, 2, 6, 6}, 0, 1, seed)}});
  Calibrator cal(g);
  for (const auto& b : batches) cal.add_batch(b);
  const QuantizedGraph q = quantize_graph(g, cal.ranges(CalibrationMethod::kMinMax));
  const std::vector<NodeSqnr> sqnr = quantization_sqnr(g, q.graph, q.int8_nodes, batches);
  ASSERT_EQ(sqnr.size(), q.int8_nodes.size());
  for (std::size_t i = 1; i < sqnr.size(); ++i) EXPECT_LE(sqnr[i - 1].db, sqnr[i].db);
  double signal = 0, noise = 0;
  Interpreter f(g), i8(q.graph);
  for (const auto& in : batches) {
    const Tensor a = f.run(in)[0], b = i8.run(in)[0];
    for (int64_t k = 0; k < a.size(); ++k) {
      signal += static_cast<double>(a.data()[k]) * a.data()[k];
      noise += std::pow(static_cast<double>(a.data()[k]) - b.data()[k], 2);
    }
  }
  const auto dense = std::find_if(sqnr.begin(), sqnr.end(), [](const NodeSqnr& n) { return n.node == "dense"; });
  ASSERT_NE(dense, sqnr.end());
  EXPECT_NEAR(dense->db, 10 * std::log10(signal / noise), 0.01);
  EXPECT_GT(dense->db, 20.0);
}

}  // namespace
}  // namespace hybgen
