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
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "passes/passes.h"

namespace hybgen {
namespace {

struct KernelDag {
  std::vector<std::vector<int>> readers;  // kernel -> kernels reading its outputs
  std::vector<int> pending;               // kernel -> producers not yet run
  std::vector<std::set<int>> producers;
};

KernelDag build_dag(const std::vector<Kernel>& kernels) {
  std::map<std::string, int> maker;
  for (int k = 0; k < static_cast<int>(kernels.size()); ++k)
    for (const auto& out : kernels[k].outputs) maker[out] = k;
  KernelDag dag;
  dag.readers.resize(kernels.size());
  dag.producers.resize(kernels.size());
  for (int k = 0; k < static_cast<int>(kernels.size()); ++k)
    for (const auto& in : kernels[k].inputs) {
      auto it = maker.find(in);
      if (it != maker.end() && dag.producers[k].insert(it->second).second) dag.readers[it->second].push_back(k);
    }
  for (const auto& p : dag.producers) dag.pending.push_back(static_cast<int>(p.size()));
  return dag;
}

// Runs a list schedule: `pick` chooses among the ready kernels (sorted by
// index) given the previously scheduled one (-1 at the start).
using Pick = std::function<int(const std::vector<int>& ready, int previous)>;

std::vector<int> list_schedule(const std::vector<Kernel>& kernels, const Pick& pick) {
  KernelDag dag = build_dag(kernels);
  std::vector<int> ready, order;
  for (int k = 0; k < static_cast<int>(kernels.size()); ++k)
    if (dag.pending[k] == 0) ready.push_back(k);
  int previous = -1;
  while (!ready.empty()) {
    const int chosen = pick(ready, previous);
    ready.erase(std::find(ready.begin(), ready.end(), chosen));
    order.push_back(chosen);
    for (int r : dag.readers[chosen])
      if (--dag.pending[r] == 0) ready.insert(std::upper_bound(ready.begin(), ready.end(), r), r);
    previous = chosen;
  }
  return order;
}

}  // namespace

std::vector<Kernel> schedule_kernels(const Graph& graph, std::vector<Kernel> kernels, const CppTarget& target,
                                     bool small_arena) {
  if (kernels.size() < 3) return kernels;
  const KernelDag dag = build_dag(kernels);
  // Readers left per value, to know when a kernel frees an input.
  std::map<std::string, int> reader_count;
  for (const auto& k : kernels)
    for (const auto& in : k.inputs) ++reader_count[in];
  auto arena_bytes = [&](const std::string& v) {
    return graph.is_input(v) || graph.is_output(v) || graph.is_constant(v) ? 0.0
                                                                            : static_cast<double>(graph.type(v).bytes());
  };

  std::vector<std::vector<int>> candidates;
  std::vector<int> given(kernels.size());
  for (std::size_t i = 0; i < given.size(); ++i) given[i] = static_cast<int>(i);
  candidates.push_back(given);

  std::map<std::string, int> remaining = reader_count;
  candidates.push_back(list_schedule(kernels, [&](const std::vector<int>& ready, int) {
    int best = ready.front();
    double best_delta = 0;
    for (int k : ready) {
      double delta = 0;
      for (const auto& out : kernels[k].outputs) delta += kernels[k].kind == KernelKind::kView ? 0 : arena_bytes(out);
      for (const auto& in : kernels[k].inputs)
        if (remaining[in] == 1) delta -= arena_bytes(in);
      if (k == ready.front() || delta < best_delta) {
        best = k;
        best_delta = delta;
      }
    }
    for (const auto& in : kernels[best].inputs) --remaining[in];
    return best;
  }));

  candidates.push_back(list_schedule(kernels, [&](const std::vector<int>& ready, int previous) {
    if (previous >= 0)
      for (int k : ready)
        if (dag.producers[k].count(previous)) return k;
    return ready.front();
  }));

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
