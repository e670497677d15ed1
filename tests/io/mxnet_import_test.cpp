// MXNet .params and symbol JSON: every record layout, MXNet's attribute
// spellings, the real Gluon exports in tests/data/mxnet-real, and bad files.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <filesystem>
#include <fstream>

#include "io/file_util.h"
#include "io/mxnet_params.h"
#include "io/mxnet_symbol.h"
#include "ops/op_util.h"
#include "ir/error.h"

namespace hybgen {
namespace {

using testing::error_of;

const std::string kModels = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real";

std::map<std::string, Constant> sample_tensors() {
  return {{"arg:fc_weight", Constant::f32({3, 2}, {1, 2, 3, 4, 5, 6})},
          {"arg:fc_bias", Constant::f32({3}, {0.5f, -0.5f, 0.25f})},
          {"aux:bn_running_mean", Constant::f32({1}, {7})}};
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(MxnetParams, EveryRecordLayoutRoundTrips) {
  for (auto layout : {MxnetRecordLayout::kV1, MxnetRecordLayout::kV2, MxnetRecordLayout::kV3,
                      MxnetRecordLayout::kLegacy}) {
    const auto bytes = serialize_mxnet_params(sample_tensors(), layout);
    const auto back = parse_mxnet_params(bytes, "t.params");
    ASSERT_EQ(back.size(), 3u);
    EXPECT_EQ(back.at("arg:fc_weight").type.shape, (Shape{3, 2}));
    EXPECT_EQ(back.at("arg:fc_weight").f32_data()[5], 6.0f);
    EXPECT_EQ(back.at("aux:bn_running_mean").f32_data()[0], 7.0f);
  }
}

TEST(MxnetParams, ReadsRealGluonExports) {
  const auto mlp = read_mxnet_params(kModels + "/mlp-gluon-1.3/model-0004.params");
  EXPECT_EQ(mlp.size(), 6u);
  EXPECT_EQ(mlp.at("arg:hybridsequential0_dense0_weight").type.shape, (Shape{9, 4}));
  const auto mnist = read_mxnet_params(kModels + "/mnist-cnn-gluon-1.6/mnist-0035.params");
  EXPECT_EQ(mnist.at("arg:hybridsequential9_conv0_weight").type.shape, (Shape{10, 1, 5, 5}));
}

TEST(MxnetParams, WrongMagicAndTruncationAreClearErrors) {
  auto bytes = serialize_mxnet_params(sample_tensors());
  auto bad = bytes;
  bad[0] = 0x13;
  EXPECT_NE(error_of([&] { parse_mxnet_params(bad, "w.params"); }).find("w.params: wrong magic"), std::string::npos);
  for (std::size_t cut : {std::size_t{4}, std::size_t{30}, bytes.size() / 2, bytes.size() - 3}) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    const std::string message = error_of([&] { parse_mxnet_params(truncated, "t.params"); });
    EXPECT_NE(message.find("t.params: truncated"), std::string::npos) << cut << ": " << message;
  }
}

TEST(MxnetAttrs, ParsesWhatMxnetWrites) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("(3, 3)", AttrKind::kInts)), (V{3, 3}));
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("[3,3]", AttrKind::kInts)), (V{3, 3}));
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("(64,)", AttrKind::kInts)), (V{64}));
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("()", AttrKind::kInts)), (V{}));
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("5", AttrKind::kInts)), (V{5}));
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("(2L, 2L)", AttrKind::kInts)), (V{2, 2}));
  EXPECT_EQ(std::get<V>(parse_mxnet_attr("(0, None)", AttrKind::kInts)), (V{0, kSliceNone}));
  EXPECT_EQ(std::get<bool>(parse_mxnet_attr("True", AttrKind::kBool)), true);
  EXPECT_EQ(std::get<bool>(parse_mxnet_attr("0", AttrKind::kBool)), false);
  EXPECT_DOUBLE_EQ(std::get<double>(parse_mxnet_attr("1e-05", AttrKind::kFloat)), 1e-5);
  EXPECT_EQ(std::get<int64_t>(parse_mxnet_attr("64", AttrKind::kInt)), 64);
  EXPECT_THROW(parse_mxnet_attr("maybe", AttrKind::kBool), Error);
  EXPECT_THROW(parse_mxnet_attr("(3, x)", AttrKind::kInts), Error);
}

TEST(MxnetSymbol, ImportsTheGluonMlpWithItsParams) {
  const std::string dir = kModels + "/mlp-gluon-1.3";
  EXPECT_EQ(find_mxnet_params(dir + "/model-symbol.json"), dir + "/model-0004.params");
  MxnetImportOptions options;
  options.input_shapes["data"] = {1, 4};
  const Graph g = import_mxnet(dir + "/model-symbol.json", dir + "/model-0004.params", options);
  EXPECT_EQ(g.name, "model");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"data"}));
  EXPECT_EQ(g.type("data").shape, (Shape{1, 4}));
  EXPECT_EQ(g.constants.size(), 6u);
  ASSERT_FALSE(g.nodes.empty());
  EXPECT_EQ(g.nodes[0].op, "FullyConnected");
  EXPECT_EQ(g.nodes[0].attrs.get_int("num_hidden"), 9);
  EXPECT_TRUE(g.nodes[0].attrs.get_bool("flatten"));
  EXPECT_EQ(g.outputs.size(), 1u);
}

TEST(MxnetSymbol, MissingInputShapeNamesTheInput) {
  const std::string dir = kModels + "/mlp-gluon-1.3";
  const std::string message = error_of(
      [&] { import_mxnet(dir + "/model-symbol.json", dir + "/model-0004.params", MxnetImportOptions{}); });
  EXPECT_NE(message.find("input 'data' has no shape"), std::string::npos) << message;
  EXPECT_NE(message.find("--shape data="), std::string::npos) << message;
}

TEST(MxnetSymbol, OldLayoutsAndAllUnsupportedOpsInOneError) {
  TempDir tmp("hybgen-mxnet-test");
  // MXNet 0.8: `param` attributes, two-element entries, several heads.
  const std::string old_format = tmp.path() + "/old-symbol.json";
  write_text(old_format, R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "Activation", "name": "act", "param": {"act_type": "tanh"}, "inputs": [[0, 0]]},
      {"op": "_mul_scalar", "name": "twice", "attr": {"scalar": "2"}, "inputs": [[1, 0]]}],
    "arg_nodes": [0], "heads": [[1, 0], [2, 0]]})");
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 3};
  const Graph g = import_mxnet(old_format, std::nullopt, options);
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"act", "twice"}));
  EXPECT_EQ(g.nodes[0].attrs.get_string("act_type"), "tanh");
  EXPECT_DOUBLE_EQ(g.nodes[1].attrs.get_float("scalar"), 2.0);

  const std::string unsupported = tmp.path() + "/bad-symbol.json";
  write_text(unsupported, R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "FancyConv", "name": "c1", "inputs": [[0, 0, 0]]},
      {"op": "Mystery", "name": "m1", "inputs": [[1, 0, 0]]}],
    "arg_nodes": [0], "heads": [[2, 0, 0]]})");
  const std::string message = error_of([&] { import_mxnet(unsupported, std::nullopt, options); });
  EXPECT_NE(message.find("node 'c1' (FancyConv)"), std::string::npos) << message;
  EXPECT_NE(message.find("node 'm1' (Mystery)"), std::string::npos) << message;
}

TEST(MxnetSymbol, WeightMissingFromParamsIsNamed) {
  TempDir tmp("hybgen-mxnet-test");
  const std::string symbol = tmp.path() + "/net-symbol.json";
  write_text(symbol, R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "fc_weight", "inputs": []},
      {"op": "null", "name": "fc_bias", "inputs": []},
      {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "3"}, "inputs": [[0,0,0],[1,0,0],[2,0,0]]}],
    "arg_nodes": [0, 1, 2], "heads": [[3, 0, 0]]})");
  const std::string params = tmp.path() + "/net-0000.params";
  write_mxnet_params(params, {{"arg:fc_weight", Constant::f32({3, 2}, {1, 2, 3, 4, 5, 6})}});
  MxnetImportOptions options;
  options.input_shapes["data"] = {1, 2};
  const std::string message = error_of([&] { import_mxnet(symbol, params, options); });
  EXPECT_NE(message.find("weight 'fc_bias' is missing from"), std::string::npos) << message;
}

}  // namespace
}  // namespace hybgen
