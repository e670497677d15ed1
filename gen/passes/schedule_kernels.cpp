// schedule_kernels: chooses the kernel order, among the valid ones, whose
// memory plan needs the smallest arena.
//
// Where a graph branches (Inception, SqueezeNet's fire modules, DenseNet) the
// order decides how many branch results are alive at once. Candidates, each a
// list schedule over the kernel dependency graph (a kernel is ready once the
// kernels making its inputs have run):
//  - the order fusion produced (the source program's order);
//  - memory-greedy: run the ready kernel that adds the fewest bytes (its
//    outputs minus the inputs it is the last reader of);
//  - depth-first: prefer a ready kernel that reads what the previous kernel
//    made, finishing one branch before starting the next.
// Each candidate is planned with plan_memory and the smallest arena wins;
// ties keep the earlier candidate, so the result is deterministic.
//
// Cost: the ready kernels are kept ordered (memory-greedy: by the bytes they
// would add, updated only for the kernel whose input becomes last-read), so
// a wide graph with thousands of kernels ready at once is not scanned whole
// at every step.
#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "passes/passes.h"

namespace hybgen {
namespace {

struct KernelDag {
  std::vector<std::vector<int>> readers;  // kernel -> kernels reading its outputs, in kernel order
  std::vector<int> pending;               // kernel -> producers not yet run
};

KernelDag build_dag(const std::vector<Kernel>& kernels) {
  std::unordered_map<std::string, int> maker;
  for (int k = 0; k < static_cast<int>(kernels.size()); ++k)
    for (const auto& out : kernels[k].outputs) maker[out] = k;
  KernelDag dag;
  dag.readers.resize(kernels.size());
  std::vector<std::set<int>> producers(kernels.size());
  for (int k = 0; k < static_cast<int>(kernels.size()); ++k)
    for (const auto& in : kernels[k].inputs) {
      auto it = maker.find(in);
      if (it != maker.end() && producers[k].insert(it->second).second) dag.readers[it->second].push_back(k);
    }
  for (const auto& p : producers) dag.pending.push_back(static_cast<int>(p.size()));
  return dag;
}

// Depth-first: the lowest ready kernel that reads what the previous kernel
// made, else the lowest ready kernel.
std::vector<int> depth_first_order(const KernelDag& dag) {
  const int count = static_cast<int>(dag.pending.size());
  std::vector<int> pending = dag.pending, order;
  std::set<int> ready;
  std::vector<bool> is_ready(count, false);
  for (int k = 0; k < count; ++k)
    if (pending[k] == 0) ready.insert(k), is_ready[k] = true;
  int previous = -1;
  while (!ready.empty()) {
    int chosen = *ready.begin();
    if (previous >= 0)
      for (int r : dag.readers[previous])  // in kernel order: the first ready one is the lowest
        if (is_ready[r]) {
          chosen = r;
          break;
        }
    ready.erase(chosen);
    is_ready[chosen] = false;
    order.push_back(chosen);
    for (int r : dag.readers[chosen])
      if (--pending[r] == 0) ready.insert(r), is_ready[r] = true;
    previous = chosen;
  }
  return order;
}

// Memory-greedy: the ready kernel that adds the fewest arena bytes (its
// outputs, minus the inputs no other kernel left to run reads), the lowest
// on a tie. A kernel's bytes change only when one of its inputs comes to
// have it as its last reader (or none), so only then is it ranked anew.
std::vector<int> memory_greedy_order(const Graph& graph, const std::vector<Kernel>& kernels, const KernelDag& dag) {
  const int count = static_cast<int>(kernels.size());
  std::unordered_set<std::string> outside(graph.inputs.begin(), graph.inputs.end());
  outside.insert(graph.outputs.begin(), graph.outputs.end());
  auto arena_bytes = [&](const std::string& v) {
    return outside.count(v) || graph.is_constant(v) ? 0.0 : static_cast<double>(graph.type(v).bytes());
  };
  // Readers left per value (one per kernel input), and which kernels read it.
  std::unordered_map<std::string, int> remaining;
  std::unordered_map<std::string, std::vector<int>> read_by;
  for (int k = 0; k < count; ++k)
    for (const auto& in : kernels[k].inputs) {
      ++remaining[in];
      read_by[in].push_back(k);
    }
  auto added_bytes = [&](int k) {
    double delta = 0;
    for (const auto& out : kernels[k].outputs) delta += kernels[k].kind == KernelKind::kView ? 0 : arena_bytes(out);
    for (const auto& in : kernels[k].inputs)
      if (remaining[in] == 1) delta -= arena_bytes(in);
    return delta;
  };
  std::vector<int> pending = dag.pending, order;
  std::vector<double> rank(count, 0);  // of the ready kernels: their added_bytes
  std::vector<bool> is_ready(count, false);
  std::set<std::pair<double, int>> ready;
  auto make_ready = [&](int k) {
    rank[k] = added_bytes(k);
    is_ready[k] = true;
    ready.emplace(rank[k], k);
  };
  for (int k = 0; k < count; ++k)
    if (pending[k] == 0) make_ready(k);
  while (!ready.empty()) {
    const int chosen = ready.begin()->second;
    ready.erase(ready.begin());
    is_ready[chosen] = false;
    order.push_back(chosen);
    for (const auto& in : kernels[chosen].inputs) {
      const int left = --remaining[in];
      if (left > 1) continue;
      for (int k : read_by[in])  // now last-read (or unread): rank its ready readers anew
        if (is_ready[k]) {
          ready.erase({rank[k], k});
          rank[k] = added_bytes(k);
          ready.emplace(rank[k], k);
        }
    }
    for (int r : dag.readers[chosen])
      if (--pending[r] == 0) make_ready(r);
  }
  return order;
}

}  // namespace

std::vector<Kernel> schedule_kernels(const Graph& graph, std::vector<Kernel> kernels, const Target& target,
                                     bool small_arena) {
  if (kernels.size() < 3) return kernels;
  const KernelDag dag = build_dag(kernels);
  std::vector<std::vector<int>> candidates;
  std::vector<int> given(kernels.size());
  for (std::size_t i = 0; i < given.size(); ++i) given[i] = static_cast<int>(i);
  candidates.push_back(given);
  candidates.push_back(memory_greedy_order(graph, kernels, dag));
  candidates.push_back(depth_first_order(dag));

  std::vector<Kernel> best;
  std::size_t best_arena = 0;
  for (const auto& order : candidates) {
    if (order.size() != kernels.size()) continue;  // a cycle: cannot happen after fuse(), but never emit a bad order
    std::vector<Kernel> trial;
    for (int k : order) trial.push_back(kernels[k]);
    const std::size_t arena = plan_memory(graph, trial, target, true, small_arena).arena_bytes;
    if (best.empty() || arena < best_arena) {
      best = std::move(trial);
      best_arena = arena;
    }
  }
  return best;
}

}  // namespace hybgen
