// MXNet exports of 1-D and 3-D convolution and pooling (layout NCW /
// NCDHW, as Gluon writes them) and of the normalisation ops: attributes
// parsed into the ops' schemas, weights of the shapes the ops expect,
// output shapes; layouts hybgen does not take and training-only outputs
// refused by name.
#include <gtest/gtest.h>

#include <fstream>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/mxnet/mxnet_symbol.h"
#include "ops/op.h"

namespace hybgen {
namespace {

using testing::error_of;

// The shape of every value of an imported graph, by the ops' own rules.
std::map<std::string, Shape> shapes_of(const Graph& g) {
  std::map<std::string, Shape> shapes;
  for (const auto& [name, type] : g.types) shapes[name] = type.shape;
  for (const Node& node : g.nodes) {
    const OpDef& def = find_op(node.op);
    std::vector<TensorType> in;
    for (const auto& v : node.inputs) in.push_back(TensorType{shapes.at(v), DType::kFloat32});
    const std::vector<TensorType> out = def.infer(normalize_attrs(def, node.attrs), in);
    for (std::size_t i = 0; i < out.size(); ++i) shapes[node.outputs[i]] = out[i].shape;
  }
  return shapes;
}

std::map<std::string, Shape> import_text(const std::string& text, const std::map<std::string, Shape>& shapes) {
  TempDir tmp("hybgen-mxnet-nd-test");
  const std::string path = tmp.path() + "/m-symbol.json";
  write_file_atomic(path, text);
  MxnetImportOptions options;
  for (const auto& [name, shape] : shapes) options.input_shapes[name] = shape;
  options.random_weights_seed = 1;
  options.note = [](const std::string&) {};
  return shapes_of(import_mxnet(path, std::nullopt, options));
}

const char* kConv1d = R"JSON({"nodes": [
  {"op": "null", "name": "data", "inputs": []},
  {"op": "null", "name": "c_weight", "inputs": []},
  {"op": "null", "name": "c_bias", "inputs": []},
  {"op": "Convolution", "name": "c", "attrs": {"kernel": "(5,)", "num_filter": "8", "stride": "(2,)",
    "pad": "(2,)", "dilate": "(1,)", "num_group": "1", "layout": "NCW", "no_bias": "False"},
    "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
  {"op": "Pooling", "name": "p", "attrs": {"kernel": "(3,)", "pool_type": "max", "stride": "(2,)", "pad": "(1,)",
    "layout": "NCW", "pooling_convention": "valid", "global_pool": "False"}, "inputs": [[3, 0, 0]]},
  {"op": "null", "name": "g_gamma", "inputs": []},
  {"op": "null", "name": "g_beta", "inputs": []},
  {"op": "GroupNorm", "name": "g", "attrs": {"num_groups": "4", "eps": "1e-05", "output_mean_var": "False"},
    "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},
  {"op": "L2Normalization", "name": "l2", "attrs": {"mode": "spatial"}, "inputs": [[7, 0, 0]]},
  {"op": "Pooling", "name": "gap", "attrs": {"kernel": "(1,)", "pool_type": "avg", "global_pool": "True",
    "layout": "NCW"}, "inputs": [[8, 0, 0]]}],
  "arg_nodes": [0, 1, 2, 5, 6], "heads": [[9, 0, 0]]})JSON";

TEST(MxnetNdImport, Conv1DPoolingAndGroupNormAsGluonExportsThem) {
  const auto shapes = import_text(kConv1d, {{"data", {2, 3, 40}}});
  EXPECT_EQ(shapes.at("c"), (Shape{2, 8, 20}));
  EXPECT_EQ(shapes.at("c_weight"), (Shape{8, 3, 5}));
  EXPECT_EQ(shapes.at("p"), (Shape{2, 8, 10}));
  EXPECT_EQ(shapes.at("g_gamma"), (Shape{4}));  // one value per group (MXNet 1.9)
  EXPECT_EQ(shapes.at("gap"), (Shape{2, 8, 1}));
}

TEST(MxnetNdImport, Conv3DInstanceNormAndLrn) {
  const auto shapes = import_text(R"JSON({"nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "c_weight", "inputs": []},
    {"op": "Convolution", "name": "c", "attrs": {"kernel": "(3, 3, 3)", "num_filter": "4", "pad": "(1, 1, 1)",
      "num_group": "2", "layout": "NCDHW", "no_bias": "True"}, "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "Pooling", "name": "p", "attrs": {"kernel": "(2, 2, 2)", "pool_type": "avg", "stride": "(2, 2, 2)",
      "pooling_convention": "full", "count_include_pad": "False", "layout": "NCDHW"}, "inputs": [[2, 0, 0]]},
    {"op": "null", "name": "i_gamma", "inputs": []},
    {"op": "null", "name": "i_beta", "inputs": []},
    {"op": "InstanceNorm", "name": "i", "attrs": {"eps": "0.001"}, "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0]]},
    {"op": "Reshape", "name": "r", "attrs": {"shape": "(0, 0, -1, 1)"}, "inputs": [[6, 0, 0]]},
    {"op": "LRN", "name": "n", "attrs": {"nsize": "3", "alpha": "0.0001", "beta": "0.75", "knorm": "2"},
      "inputs": [[7, 0, 0]]}],
    "arg_nodes": [0, 1, 4, 5], "heads": [[8, 0, 0]]})JSON",
                              {{"data", {1, 2, 5, 6, 7}}});
  EXPECT_EQ(shapes.at("c_weight"), (Shape{4, 1, 3, 3, 3}));
  EXPECT_EQ(shapes.at("p"), (Shape{1, 4, 3, 3, 4}));
  EXPECT_EQ(shapes.at("i_gamma"), (Shape{4}));
  EXPECT_EQ(shapes.at("n"), (Shape{1, 4, 36, 1}));
}

TEST(MxnetNdImport, OtherLayoutsAndTrainingOutputsAreRefusedByName) {
  std::string nwc = kConv1d;
  nwc.replace(nwc.find("\"NCW\""), 5, "\"NWC\"");
  std::string message = error_of([&] { import_text(nwc, {{"data", {2, 3, 40}}}); });
  EXPECT_NE(message.find("node 'c' (Convolution)"), std::string::npos) << message;
  EXPECT_NE(message.find("NWC"), std::string::npos) << message;

  std::string mean_var = kConv1d;
  mean_var.replace(mean_var.find("\"output_mean_var\": \"False\""), 26, "\"output_mean_var\": \"True\"");
  message = error_of([&] { import_text(mean_var, {{"data", {2, 3, 40}}}); });
  EXPECT_NE(message.find("output_mean_var"), std::string::npos) << message;

  std::string ncdhw = kConv1d;  // a 3-D layout on a 1-D kernel
  ncdhw.replace(ncdhw.find("\"NCW\""), 5, "\"NCDHW\"");
  message = error_of([&] { import_text(ncdhw, {{"data", {2, 3, 40}}}); });
  EXPECT_NE(message.find("does not match a 1-D kernel"), std::string::npos) << message;
}

}  // namespace
}  // namespace hybgen
