#include "runtime-lite/calibration.h"

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/names.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {

CalibrationMethod parse_calibration_method(const std::string& name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "entropy")
    throw Error("calibration method 'entropy' (KL divergence) is not implemented yet; use minmax or percentile");
  throw Error("unknown calibration method " + quoted_name(name) + " (minmax, percentile)");
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
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] < 0.0f)
      negative_.add(-x[i], width_);
    else if (width_ > 0.0f)
      positive_.add(x[i], width_);
    else
      ++positive_.bins[0], ++positive_.total;  // zeros before any width
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
    out[value] = method == CalibrationMethod::kMinMax ? s.min_max() : s.percentile(percentile);
  return out;
}

}  // namespace hybgen
