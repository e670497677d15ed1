#include "runtime-lite/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <vector>

#include "ir/error.h"
#include "ir/names.h"
#include "pipeline.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {

CalibrationMethod parse_calibration_method(const std::string& name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "entropy") return CalibrationMethod::kEntropy;
  throw Error("unknown calibration method " + quoted_name(name) + " (minmax, percentile, entropy)");
}

const char* calibration_method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax:
      return "minmax";
    case CalibrationMethod::kPercentile:
      return "percentile";
    case CalibrationMethod::kEntropy:
      return "entropy";
  }
  return "?";
}

void ValueStatistics::Histogram::halve() {
  for (int i = 0; i < kBins / 2; ++i) bins[static_cast<std::size_t>(i)] = bins[2 * i] + bins[2 * i + 1];
  std::fill(bins.begin() + kBins / 2, bins.end(), 0);
}

float ValueStatistics::Histogram::magnitude_above(double beyond, float width) const {
  double seen = 0;
  for (int i = kBins - 1; i >= 0; --i) {
    seen += static_cast<double>(bins[static_cast<std::size_t>(i)]);
    if (seen > beyond) return static_cast<float>(i + 1) * width;
  }
  return 0.0f;
}

namespace {

// KL(p || q) of two unnormalized histograms, zeros in q smoothed with a
// small mass taken from its other bins, as TensorRT does.
double kl_divergence(std::vector<double> p, std::vector<double> q) {
  auto smooth = [](std::vector<double>& h) {
    const double eps = 1e-4;
    std::size_t zeros = 0;
    for (double v : h) zeros += v == 0.0;
    const std::size_t nonzeros = h.size() - zeros;
    if (zeros == 0 || nonzeros == 0) return;
    const double take = eps * static_cast<double>(zeros) / static_cast<double>(nonzeros);
    for (double& v : h) v = v == 0.0 ? eps : v - take;
  };
  double sp = 0, sq = 0;
  for (double v : p) sp += v;
  for (double v : q) sq += v;
  if (sp == 0) return 0;
  if (sq == 0) return std::numeric_limits<double>::infinity();  // nothing left where p has mass
  for (double& v : p) v /= sp;
  for (double& v : q) v /= sq;
  smooth(p);
  smooth(q);
  double kl = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0 && q[i] > 0) kl += p[i] * std::log(p[i] / q[i]);
  return kl;
}

}  // namespace

float ValueStatistics::Histogram::kl_threshold(float width) const {
  constexpr int kLevels = 128;  // int8's levels on one side of the zero point
  if (total == 0) return 0.0f;
  int last = kBins;
  while (last > 0 && bins[static_cast<std::size_t>(last - 1)] == 0) --last;
  if (last <= kLevels) return static_cast<float>(last) * width;  // fewer bins than levels: nothing to lose
  double best = 0;
  int best_i = last;
  for (int i = kLevels; i <= last; ++i) {
    std::vector<double> p(bins.begin(), bins.begin() + i);
    for (int k = i; k < last; ++k)
      p[static_cast<std::size_t>(i - 1)] += static_cast<double>(bins[static_cast<std::size_t>(k)]);
    // p's first i bins merged into kLevels levels, each spread back evenly over its non-empty bins.
    std::vector<double> q(static_cast<std::size_t>(i), 0.0);
    const int merged = i / kLevels;
    for (int j = 0; j < kLevels; ++j) {
      const int start = j * merged, stop = j == kLevels - 1 ? i : start + merged;
      double sum = 0;
      int nonzero = 0;
      for (int k = start; k < stop; ++k) {
        sum += static_cast<double>(bins[static_cast<std::size_t>(k)]);
        nonzero += p[static_cast<std::size_t>(k)] != 0;
      }
      for (int k = start; k < stop; ++k)
        if (p[static_cast<std::size_t>(k)] != 0) q[static_cast<std::size_t>(k)] = sum / nonzero;
    }
    const double kl = kl_divergence(std::move(p), std::move(q));
    if (i == kLevels || kl < best) {
      best = kl;
      best_i = i;
    }
  }
  return static_cast<float>(best_i) * width;
}

void ValueStatistics::grow_to(float magnitude) {
  if (width_ == 0.0f) {
    width_ = magnitude / kBins * 1.0001f;  // the first magnitude lands inside the last bin
    return;
  }
  while (magnitude >= width_ * kBins) {
    positive_.halve();
    negative_.halve();
    width_ *= 2.0f;
  }
}

void ValueStatistics::add(const float* x, int64_t n) {
  if (n <= 0) return;
  float lo = x[0], hi = x[0];
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (count_ == 0) {
    min_ = lo;
    max_ = hi;
  } else {
    min_ = std::min(min_, lo);
    max_ = std::max(max_, hi);
  }
  count_ += n;
  const float magnitude = std::max(-lo, hi);
  if (magnitude > 0.0f) grow_to(magnitude);
  // Zeros stay out of the histograms: every range holds 0 exactly, and
  // their spike (image background, relu) would have the KL search clip the
  // rest away.
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] < 0.0f)
      negative_.add(-x[i], width_);
    else if (x[i] > 0.0f)
      positive_.add(x[i], width_);
  }
}

ValueRange ValueStatistics::percentile(double percentile) const {
  if (count_ == 0 || width_ == 0.0f) return min_max();
  const double beyond = static_cast<double>(count_) * (100.0 - percentile) / 100.0;
  ValueRange r;
  r.max = std::min(max_, positive_.magnitude_above(beyond, width_));
  r.min = std::max(min_, -negative_.magnitude_above(beyond, width_));
  return r;
}

ValueRange ValueStatistics::entropy() const {
  if (count_ == 0 || width_ == 0.0f) return min_max();
  ValueRange r;
  r.max = std::min(max_, positive_.kl_threshold(width_));
  r.min = std::max(min_, -negative_.kl_threshold(width_));
  return r;
}

Calibrator::Calibrator(const Graph& graph) : interpreter_(std::make_unique<Interpreter>(graph)) {
  interpreter_->set_value_observer([this](const std::string& value, const TensorType& type, const void* data) {
    if (type.dtype == DType::kFloat32) observe(value, static_cast<const float*>(data), type.num_elements());
  });
}

Calibrator::~Calibrator() = default;

void Calibrator::observe(const std::string& value, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]))
      throw Error("calibration batch " + std::to_string(batches_ + 1) + ": value " + quoted_name(value) + " has " +
                  (std::isnan(x[i]) ? "NaN" : "an infinity") + " at element " + std::to_string(i));
  stats_[value].add(x, n);
}

void Calibrator::add_batch(const std::map<std::string, Tensor>& inputs) {
  const Graph& g = interpreter_->graph();
  for (const auto& name : g.inputs) {
    auto it = inputs.find(name);
    if (it != inputs.end() && it->second.defined() && it->second.shape() == g.type(name).shape)
      observe(name, it->second.data(), it->second.size());
  }
  interpreter_->run(inputs);  // names a missing or misshapen input
  ++batches_;
}

std::map<std::string, ValueRange> Calibrator::ranges(CalibrationMethod method, double percentile) const {
  std::map<std::string, ValueRange> out;
  for (const auto& [value, s] : stats_)
    out[value] = method == CalibrationMethod::kMinMax       ? s.min_max()
                 : method == CalibrationMethod::kPercentile ? s.percentile(percentile)
                                                            : s.entropy();
  return out;
}

std::vector<NodeSqnr> quantization_sqnr(const Graph& float_graph, const Graph& quantized,
                                        const std::vector<std::string>& int8_nodes,
                                        const std::vector<std::map<std::string, Tensor>>& batches) {
  // The value each node makes in either graph: an int8 graph output is
  // renamed (its float form keeps the name), so nodes, not values, pair up.
  auto outputs_of = [&](const Graph& g) {
    std::map<std::string, std::string> out;
    for (const Node& n : g.nodes)
      if (!n.outputs.empty()) out[n.name] = n.outputs[0];
    return out;
  };
  const std::map<std::string, std::string> float_out = outputs_of(float_graph), int8_out = outputs_of(quantized);
  std::map<std::string, std::string> wanted;  // quantized value -> float value
  for (const std::string& node : int8_nodes) {
    auto f = float_out.find(node), q = int8_out.find(node);
    if (f == float_out.end() || q == int8_out.end())
      throw Error("quantization_sqnr: node " + quoted_name(node) + " is missing from a graph");
    wanted[q->second] = f->second;
  }
  std::set<std::string> float_values;
  for (const auto& [q, f] : wanted) float_values.insert(f);

  struct Sums {
    double signal = 0, noise = 0;
  };
  std::map<std::string, Sums> sums;
  std::map<std::string, std::vector<float>> reference;  // this batch's float values
  Interpreter float_run(float_graph), int8_run(quantized);
  float_run.set_value_observer([&](const std::string& value, const TensorType& type, const void* data) {
    if (!float_values.count(value) || type.dtype != DType::kFloat32) return;
    const auto* x = static_cast<const float*>(data);
    reference[value].assign(x, x + type.num_elements());
  });
  int8_run.set_value_observer([&](const std::string& value, const TensorType& type, const void* data) {
    auto it = wanted.find(value);
    if (it == wanted.end()) return;
    const std::vector<float>& f = reference.at(it->second);
    const int64_t n = type.num_elements();
    if (static_cast<int64_t>(f.size()) != n)
      throw Error("quantization_sqnr: value " + quoted_name(value) + " has another size than its float form");
    const Quantization& qz = type.quantization;
    if (qz.empty() || qz.axis || (type.dtype != DType::kInt8 && type.dtype != DType::kUInt8))
      throw Error("quantization_sqnr: value " + quoted_name(value) + " is " + type.str() +
                  ", not int8 quantized per tensor");
    const double scale = qz.scale[0], zero_point = static_cast<double>(qz.zero_point[0]);
    Sums& s = sums[it->first];
    for (int64_t i = 0; i < n; ++i) {
      const double q =
          type.dtype == DType::kInt8 ? static_cast<const int8_t*>(data)[i] : static_cast<const uint8_t*>(data)[i];
      const double real = scale * (q - zero_point), ref = f[static_cast<std::size_t>(i)];
      s.signal += ref * ref;
      s.noise += (ref - real) * (ref - real);
    }
  });
  for (const auto& inputs : batches) {
    float_run.run(inputs);
    int8_run.run(inputs);
  }
  std::vector<NodeSqnr> result;
  for (const std::string& node : int8_nodes) {
    const Sums& s = sums[int8_out.at(node)];
    const double db = s.noise == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(s.signal / s.noise);
    result.push_back({node, db});
  }
  std::stable_sort(result.begin(), result.end(), [](const NodeSqnr& a, const NodeSqnr& b) { return a.db < b.db; });
  return result;
}

namespace {

// Everything quantize_post_training can refuse without running the model.
void check_post_training_input(const Graph& graph, const std::vector<std::map<std::string, Tensor>>& batches,
                               const PostTrainingOptions& options) {
  if (!(options.percentile > 0.0 && options.percentile <= 100.0))
    throw Error("percentile must lie in (0, 100], got " + std::to_string(options.percentile));
  if (options.min_sqnr && options.max_sqnr_rounds < 1)
    throw Error("max_sqnr_rounds must be at least 1, got " + std::to_string(options.max_sqnr_rounds));
  if (graph.inputs.empty()) throw Error("the graph has no input to calibrate");
  if (batches.empty()) throw Error("no calibration batches: give at least one batch of sample inputs");
  // A misspelt node is reported before calibration, which may take long.
  std::set<std::string> nodes;
  for (const Node& n : graph.nodes) nodes.insert(n.name);
  for (const auto& name : options.keep_float) {
    if (nodes.count(name)) continue;
    std::string listed;
    int shown = 0;
    for (const Node& n : graph.nodes) {
      if (n.op == "quantize" || n.op == "dequantize") continue;
      if (++shown > 24) {
        listed += ", ...";
        break;
      }
      listed += (listed.empty() ? "" : ", ") + quoted_name(n.name);
    }
    throw Error("keep_float (--keep-float): the graph has no node " + quoted_name(name) + " (its nodes: " + listed +
                ")");
  }
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const std::string where = "calibration batch " + std::to_string(i + 1) + ": ";
    for (const auto& input : graph.inputs) {
      const auto it = batches[i].find(input);
      if (it == batches[i].end() || !it->second.defined() || it->second.is_symbolic())
        throw Error(where + "input " + quoted_name(input) + " is missing (or not a concrete tensor)");
      if (it->second.shape() != graph.type(input).shape)
        throw Error(where + "input " + quoted_name(input) + " has shape " + shape_str(it->second.shape()) +
                    ", the model takes " + shape_str(graph.type(input).shape));
    }
    for (const auto& [name, tensor] : batches[i])
      if (!graph.is_input(name)) throw Error(where + quoted_name(name) + " is not an input of the model");
  }
}

}  // namespace

PostTrainingQuantization quantize_post_training(const Graph& graph,
                                                const std::vector<std::map<std::string, Tensor>>& batches,
                                                const PostTrainingOptions& options) {
  check_post_training_input(graph, batches, options);
  PostTrainingQuantization out;
  out.options = options;
  Calibrator calibrator(graph);
  for (const auto& batch : batches) calibrator.add_batch(batch);
  out.batches = calibrator.batches();

  QuantizeOptions quantize_options;
  quantize_options.keep_float.insert(options.keep_float.begin(), options.keep_float.end());
  const std::map<std::string, ValueRange> ranges = calibrator.ranges(options.method, options.percentile);
  out.quantized = quantize_graph(graph, ranges, quantize_options);
  out.sqnr = quantization_sqnr(graph, out.quantized.graph, out.quantized.int8_nodes, batches);
  // Keeping one layer float changes the error of every layer after it, so
  // the worst goes first and the rest are measured again.
  if (options.min_sqnr) {
    while (!out.sqnr.empty() && out.sqnr.front().db < *options.min_sqnr) {
      if (static_cast<int>(out.kept.size()) == options.max_sqnr_rounds) {
        out.rounds_exhausted = true;
        break;
      }
      out.kept.push_back(out.sqnr.front());
      quantize_options.keep_float.insert(out.sqnr.front().node);
      out.quantized = quantize_graph(graph, ranges, quantize_options);
      out.sqnr = quantization_sqnr(graph, out.quantized.graph, out.quantized.int8_nodes, batches);
    }
  }
  try {
    compile_graph(out.quantized.graph);  // refuse a model hybgen cannot compile
  } catch (const Error& e) {
    throw Error("the quantized model does not compile: " + std::string(e.what()));
  }
  for (FloatNode& f : out.quantized.float_nodes)
    for (const NodeSqnr& k : out.kept)
      if (f.node == k.node) {
        char db[32];
        std::snprintf(db, sizeof db, "%.1f", k.db);
        f.reason = std::string("--min-sqnr: ") + db + " dB in int8";
      }
  return out;
}

std::string sqnr_table(const std::vector<NodeSqnr>& sqnr) {
  std::string text =
      "SQNR of each int8 node's output against the float model's, on the calibration data (dB, worst "
      "first):\n";
  for (const NodeSqnr& n : sqnr) {
    char line[64];
    std::snprintf(line, sizeof line, "  %8.2f  ", n.db);
    text += line + quoted_name(n.node) + "\n";
  }
  return text;
}

std::string post_training_report(const PostTrainingQuantization& q) {
  const QuantizedGraph& g = q.quantized;
  std::string text = "int8 (" + std::to_string(g.int8_nodes.size()) + "):";
  for (const auto& n : g.int8_nodes) text += " " + quoted_name(n);
  text += "\nfloat (" + std::to_string(g.float_nodes.size()) + "):\n";
  for (const auto& f : g.float_nodes) text += "  " + quoted_name(f.node) + ": " + f.reason + "\n";
  char number[64];
  if (!q.kept.empty()) {
    std::snprintf(number, sizeof number, "%g", *q.options.min_sqnr);
    text += "kept float by --min-sqnr " + std::string(number) + " dB (" + std::to_string(q.kept.size()) + "):";
    for (const auto& k : q.kept) {
      std::snprintf(number, sizeof number, "%.1f", k.db);
      text += " " + quoted_name(k.node) + " (" + number + " dB)";
    }
    text += "\n";
  }
  if (q.rounds_exhausted) {
    const auto below =
        std::count_if(q.sqnr.begin(), q.sqnr.end(), [&](const NodeSqnr& n) { return n.db < *q.options.min_sqnr; });
    std::snprintf(number, sizeof number, "%g", *q.options.min_sqnr);
    text += "stopped after " + std::to_string(q.options.max_sqnr_rounds) +
            " layers kept float: " + std::to_string(below) + " int8 layers remain below " + number + " dB\n";
  }
  return text + sqnr_table(q.sqnr);
}

}  // namespace hybgen
