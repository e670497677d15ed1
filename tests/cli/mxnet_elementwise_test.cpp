// MXNet's elementwise, comparison and broadcast ops end to end: a symbol
// JSON using their MXNet spellings (aliases included) is imported, run by the
// reference interpreter on values whose answers are known by hand, and
// generated as C++ (for this machine's target) and as CUDA on the host, each
// verified against the reference. Bad attributes fail naming the
// node.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/mxnet/mxnet_symbol.h"
#include "passes/passes.h"
#include "runtime-lite/interpreter.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

// data (2, 3, 4) and other (1, 3, 1) through most of the family. Node
// indices are the "inputs" entries; attributes as MXNet writes them.
const char* kSymbol = R"J({"nodes": [
  {"op": "null", "name": "data", "inputs": []},
  {"op": "null", "name": "other", "inputs": []},
  {"op": "_greater_scalar", "name": "positive", "attrs": {"scalar": "0.0", "is_int": "False"}, "inputs": [[0, 0, 0]]},
  {"op": "abs", "name": "magnitude", "inputs": [[0, 0, 0]]},
  {"op": "_plus_scalar", "name": "base", "attrs": {"scalar": "0.5"}, "inputs": [[3, 0, 0]]},
  {"op": "_power_scalar", "name": "pow_s", "attrs": {"scalar": "1.5"}, "inputs": [[4, 0, 0]]},
  {"op": "broadcast_power", "name": "pow_b", "inputs": [[4, 0, 0], [1, 0, 0]]},
  {"op": "where", "name": "chosen", "inputs": [[2, 0, 0], [5, 0, 0], [6, 0, 0]]},
  {"op": "_mul_scalar", "name": "scaled", "attrs": {"scalar": "2.5"}, "inputs": [[0, 0, 0]]},
  {"op": "round", "name": "rounded", "inputs": [[8, 0, 0]]},
  {"op": "broadcast_lesser", "name": "less", "inputs": [[0, 0, 0], [1, 0, 0]]},
  {"op": "_Greater_Equal", "name": "ge", "inputs": [[0, 0, 0], [9, 0, 0]]},
  {"op": "ElementWiseSum", "name": "sum3", "attrs": {"num_args": "3"}, "inputs": [[7, 0, 0], [10, 0, 0], [11, 0, 0]]},
  {"op": "broadcast_to", "name": "to", "attrs": {"shape": "(2, 0, 4)"}, "inputs": [[1, 0, 0]]},
  {"op": "broadcast_like", "name": "like", "inputs": [[1, 0, 0], [0, 0, 0]]},
  {"op": "broadcast_axis", "name": "axis", "attrs": {"axis": "(0, 2)", "size": "(2, 4)"}, "inputs": [[1, 0, 0]]},
  {"op": "add_n", "name": "sum4", "attrs": {"num_args": "4"}, "inputs": [[13, 0, 0], [14, 0, 0], [15, 0, 0], [12, 0, 0]]},
  {"op": "sin", "name": "s", "inputs": [[0, 0, 0]]},
  {"op": "cos", "name": "c", "inputs": [[0, 0, 0]]},
  {"op": "log1p", "name": "l", "inputs": [[3, 0, 0]]},
  {"op": "expm1", "name": "e", "inputs": [[0, 0, 0]]},
  {"op": "sign", "name": "sg", "inputs": [[0, 0, 0]]},
  {"op": "floor", "name": "fl", "inputs": [[8, 0, 0]]},
  {"op": "ceil", "name": "ce", "inputs": [[8, 0, 0]]},
  {"op": "trunc", "name": "tr", "inputs": [[8, 0, 0]]},
  {"op": "reciprocal", "name": "rc", "inputs": [[4, 0, 0]]},
  {"op": "add_n", "name": "trig", "attrs": {"num_args": "9"},
   "inputs": [[17, 0, 0], [18, 0, 0], [19, 0, 0], [20, 0, 0], [21, 0, 0], [22, 0, 0], [23, 0, 0], [24, 0, 0], [25, 0, 0]]},
  {"op": "BlockGrad", "name": "stop", "inputs": [[26, 0, 0]]},
  {"op": "stop_gradient", "name": "stop2", "inputs": [[27, 0, 0]]},
  {"op": "make_loss", "name": "loss", "inputs": [[28, 0, 0]]},
  {"op": "ones_like", "name": "ones", "inputs": [[0, 0, 0]]},
  {"op": "_Equal", "name": "eq", "inputs": [[9, 0, 0], [21, 0, 0]]},
  {"op": "broadcast_logical_xor", "name": "xor", "inputs": [[31, 0, 0], [2, 0, 0]]},
  {"op": "elemwise_add", "name": "tail", "inputs": [[30, 0, 0], [32, 0, 0]]},
  {"op": "rint", "name": "ri", "inputs": [[8, 0, 0]]},
  {"op": "fix", "name": "fx", "inputs": [[8, 0, 0]]},
  {"op": "_rpower_scalar", "name": "two_to", "attrs": {"scalar": "2"}, "inputs": [[0, 0, 0]]},
  {"op": "_lesser_equal_scalar", "name": "le_s", "attrs": {"scalar": "-0.5"}, "inputs": [[0, 0, 0]]},
  {"op": "zeros_like", "name": "zeros", "inputs": [[1, 0, 0]]}],
  "arg_nodes": [0, 1],
  "heads": [[16, 0, 0], [29, 0, 0], [33, 0, 0], [9, 0, 0], [34, 0, 0], [35, 0, 0], [36, 0, 0], [37, 0, 0], [38, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10900]}})J";

// Shapes are given for the inputs the symbol reads ("data", "other").
Graph import_symbol(const std::string& text, const TempDir& tmp, bool with_data = true, bool with_other = true) {
  const std::string path = tmp.path() + "/ew-symbol.json";
  std::ofstream(path) << text;
  MxnetImportOptions options;
  if (with_data) options.input_shapes["data"] = {2, 3, 4};
  if (with_other) options.input_shapes["other"] = {1, 3, 1};
  options.note = [](const std::string&) {};
  return import_mxnet(path, std::nullopt, options);
}

// data: halves and quarters so round, rint, floor and friends meet ties.
std::vector<float> data_values() {
  std::vector<float> v;
  for (int i = 0; i < 24; ++i) v.push_back(0.25f * static_cast<float>(i - 12));  // -3 .. 2.75
  return v;
}

TEST(MxnetElementwise, TheReferenceGivesMxnetsAnswers) {
  TempDir tmp("hybgen-ew-test");
  const Graph g = import_symbol(kSymbol, tmp);
  Interpreter interpreter(g);
  const auto out = interpreter.run({{"data", Tensor::from_vector({2, 3, 4}, data_values())},
                                    {"other", Tensor::from_vector({1, 3, 1}, {0.5f, -1.0f, 2.0f})}});
  ASSERT_EQ(out.size(), 9u);
  const std::vector<float> x = data_values();
  const std::vector<float> rounded = out[3].to_vector(), rint = out[4].to_vector(), fix = out[5].to_vector();
  for (int i = 0; i < 24; ++i) {
    const float s = 2.5f * x[i];  // multiples of 0.625
    EXPECT_EQ(rounded[i], std::round(s)) << s;
    EXPECT_EQ(fix[i], std::trunc(s)) << s;
    const float f = std::floor(s), c = std::ceil(s);
    EXPECT_EQ(rint[i], s - f <= c - s ? f : c) << s;
  }
  // Ties (2.5 x = -7.5, -2.5, 2.5): round goes away from zero, MXNet's rint down.
  EXPECT_EQ(rounded[0], -8.0f);
  EXPECT_EQ(rint[0], -8.0f);
  EXPECT_EQ(rounded[8], -3.0f);
  EXPECT_EQ(rint[8], -3.0f);
  EXPECT_EQ(fix[8], -2.0f);
  EXPECT_EQ(rounded[16], 3.0f);
  EXPECT_EQ(rint[16], 2.0f);
  EXPECT_EQ(rounded[1], -7.0f);  // 2.5 * -2.75 = -6.875
  // where(data > 0, (|x| + 0.5)^1.5, (|x| + 0.5)^other) + (x < other) + (x >= round(2.5x)).
  const std::vector<float> sum4 = out[0].to_vector(), other = {0.5f, -1.0f, 2.0f};
  for (int i = 0; i < 24; ++i) {
    const float o = other[(i / 4) % 3];
    const float base = std::fabs(x[i]) + 0.5f;
    const float chosen = x[i] > 0.0f ? std::pow(base, 1.5f) : std::pow(base, o);
    const float sum3 = chosen + (x[i] < o ? 1.0f : 0.0f) + (x[i] >= rounded[i] ? 1.0f : 0.0f);
    EXPECT_FLOAT_EQ(sum4[i], 3.0f * o + sum3) << i;
  }
  // ones + ((round(2.5x) == sign(x)) xor (x > 0)).
  const std::vector<float> tail = out[2].to_vector();
  for (int i = 0; i < 24; ++i) {
    const float sign = x[i] > 0 ? 1.0f : (x[i] < 0 ? -1.0f : 0.0f);
    EXPECT_EQ(tail[i], 1.0f + (((rounded[i] == sign) != (x[i] > 0.0f)) ? 1.0f : 0.0f)) << i;
  }
  EXPECT_EQ(out[6].to_vector()[0], std::pow(2.0f, -3.0f));
  EXPECT_EQ(out[7].to_vector()[10], 1.0f);  // x = -0.5 <= -0.5
  EXPECT_EQ(out[7].to_vector()[11], 0.0f);
  EXPECT_EQ(out[8].shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(out[8].to_vector(), (std::vector<float>{0.0f, 0.0f, 0.0f}));
}

TEST(MxnetElementwise, GeneratedCodeMatchesTheReferenceOnEachBackend) {
  TempDir tmp("hybgen-ew-test");
  const Graph g = import_symbol(kSymbol, tmp);
  for (const std::string& target : {host_target().name, std::string("cuda-host")}) {
    VerifyOptions options;
    options.cxx = HYBGEN_CXX;
    options.compile.target = find_target(target);
    options.inputs["data"] = NpyArray{{2, 3, 4}, data_values()};
    options.inputs["other"] = NpyArray{{1, 3, 1}, {0.5f, -1.0f, 2.0f}};
    const VerifyReport report = verify_model(g, options);
    EXPECT_TRUE(report.ok) << target;
    for (const auto& check : report.checks) EXPECT_LE(check.max_rel_error, 1e-5) << target << " " << check.name;
  }
}

TEST(MxnetElementwise, BadShapesAndAttributesNameTheNode) {
  TempDir tmp("hybgen-ew-test");
  auto error_for = [&](const std::string& op, const std::string& attrs, const std::string& inputs) {
    const std::string text = R"J({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "other", "inputs": []},
      {"op": ")J" + op + R"J(", "name": "bad", "attrs": {)J" + attrs + R"J(}, "inputs": [)J" + inputs + R"J(]}],
      "arg_nodes": [0, 1], "heads": [[2, 0, 0]]})J";
    return testing::error_of([&] {
      Graph g = import_symbol(text, tmp, inputs.find("[0, 0, 0]") != std::string::npos,
                              inputs.find("[1, 0, 0]") != std::string::npos);
      validate(g);
      infer_shapes(g);
    });
  };
  const std::string to = error_for("broadcast_to", R"J("shape": "(2, 5, 4)")J", "[0, 0, 0]");
  EXPECT_NE(to.find("'bad'"), std::string::npos) << to;
  EXPECT_NE(to.find("axis 1 has size 3"), std::string::npos) << to;
  EXPECT_NE(error_for("broadcast_to", R"J("shape": "(4, 3)")J", "[0, 0, 0]").find("keeps the rank"), std::string::npos);
  EXPECT_NE(error_for("broadcast_to", R"J("shape": "(2, None, 4)")J", "[0, 0, 0]").find("cannot broadcast"),
            std::string::npos);
  EXPECT_NE(error_for("broadcast_axis", R"J("axis": "(1,)", "size": "(5,)")J", "[0, 0, 0]").find("only size-1 axes"),
            std::string::npos);
  EXPECT_NE(error_for("broadcast_axis", R"J("axis": "(7,)", "size": "(5,)")J", "[1, 0, 0]").find("axis"),
            std::string::npos);
  EXPECT_NE(error_for("broadcast_axis", R"J("axis": "(0, 2)", "size": "(5,)")J", "[1, 0, 0]").find("one size per axis"),
            std::string::npos);
  EXPECT_NE(error_for("broadcast_like", R"J("lhs_axes": "(0,)", "rhs_axes": "(9,)")J", "[1, 0, 0], [0, 0, 0]").find("axis"),
            std::string::npos);
  EXPECT_NE(error_for("where", "", "[1, 0, 0], [0, 0, 0], [0, 0, 0]").find("one value per row"), std::string::npos);
  EXPECT_NE(error_for("where", "", "[0, 0, 0], [0, 0, 0], [1, 0, 0]").find("y has shape"), std::string::npos);
  EXPECT_NE(error_for("add_n", R"J("num_args": "3")J", "[0, 0, 0], [0, 0, 0]").find("num_args is 3"), std::string::npos);
  EXPECT_NE(error_for("ElementWiseSum", "", "[0, 0, 0], [1, 0, 0]").find("add_n needs them equal"), std::string::npos);
}

}  // namespace
}  // namespace hybgen
