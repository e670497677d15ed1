// What every harness checks: a reader given any bytes either returns or
// throws hybgen::Error. Another exception is a finding (reported, then
// abort() so libFuzzer saves the input); crashes, leaks and sanitizer reports
// are findings by themselves.
//
//   if (!hybgen::fuzz::returns_or_errors("parse_npy", [&] { parse_npy(bytes, "x.npy"); })) return 0;
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>
#include <vector>

#include "io/json_util.h"
#include "io/model_json.h"
#include "ir/error.h"

namespace hybgen::fuzz {

// True when `f` returned, false when it threw hybgen::Error; aborts on any
// other exception, naming `what` and the exception.
template <typename F>
bool returns_or_errors(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FINDING: %s threw %s, not hybgen::Error: %s\n", what, typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "FINDING: %s threw something that is not a std::exception\n", what);
    std::abort();
  }
}

// A property the harness checks beyond "no crash" (a round trip): reports
// `message` and aborts when it does not hold.
inline void check(bool holds, const char* message) {
  if (!holds) {
    std::fprintf(stderr, "FINDING: %s\n", message);
    std::abort();
  }
}

inline std::vector<uint8_t> bytes_of(const uint8_t* data, std::size_t size) {
  return std::vector<uint8_t>(data, data + size);
}

// The graph of model.json bytes, as `hybgen` reads one; false when a reader
// refused them (with hybgen::Error, the only way it may).
inline bool graph_of(const uint8_t* data, std::size_t size, Graph& graph) {
  const char* text = reinterpret_cast<const char*>(data);
  nlohmann::json json;
  if (!returns_or_errors("parse_json", [&] { json = parse_json(text, text + size, "fuzz.json"); })) return false;
  return returns_or_errors("graph_from_json", [&] { graph = graph_from_json(json, "fuzz.json"); });
}

// A byte summarising the whole input, for choices (a target, an option) that
// every mutation may flip.
inline uint8_t input_hash(const uint8_t* data, std::size_t size) {
  uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return static_cast<uint8_t>(h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24));
}

}  // namespace hybgen::fuzz
