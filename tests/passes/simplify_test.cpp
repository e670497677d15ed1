// Before/after tests of the simplification passes: remove_dead_code,
// fold_constants, lower_batch_norm and fold_scale_shift. Numerical checks run
// the graph before and after with the ops' reference kernels directly (the
// interpreter would run these very passes on both).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "graph_builders.h"
#include "pass_test_support.h"
#include "ops/evaluate.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "ops/op_util.h"
#include "pipeline.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::expect_same_results;
using testing::make_node;
using testing::op_names;
using testing::prepared;
using testing::seeded_values;
using testing::values_of;

std::vector<std::string> constant_names(const Graph& g) {
  std::vector<std::string> names;
  for (const auto& [name, c] : g.constants) names.push_back(name);
  return names;
}

Attrs conv_attrs(int64_t filters, bool no_bias = false) {
  return attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                   {"pad", std::vector<int64_t>{1, 1}},
                   {"num_filter", filters},
                   {"no_bias", no_bias}});
}

Attrs bn_attrs(bool fix_gamma, int64_t axis = 1, double eps = 1e-5) {
  return attrs_of({{"fix_gamma", fix_gamma}, {"axis", axis}, {"eps", eps}});
}

// Adds the four statistics of a BatchNorm over `channels` (moving_var
// positive) and returns its inputs after `data`.
std::vector<std::string> add_bn_statistics(Graph& g, const std::string& bn, int64_t channels, uint32_t seed) {
  std::vector<float> var = seeded_values(channels, seed + 3);
  for (float& v : var) v += 0.5f;
  std::vector<float> gamma = seeded_values(channels, seed);
  for (float& v : gamma) v = 1.0f + 5.0f * v;
  g.add_constant(bn + "_gamma", Constant::f32({channels}, gamma));
  g.add_constant(bn + "_beta", Constant::f32({channels}, seeded_values(channels, seed + 1)));
  g.add_constant(bn + "_running_mean", Constant::f32({channels}, seeded_values(channels, seed + 2)));
  g.add_constant(bn + "_running_var", Constant::f32({channels}, var));
  return {bn + "_gamma", bn + "_beta", bn + "_running_mean", bn + "_running_var"};
}

// x (2, 3, 5, 5) -> Convolution "conv" (4 filters, 3x3, pad 1) -> BatchNorm "bn".
Graph conv_bn(bool fix_gamma, bool conv_bias = true) {
  Graph g;
  g.add_input("x", {{2, 3, 5, 5}});
  g.add_constant("conv_weight", Constant::f32({4, 3, 3, 3}, seeded_values(4 * 27, 1)));
  std::vector<std::string> conv_inputs{"x", "conv_weight"};
  if (conv_bias) {
    g.add_constant("conv_bias", Constant::f32({4}, seeded_values(4, 2)));
    conv_inputs.push_back("conv_bias");
  }
  g.nodes.push_back(make_node("conv", "Convolution", conv_inputs, conv_attrs(4, !conv_bias)));
  std::vector<std::string> bn_inputs{"conv"};
  for (const auto& s : add_bn_statistics(g, "bn", 4, 10)) bn_inputs.push_back(s);
  g.nodes.push_back(make_node("bn", "BatchNorm", bn_inputs, bn_attrs(fix_gamma)));
  g.outputs = {"bn"};
  return prepared(g);
}

// x (2, 5) -> FullyConnected "fc" (6 hidden, no bias) -> `readers`, each
// reading the previous value; the last is the output.
Graph dense_then(const std::vector<std::pair<std::string, Attrs>>& readers) {
  Graph g;
  g.add_input("x", {{2, 5}});
  g.add_constant("fc_weight", Constant::f32({6, 5}, seeded_values(30, 3)));
  g.nodes.push_back(
      make_node("fc", "FullyConnected", {"x", "fc_weight"}, attrs_of({{"num_hidden", int64_t{6}}, {"no_bias", true}})));
  std::string prev = "fc";
  for (std::size_t i = 0; i < readers.size(); ++i) {
    const std::string name = "op" + std::to_string(i);
    g.nodes.push_back(make_node(name, readers[i].first, {prev}, readers[i].second));
    prev = name;
  }
  g.outputs = {prev};
  return prepared(g);
}

Attrs scalar(double s) { return attrs_of({{"scalar", s}}); }

// ---------------------------------------------------------------- remove_dead_code

TEST(RemoveDeadCode, RemovesUnreachableNodesAndTheWeightsOnlyTheyRead) {
  Graph g;
  g.add_input("x", {{1, 4}});
  g.add_input("unused", {{3}});
  g.add_constant("w", Constant::f32({2, 4}, seeded_values(8, 1)));
  g.add_constant("k", Constant::f32({1}, {2.0f}));
  g.add_constant("orphan", Constant::f32({5}, seeded_values(5, 2)));
  g.nodes.push_back(make_node("dead_exp", "exp", {"x"}));
  g.nodes.push_back(make_node("fc", "FullyConnected", {"x", "w"}, attrs_of({{"num_hidden", int64_t{2}}, {"no_bias", true}})));
  g.nodes.push_back(make_node("dead_mul", "broadcast_mul", {"dead_exp", "k"}));
  g.nodes.push_back(make_node("relu", "Activation", {"fc"}, attrs_of({{"act_type", std::string("relu")}})));
  g.outputs = {"relu"};
  g = prepared(g);

  EXPECT_TRUE(remove_dead_code(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"FullyConnected", "Activation"}));
  EXPECT_EQ(constant_names(g), (std::vector<std::string>{"w"}));
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"x", "unused"}));  // the call signature stays
  EXPECT_EQ(g.types.count("dead_exp"), 0u);
  EXPECT_EQ(g.types.count("k"), 0u);
  EXPECT_FALSE(remove_dead_code(g));
}

TEST(RemoveDeadCode, KeepsConstantOutputsAndMultiOutputNodesWithOneOutputUsed) {
  Graph g;
  g.add_input("x", {{4, 2}});
  g.add_constant("c", Constant::f32({2}, {1, 2}));
  g.nodes.push_back(Node{"split", "SliceChannel", attrs_of({{"num_outputs", int64_t{2}}, {"axis", int64_t{0}}}),
                         {"x"}, {"part0", "part1"}});
  g.outputs = {"part0", "c"};
  g = prepared(g);
  EXPECT_FALSE(remove_dead_code(g));
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.is_constant("c"));
}

// ---------------------------------------------------------------- fold_constants

TEST(FoldConstants, TutorialSumBecomesOneConstantUnderTheOutputName) {
  // The Gluon tutorial's (1 + 2) + (3 + 4) on 1-element constants.
  Graph g;
  const std::pair<const char*, float> numbers[] = {{"one", 1.0f}, {"two", 2.0f}, {"three", 3.0f}, {"four", 4.0f}};
  for (const auto& [name, v] : numbers) g.add_constant(name, Constant::f32({1}, {v}));
  g.nodes.push_back(make_node("a", "broadcast_add", {"one", "two"}));
  g.nodes.push_back(make_node("b", "broadcast_add", {"three", "four"}));
  g.nodes.push_back(make_node("sum", "broadcast_add", {"a", "b"}));
  g.outputs = {"sum"};
  g = prepared(g);

  EXPECT_TRUE(fold_constants(g));
  EXPECT_TRUE(g.nodes.empty());
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"sum"}));
  EXPECT_EQ(constant_names(g), (std::vector<std::string>{"sum"}));
  EXPECT_EQ(values_of(g, "sum"), (std::vector<float>{10.0f}));
  EXPECT_EQ(g.type("sum").shape, (Shape{1}));
  EXPECT_FALSE(fold_constants(g));
  validate(g);  // still a well-formed graph: an output may be a constant
}

TEST(FoldConstants, ChainsFoldInOneCallWhateverTheNodeOrder) {
  Graph g;
  g.add_input("x", {{3}});
  g.add_constant("k", Constant::f32({3}, {1, 2, 3}));
  // Listed readers first: folding must follow the topological order.
  g.nodes.push_back(make_node("y", "broadcast_add", {"x", "doubled"}));
  g.nodes.push_back(make_node("doubled", "_mul_scalar", {"k_plus_one"}, scalar(2)));
  g.nodes.push_back(make_node("k_plus_one", "_plus_scalar", {"k"}, scalar(1)));
  g.outputs = {"y"};
  g = prepared(g);
  const Graph before = g;

  EXPECT_TRUE(fold_constants(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"broadcast_add"}));
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "doubled"}));
  EXPECT_EQ(constant_names(g), (std::vector<std::string>{"doubled"}));
  EXPECT_EQ(values_of(g, "doubled"), (std::vector<float>{4, 6, 8}));
  expect_same_results(before, g, 0.0);
}

// Shape arithmetic on int64: the integer references fold it, with values an
// int64 holds and a float32 would not (2^24 + 1), and a Cast to float32
// joins the runtime graph.
TEST(FoldConstants, FoldsInt64ShapeArithmeticAndItsCast) {
  Graph g;
  g.add_input("x", {{2}});
  g.add_constant("dims", Constant::i64({2}, {3, (int64_t{1} << 24) + 1}));
  g.add_constant("two", Constant::i64({1}, {2}));
  g.nodes.push_back(make_node("times", "broadcast_mul", {"dims", "two"}));
  g.nodes.push_back(make_node("reversed", "slice", {"times"},
                              attrs_of({{"begin", std::vector<int64_t>{kSliceNone}},
                                        {"end", std::vector<int64_t>{kSliceNone}},
                                        {"step", std::vector<int64_t>{-1}}})));
  g.nodes.push_back(make_node("halved", "broadcast_div", {"reversed", "two"}));
  g.nodes.push_back(make_node("as_float", "Cast", {"halved"}, attrs_of({{"dtype", std::string("float32")}})));
  g.nodes.push_back(make_node("y", "broadcast_add", {"x", "as_float"}));
  g.outputs = {"y"};
  g = prepared(g);
  EXPECT_EQ(g.type("halved").dtype, DType::kInt64);
  EXPECT_EQ(g.type("as_float").dtype, DType::kFloat32);

  EXPECT_TRUE(fold_constants(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"broadcast_add"}));
  EXPECT_EQ(constant_names(g), (std::vector<std::string>{"as_float"}));
  EXPECT_EQ(g.constants.at("as_float").type, (TensorType{{2}, DType::kFloat32}));
  EXPECT_EQ(values_of(g, "as_float"), (std::vector<float>{16777216.0f, 3.0f}));
}

// An empty constant has no storage; the reference kernels still get valid
// pointers (the sanitizer stage runs this: memcpy from null is undefined).
TEST(EvaluateNode, EmptyTensorsGetValidPointers) {
  Constant empty;
  empty.type = TensorType{{0, 3}, DType::kInt64};
  const Node node = make_node("c", "_copy", {"e"});
  const std::vector<Constant> out = evaluate_node(node, {&empty}, {empty.type});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, empty.type);
  EXPECT_TRUE(out[0].data.empty());
}

TEST(FoldConstants, IntegerFoldsOnlyWhereTheReferenceComputesTheDtype) {
  Graph g;
  g.add_constant("a", Constant::i64({2}, {3, 4}));
  g.add_constant("b", Constant::i64({2}, {2, 2}));
  g.nodes.push_back(make_node("p", "broadcast_power", {"a", "b"}));  // float32 only
  g.nodes.push_back(make_node("y", "Cast", {"p"}, attrs_of({{"dtype", std::string("float32")}})));
  g.outputs = {"y"};
  g = prepared(g);
  EXPECT_FALSE(fold_constants(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"broadcast_power", "Cast"}));
}

TEST(FoldConstants, LeavesConstantsWithoutDataAndRuntimeInputsAlone) {
  Graph g;
  g.add_input("x", {{3}});
  g.add_constant("k", Constant::f32({3}, {1, 2, 3}));
  g.constants["k"].data.clear();  // a model.json read without its weights
  g.nodes.push_back(make_node("k1", "_plus_scalar", {"k"}, scalar(1)));
  g.nodes.push_back(make_node("y", "broadcast_add", {"x", "k1"}));
  g.outputs = {"y"};
  g = prepared(g);
  EXPECT_FALSE(fold_constants(g));
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_TRUE(g.is_constant("k"));
}

TEST(FoldConstants, DoesNotGrowTheWeightsByFoldingABroadcast) {
  Graph g;
  g.add_constant("column", Constant::f32({3, 1}, {1, 2, 3}));
  g.add_constant("row", Constant::f32({1, 4}, {1, 2, 3, 4}));
  g.nodes.push_back(make_node("table", "broadcast_mul", {"column", "row"}));  // 12 values from 7
  g.outputs = {"table"};
  g = prepared(g);
  EXPECT_FALSE(fold_constants(g));
  EXPECT_EQ(g.nodes.size(), 1u);
}

// ---------------------------------------------------------------- lower_batch_norm

TEST(LowerBatchNorm, BecomesMulThenAddKeepingTheNameAndOutput) {
  for (bool fix_gamma : {false, true}) {
    SCOPED_TRACE(fix_gamma ? "fix_gamma" : "learned gamma");
    Graph g = conv_bn(fix_gamma);
    const Graph before = g;
    const std::vector<float> gamma = values_of(g, "bn_gamma"), beta = values_of(g, "bn_beta"),
                             mean = values_of(g, "bn_running_mean"), var = values_of(g, "bn_running_var");

    EXPECT_TRUE(lower_batch_norm(g));
    EXPECT_EQ(op_names(g), (std::vector<std::string>{"Convolution", "broadcast_mul", "broadcast_add"}));
    EXPECT_EQ(g.nodes[1].name, "bn_mul");
    EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"conv", "bn_scale"}));
    EXPECT_EQ(g.nodes[2].name, "bn");
    EXPECT_EQ(g.nodes[2].inputs, (std::vector<std::string>{"bn_mul", "bn_shift"}));
    EXPECT_EQ(g.nodes[2].outputs, (std::vector<std::string>{"bn"}));
    EXPECT_EQ(g.outputs, (std::vector<std::string>{"bn"}));
    EXPECT_EQ(constant_names(g), (std::vector<std::string>{"bn_scale", "bn_shift", "conv_bias", "conv_weight"}));
    EXPECT_EQ(g.type("bn_scale").shape, (Shape{4, 1, 1}));
    EXPECT_EQ(g.type("bn_mul").shape, (Shape{2, 4, 5, 5}));
    const std::vector<float> scale = values_of(g, "bn_scale"), shift = values_of(g, "bn_shift");
    for (int c = 0; c < 4; ++c) {
      const double s = (fix_gamma ? 1.0 : gamma[c]) / std::sqrt(static_cast<double>(var[c]) + 1e-5);
      EXPECT_EQ(scale[c], static_cast<float>(s));
      EXPECT_EQ(shift[c], static_cast<float>(beta[c] - mean[c] * s));
    }
    EXPECT_FALSE(lower_batch_norm(g));
    validate(g);
    expect_same_results(before, g, 1e-6);
  }
}

TEST(LowerBatchNorm, ShapesTheConstantsForAnyAxis) {
  struct Case {
    Shape data;
    int64_t axis;
    Shape constants;
  };
  for (const Case& c : {Case{{4, 3}, -1, {3}}, Case{{3, 2, 5}, 0, {3, 1, 1}}, Case{{2, 6, 3}, 1, {6, 1}},
                        Case{{5}, 0, {5}}}) {
    SCOPED_TRACE(shape_str(c.data) + " axis " + std::to_string(c.axis));
    Graph g;
    g.add_input("x", {c.data});
    const int64_t channels = c.constants[0];
    std::vector<std::string> inputs{"x"};
    for (const auto& s : add_bn_statistics(g, "bn", channels, 20)) inputs.push_back(s);
    g.nodes.push_back(make_node("bn", "BatchNorm", inputs, bn_attrs(false, c.axis, 1e-3)));
    g.outputs = {"bn"};
    g = prepared(g);
    const Graph before = g;
    EXPECT_TRUE(lower_batch_norm(g));
    EXPECT_EQ(g.type("bn_scale").shape, c.constants);
    EXPECT_EQ(g.type("bn_shift").shape, c.constants);
    EXPECT_EQ(g.type("bn").shape, c.data);
    expect_same_results(before, g, 1e-6);
  }
}

TEST(LowerBatchNorm, NewNamesAvoidExistingOnes) {
  Graph g = conv_bn(false);
  g.add_constant("bn_scale", Constant::f32({1}, {7}));
  g.outputs.push_back("bn_scale");
  EXPECT_TRUE(lower_batch_norm(g));
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"conv", "bn_scale_1"}));
  EXPECT_EQ(values_of(g, "bn_scale"), (std::vector<float>{7}));
}

TEST(LowerBatchNorm, LeavesBatchNormWithoutWeightDataAlone) {
  Graph g = conv_bn(false);
  g.constants["bn_running_var"].data.clear();
  EXPECT_FALSE(lower_batch_norm(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"Convolution", "BatchNorm"}));
}

// ---------------------------------------------------------------- fold_scale_shift

TEST(FoldScaleShift, LoweredBatchNormFoldsEntirelyIntoTheConvolution) {
  for (bool conv_bias : {true, false})
    for (bool fix_gamma : {false, true}) {
      SCOPED_TRACE(std::string(conv_bias ? "bias" : "no bias") + (fix_gamma ? ", fix_gamma" : ""));
      const Graph before = conv_bn(fix_gamma, conv_bias);
      Graph g = before;
      ASSERT_TRUE(lower_batch_norm(g));
      EXPECT_TRUE(fold_scale_shift(g));
      EXPECT_EQ(op_names(g), (std::vector<std::string>{"Convolution"}));
      EXPECT_EQ(g.nodes[0].name, "conv");
      EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"bn"}));  // took over the add's output
      EXPECT_FALSE(g.nodes[0].attrs.get_bool("no_bias"));
      EXPECT_EQ(g.nodes[0].inputs.size(), 3u);
      EXPECT_EQ(g.constants.size(), 2u);  // weight and bias; scale and shift are gone
      EXPECT_EQ(g.types.count("conv"), 0u);
      EXPECT_FALSE(fold_scale_shift(g));
      validate(g);
      expect_same_results(before, g);
    }
}

TEST(FoldScaleShift, ScalarOpsFoldIntoADenseLayer) {
  const Graph before = dense_then({{"_mul_scalar", scalar(2.5)},
                                   {"_plus_scalar", scalar(1)},
                                   {"_div_scalar", scalar(4)},
                                   {"_minus_scalar", scalar(0.5)}});
  Graph g = before;
  EXPECT_TRUE(fold_scale_shift(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"FullyConnected"}));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"op3"}));
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "fc_weight", "fc_bias"}));  // bias created
  EXPECT_FALSE(g.nodes[0].attrs.get_bool("no_bias"));
  // bias = ((0 * 2.5) + 1) / 4 - 0.5
  EXPECT_EQ(values_of(g, "fc_bias"), std::vector<float>(6, -0.25f));
  validate(g);
  expect_same_results(before, g);
}

TEST(FoldScaleShift, BroadcastConstantsPerChannelOrSingleOnTheAllowedSide) {
  Graph g;
  g.add_input("x", {{2, 5}});
  g.add_constant("fc_weight", Constant::f32({6, 5}, seeded_values(30, 3)));
  g.add_constant("fc_bias", Constant::f32({6}, seeded_values(6, 4)));
  g.add_constant("per_channel", Constant::f32({1, 6}, {1, 2, 3, 4, -1, 0.5f}));
  g.add_constant("single", Constant::f32({1}, {3}));
  g.add_constant("offsets", Constant::f32({6}, {1, 2, 3, 4, 5, 6}));
  g.nodes.push_back(make_node("fc", "FullyConnected", {"x", "fc_weight", "fc_bias"}, attrs_of({{"num_hidden", int64_t{6}}})));
  g.nodes.push_back(make_node("scaled", "broadcast_mul", {"per_channel", "fc"}));  // constant on the left: commutes
  g.nodes.push_back(make_node("divided", "broadcast_div", {"scaled", "single"}));
  g.nodes.push_back(make_node("shifted", "broadcast_sub", {"divided", "offsets"}));
  g.nodes.push_back(make_node("added", "broadcast_add", {"single", "shifted"}));
  g.outputs = {"added"};
  g = prepared(g);
  const Graph before = g;
  EXPECT_TRUE(fold_scale_shift(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"FullyConnected"}));
  EXPECT_EQ(constant_names(g), (std::vector<std::string>{"fc_bias", "fc_weight"}));
  expect_same_results(before, g);
}

TEST(FoldScaleShift, KeepsTheDataOperandWhereTheAlgebraNeedsIt) {
  for (const char* op : {"broadcast_sub", "broadcast_div"}) {
    SCOPED_TRACE(op);
    Graph g;
    g.add_input("x", {{2, 5}});
    g.add_constant("fc_weight", Constant::f32({6, 5}, seeded_values(30, 3)));
    g.add_constant("k", Constant::f32({6}, {1, 2, 3, 4, 5, 6}));
    g.nodes.push_back(make_node("fc", "FullyConnected", {"x", "fc_weight"},
                                attrs_of({{"num_hidden", int64_t{6}}, {"no_bias", true}})));
    g.nodes.push_back(make_node("y", op, {"k", "fc"}));  // k - fc, k / fc
    g.outputs = {"y"};
    g = prepared(g);
    EXPECT_FALSE(fold_scale_shift(g));
    EXPECT_EQ(g.nodes.size(), 2u);
  }
}

TEST(FoldScaleShift, LeavesConstantsThatVaryAlongOtherAxesOrDivideByZero) {
  Graph g = conv_bn(false);  // conv output (2, 4, 5, 5)
  g.nodes.pop_back();
  g.add_constant("per_row", Constant::f32({1, 1, 5, 1}, {1, 2, 3, 4, 5}));
  g.add_constant("per_sample", Constant::f32({2, 1, 1, 1}, {1, 2}));
  g.add_constant("zeros", Constant::f32({4, 1, 1}, {1, 0, 2, 3}));
  const std::pair<const char*, const char*> readers[] = {
      {"broadcast_mul", "per_row"}, {"broadcast_add", "per_sample"}, {"broadcast_div", "zeros"}};
  for (const auto& [op, k] : readers) {
    SCOPED_TRACE(std::string(op) + " " + k);
    Graph h = g;
    h.nodes.push_back(make_node("y", op, {"conv", k}));
    h.outputs = {"y"};
    h = prepared(h);
    EXPECT_FALSE(fold_scale_shift(h));
    EXPECT_EQ(h.nodes.size(), 2u);
  }
}

TEST(FoldScaleShift, NoFoldWhenTheOutputHasAnotherReaderOrIsAGraphOutput) {
  Graph two_readers = dense_then({{"_mul_scalar", scalar(2)}});
  two_readers.nodes.push_back(make_node("relu", "Activation", {"fc"}, attrs_of({{"act_type", std::string("relu")}})));
  two_readers.outputs.push_back("relu");
  two_readers = prepared(two_readers);
  EXPECT_FALSE(fold_scale_shift(two_readers));
  EXPECT_EQ(two_readers.nodes.size(), 3u);

  Graph output = dense_then({{"_mul_scalar", scalar(2)}});
  output.outputs.push_back("fc");
  EXPECT_FALSE(fold_scale_shift(output));
  EXPECT_EQ(output.nodes.size(), 2u);
}

TEST(FoldScaleShift, CopiesWeightsThatAnotherNodeReads) {
  // Two convolutions share weight and bias; only the first is scaled.
  Graph g;
  g.add_input("x", {{1, 3, 5, 5}});
  g.add_constant("w", Constant::f32({4, 3, 3, 3}, seeded_values(108, 1)));
  g.add_constant("b", Constant::f32({4}, seeded_values(4, 2)));
  g.add_constant("k", Constant::f32({4, 1, 1}, {1, 2, 3, 4}));
  g.nodes.push_back(make_node("conv_a", "Convolution", {"x", "w", "b"}, conv_attrs(4)));
  g.nodes.push_back(make_node("conv_b", "Convolution", {"x", "w", "b"}, conv_attrs(4)));
  g.nodes.push_back(make_node("scaled", "broadcast_mul", {"conv_a", "k"}));
  g.outputs = {"scaled", "conv_b"};
  g = prepared(g);
  const Graph before = g;

  EXPECT_TRUE(fold_scale_shift(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"Convolution", "Convolution"}));
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "conv_a_weight", "conv_a_bias"}));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"scaled"}));
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_EQ(g.constants.at("w").data, before.constants.at("w").data);
  EXPECT_EQ(g.constants.at("b").data, before.constants.at("b").data);
  EXPECT_EQ(values_of(g, "conv_a_bias")[3], values_of(before, "b")[3] * 4.0f);
  expect_same_results(before, g);
}

TEST(FoldScaleShift, DenseWithoutFlattenScalesAlongTheLastAxis) {
  Graph g;
  g.add_input("x", {{2, 3, 5}});
  g.add_constant("w", Constant::f32({6, 5}, seeded_values(30, 3)));
  g.add_constant("k", Constant::f32({6}, {1, -2, 3, 0.5f, 5, 6}));
  g.nodes.push_back(make_node("fc", "FullyConnected", {"x", "w"},
                              attrs_of({{"num_hidden", int64_t{6}}, {"no_bias", true}, {"flatten", false}})));
  g.nodes.push_back(make_node("y", "broadcast_mul", {"fc", "k"}));
  g.outputs = {"y"};
  g = prepared(g);
  const Graph before = g;
  EXPECT_TRUE(fold_scale_shift(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"FullyConnected"}));
  expect_same_results(before, g);
}

// ---------------------------------------------------------------- the pipeline

TEST(Simplify, CompileGraphFoldsBatchNormIntoTheConvolution) {
  const Graph before = conv_bn(false);
  const CompiledGraph c = compile_graph(before);
  EXPECT_EQ(op_names(c.graph), (std::vector<std::string>{"Convolution"}));
  EXPECT_EQ(c.graph.outputs, (std::vector<std::string>{"bn"}));
  expect_same_results(before, c.graph);
}

TEST(Simplify, PassesRunBetweenRemoveIdentitiesAndSchedule) {
  const std::vector<std::string> names = pass_names();
  const auto at = [&](const char* pass) { return std::find(names.begin(), names.end(), pass) - names.begin(); };
  EXPECT_LT(at("remove_identities"), at("remove_dead_code"));
  EXPECT_LT(at("remove_dead_code"), at("lower_batch_norm"));
  EXPECT_LT(at("lower_batch_norm"), at("fold_scale_shift"));
  EXPECT_LT(at("fold_scale_shift"), at("fold_constants"));
  EXPECT_LT(at("fold_constants"), at("schedule"));
}

}  // namespace
}  // namespace hybgen
