#include "passes/memory_plan.h"

#include "ir/error.h"

namespace hybgen {

const BufferPlacement* MemoryPlan::find(const std::string& value) const {
  for (const auto& b : buffers)
    if (b.value == value) return &b;
  return nullptr;
}

void MemoryPlan::verify() const {
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& a = buffers[i];
    if (a.offset % alignment) throw Error("memory plan: '" + a.value + "' at offset " + std::to_string(a.offset) +
                                          " is not " + std::to_string(alignment) + "-byte aligned");
    if (a.offset + a.bytes > arena_bytes)
      throw Error("memory plan: '" + a.value + "' ends at " + std::to_string(a.offset + a.bytes) +
                  ", past the arena's " + std::to_string(arena_bytes) + " bytes");
    if (a.first_step > a.last_step) throw Error("memory plan: '" + a.value + "' dies before it is made");
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& a = buffers[i];
    for (std::size_t j = i + 1; j < buffers.size(); ++j) {
      const auto& b = buffers[j];
      if (a.bytes && b.bytes && a.live_together(b) && a.overlaps(b))
        throw Error("memory plan: '" + a.value + "' [" + std::to_string(a.offset) + ", " +
                    std::to_string(a.offset + a.bytes) + ") and '" + b.value + "' [" + std::to_string(b.offset) +
                    ", " + std::to_string(b.offset + b.bytes) + ") overlap while both are live");
    }
  }
}

nlohmann::json MemoryPlan::to_json() const {
  nlohmann::json j;
  j["alignment"] = alignment;
  j["arena_bytes"] = arena_bytes;
  j["lower_bound_bytes"] = lower_bound_bytes;
  j["naive_bytes"] = naive_bytes;
  j["strategy"] = strategy;
  j["buffers"] = nlohmann::json::array();
  for (const auto& b : buffers)
    j["buffers"].push_back({{"value", b.value},
                            {"offset", b.offset},
                            {"bytes", b.bytes},
                            {"first_step", b.first_step},
                            {"last_step", b.last_step}});
  return j;
}

}  // namespace hybgen
