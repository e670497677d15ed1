// plan_memory: static memory planning over the kernel order.
//
// Liveness: a value a kernel stores lives from that kernel's step to the last
// step that reads it; graph inputs and outputs belong to the caller and
// weights are constant data, so none of them is in the arena.
//
// Sharing (with share_buffers): values are grouped into blocks of bytes
//  - a view's output is its source's bytes;
//  - an input of an op with OpDef::input_placement (Concat) whose block is
//    exactly that input moves into the op's output block at its slice, so
//    its producer writes there and the copy disappears;
//  - an elementwise kernel's result takes over the block of a same-size
//    input whose block dies at that kernel (in place: each element is read
//    before it is written).
// A block lives from the first step any of its values is made to the last
// step any is read. A kernel's scratch memory (OpDef::scratch_floats, what
// its kernel takes on the target generated for) is a block of its own, live
// at that kernel's step only, listed as the value scratch_value(kernel);
// where it would set the arena and can shrink (OpDef::fit_scratch), it
// takes what the other blocks leave free (fit_scratch_blocks).
//
// Placement: blocks are placed one at a time, each at the lowest 64-byte-
// aligned offset where it overlaps no placed block live at the same time
// (first fit over the gaps). The order of placement matters, so several
// orders are tried and the smallest arena kept. The lower bound is the most
// block bytes live at any one step: no placement can beat it.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

struct Where {
  int block = 0;
  std::size_t offset = 0;  // within the block
};

struct Blocks {
  std::vector<ArenaBlock> blocks;
  std::vector<std::vector<std::string>> values;  // per block
  std::map<std::string, Where> where;

  int create(const std::string& value, std::size_t bytes) {
    blocks.push_back(ArenaBlock{value, 0, bytes, 0, 0});
    values.push_back({value});
    where[value] = {static_cast<int>(blocks.size()) - 1, 0};
    return static_cast<int>(blocks.size()) - 1;
  }
  void alias(const std::string& value, const Where& at) {
    where[value] = at;
    values[at.block].push_back(value);
  }
  // Moves every value of block `from` into block `into`, `offset` bytes in.
  void merge(int from, int into, std::size_t offset) {
    for (const auto& v : values[from]) {
      where[v] = {into, where[v].offset + offset};
      values[into].push_back(v);
    }
    values[from].clear();
    blocks[from].bytes = 0;
  }
  // The block holds exactly this value's bytes (so it can move whole).
  bool owns_exactly(const std::string& value, std::size_t bytes) const {
    const Where& w = where.at(value);
    return w.offset == 0 && blocks[w.block].bytes == bytes;
  }
};

// Places blocks in `order` (indices into `blocks`); returns the arena size.
std::size_t place(std::vector<ArenaBlock>& blocks, const std::vector<std::size_t>& order, std::size_t align) {
  std::vector<std::size_t> placed;
  std::size_t arena = 0;
  for (std::size_t index : order) {
    ArenaBlock& b = blocks[index];
    // Busy intervals of the placed blocks live at the same time, by offset.
    std::vector<std::pair<std::size_t, std::size_t>> busy;
    for (std::size_t p : placed)
      if (blocks[p].live_together(b)) busy.emplace_back(blocks[p].offset, blocks[p].offset + blocks[p].bytes);
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

std::size_t peak_live_bytes(const std::vector<ArenaBlock>& blocks, int steps) {
  std::size_t peak = 0;
  for (int step = 0; step < steps; ++step) {
    std::size_t live = 0;
    for (const auto& block : blocks)
      if (block.first_step <= step && step <= block.last_step) live += block.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

// Scratch that can shrink (OpDef::fit_scratch: im2col tiles) sized to what
// the rest of the arena leaves free at its step, so that it no longer sets
// the arena: a convolution whose columns outweigh the activations (LeNet in
// portable code: 57.6 KB of columns beside 17.3 KB of activations). Returns
// the peak of live bytes that gives, or 0 where nothing would shrink; with
// `apply`, the blocks (and bytes_of) take the smaller sizes. Not by default:
// smaller tiles cost speed (LeNet's portable convolutions 25.2 -> 34.2 us).
// A scratch block lives at its kernel's step alone: its first_step is the
// kernel's index; `full_peak` is peak_live_bytes of the blocks as given.
std::size_t fit_scratch_blocks(const Graph& graph, const std::vector<Kernel>& kernels, const CppTarget& target,
                               const std::set<std::string>& scratch, std::size_t full_peak, bool apply,
                               std::vector<ArenaBlock>& blocks, std::map<std::string, std::size_t>& bytes_of) {
  const int steps = static_cast<int>(kernels.size());
  std::vector<bool> fittable(blocks.size(), false);
  for (std::size_t i = 0; i < blocks.size(); ++i)
    fittable[i] = scratch.count(blocks[i].name) &&
                  kernel_scratch_bytes(graph, kernels[blocks[i].first_step], target, 0) < blocks[i].bytes;
  if (std::find(fittable.begin(), fittable.end(), true) == fittable.end()) return 0;
  std::vector<std::size_t> rest(steps, 0);  // per step, live bytes besides the fittable scratch
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (fittable[i]) continue;
    for (int step = blocks[i].first_step; step <= blocks[i].last_step; ++step) rest[step] += blocks[i].bytes;
  }
  const std::size_t rest_peak = *std::max_element(rest.begin(), rest.end());
  std::vector<ArenaBlock> fitted = blocks;
  for (std::size_t i = 0; i < fitted.size(); ++i) {
    if (!fittable[i]) continue;
    const int step = fitted[i].first_step;
    fitted[i].bytes = kernel_scratch_bytes(graph, kernels[step], target, rest_peak - rest[step]);
  }
  const std::size_t peak = peak_live_bytes(fitted, steps);
  if (peak >= full_peak) return 0;
  if (!apply) return peak;
  for (std::size_t i = 0; i < fitted.size(); ++i)
    if (fittable[i]) bytes_of[fitted[i].name] = fitted[i].bytes;
  blocks = std::move(fitted);
  return peak;
}

}  // namespace

MemoryPlan plan_memory(const Graph& graph, const std::vector<Kernel>& kernels, const CppTarget& target,
                       bool share_buffers, bool small_arena) {
  MemoryPlan plan;
  auto in_arena = [&](const std::string& v) { return !graph.is_output(v) && !graph.is_input(v) && !graph.is_constant(v); };
  std::map<std::string, int> made, last_read;
  for (int step = 0; step < static_cast<int>(kernels.size()); ++step) {
    for (const auto& in : kernels[step].inputs) last_read[in] = step;
    for (const auto& out : kernels[step].outputs) made[out] = step;
  }
  auto last_use = [&](const std::string& v) {
    auto it = last_read.find(v);
    return it == last_read.end() ? made.at(v) : it->second;
  };

  Blocks b;
  std::map<std::string, std::size_t> bytes_of;
  std::set<std::string> scratch_values;  // the kernels' scratch buffers
  auto value_bytes = [&](const std::string& v) {
    auto it = bytes_of.find(v);
    return it != bytes_of.end() ? it->second : graph.type(v).bytes();
  };
  for (int step = 0; step < static_cast<int>(kernels.size()); ++step) {
    const Kernel& k = kernels[step];
    const Node& first = graph.nodes[k.nodes.front()];
    if (const std::size_t scratch = kernel_scratch_bytes(graph, k, target)) {
      const std::string name = scratch_value(k);
      bytes_of[name] = scratch;
      made[name] = step;
      scratch_values.insert(name);
      b.create(name, scratch);
    }
    for (const auto& out : k.outputs) {
      if (!in_arena(out)) continue;
      if (k.kind == KernelKind::kView) {
        auto src = b.where.find(first.inputs[0]);
        if (src != b.where.end()) b.alias(out, src->second);
        continue;  // a view of an input or a weight is that pointer, not arena bytes
      }
      b.create(out, graph.type(out).bytes());
    }
    if (!share_buffers) continue;

    const OpDef& def = find_op(first.op);
    if (k.kind == KernelKind::kOp && def.input_placement && b.where.count(first.outputs[0])) {
      std::vector<TensorType> in_types;
      for (const auto& in : first.inputs) in_types.push_back(graph.type(in));
      const std::vector<std::size_t> offsets = def.input_placement(first.attrs, in_types, graph.type(first.outputs[0]));
      const Where out = b.where.at(first.outputs[0]);
      for (std::size_t i = 0; i < offsets.size(); ++i) {
        const std::string& in = first.inputs[i];
        if (std::count(first.inputs.begin(), first.inputs.end(), in) != 1 || !b.where.count(in)) continue;
        if (!b.owns_exactly(in, graph.type(in).bytes()) || b.where.at(in).block == out.block) continue;
        b.merge(b.where.at(in).block, out.block, out.offset + offsets[i]);
      }
    }
    if (k.kind == KernelKind::kElementwise) {
      const std::string& out = k.outputs.back();
      const bool all_inplace = std::all_of(k.nodes.begin(), k.nodes.end(),
                                           [&](int n) { return find_op(graph.nodes[n].op).inplace; });
      if (!all_inplace || !b.where.count(out) || b.values[b.where.at(out).block].size() != 1) continue;
      const std::size_t bytes = graph.type(out).bytes();
      for (const auto& in : k.inputs) {
        if (!b.where.count(in) || graph.type(in).shape != graph.type(out).shape) continue;
        if (!b.owns_exactly(in, bytes)) continue;
        const int block = b.where.at(in).block;
        int block_last = 0;
        for (const auto& v : b.values[block]) block_last = std::max(block_last, last_use(v));
        if (block_last != step) continue;
        b.merge(b.where.at(out).block, block, 0);
        break;
      }
    }
  }

  // Live ranges of the blocks that still hold values.
  std::vector<ArenaBlock> blocks;
  std::vector<int> renumber(b.blocks.size(), -1);
  for (std::size_t i = 0; i < b.blocks.size(); ++i) {
    if (b.values[i].empty()) continue;
    ArenaBlock block = b.blocks[i];
    block.first_step = static_cast<int>(kernels.size());
    block.last_step = 0;
    for (const auto& v : b.values[i]) {
      block.first_step = std::min(block.first_step, made.at(v));
      block.last_step = std::max(block.last_step, last_use(v));
    }
    renumber[i] = static_cast<int>(blocks.size());
    blocks.push_back(block);
  }
  plan.lower_bound_bytes = peak_live_bytes(blocks, static_cast<int>(kernels.size()));
  plan.small_arena_bound =
      fit_scratch_blocks(graph, kernels, target, scratch_values, plan.lower_bound_bytes, small_arena, blocks, bytes_of);
  if (small_arena && plan.small_arena_bound) plan.lower_bound_bytes = plan.small_arena_bound;
  for (const auto& [value, where] : b.where) plan.naive_bytes += align_up(value_bytes(value), plan.alignment);

  using Less = std::function<bool(const ArenaBlock&, const ArenaBlock&)>;
  auto key = [](long long primary, long long secondary, const ArenaBlock& x) {
    return std::make_tuple(primary, secondary, x.name);
  };
  const std::vector<std::pair<std::string, Less>> strategies = {
      {"greedy-by-size",
       [&](const ArenaBlock& x, const ArenaBlock& y) {
         return key(-static_cast<long long>(x.bytes), x.first_step, x) <
                key(-static_cast<long long>(y.bytes), y.first_step, y);
       }},
      {"greedy-by-first-use",
       [&](const ArenaBlock& x, const ArenaBlock& y) {
         return key(x.first_step, -static_cast<long long>(x.bytes), x) <
                key(y.first_step, -static_cast<long long>(y.bytes), y);
       }},
      {"greedy-by-longest-life",
       [&](const ArenaBlock& x, const ArenaBlock& y) {
         return key(x.first_step - x.last_step, -static_cast<long long>(x.bytes), x) <
                key(y.first_step - y.last_step, -static_cast<long long>(y.bytes), y);
       }},
      {"greedy-by-area",
       [&](const ArenaBlock& x, const ArenaBlock& y) {
         const auto area = [](const ArenaBlock& z) {
           return -static_cast<long long>(z.bytes) * (z.last_step - z.first_step + 1);
         };
         return key(area(x), x.first_step, x) < key(area(y), y.first_step, y);
       }},
  };
  bool first = true;
  for (const auto& [name, less] : strategies) {
    std::vector<ArenaBlock> trial = blocks;
    std::vector<std::size_t> order(trial.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return less(trial[x], trial[y]); });
    const std::size_t arena = place(trial, order, plan.alignment);
    plan.arena_by_strategy[name] = arena;
    if (first || arena < plan.arena_bytes) {
      plan.arena_bytes = arena;
      plan.strategy = name;
      plan.blocks = std::move(trial);
      first = false;
    }
  }
  if (blocks.empty()) plan.strategy = "empty";

  for (const auto& [value, where] : b.where) {
    const int block = renumber[where.block];
    plan.buffers.push_back(BufferPlacement{value, plan.blocks[block].offset + where.offset, value_bytes(value),
                                           made.at(value), last_use(value), block});
  }
  std::sort(plan.buffers.begin(), plan.buffers.end(), [](const BufferPlacement& x, const BufferPlacement& y) {
    return x.first_step != y.first_step ? x.first_step < y.first_step : x.value < y.value;
  });
  return plan;
}

}  // namespace hybgen
