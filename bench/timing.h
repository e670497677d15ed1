// Timing helpers the benchmark drivers share: calibrate how many calls make
// one sample last long enough to time, then time samples of that many calls.
//
//   const int n = bench::calibrate(forward, 50.0);   // calls per ~50 ms sample
//   const double us = bench::sample_us(forward, n);  // mean per call in one sample
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// Calls per timing sample, chosen so one sample lasts about `min_ms`.
inline int calibrate(const std::function<void()>& f, double min_ms) {
  int n = 1;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms >= min_ms || n > (1 << 24)) return n;
    n *= 2;
  }
}

// Mean microseconds per call over `n` consecutive calls.
inline double sample_us(const std::function<void()>& f, int n) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}

// Rounds of samples and the milliseconds a sample lasts: `--rounds N` and
// `--min-ms M` from the command line, else the defaults given.
struct RoundOptions {
  int rounds;
  double min_ms;
};
inline RoundOptions parse_rounds(int argc, char** argv, int rounds, double min_ms) {
  RoundOptions o{rounds, min_ms};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds")
      o.rounds = std::atoi(argv[i + 1]);
    else if (flag == "--min-ms")
      o.min_ms = std::atof(argv[i + 1]);
  }
  return o;
}

// The median of timing samples (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace bench
