// The memory plan is data: where each intermediate value lives in the one
// arena, when it is live, and the numbers that judge the plan.
//
//   MemoryPlan plan = plan_memory(graph, kernels);
//   plan.verify();                       // throws if two live blocks overlap
//   plan.arena_bytes <= 1.05 * plan.lower_bound_bytes;
//   std::cout << plan.to_json().dump(2);
//
// Graph inputs, outputs and constants are not in the arena: the caller passes
// input and output pointers and weights are const data. Values may share
// bytes: a view and its source, a Concat input placed in the Concat's output,
// an elementwise result written over an input that dies there. Such values
// form one block; blocks are what gets placed, values are where in a block.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hybgen {

// One value's place: inside its block, live from its producing step to its
// last reading step (steps are kernel indices).
struct BufferPlacement {
  std::string value;
  std::size_t offset = 0;  // in the arena
  std::size_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
  int block = 0;  // index into MemoryPlan::blocks
  bool per_item = false;  // ArenaBlock::per_item of its block
};

// Bytes placed as one: live from the first step any of its values is made
// to the last step any is read.
struct ArenaBlock {
  std::string name;  // the value that owns it; the others alias into it
  std::size_t offset = 0;
  std::size_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
  // A run-time batch (Graph::batch): the block holds batch items, and
  // `offset` and `bytes` are one item's. At `batch` items it lies at
  // MemoryPlan::fixed_bytes + offset * batch and spans bytes * batch: the
  // item blocks' plan, scaled, overlaps nowhere it did not at one item.
  bool per_item = false;

  bool live_together(const ArenaBlock& o) const { return first_step <= o.last_step && o.first_step <= last_step; }
  bool overlaps(const ArenaBlock& o) const { return offset < o.offset + o.bytes && o.offset < offset + bytes; }
};

struct MemoryPlan {
  std::size_t alignment = 64;
  std::size_t arena_bytes = 0;  // max(offset + bytes); with a run-time batch, at its largest
  // With a run-time batch: the blocks that do not hold items lie in the
  // first fixed_bytes, those that do (ArenaBlock::per_item) after them,
  // item_bytes per item: arena_bytes_at(batch) = fixed_bytes + item_bytes *
  // batch. Without one, item_bytes == 0 and every block lies in arena_bytes.
  std::size_t fixed_bytes = 0;
  std::size_t item_bytes = 0;
  int64_t max_batch = 1;
  std::size_t lower_bound_bytes = 0;  // most block bytes live at any one step
  std::size_t naive_bytes = 0;        // every value on its own, nothing shared
  std::string strategy;               // which placement order won
  // The lower bound with scratch shrunk to fit (plan_memory's small_arena;
  // what it plans where asked), where that is below the full-scratch one; else 0.
  std::size_t small_arena_bound = 0;
  std::map<std::string, std::size_t> arena_by_strategy;  // what each order tried needed
  std::vector<ArenaBlock> blocks;
  std::vector<BufferPlacement> buffers;  // sorted by first_step, then value name

  std::size_t arena_bytes_at(int64_t batch) const {
    return item_bytes ? fixed_bytes + item_bytes * static_cast<std::size_t>(batch) : arena_bytes;
  }
  // nullptr for values outside the arena (inputs, outputs, constants).
  const BufferPlacement* find(const std::string& value) const;
  // Throws Error when two blocks live at one step overlap, an offset is not
  // aligned, a block ends past arena_bytes, or a value leaves its block.
  void verify() const;
  nlohmann::json to_json() const;
};

}  // namespace hybgen
