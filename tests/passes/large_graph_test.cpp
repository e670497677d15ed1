// Large graphs: 100k-node chains through validate and the whole
// pipeline, listed in order and last node first, without recursing with the
// graph's depth; a cycle hidden in one is still named. Correctness only: the
// time they take is shown by bench/bench_large_graph.cpp, not asserted here.
// Also the rewrites made linear for them, against the plain algorithms they
// replaced, on random small graphs.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "graph_builders.h"
#include "ops/gemm_pack.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "pipeline.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

constexpr int kLarge = 100000;

std::string node_name(int i) { return "n" + std::to_string(i); }

// data (1, 16) -> relu -> +0.5 -> relu -> ... : `count` nodes, node i named
// n<i> reading node i - 1; with `reversed`, listed last node first.
Graph elementwise_chain(int count, bool reversed) {
  Graph g;
  g.name = "chain";
  g.add_input("data", {{1, 16}});
  for (int i = 0; i < count; ++i) {
    const std::string previous = i == 0 ? "data" : node_name(i - 1);
    if (i % 2 == 0)
      g.nodes.push_back(make_node(node_name(i), "Activation", {previous}, attrs_of({{"act_type", std::string("relu")}})));
    else
      g.nodes.push_back(make_node(node_name(i), "_plus_scalar", {previous}, attrs_of({{"scalar", 0.5}})));
  }
  if (reversed) std::reverse(g.nodes.begin(), g.nodes.end());
  g.outputs = {node_name(count - 1)};
  return g;
}

bool in_chain_order(const Graph& g) {
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].name != node_name(i)) return false;
  return true;
}

TEST(LargeGraph, ValidateAcceptsAChainListedLastNodeFirst) {
  Graph g = elementwise_chain(kLarge, true);
  EXPECT_NO_THROW(validate(g));
  EXPECT_EQ(g.nodes.size(), static_cast<std::size_t>(kLarge));
}

TEST(LargeGraph, CompilesAChainListedLastNodeFirst) {
  const CompiledGraph c = compile_graph(elementwise_chain(kLarge, true));
  ASSERT_EQ(c.graph.nodes.size(), static_cast<std::size_t>(kLarge));
  EXPECT_TRUE(in_chain_order(c.graph));  // scheduled
  // One loop over the whole chain; only the graph output is stored, outside the arena.
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].nodes.size(), static_cast<std::size_t>(kLarge));
  EXPECT_EQ(c.kernels[0].inputs, std::vector<std::string>{"data"});
  EXPECT_EQ(c.kernels[0].outputs, std::vector<std::string>{node_name(kLarge - 1)});
  EXPECT_EQ(c.plan.arena_bytes, 0u);
}

// Long enough that a pass quadratic in the nodes would be noticed, short
// enough to stay quick where 100k nodes are not the point.
constexpr int kLong = 20000;

TEST(LargeGraph, CompilesAChainInOrderWithoutTheOptimizer) {
  // One kernel and one buffer per node: the memory planner and its check
  // see a block per node.
  CompileOptions options;
  options.optimize = false;
  const CompiledGraph c = compile_graph(elementwise_chain(kLong, false), options);
  EXPECT_EQ(c.kernels.size(), static_cast<std::size_t>(kLong));
  EXPECT_EQ(c.plan.buffers.size(), static_cast<std::size_t>(kLong - 1));  // all but the graph output
  // Each intermediate lives two steps, so two 64-byte buffers take turns.
  EXPECT_EQ(c.plan.arena_bytes, 128u);
  EXPECT_EQ(c.plan.lower_bound_bytes, 128u);
}

TEST(LargeGraph, NamesACycleThroughAllItsNodes) {
  // n0 reads the last node: every node is on the cycle, found by a search as
  // deep as the graph.
  Graph g = elementwise_chain(kLarge, false);
  g.nodes[0].inputs = {node_name(kLarge - 1)};
  const std::string message = testing::error_of([&] { validate(g); });
  std::string expected = "the graph has a cycle through nodes n0";
  for (int i = kLarge - 1; i >= 1; --i) expected += " -> " + node_name(i);
  EXPECT_EQ(message, expected);
}

TEST(LargeGraph, NamesACycleAtTheFarEndOfADeepSearch) {
  // Listed last node first, the search goes 100k nodes deep before it meets
  // n5 and n6 reading each other.
  Graph g = elementwise_chain(kLarge, true);
  for (Node& n : g.nodes)
    if (n.name == "n5") n.inputs = {"n6"};
  EXPECT_EQ(testing::error_of([&] { validate(g); }), "the graph has a cycle through nodes n6 -> n5");
  EXPECT_EQ(testing::error_of([&] { compile_graph(g); }), "the graph has a cycle through nodes n6 -> n5");
}

TEST(LargeGraph, RemovesIdentitiesAllAlongAChain) {
  // Every other node a Dropout, the last one a graph output.
  Graph g;
  g.add_input("data", {{1, 16}});
  for (int i = 0; i < kLong; ++i) {
    const std::string previous = i == 0 ? "data" : node_name(i - 1);
    if (i % 2 == 0)
      g.nodes.push_back(make_node(node_name(i), "Activation", {previous}, attrs_of({{"act_type", std::string("relu")}})));
    else
      g.nodes.push_back(make_node(node_name(i), "Dropout", {previous}));
  }
  g.outputs = {node_name(kLong - 1)};
  validate(g);
  infer_shapes(g);
  EXPECT_TRUE(remove_identities(g));
  ASSERT_EQ(g.nodes.size(), static_cast<std::size_t>(kLong / 2));
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"data"});
  for (int i = 1; i < kLong / 2; ++i) ASSERT_EQ(g.nodes[i].inputs, g.nodes[i - 1].outputs) << i;
  EXPECT_EQ(g.nodes.back().outputs, std::vector<std::string>{node_name(kLong - 1)});  // took the output's name
  EXPECT_EQ(g.types.size(), static_cast<std::size_t>(kLong / 2 + 1));
}

// remove_identities as it was written first, renaming through every node
// per identity: what the one-walk version must agree with.
void rename_everywhere(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) {
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
    std::replace(n.outputs.begin(), n.outputs.end(), from, to);
  }
  std::replace(g.outputs.begin(), g.outputs.end(), from, to);
  auto it = g.types.find(from);
  if (it != g.types.end()) {
    g.types[to] = it->second;
    g.types.erase(from);
  }
}

bool plain_remove_identities(Graph& graph) {
  bool changed = false;
  for (std::size_t i = 0; i < graph.nodes.size();) {
    const Node node = graph.nodes[i];
    const OpDef& def = find_op(node.op);
    if (!def.is_identity || !def.is_identity(node.attrs) || node.inputs.empty() || node.outputs.size() != 1) {
      ++i;
      continue;
    }
    const std::string in = node.inputs[0], out = node.outputs[0];
    if (graph.is_output(out)) {
      if (graph.is_input(in) || graph.is_constant(in) || graph.is_output(in)) {
        ++i;
        continue;
      }
      graph.nodes.erase(graph.nodes.begin() + static_cast<long>(i));
      graph.types.erase(out);
      rename_everywhere(graph, in, out);
    } else {
      graph.nodes.erase(graph.nodes.begin() + static_cast<long>(i));
      graph.types.erase(out);
      rename_everywhere(graph, out, in);
    }
    changed = true;
  }
  return changed;
}

// A random DAG over 4-element values: relu, add, Dropout and _copy nodes
// reading earlier values (two inputs and a weight among them), with random
// graph outputs, some of them inputs, identities or identities of identities.
Graph random_identity_graph(std::mt19937& rng) {
  Graph g;
  g.add_input("x0", {{4}});
  g.add_input("x1", {{4}});
  g.add_constant("w", Constant::f32({4}, {1, 2, 3, 4}));
  std::vector<std::string> values = {"x0", "x1", "w"};
  const int count = std::uniform_int_distribution<int>(1, 12)(rng);
  for (int i = 0; i < count; ++i) {
    auto pick = [&] { return values[std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng)]; };
    // Identities of recent values more often, so they chain.
    auto recent = [&] { return values[values.size() - 1 - std::uniform_int_distribution<std::size_t>(0, std::min<std::size_t>(2, values.size() - 1))(rng)]; };
    const std::string name = "v" + std::to_string(i);
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
      case 0:
        g.nodes.push_back(make_node(name, "Activation", {pick()}, attrs_of({{"act_type", std::string("relu")}})));
        break;
      case 1: g.nodes.push_back(make_node(name, "broadcast_add", {pick(), pick()})); break;
      case 2: g.nodes.push_back(make_node(name, "Dropout", {recent()})); break;
      default: g.nodes.push_back(make_node(name, "_copy", {recent()})); break;
    }
    values.push_back(name);
  }
  const int outputs = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int i = 0; i < outputs; ++i) {
    const std::string v = values[std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng)];
    if (!g.is_output(v)) g.outputs.push_back(v);
  }
  validate(g);
  infer_shapes(g);
  return g;
}

TEST(LargeGraph, RemoveIdentitiesAgreesWithRenamingAtOnce) {
  std::mt19937 rng(22);
  for (int trial = 0; trial < 3000; ++trial) {
    const Graph g = random_identity_graph(rng);
    Graph fast = g, plain = g;
    ASSERT_EQ(remove_identities(fast), plain_remove_identities(plain)) << trial;
    ASSERT_EQ(fast.nodes.size(), plain.nodes.size()) << trial;
    for (std::size_t i = 0; i < fast.nodes.size(); ++i) {
      EXPECT_EQ(fast.nodes[i].name, plain.nodes[i].name) << trial;
      EXPECT_EQ(fast.nodes[i].inputs, plain.nodes[i].inputs) << trial << " " << fast.nodes[i].name;
      EXPECT_EQ(fast.nodes[i].outputs, plain.nodes[i].outputs) << trial << " " << fast.nodes[i].name;
    }
    EXPECT_EQ(fast.outputs, plain.outputs) << trial;
    EXPECT_EQ(fast.types, plain.types) << trial;
    if (::testing::Test::HasFailure()) break;
  }
}

// schedule_kernels as it was written first, scanning every ready kernel at
// each step: what the ordered version must agree with.
std::vector<Kernel> plain_schedule_kernels(const Graph& graph, std::vector<Kernel> kernels, const Target& target) {
  if (kernels.size() < 3) return kernels;
  const int count = static_cast<int>(kernels.size());
  std::map<std::string, int> maker;
  for (int k = 0; k < count; ++k)
    for (const auto& out : kernels[k].outputs) maker[out] = k;
  std::vector<std::vector<int>> readers(count);
  std::vector<std::set<int>> producers(count);
  for (int k = 0; k < count; ++k)
    for (const auto& in : kernels[k].inputs) {
      auto it = maker.find(in);
      if (it != maker.end() && producers[k].insert(it->second).second) readers[it->second].push_back(k);
    }
  using Pick = std::function<int(const std::vector<int>& ready, int previous)>;
  auto list_schedule = [&](const Pick& pick) {
    std::vector<int> pending, ready, order;
    for (const auto& p : producers) pending.push_back(static_cast<int>(p.size()));
    for (int k = 0; k < count; ++k)
      if (pending[k] == 0) ready.push_back(k);
    int previous = -1;
    while (!ready.empty()) {
      const int chosen = pick(ready, previous);
      ready.erase(std::find(ready.begin(), ready.end(), chosen));
      order.push_back(chosen);
      for (int r : readers[chosen])
        if (--pending[r] == 0) ready.insert(std::upper_bound(ready.begin(), ready.end(), r), r);
      previous = chosen;
    }
    return order;
  };
  auto arena_bytes = [&](const std::string& v) {
    return graph.is_input(v) || graph.is_output(v) || graph.is_constant(v) ? 0.0
                                                                            : static_cast<double>(graph.type(v).bytes());
  };
  std::map<std::string, int> remaining;
  for (const auto& k : kernels)
    for (const auto& in : k.inputs) ++remaining[in];
  std::vector<std::vector<int>> candidates;
  std::vector<int> given(count);
  for (int i = 0; i < count; ++i) given[i] = i;
  candidates.push_back(given);
  candidates.push_back(list_schedule([&](const std::vector<int>& ready, int) {
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
  candidates.push_back(list_schedule([&](const std::vector<int>& ready, int previous) {
    if (previous >= 0)
      for (int k : ready)
        if (producers[k].count(previous)) return k;
    return ready.front();
  }));
  std::vector<Kernel> best;
  std::size_t best_arena = 0;
  for (const auto& order : candidates) {
    std::vector<Kernel> trial;
    for (int k : order) trial.push_back(kernels[k]);
    const std::size_t arena = plan_memory(graph, trial, target).arena_bytes;
    if (best.empty() || arena < best_arena) {
      best = std::move(trial);
      best_arena = arena;
    }
  }
  return best;
}

// A random branching graph over values of several widths: relu, softmax,
// +1, dense layers, adds of same-width values, concatenations and flattens.
Graph random_branching_graph(std::mt19937& rng) {
  Graph g;
  g.add_input("x0", {{1, 16}});
  g.add_input("x1", {{1, 8}});
  std::vector<std::pair<std::string, int64_t>> values = {{"x0", 16}, {"x1", 8}};
  auto any = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int count = std::uniform_int_distribution<int>(3, 30)(rng);
  for (int i = 0; i < count; ++i) {
    const std::string name = "v" + std::to_string(i);
    const auto [v, width] = values[any(values.size())];
    int64_t out = width;
    switch (any(7)) {
      case 0: g.nodes.push_back(make_node(name, "Activation", {v}, attrs_of({{"act_type", std::string("relu")}}))); break;
      case 1: g.nodes.push_back(make_node(name, "softmax", {v})); break;
      case 2: g.nodes.push_back(make_node(name, "_plus_scalar", {v}, attrs_of({{"scalar", 1.0}}))); break;
      case 3: {
        out = int64_t{4} << (2 * any(3));  // 4, 16 or 64
        g.add_constant(name + "_w", Constant::f32({out, width}, testing::seeded_values(out * width, i)));
        g.nodes.push_back(make_node(name, "FullyConnected", {v, name + "_w"},
                                    attrs_of({{"num_hidden", out}, {"no_bias", true}})));
        break;
      }
      case 4: {
        std::vector<std::string> same;
        for (const auto& [w, n] : values)
          if (n == width) same.push_back(w);
        g.nodes.push_back(make_node(name, "broadcast_add", {v, same[any(same.size())]}));
        break;
      }
      case 5: {
        const auto [w, n] = values[any(values.size())];
        out = width + n;
        g.nodes.push_back(make_node(name, "Concat", {v, w}, attrs_of({{"dim", int64_t{1}}})));
        break;
      }
      default: g.nodes.push_back(make_node(name, "Flatten", {v})); break;
    }
    values.emplace_back(name, out);
  }
  g.outputs = {values.back().first};
  for (int extra = static_cast<int>(any(3)); extra > 0; --extra) {
    const std::string v = values[any(values.size())].first;
    if (!g.is_output(v)) g.outputs.push_back(v);
  }
  std::shuffle(g.nodes.begin(), g.nodes.end(), rng);  // the scheduler puts them in order
  return g;
}

std::vector<std::string> kernel_names(const std::vector<Kernel>& kernels) {
  std::vector<std::string> names;
  for (const Kernel& k : kernels) names.push_back(k.name);
  return names;
}

TEST(LargeGraph, ScheduleKernelsAgreesWithScanningTheReadyKernels) {
  std::mt19937 rng(2222);
  int reordered = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const Graph g = random_branching_graph(rng);
    std::vector<Kernel> fused, scheduled;
    CompileOptions options;
    options.observer = [&](const std::string& pass, const CompiledGraph& state) {
      if (pass == "fuse") fused = state.kernels;
      if (pass == "schedule_kernels") scheduled = state.kernels;
    };
    const CompiledGraph c = compile_graph(g, options);
    ASSERT_EQ(kernel_names(scheduled), kernel_names(plain_schedule_kernels(c.graph, fused, options.target))) << trial;
    reordered += kernel_names(scheduled) != kernel_names(fused);
  }
  EXPECT_GT(reordered, 50);  // graphs where another order than fusion's won
}

// Random blocks placed at random: verify() must find an overlap exactly when
// comparing every pair does, and name the same first pair.
TEST(LargeGraph, VerifyFindsTheOverlapsComparingEveryPairFinds) {
  std::mt19937 rng(7);
  auto below = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  int overlapping = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    MemoryPlan plan;
    const int blocks = 1 + below(8);
    for (int i = 0; i < blocks; ++i) {
      ArenaBlock b;
      b.name = "b" + std::to_string(i);
      b.offset = static_cast<std::size_t>(64 * below(6));
      b.bytes = static_cast<std::size_t>(below(4) == 0 ? 0 : 16 * (1 + below(12)));
      b.first_step = below(6);
      b.last_step = b.first_step + below(4);
      plan.arena_bytes = std::max(plan.arena_bytes, b.offset + b.bytes);
      plan.blocks.push_back(b);
    }
    std::string expected = "(no error)";
    for (std::size_t i = 0; i < plan.blocks.size() && expected == "(no error)"; ++i)
      for (std::size_t j = i + 1; j < plan.blocks.size(); ++j) {
        const ArenaBlock& a = plan.blocks[i];
        const ArenaBlock& b = plan.blocks[j];
        if (a.bytes && b.bytes && a.live_together(b) && a.overlaps(b)) {
          expected = "memory plan: '" + a.name + "' [" + std::to_string(a.offset) + ", " +
                     std::to_string(a.offset + a.bytes) + ") and '" + b.name + "' [" + std::to_string(b.offset) + ", " +
                     std::to_string(b.offset + b.bytes) + ") overlap while both are live";
          break;
        }
      }
    overlapping += expected != "(no error)";
    ASSERT_EQ(testing::error_of([&] { plan.verify(); }), expected) << trial;
  }
  EXPECT_GT(overlapping, 300);  // both outcomes are tried often
  EXPECT_LT(overlapping, 2700);
}

}  // namespace
}  // namespace hybgen
