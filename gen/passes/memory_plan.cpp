#include "passes/memory_plan.h"

#include <algorithm>
#include <iterator>
#include <queue>
#include <set>
#include <utility>

#include "ir/error.h"

namespace hybgen {
namespace {

// Whether two blocks with bytes overlap while both are live, by a sweep over
// the steps: the blocks live at the current step are kept sorted by offset,
// and since they never overlap each other (else the sweep stopped), a block
// coming alive can only overlap its neighbours in that order. O(n log n)
// rather than a look at every pair.
bool any_live_overlap(const std::vector<ArenaBlock>& blocks) {
  std::vector<std::size_t> by_start;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].bytes) by_start.push_back(i);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](std::size_t x, std::size_t y) { return blocks[x].first_step < blocks[y].first_step; });
  std::set<std::pair<std::size_t, std::size_t>> live;  // (offset, block)
  using Ending = std::pair<int, std::size_t>;           // (last_step, block)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ends;
  for (std::size_t i : by_start) {
    const ArenaBlock& a = blocks[i];
    while (!ends.empty() && ends.top().first < a.first_step) {
      live.erase({blocks[ends.top().second].offset, ends.top().second});
      ends.pop();
    }
    auto next = live.lower_bound({a.offset, 0});
    if (next != live.end() && next->first < a.offset + a.bytes) return true;
    if (next != live.begin()) {
      const ArenaBlock& before = blocks[std::prev(next)->second];
      if (before.offset + before.bytes > a.offset) return true;
    }
    live.emplace(a.offset, i);
    ends.emplace(a.last_step, i);
  }
  return false;
}

}  // namespace

const BufferPlacement* MemoryPlan::find(const std::string& value) const {
  for (const auto& b : buffers)
    if (b.value == value) return &b;
  return nullptr;
}

void MemoryPlan::verify() const {
  if (item_bytes && fixed_bytes % alignment)
    throw Error("memory plan: the fixed region's " + std::to_string(fixed_bytes) + " bytes are not " +
                std::to_string(alignment) + "-byte aligned");
  if (arena_bytes != arena_bytes_at(max_batch))
    throw Error("memory plan: the arena's " + std::to_string(arena_bytes) + " bytes are not its regions' " +
                std::to_string(arena_bytes_at(max_batch)));
  for (const auto& a : blocks) {
    if (a.offset % alignment)
      throw Error("memory plan: block '" + a.name + "' at offset " + std::to_string(a.offset) + " is not " +
                  std::to_string(alignment) + "-byte aligned");
    const std::size_t region = a.per_item ? item_bytes : item_bytes ? fixed_bytes : arena_bytes;
    if (a.offset + a.bytes > region)
      throw Error("memory plan: block '" + a.name + "' ends at " + std::to_string(a.offset + a.bytes) + ", past its " +
                  (a.per_item ? "per-item" : "fixed") + " region's " + std::to_string(region) + " bytes");
    if (a.first_step > a.last_step) throw Error("memory plan: block '" + a.name + "' dies before it is made");
  }
  // The regions at one item, one after the other: a plan free of overlaps
  // there is free of them at every batch (ArenaBlock::per_item).
  std::vector<ArenaBlock> laid = blocks;
  for (auto& b : laid)
    if (b.per_item) b.offset += fixed_bytes;
  // The pairs are looked at one by one only to name the first that overlaps.
  if (any_live_overlap(laid))
    for (std::size_t i = 0; i < blocks.size(); ++i)
      for (std::size_t j = i + 1; j < blocks.size(); ++j) {
        const auto& a = laid[i];
        const auto& b = laid[j];
        if (a.bytes && b.bytes && a.live_together(b) && a.overlaps(b))
          throw Error("memory plan: '" + a.name + "' [" + std::to_string(a.offset) + ", " +
                      std::to_string(a.offset + a.bytes) + ") and '" + b.name + "' [" + std::to_string(b.offset) +
                      ", " + std::to_string(b.offset + b.bytes) + ") overlap while both are live");
      }
  for (const auto& v : buffers) {
    if (v.block < 0 || v.block >= static_cast<int>(blocks.size()))
      throw Error("memory plan: '" + v.value + "' names no block");
    const ArenaBlock& b = blocks[v.block];
    if (v.offset < b.offset || v.offset + v.bytes > b.offset + b.bytes)
      throw Error("memory plan: '" + v.value + "' [" + std::to_string(v.offset) + ", " +
                  std::to_string(v.offset + v.bytes) + ") leaves its block '" + b.name + "'");
    if (v.first_step < b.first_step || v.last_step > b.last_step)
      throw Error("memory plan: '" + v.value + "' is live outside its block '" + b.name + "'");
  }
}

nlohmann::json MemoryPlan::to_json() const {
  nlohmann::json j;
  j["alignment"] = alignment;
  j["arena_bytes"] = arena_bytes;
  if (item_bytes) {
    j["fixed_bytes"] = fixed_bytes;
    j["item_bytes"] = item_bytes;
    j["max_batch"] = max_batch;
  }
  j["lower_bound_bytes"] = lower_bound_bytes;
  j["naive_bytes"] = naive_bytes;
  j["strategy"] = strategy;
  j["arena_by_strategy"] = arena_by_strategy;
  j["blocks"] = nlohmann::json::array();
  for (const auto& b : blocks) {
    nlohmann::json block = {{"name", b.name},
                            {"offset", b.offset},
                            {"bytes", b.bytes},
                            {"first_step", b.first_step},
                            {"last_step", b.last_step}};
    if (b.per_item) block["per_item"] = true;
    j["blocks"].push_back(block);
  }
  j["buffers"] = nlohmann::json::array();
  for (const auto& b : buffers)
    j["buffers"].push_back({{"value", b.value},
                            {"offset", b.offset},
                            {"bytes", b.bytes},
                            {"first_step", b.first_step},
                            {"last_step", b.last_step},
                            {"block", blocks[b.block].name}});
  return j;
}

}  // namespace hybgen
