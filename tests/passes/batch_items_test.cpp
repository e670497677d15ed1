// A run-time batch (Graph::batch): check_batch_separable accepts a graph
// whose every node computes item by item and names the first that does not;
// batch_values says which values hold items; plan_memory lays those out
// apart, per item, so the plan holds at every batch.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "pass_test_support.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

Graph with_batch(Graph g, int64_t min, int64_t max) {
  g.batch = BatchRange{min, max, {"data"}};
  return testing::prepared(std::move(g));
}

// data -> relu -> softmax(axis) -> out, plus a fixed input `mask` added after.
Graph softmax_graph(int64_t axis) {
  Graph g;
  g.add_input("data", {{1, 6}});
  g.add_input("mask", {{1, 6}});
  g.nodes.push_back(make_node("relu", "Activation", {"data"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("soft", "softmax", {"relu"}, attrs_of({{"axis", axis}})));
  g.nodes.push_back(make_node("masked", "broadcast_add", {"soft", "mask"}));
  g.nodes.push_back(make_node("mask_relu", "Activation", {"mask"}, attrs_of({{"act_type", std::string("relu")}})));
  g.outputs = {"masked", "mask_relu"};
  return g;
}

TEST(BatchItems, ASeparableGraphIsAcceptedAndItsItemValuesFound) {
  const Graph g = with_batch(testing::seed_mlp(), 1, 64);
  check_batch_separable(g);
  const std::set<std::string> items = batch_values(g);
  EXPECT_EQ(items.size(), 6u);  // data and the five nodes' outputs
  EXPECT_TRUE(items.count("data") && items.count("dense2_fwd"));
  EXPECT_FALSE(items.count("dense0_weight"));

  const Graph softmax = with_batch(softmax_graph(-1), 1, 8);
  check_batch_separable(softmax);
  // A fixed input and what only it computes hold no items.
  EXPECT_EQ(batch_values(softmax), (std::set<std::string>{"data", "relu", "soft", "masked"}));
  // A fixed batch has none.
  EXPECT_TRUE(batch_values(testing::prepared(testing::seed_mlp())).empty());
}

TEST(BatchItems, ANodeComputingAcrossItemsIsNamed) {
  EXPECT_ERROR(check_batch_separable(with_batch(softmax_graph(0), 1, 8)),
               "'soft' (softmax) cannot take a run-time batch: it computes across the first axis");
  // A fixed mask of two rows against one item of one row: it broadcasts at one item, at two by chance, not at three.
  Graph mixed = softmax_graph(-1);
  mixed.types.at("mask").shape = {2, 6};
  EXPECT_ERROR(check_batch_separable(with_batch(mixed, 1, 8)),
               "the graph cannot take a run-time batch: at 3 items, node 'masked' (broadcast_add): shapes (3, 6) and "
               "(2, 6) cannot be broadcast together");
  // A mask that a sum with the items never grows with them: (2, 6) at one item and at two.
  Graph summed;
  summed.add_input("data", {{1, 6}});
  summed.add_input("mask", {{2, 6}});
  summed.nodes.push_back(
      make_node("sum", "sum", {"data"}, attrs_of({{"axis", std::vector<int64_t>{1}}, {"keepdims", true}})));
  summed.nodes.push_back(make_node("masked", "broadcast_add", {"mask", "sum"}));
  summed.outputs = {"masked"};
  EXPECT_ERROR(check_batch_separable(with_batch(summed, 1, 8)), "cannot take a run-time batch");
  // A Reshape that folds the batch into another axis.
  Graph folded = testing::seed_mlp();
  folded.nodes.insert(folded.nodes.begin(),
                      make_node("fold", "Reshape", {"data"}, attrs_of({{"shape", std::vector<int64_t>{1, -1}}})));
  folded.nodes[1].inputs[0] = "fold";
  folded.nodes.insert(folded.nodes.begin() + 1,
                      make_node("unfold", "Reshape", {"fold"}, attrs_of({{"shape", std::vector<int64_t>{-1, 512}}})));
  folded.nodes[2].inputs[0] = "unfold";
  EXPECT_ERROR(check_batch_separable(with_batch(folded, 1, 4)),
               "'fold' (Reshape) cannot take a run-time batch: its output 'fold' is (1, 512) at one item and (1, "
               "1024) at 2; only its first dimension may grow with the batch");
  // A Concat along the items' axis.
  Graph joined;
  joined.add_input("data", {{1, 3}});
  joined.nodes.push_back(make_node("join", "Concat", {"data", "data"}, attrs_of({{"dim", int64_t{0}}})));
  joined.outputs = {"join"};
  EXPECT_ERROR(check_batch_separable(with_batch(joined, 1, 4)), "'join' (Concat) cannot take a run-time batch");
  // Bad bounds and inputs.
  EXPECT_ERROR(check_batch_separable(with_batch(testing::seed_mlp(), 5, 4)), "1 <= min <= max");
  Graph unknown = testing::seed_mlp();
  unknown.batch = BatchRange{1, 4, {"nope"}};
  EXPECT_ERROR(check_batch_separable(testing::prepared(unknown)), "'nope' is not an input of the graph");
}

TEST(BatchItems, ItemBlocksArePlannedApartAndScaleWithTheBatch) {
  const Graph g = with_batch(softmax_graph(-1), 1, 10);
  const CompiledGraph c = compile_graph(g, CompileOptions::for_target(find_target("generic"), false));
  const MemoryPlan& plan = c.plan;
  plan.verify();
  EXPECT_EQ(plan.max_batch, 10);
  EXPECT_GT(plan.item_bytes, 0u);
  EXPECT_EQ(plan.fixed_bytes % plan.alignment, 0u);
  EXPECT_EQ(plan.arena_bytes, plan.arena_bytes_at(10));
  EXPECT_EQ(plan.arena_bytes_at(3) - plan.arena_bytes_at(2), plan.item_bytes);
  for (const BufferPlacement& b : plan.buffers)
    EXPECT_EQ(b.per_item, batch_values(c.graph).count(b.value) != 0) << b.value;
  // verify() holds the regions apart: an item block past its region is caught.
  MemoryPlan broken = plan;
  for (ArenaBlock& b : broken.blocks)
    if (b.per_item) b.offset += (broken.item_bytes + broken.alignment - 1) / broken.alignment * broken.alignment;
  EXPECT_ERROR(broken.verify(), "past its per-item region");
}

}  // namespace
}  // namespace hybgen
