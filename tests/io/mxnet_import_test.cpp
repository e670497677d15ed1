// MXNet .params and symbol JSON: every record layout, MXNet's attribute
// spellings, the real Gluon exports in tests/data/mxnet-real, and bad files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/mxnet/mxnet_params.h"
#include "io/mxnet/mxnet_symbol.h"
#include "ir/error.h"
#include "mxnet_params_builder.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

using testing::error_of;

const std::string kModels = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real";
const std::string kLegacy = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-legacy";

std::map<std::string, Constant> sample_tensors() {
  return {{"arg:fc_weight", Constant::f32({3, 2}, {1, 2, 3, 4, 5, 6})},
          {"arg:fc_bias", Constant::f32({3}, {0.5f, -0.5f, 0.25f})},
          {"aux:bn_running_mean", Constant::f32({1}, {7})}};
}

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

// A .params file of one V2 record "arg:w" of dtype flag `flag` holding `data`.
std::vector<uint8_t> params_of_flag(uint32_t flag, uint64_t count, const std::vector<uint8_t>& data) {
  return testing::mxnet_params_record("w", flag, {count}, data);
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// mshadow's dtype flags map onto DType in one place; each is then read by
// its DType and converted to float32.
TEST(MxnetParams, EachDtypeFlagReadsAsItsDtypeConvertedToFloat32) {
  const std::vector<DType> flags = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kUInt8,
                                    DType::kInt32,   DType::kInt8,    DType::kInt64};
  for (std::size_t f = 0; f < flags.size(); ++f) EXPECT_EQ(mshadow_dtype(static_cast<int32_t>(f)), flags[f]) << f;
  const std::vector<std::vector<uint8_t>> data = {
      bytes_of<float>({1.5f, -2.0f}), bytes_of<double>({1.5, -2.0}), bytes_of<uint16_t>({0x3e00, 0xc000}),
      bytes_of<uint8_t>({1, 254}),    bytes_of<int32_t>({1, -2}),    bytes_of<int8_t>({1, -2}),
      bytes_of<int64_t>({1, -2})};
  const std::vector<std::vector<float>> expected = {{1.5f, -2.0f}, {1.5f, -2.0f}, {1.5f, -2.0f}, {1.0f, 254.0f},
                                                    {1.0f, -2.0f}, {1.0f, -2.0f}, {1.0f, -2.0f}};
  for (std::size_t f = 0; f < flags.size(); ++f) {
    const auto arrays = parse_mxnet_params(params_of_flag(static_cast<uint32_t>(f), 2, data[f]), "t.params");
    const Constant& w = arrays.at("arg:w");
    EXPECT_EQ(w.type, (TensorType{{2}, DType::kFloat32})) << f;
    EXPECT_EQ(std::vector<float>(w.f32_data(), w.f32_data() + 2), expected[f]) << f;
  }
  for (int32_t flag : {7, 8, 12, 99, -1}) {
    EXPECT_EQ(mshadow_dtype(flag), std::nullopt) << flag;
    const auto bytes = params_of_flag(static_cast<uint32_t>(flag), 2, std::vector<uint8_t>(16));
    const std::string e = error_of([&] { parse_mxnet_params(bytes, "t.params"); });
    EXPECT_NE(e.find("t.params: array 0: unsupported dtype flag " + std::to_string(flag)), std::string::npos) << e;
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
  write_file_atomic(old_format, R"({"nodes": [
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
  write_file_atomic(unsupported, R"({"nodes": [
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
  write_file_atomic(symbol, R"({"nodes": [
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

// An MXNet 0.8 BatchNorm: three inputs; the moving statistics live only in
// the .params, as aux:NAME_moving_mean and aux:NAME_moving_var.
const char* kLegacyBatchNorm = R"({"nodes": [
    {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "bn_beta", "inputs": [], "backward_source_id": -1},
    {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "False", "momentum": "0.9", "use_global_stats": "False"},
     "name": "bn", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1, "attr": {"ctx_group": "dev1"}}],
  "arg_nodes": [0, 1, 2], "heads": [[3, 0]]})";

std::map<std::string, Constant> legacy_batch_norm_params(bool with_stats) {
  std::map<std::string, Constant> p = {{"arg:bn_gamma", Constant::f32({3}, {1.5f, 0.5f, 2.0f})},
                                       {"arg:bn_beta", Constant::f32({3}, {0.1f, -0.2f, 0.3f})}};
  if (with_stats) {
    p.emplace("aux:bn_moving_mean", Constant::f32({3}, {0.25f, -1.0f, 2.0f}));
    p.emplace("aux:bn_moving_var", Constant::f32({3}, {0.5f, 2.0f, 4.0f}));
  }
  return p;
}

TEST(MxnetLegacy, TheMxnet08FileImportsWithRandomWeights) {
  std::vector<std::string> notes;
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 20};
  options.random_weights_seed = 7;
  options.note = [&](const std::string& n) { notes.push_back(n); };
  const Graph g = import_mxnet(kLegacy + "/save_000800.json", std::nullopt, options);
  const auto bn = std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op == "BatchNorm"; });
  ASSERT_NE(bn, g.nodes.end());
  EXPECT_EQ(bn->inputs, (std::vector<std::string>{"fc3", "batchnorm0_gamma", "batchnorm0_beta",
                                                   "batchnorm0_moving_mean", "batchnorm0_moving_var"}));
  EXPECT_EQ(g.type("batchnorm0_moving_var").shape, (Shape{10}));
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"softmax"}));
  // One note per key MXNet ignores, naming the first node that has it.
  ASSERT_EQ(notes.size(), 4u);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  for (const char* key : {"'ctx_group'", "'lr_mult'", "'wd_mult'", "'weight_lr_mult'"})
    EXPECT_NE(all.find(key), std::string::npos) << all;
  EXPECT_NE(all.find("node 'fc1' (FullyConnected): attribute 'weight_lr_mult' ignored"), std::string::npos) << all;
}

// bn-symbol.json (kLegacyBatchNorm) and bn-0000.params in `tmp`, and the
// options that import them quietly.
MxnetImportOptions write_legacy_batch_norm(const TempDir& tmp, bool with_stats) {
  write_file_atomic(tmp.path() + "/bn-symbol.json", kLegacyBatchNorm);
  write_mxnet_params(tmp.path() + "/bn-0000.params", legacy_batch_norm_params(with_stats));
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 3, 4};
  options.note = [](const std::string&) {};
  return options;
}

TEST(MxnetLegacy, ThreeInputBatchNormTakesItsStatisticsFromAuxArrays) {
  TempDir tmp("hybgen-mxnet-test");
  const MxnetImportOptions options = write_legacy_batch_norm(tmp, true);
  const Graph g = import_mxnet(tmp.path() + "/bn-symbol.json", tmp.path() + "/bn-0000.params", options);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs.size(), 5u);
  EXPECT_EQ(g.constants.at("bn_moving_mean").f32_data()[1], -1.0f);
  EXPECT_EQ(g.constants.at("bn_moving_var").f32_data()[2], 4.0f);
  EXPECT_FALSE(g.nodes[0].attrs.get_bool("fix_gamma"));
}

TEST(MxnetLegacy, ThreeInputBatchNormWithoutStatisticsIsACleanError) {
  TempDir tmp("hybgen-mxnet-test");
  const MxnetImportOptions options = write_legacy_batch_norm(tmp, false);
  std::string message =
      error_of([&] { import_mxnet(tmp.path() + "/bn-symbol.json", tmp.path() + "/bn-0000.params", options); });
  EXPECT_NE(message.find("node 'bn' (BatchNorm): has 3 inputs (the MXNet 0.8 form)"), std::string::npos) << message;
  EXPECT_NE(message.find("'aux:bn_moving_mean' is missing from"), std::string::npos) << message;
  message = error_of([&] { import_mxnet(tmp.path() + "/bn-symbol.json", std::nullopt, options); });
  EXPECT_NE(message.find("node 'bn' (BatchNorm)"), std::string::npos) << message;
  EXPECT_NE(message.find("'aux:bn_moving_mean' needs a .params file"), std::string::npos) << message;
}

TEST(MxnetLegacy, BatchNormWithAnotherInputCountIsAnErrorNotACrash) {
  // Four inputs: neither form. The shape rule must refuse it, whoever calls it first.
  TempDir tmp("hybgen-mxnet-test");
  write_file_atomic(tmp.path() + "/bn4-symbol.json", R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "bn_gamma", "inputs": []},
      {"op": "null", "name": "bn_beta", "inputs": []},
      {"op": "null", "name": "bn_moving_mean", "inputs": []},
      {"op": "BatchNorm", "name": "bn", "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]}],
    "arg_nodes": [0, 1, 2, 3], "heads": [[4, 0, 0]]})");
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 3, 4};
  options.random_weights_seed = 1;
  const std::string message = error_of([&] { import_mxnet(tmp.path() + "/bn4-symbol.json", std::nullopt, options); });
  EXPECT_NE(message.find("node 'bn' (BatchNorm): has 4 inputs, expected 5"), std::string::npos) << message;
  const OpDef& def = find_op("BatchNorm");
  const TensorType x{{2, 3, 4}}, c{{3}};
  EXPECT_NE(error_of([&] { def.infer(normalize_attrs(def, Attrs{}), {x, c, c}); }).find("has 3 inputs, expected 5"),
            std::string::npos);
}

TEST(MxnetLegacy, KeysMxnetIgnoresAreSkippedWithOneNoteEach) {
  TempDir tmp("hybgen-mxnet-test");
  write_file_atomic(tmp.path() + "/k-symbol.json", R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "Activation", "name": "a1", "attrs": {"act_type": "relu", "__force_mirroring__": "True",
       "__profiler_scope__": "net:", "ctx_group": "g1"}, "inputs": [[0, 0, 0]]},
      {"op": "Activation", "name": "a2", "attrs": {"act_type": "tanh", "__force_mirroring__": "True",
       "bias_wd_mult": "0", "lr_mult": "2"}, "inputs": [[1, 0, 0]]}],
    "arg_nodes": [0], "heads": [[2, 0, 0]]})");
  std::vector<std::string> notes;
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 3};
  options.note = [&](const std::string& n) { notes.push_back(n); };
  const Graph g = import_mxnet(tmp.path() + "/k-symbol.json", std::nullopt, options);
  ASSERT_EQ(g.nodes.size(), 2u);
  ASSERT_EQ(notes.size(), 5u);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("node 'a1' (Activation): attribute '__force_mirroring__' ignored, as MXNet ignores it at "
                     "inference (and on 1 more node)"),
            std::string::npos)
      << all;
  for (const char* text : {"node 'a1' (Activation): attribute '__profiler_scope__'",
                           "node 'a1' (Activation): attribute 'ctx_group'", "node 'a2' (Activation): attribute 'bias_wd_mult'",
                           "node 'a2' (Activation): attribute 'lr_mult'"})
    EXPECT_NE(all.find(text), std::string::npos) << all;
  // A key MXNet would not ignore is still refused.
  write_file_atomic(tmp.path() + "/u-symbol.json", R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "Activation", "name": "a1", "attrs": {"act_type": "relu", "slope": "0.1"}, "inputs": [[0, 0, 0]]}],
    "arg_nodes": [0], "heads": [[1, 0, 0]]})");
  EXPECT_NE(error_of([&] { import_mxnet(tmp.path() + "/u-symbol.json", std::nullopt, options); })
                .find("attribute 'slope' = '0.1' is not supported"),
            std::string::npos);
}

// Gluon's F.relu(x), F.sigmoid(x), ... export ops of their own; Swish is x * sigmoid(x).
TEST(MxnetSymbol, StandaloneActivationsBecomeActivation) {
  TempDir tmp("hybgen-mxnet-test");
  write_file_atomic(tmp.path() + "/act-symbol.json", R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]},
      {"op": "sigmoid", "name": "s", "inputs": [[1, 0, 0]]},
      {"op": "elemwise_mul", "name": "swish", "inputs": [[1, 0, 0], [2, 0, 0]]},
      {"op": "tanh", "name": "t", "attrs": {"__profiler_scope__": "net:"}, "inputs": [[3, 0, 0]]},
      {"op": "softsign", "name": "ss", "inputs": [[4, 0, 0]]}],
    "arg_nodes": [0], "heads": [[5, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})");
  MxnetImportOptions options;
  options.input_shapes["data"] = {2, 3};
  options.note = [](const std::string&) {};
  const Graph g = import_mxnet(tmp.path() + "/act-symbol.json", std::nullopt, options);
  ASSERT_EQ(g.nodes.size(), 5u);
  const std::vector<std::pair<std::size_t, std::string>> expected = {{0, "relu"}, {1, "sigmoid"}, {3, "tanh"}, {4, "softsign"}};
  for (const auto& [index, act] : expected) {
    EXPECT_EQ(g.nodes[index].op, "Activation") << act;
    EXPECT_EQ(g.nodes[index].attrs.get_string("act_type"), act);
  }
  EXPECT_EQ(g.nodes[4].name, "ss");
}

// MXNet's axis=None is the flattened input, also where the default is an
// axis: topk takes the k largest of all elements; pick, which cannot, refuses.
TEST(MxnetSymbol, AxisNoneIsTheFlattenedInputNotTheDefaultAxis) {
  TempDir tmp("hybgen-mxnet-test");
  for (const std::string op : {"topk", "pick"}) {
    const bool pick = op == "pick";
    write_file_atomic(tmp.path() + "/" + op + "-symbol.json", R"({"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "index", "inputs": []},
        {"op": ")" + op + R"(", "name": "sel", "attrs": {"axis": "None")" +
                                                                  (pick ? "" : R"(, "k": "3")") +
                                                                  R"(}, "inputs": [[0, 0, 0])" +
                                                                  (pick ? ", [1, 0, 0]" : "") + R"(]}],
      "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})");
    MxnetImportOptions options;
    options.input_shapes["data"] = {2, 5};
    if (pick) options.input_shapes["index"] = {2};
    options.note = [](const std::string&) {};
    const Graph g = import_mxnet(tmp.path() + "/" + op + "-symbol.json", std::nullopt, options);
    const Node& node = g.nodes.back();
    ASSERT_EQ(node.attrs.get_int("axis"), kSliceNone) << op;
    const OpDef& def = find_op(op);
    std::vector<TensorType> in = {TensorType{{2, 5}}};
    if (pick) in.push_back(TensorType{{2}});
    if (pick)
      EXPECT_ERROR(def.infer(normalize_attrs(def, node.attrs), in), "axis None");
    else
      EXPECT_EQ(def.infer(normalize_attrs(def, node.attrs), in)[0].shape, (Shape{3}));
  }
}

}  // namespace
}  // namespace hybgen
