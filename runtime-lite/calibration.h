// Calibration for post-training quantization: runs a float graph on sample
// inputs with the reference Interpreter and keeps, per graph input and node
// output, what quantize_graph (passes/quantize_graph.h) needs to choose its
// int8 range. quantize_post_training() is the whole recipe that `hybgen
// quantize` and the frontend's quantize() (runtime-lite/quantize.h) share.
//
//   Calibrator cal(prepare_for_quantization(graph));
//   for (const Tensor& batch : batches) cal.add_batch({{"data", batch}});
//   std::map<std::string, ValueRange> r = cal.ranges(CalibrationMethod::kPercentile);
//
//   PostTrainingQuantization q = quantize_post_training(prepare_for_quantization(graph), {{{"data", x}}}, {});
//   save_model(q.quantized.graph, "m_int8");   std::cout << post_training_report(q);
//
// minmax: the smallest and largest value seen. percentile: each tail cut so
// that (100 - percentile)% of all values lie beyond it, from a bounded
// histogram of magnitudes per sign (re-binned coarser as the range grows),
// so memory does not grow with the data. entropy: TensorRT's search, per
// tail: the threshold whose 128-level quantization of that tail's histogram
// (outliers clamped into the last bin) loses the least information (KL
// divergence).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/quantize_graph.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

class Interpreter;

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy };

// "minmax", "percentile", "entropy"; Error naming the choices for another.
CalibrationMethod parse_calibration_method(const std::string& name);
const char* calibration_method_name(CalibrationMethod method);

// Running statistics of one value's elements.
class ValueStatistics {
 public:
  static constexpr int kBins = 2048;
  void add(const float* x, int64_t n);
  int64_t count() const { return count_; }
  ValueRange min_max() const { return {min_, max_}; }
  // The range holding all but (100 - percentile)% of the values in each tail.
  ValueRange percentile(double percentile) const;
  // Each tail at its least-KL threshold.
  ValueRange entropy() const;

 private:
  // Magnitudes of one sign: bin i holds [i, i + 1) * width.
  struct Histogram {
    std::array<int64_t, kBins> bins{};
    int64_t total = 0;
    void add(float magnitude, float width) {
      const auto i = static_cast<int64_t>(magnitude / width);
      ++bins[static_cast<std::size_t>(i < kBins ? i : kBins - 1)];
      ++total;
    }
    void halve();  // twice the width: pairs of bins merge
    // The magnitude beyond which about `beyond` of the values lie.
    float magnitude_above(double beyond, float width) const;
    float kl_threshold(float width) const;
  };
  void grow_to(float magnitude);

  int64_t count_ = 0;
  float min_ = 0.0f, max_ = 0.0f;
  float width_ = 0.0f;  // 0 until a non-zero magnitude is seen
  Histogram positive_, negative_;
};

class Calibrator {
 public:
  // `graph` with weight data; its values are the ones the ranges name.
  explicit Calibrator(const Graph& graph);
  ~Calibrator();
  Calibrator(const Calibrator&) = delete;
  Calibrator& operator=(const Calibrator&) = delete;

  // One run on these inputs (every graph input, of the graph's shape).
  // Error when a value comes out NaN or infinite: such a model has no range.
  void add_batch(const std::map<std::string, Tensor>& inputs);
  int batches() const { return batches_; }
  // Per float32 graph input and node output.
  std::map<std::string, ValueRange> ranges(CalibrationMethod method, double percentile = 99.99) const;

 private:
  void observe(const std::string& value, const float* x, int64_t n);

  std::unique_ptr<Interpreter> interpreter_;
  std::map<std::string, ValueStatistics> stats_;
  int batches_ = 0;
};

// Runs `float_graph` (the graph quantize_graph read) and `quantized` (its
// result) on each batch with the reference Interpreter and measures every
// node of `int8_nodes`, named as in both graphs; worst (lowest) first.
std::vector<NodeSqnr> quantization_sqnr(const Graph& float_graph, const Graph& quantized,
                                        const std::vector<std::string>& int8_nodes,
                                        const std::vector<std::map<std::string, Tensor>>& batches);

// What post-training quantization is asked for; `hybgen quantize`'s flags.
struct PostTrainingOptions {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;            // with kPercentile: the share of values kept, in (0, 100]
  std::vector<std::string> keep_float;  // nodes of the graph that stay float
  // Keep the worst int8 node below this SQNR (dB) float and measure again,
  // at most max_sqnr_rounds times.
  std::optional<double> min_sqnr;
  int max_sqnr_rounds = 16;
};

struct PostTrainingQuantization {
  QuantizedGraph quantized;       // float_nodes' reasons name the nodes min_sqnr kept float
  std::vector<NodeSqnr> sqnr;     // every int8 node on the calibration data, worst first
  std::vector<NodeSqnr> kept;     // kept float by min_sqnr, in the order kept, with their SQNR in int8
  bool rounds_exhausted = false;  // max_sqnr_rounds nodes were kept and some int8 node is still below min_sqnr
  int batches = 0;                // calibration runs
  PostTrainingOptions options;
};

// Calibrates `graph` (prepare_for_quantization's result, with weight data)
// on `batches` (each names every graph input, with the graph's shapes),
// quantizes it, measures every int8 node's SQNR, keeps nodes below
// options.min_sqnr float, and compiles the result once for the default
// target to refuse a graph hybgen cannot generate. The options and the
// keep_float names are checked before anything runs. Error naming what is
// wrong: no batch, a batch without an input or of another shape, a NaN or
// infinity in the data or the model's values, an unknown node.
PostTrainingQuantization quantize_post_training(const Graph& graph,
                                                const std::vector<std::map<std::string, Tensor>>& batches,
                                                const PostTrainingOptions& options);

// What `hybgen quantize` prints after calibrating: the int8 nodes, the float
// ones and why, the nodes min_sqnr kept float, and the SQNR table.
std::string post_training_report(const PostTrainingQuantization& q);
// The SQNR table alone (`hybgen quantize --report`).
std::string sqnr_table(const std::vector<NodeSqnr>& sqnr);

}  // namespace hybgen
