// plan_memory: static memory planning over the scheduled node order.
//
// Liveness: an intermediate value (a node output that is not a graph output)
// lives from its producer's step to its last reader's step, inclusive; inputs
// and outputs belong to the caller and weights are constant data, so none of
// them is in the arena.
//
// Placement: buffers are placed one at a time, each at the lowest 64-byte-
// aligned offset where it overlaps no already-placed buffer that is live at
// the same time (first fit over the gaps). The order of placement matters, so
// several orders are tried and the smallest arena kept. The lower bound is the
// most bytes live at any one step: no placement can beat it.
#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "passes/passes.h"

namespace hybgen {
namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

std::vector<BufferPlacement> live_ranges(const Graph& graph) {
  std::map<std::string, BufferPlacement> buffers;
  for (std::size_t step = 0; step < graph.nodes.size(); ++step) {
    const Node& node = graph.nodes[step];
    for (const auto& in : node.inputs) {
      auto it = buffers.find(in);
      if (it != buffers.end()) it->second.last_step = static_cast<int>(step);
    }
    for (const auto& out : node.outputs) {
      if (graph.is_output(out)) continue;
      BufferPlacement b;
      b.value = out;
      b.bytes = graph.type(out).bytes();
      b.first_step = b.last_step = static_cast<int>(step);
      buffers[out] = b;
    }
  }
  std::vector<BufferPlacement> result;
  for (auto& [name, b] : buffers) result.push_back(b);
  std::sort(result.begin(), result.end(), [](const BufferPlacement& a, const BufferPlacement& b) {
    return a.first_step != b.first_step ? a.first_step < b.first_step : a.value < b.value;
  });
  return result;
}

// Places buffers in `order` (indices into `buffers`); returns the arena size.
std::size_t place(std::vector<BufferPlacement>& buffers, const std::vector<std::size_t>& order, std::size_t align) {
  std::vector<std::size_t> placed;
  std::size_t arena = 0;
  for (std::size_t index : order) {
    BufferPlacement& b = buffers[index];
    // Busy intervals of the placed buffers live at the same time, by offset.
    std::vector<std::pair<std::size_t, std::size_t>> busy;
    for (std::size_t p : placed)
      if (buffers[p].live_together(b)) busy.emplace_back(buffers[p].offset, buffers[p].offset + buffers[p].bytes);
    std::sort(busy.begin(), busy.end());
    std::size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + b.bytes <= begin) break;
      offset = std::max(offset, align_up(end, align));
    }
    b.offset = offset;
    arena = std::max(arena, offset + b.bytes);
    placed.push_back(index);
  }
  return arena;
}

}  // namespace

MemoryPlan plan_memory(const Graph& graph) {
  MemoryPlan plan;
  const std::vector<BufferPlacement> buffers = live_ranges(graph);
  for (const auto& b : buffers) plan.naive_bytes += align_up(b.bytes, plan.alignment);
  for (std::size_t step = 0; step < graph.nodes.size(); ++step) {
    std::size_t live = 0;
    for (const auto& b : buffers)
      if (b.first_step <= static_cast<int>(step) && static_cast<int>(step) <= b.last_step) live += b.bytes;
    plan.lower_bound_bytes = std::max(plan.lower_bound_bytes, live);
  }

  using Less = std::function<bool(const BufferPlacement&, const BufferPlacement&)>;
  const std::vector<std::pair<std::string, Less>> strategies = {
      {"greedy-by-size",
       [](const BufferPlacement& a, const BufferPlacement& b) {
         return std::make_tuple(-static_cast<long long>(a.bytes), a.first_step, a.value) <
                std::make_tuple(-static_cast<long long>(b.bytes), b.first_step, b.value);
       }},
      {"greedy-by-first-use",
       [](const BufferPlacement& a, const BufferPlacement& b) {
         return std::make_tuple(a.first_step, -static_cast<long long>(a.bytes), a.value) <
                std::make_tuple(b.first_step, -static_cast<long long>(b.bytes), b.value);
       }},
      {"greedy-by-longest-life",
       [](const BufferPlacement& a, const BufferPlacement& b) {
         return std::make_tuple(a.first_step - a.last_step, -static_cast<long long>(a.bytes), a.value) <
                std::make_tuple(b.first_step - b.last_step, -static_cast<long long>(b.bytes), b.value);
       }},
  };
  bool first = true;
  for (const auto& [name, less] : strategies) {
    std::vector<BufferPlacement> trial = buffers;
    std::vector<std::size_t> order(trial.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return less(trial[a], trial[b]); });
    const std::size_t arena = place(trial, order, plan.alignment);
    if (first || arena < plan.arena_bytes) {
      plan.arena_bytes = arena;
      plan.strategy = name;
      plan.buffers = std::move(trial);
      first = false;
    }
  }
  if (buffers.empty()) plan.strategy = "empty";
  return plan;
}

}  // namespace hybgen
