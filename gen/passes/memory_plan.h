// The memory plan is data: where each intermediate value lives in the one
// arena, when it is live, and the numbers that judge the plan.
//
//   MemoryPlan plan = plan_memory(graph);
//   plan.verify();                       // throws if two live buffers overlap
//   plan.arena_bytes <= 1.05 * plan.lower_bound_bytes;
//   std::cout << plan.to_json().dump(2);
//
// Graph inputs, outputs and constants are not in the arena: the caller passes
// input and output pointers and weights are const data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hybgen {

struct BufferPlacement {
  std::string value;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  int first_step = 0;  // index of the producing node in the schedule
  int last_step = 0;   // index of the last reading node (>= first_step)

  bool live_together(const BufferPlacement& o) const { return first_step <= o.last_step && o.first_step <= last_step; }
  bool overlaps(const BufferPlacement& o) const { return offset < o.offset + o.bytes && o.offset < offset + bytes; }
};

struct MemoryPlan {
  std::size_t alignment = 64;
  std::size_t arena_bytes = 0;        // max(offset + bytes)
  std::size_t lower_bound_bytes = 0;  // most bytes live at any one step
  std::size_t naive_bytes = 0;        // every buffer on its own
  std::string strategy;               // which placement order won
  std::vector<BufferPlacement> buffers;  // sorted by first_step, then value name

  // nullptr for values outside the arena (inputs, outputs, constants).
  const BufferPlacement* find(const std::string& value) const;
  // Throws Error when two buffers live at one step overlap, an offset is not
  // aligned, or a buffer ends past arena_bytes.
  void verify() const;
  nlohmann::json to_json() const;
};

}  // namespace hybgen
