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
//    before it is written);
//  - likewise an int8 convolution's or dense layer's result, over an operand
//    of its epilogue (a residual add) that dies there
//    (int8_epilogue_in_place).
// A block lives from the first step any of its values is made to the last
// step any is read. A kernel's scratch memory (OpKernel::scratch_bytes, what
// its kernel takes on the target generated for) is a block of its own, live
// at that kernel's step only, listed as the value scratch_value(kernel);
// where it would set the arena and can shrink (OpKernel::fit_scratch), it
// takes what the other blocks leave free (fit_scratch_blocks).
//
// Placement: blocks are placed one at a time, each at the lowest 64-byte-
// aligned offset where it overlaps no placed block live at the same time
// (first fit over the gaps). The order of placement matters, so several
// orders are tried and the smallest arena kept. The lower bound is the most
// block bytes live at any one step: no placement can beat it.
//
// A run-time batch (Graph::batch): blocks of values that hold batch items
// are placed apart from the others, at one item's size, after them
// (ArenaBlock::per_item); at n items each lies n times as far in and spans n
// times its bytes, so the plan holds at every batch. No Concat input is
// placed in its output there: at n items its slice is n strided runs.
//
// Cost: a block meets only the placed blocks live at the same time (found
// through an interval index, LiveBlocks), and the bytes live per step come
// from a running sum over the blocks' starts and ends, so planning a long
// graph grows with its blocks and their overlaps, not with their square.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "ops/op.h"
#include "passes/passes.h"

namespace hybgen {
namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// Whether an epilogue kernel's output may take over the block of an operand
// its epilogue reads element for element (a residual add): the int8
// convolution and dense kernels compute a run of outputs into registers or a
// local row, then read the operand at each index before writing the output
// there (hg_q8_epilogue_row, hg_gemm_q8; the M55's Helium residual-add row
// loads a vector of the operand before it stores that vector of outputs).
// Only on the Cortex-M targets for now, whose kernel paths are the ones
// checked for it.
bool int8_epilogue_in_place(const Graph& graph, const Kernel& k, const Target& target) {
  if (target.isa != Isa::kCortexM && target.isa != Isa::kHelium) return false;
  const Node& anchor = graph.nodes[k.nodes.front()];
  if (anchor.op != "Convolution" && anchor.op != "FullyConnected") return false;
  const DType out = graph.type(anchor.outputs[0]).dtype;
  if (out != DType::kInt8 && out != DType::kUInt8) return false;
  return std::all_of(k.nodes.begin() + 1, k.nodes.end(), [&](int n) { return find_op(graph.nodes[n].op).inplace; });
}

struct Where {
  int block = 0;
  std::size_t offset = 0;  // within the block
};

struct Blocks {
  std::vector<ArenaBlock> blocks;
  std::vector<std::vector<std::string>> values;  // per block
  std::vector<int> last_use;                     // per block, the last step any of its values is read
  std::unordered_map<std::string, Where> where;

  int create(const std::string& value, std::size_t bytes, int last) {
    blocks.push_back(ArenaBlock{value, 0, bytes, 0, 0});
    values.push_back({value});
    last_use.push_back(last);
    where[value] = {static_cast<int>(blocks.size()) - 1, 0};
    return static_cast<int>(blocks.size()) - 1;
  }
  void alias(const std::string& value, const Where& at, int last) {
    where[value] = at;
    values[at.block].push_back(value);
    last_use[at.block] = std::max(last_use[at.block], last);
  }
  // Moves every value of block `from` into block `into`, `offset` bytes in.
  void merge(int from, int into, std::size_t offset) {
    for (const auto& v : values[from]) {
      where[v] = {into, where[v].offset + offset};
      values[into].push_back(v);
    }
    values[from].clear();
    blocks[from].bytes = 0;
    last_use[into] = std::max(last_use[into], last_use[from]);
  }
  // The block holds exactly this value's bytes (so it can move whole).
  bool owns_exactly(const std::string& value, std::size_t bytes) const {
    const Where& w = where.at(value);
    return w.offset == 0 && blocks[w.block].bytes == bytes;
  }
};

// The placed blocks, found by the steps they live at: a segment tree over
// the steps holds each block at the O(log steps) tree nodes that together
// cover its life, so the blocks live at step s lie on the path from the root
// to s's leaf. The blocks live at some step of [first, last] are those live
// at `first` and those that start after it, up to `last` (by first step).
class LiveBlocks {
 public:
  explicit LiveBlocks(int steps) {
    while (leaves_ < steps) leaves_ *= 2;
    tree_.resize(2 * static_cast<std::size_t>(leaves_));
  }
  // `first` <= `last`, both in [0, steps).
  void add(std::size_t block, int first, int last) {
    for (int lo = first + leaves_, hi = last + leaves_ + 1; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) tree_[lo++].push_back(block);
      if (hi & 1) tree_[--hi].push_back(block);
    }
    starts_.emplace(first, block);
  }
  // Calls f(block) once for each block added that lives at a step of [first, last].
  template <class F>
  void for_each_live_in(int first, int last, F f) const {
    for (int node = first + leaves_; node >= 1; node /= 2)
      for (std::size_t block : tree_[node]) f(block);
    for (auto it = starts_.upper_bound(first); it != starts_.end() && it->first <= last; ++it) f(it->second);
  }

 private:
  int leaves_ = 1;
  std::vector<std::vector<std::size_t>> tree_;
  std::multimap<int, std::size_t> starts_;
};

// Places blocks in `order` (indices into `blocks`); returns the arena size.
// `steps`: the kernels; every block lives within [0, steps).
std::size_t place(std::vector<ArenaBlock>& blocks, const std::vector<std::size_t>& order, std::size_t align,
                  int steps) {
  LiveBlocks placed(steps);
  std::size_t arena = 0;
  for (std::size_t index : order) {
    ArenaBlock& b = blocks[index];
    // Busy intervals of the placed blocks live at the same time, by offset.
    std::vector<std::pair<std::size_t, std::size_t>> busy;
    placed.for_each_live_in(b.first_step, b.last_step, [&](std::size_t p) {
      busy.emplace_back(blocks[p].offset, blocks[p].offset + blocks[p].bytes);
    });
    std::sort(busy.begin(), busy.end());
    std::size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + b.bytes <= begin) break;
      offset = std::max(offset, align_up(end, align));
    }
    b.offset = offset;
    arena = std::max(arena, offset + b.bytes);
    placed.add(index, b.first_step, b.last_step);
  }
  return arena;
}

// Bytes of the blocks live at each step of [0, steps): a running sum of the
// bytes that start and end at each step.
std::vector<std::size_t> live_bytes_per_step(const std::vector<ArenaBlock>& blocks, int steps,
                                             const std::vector<bool>* skip = nullptr) {
  std::vector<std::size_t> starting(steps + 1, 0), ending(steps + 1, 0);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (skip && (*skip)[i]) continue;
    const int first = std::max(blocks[i].first_step, 0), last = std::min(blocks[i].last_step, steps - 1);
    if (first > last) continue;
    starting[first] += blocks[i].bytes;
    ending[last + 1] += blocks[i].bytes;
  }
  std::vector<std::size_t> live(steps, 0);
  std::size_t running = 0;
  for (int step = 0; step < steps; ++step) {
    running = running + starting[step] - ending[step];
    live[step] = running;
  }
  return live;
}

std::size_t peak_live_bytes(const std::vector<ArenaBlock>& blocks, int steps) {
  const std::vector<std::size_t> live = live_bytes_per_step(blocks, steps);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

// Scratch that can shrink (OpKernel::fit_scratch: im2col tiles) sized to what
// the rest of the arena leaves free at its step, so that it no longer sets
// the arena: a convolution whose columns outweigh the activations (LeNet in
// portable code: 57.6 KB of columns beside 17.3 KB of activations). Returns
// the peak of live bytes that gives, or 0 where nothing would shrink; with
// `apply`, the blocks (and bytes_of) take the smaller sizes. Not by default:
// smaller tiles cost speed (LeNet's portable convolutions 25.2 -> 34.2 us).
// A scratch block lives at its kernel's step alone: its first_step is the
// kernel's index; `full_peak` is peak_live_bytes of the blocks as given.
std::size_t fit_scratch_blocks(const Graph& graph, const std::vector<Kernel>& kernels, const Target& target,
                               const std::unordered_set<std::string>& scratch, std::size_t full_peak, bool apply,
                               std::vector<ArenaBlock>& blocks,
                               std::unordered_map<std::string, std::size_t>& bytes_of) {
  const int steps = static_cast<int>(kernels.size());
  std::vector<bool> fittable(blocks.size(), false);
  for (std::size_t i = 0; i < blocks.size(); ++i)
    fittable[i] = scratch.count(blocks[i].name) &&
                  kernel_scratch_bytes(graph, kernels[blocks[i].first_step], target, 0) < blocks[i].bytes;
  if (std::find(fittable.begin(), fittable.end(), true) == fittable.end()) return 0;
  // Per step, live bytes besides the fittable scratch.
  const std::vector<std::size_t> rest = live_bytes_per_step(blocks, steps, &fittable);
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

MemoryPlan plan_memory(const Graph& graph, const std::vector<Kernel>& kernels, const Target& target,
                       bool share_buffers, bool small_arena) {
  MemoryPlan plan;
  const std::set<std::string> batched = batch_values(graph);
  if (graph.batch.variable()) plan.max_batch = graph.batch.max;
  std::unordered_set<std::string> outside(graph.inputs.begin(), graph.inputs.end());  // the caller's
  outside.insert(graph.outputs.begin(), graph.outputs.end());
  auto in_arena = [&](const std::string& v) { return !outside.count(v) && !graph.is_constant(v); };
  std::unordered_map<std::string, int> made, last_read;
  for (int step = 0; step < static_cast<int>(kernels.size()); ++step) {
    for (const auto& in : kernels[step].inputs) last_read[in] = step;
    for (const auto& out : kernels[step].outputs) made[out] = step;
  }
  auto last_use = [&](const std::string& v) {
    auto it = last_read.find(v);
    return it == last_read.end() ? made.at(v) : it->second;
  };

  Blocks b;
  std::unordered_map<std::string, std::size_t> bytes_of;
  std::unordered_set<std::string> scratch_values;  // the kernels' scratch buffers
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
      b.create(name, scratch, step);  // read at its own step only
    }
    for (const auto& out : k.outputs) {
      if (!in_arena(out)) continue;
      if (k.kind == KernelKind::kView) {
        auto src = b.where.find(first.inputs[0]);
        if (src != b.where.end()) b.alias(out, src->second, last_use(out));
        continue;  // a view of an input or a weight is that pointer, not arena bytes
      }
      b.create(out, graph.type(out).bytes(), last_use(out));
    }
    if (!share_buffers) continue;

    const OpDef& def = find_op(first.op);
    if (k.kind == KernelKind::kOp && def.input_placement && b.where.count(first.outputs[0]) &&
        !batched.count(first.outputs[0])) {
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
    // The kernel's output takes the block of an input of its shape that
    // dies here and holds nothing else, inputs in `skip` apart.
    auto take_dying_input = [&](const std::vector<std::string>& skip) {
      const std::string& out = k.outputs.back();
      if (!b.where.count(out) || b.values[b.where.at(out).block].size() != 1) return;
      const std::size_t bytes = graph.type(out).bytes();
      for (const auto& in : k.inputs) {
        if (std::count(skip.begin(), skip.end(), in)) continue;
        if (!b.where.count(in) || graph.type(in).shape != graph.type(out).shape) continue;
        if (batched.count(in) != batched.count(out)) continue;
        if (!b.owns_exactly(in, bytes)) continue;
        const int block = b.where.at(in).block;
        if (b.last_use[block] != step) continue;
        b.merge(b.where.at(out).block, block, 0);
        return;
      }
    };
    if (k.kind == KernelKind::kElementwise &&
        std::all_of(k.nodes.begin(), k.nodes.end(), [&](int n) { return find_op(graph.nodes[n].op).inplace; }))
      take_dying_input({});
    // The anchor (a GEMM or convolution) reads all of its own inputs before it writes.
    if (k.kind == KernelKind::kEpilogue && int8_epilogue_in_place(graph, k, target)) take_dying_input(first.inputs);
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
    block.per_item = batched.count(block.name) != 0;
    renumber[i] = static_cast<int>(blocks.size());
    blocks.push_back(block);
  }
  plan.lower_bound_bytes = peak_live_bytes(blocks, static_cast<int>(kernels.size()));
  plan.small_arena_bound =
      fit_scratch_blocks(graph, kernels, target, scratch_values, plan.lower_bound_bytes, small_arena, blocks, bytes_of);
  if (small_arena && plan.small_arena_bound) plan.lower_bound_bytes = plan.small_arena_bound;
  if (plan.max_batch > 1) {  // live bytes at the largest batch
    std::vector<ArenaBlock> largest = blocks;
    for (auto& block : largest)
      if (block.per_item) block.bytes *= static_cast<std::size_t>(plan.max_batch);
    plan.lower_bound_bytes = peak_live_bytes(largest, static_cast<int>(kernels.size()));
  }
  for (const auto& [value, where] : b.where)  // at the largest batch
    plan.naive_bytes += align_up(value_bytes(value), plan.alignment) *
                        static_cast<std::size_t>(batched.count(value) ? plan.max_batch : 1);

  using Less = std::function<bool(const ArenaBlock&, const ArenaBlock&)>;
  auto key = [](long long primary, long long secondary, const ArenaBlock& x) {
    return std::tuple<long long, long long, const std::string&>(primary, secondary, x.name);  // no copy of the name
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
    // The fixed blocks, then apart from them the per-item ones (none without a run-time batch).
    std::size_t region_bytes[2] = {0, 0};
    for (int per_item = 0; per_item < 2; ++per_item) {
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < trial.size(); ++i)
        if (trial[i].per_item == (per_item == 1)) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&, &less = less](std::size_t x, std::size_t y) { return less(trial[x], trial[y]); });
      region_bytes[per_item] = place(trial, order, plan.alignment, static_cast<int>(kernels.size()));
    }
    const std::size_t fixed = region_bytes[1] ? align_up(region_bytes[0], plan.alignment) : region_bytes[0];
    const std::size_t arena = fixed + region_bytes[1] * static_cast<std::size_t>(plan.max_batch);
    plan.arena_by_strategy[name] = arena;
    if (first || arena < plan.arena_bytes) {
      plan.arena_bytes = arena;
      plan.fixed_bytes = fixed;
      plan.item_bytes = region_bytes[1];
      plan.strategy = name;
      plan.blocks = std::move(trial);
      first = false;
    }
  }
  if (blocks.empty()) plan.strategy = "empty";

  for (const auto& [value, where] : b.where) {
    const int block = renumber[where.block];
    plan.buffers.push_back(BufferPlacement{value, plan.blocks[block].offset + where.offset, value_bytes(value),
                                           made.at(value), last_use(value), block, plan.blocks[block].per_item});
  }
  std::sort(plan.buffers.begin(), plan.buffers.end(), [](const BufferPlacement& x, const BufferPlacement& y) {
    return x.first_step != y.first_step ? x.first_step < y.first_step : x.value < y.value;
  });
  return plan;
}

}  // namespace hybgen
