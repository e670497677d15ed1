// Hostile and careless files, one test per defect found by trying them: deep
// JSON nesting, sizes that overflow, files that never end, names that are
// not text. Each must end in one hybgen::Error naming the file and what is
// wrong, never a crash, a huge allocation or a wrong blame.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/json_util.h"
#include "io/model_json.h"
#include "io/mxnet/mxnet_params.h"
#include "io/mxnet/mxnet_symbol.h"
#include "io/safetensors.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "mxnet_params_builder.h"

namespace hybgen {
namespace {

using testing::error_of;

std::string nested(std::size_t depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

// A .params file of one float32 record (V2 layout) with the given dims and no data.
std::vector<uint8_t> params_claiming(const std::vector<uint64_t>& dims) {
  return testing::mxnet_params_record("fc", 0, dims, {});
}

TEST(HostileFiles, DeepJsonNestingIsRefusedWhileParsing) {
  const std::string deep = nested(100000);
  EXPECT_ERROR(parse_json(deep, "m.json"), "m.json: JSON nested deeper than 64 levels");
  // Inside the places the issue found: model.json attrs and shapes, a
  // symbol file, a safetensors header.
  const std::string model = R"({"format": "hybgen-graph", "format_version": 1, "inputs": [{"name": "x", "shape": )" +
                            deep + R"(}], "outputs": ["x"], "nodes": []})";
  EXPECT_ERROR(parse_json(model, "m.json"), "m.json: JSON nested deeper than 64 levels");
  const std::string symbol = R"({"nodes": [{"op": "null", "name": "x", "attrs": {"a": )" + deep +
                             R"(}}], "arg_nodes": [0], "heads": [[0, 0, 0]]})";
  EXPECT_ERROR(parse_json(symbol, "s-symbol.json"), "nested deeper");
  const std::string header = R"({"t": {"dtype": "F32", "shape": )" + deep + R"(, "data_offsets": [0, 4]}})";
  std::vector<uint8_t> file(8, 0);
  for (int i = 0; i < 8; ++i) file[i] = static_cast<uint8_t>(header.size() >> (8 * i));
  file.insert(file.end(), header.begin(), header.end());
  EXPECT_ERROR(parse_safetensors(file, "w.safetensors"), "w.safetensors: header: JSON nested deeper than 64 levels");
  // Real files nest a few levels: 64 is accepted.
  EXPECT_NO_THROW(parse_json(nested(limits::kMaxJsonDepth), "ok.json"));
}

TEST(HostileFiles, MessagesShowValuesCutShort) {
  std::string long_list = "[1";
  for (int i = 0; i < 200000; ++i) long_list += ",1";
  long_list += "]";
  const auto value = parse_json(long_list, "x");
  EXPECT_LT(json_excerpt(value).size(), 200u);
  const std::string model = R"({"format": "hybgen-graph", "format_version": 1, "inputs": [{"name": "x", "shape": {"a": )" +
                            nested(60) + R"(}}], "outputs": ["x"], "nodes": []})";
  const std::string message = error_of([&] { graph_from_json(parse_json(model, "m.json"), "m.json"); });
  EXPECT_NE(message.find("m.json: input 0 ('x'): field 'shape' must be a list of integers"), std::string::npos)
      << message;
  EXPECT_LT(message.size(), 300u);
}

TEST(HostileFiles, ParamsDimsThatOverflowAreRefusedNamingTheArray) {
  const std::string m32 = error_of([&] { parse_mxnet_params(params_claiming({1ull << 32, 1ull << 32}), "w.params"); });
  EXPECT_NE(m32.find("w.params: array 0: shape (4294967296, 4294967296) has more than 2147483647 elements"),
            std::string::npos)
      << m32;
  const std::string m40 = error_of([&] { parse_mxnet_params(params_claiming({1ull << 40, 1ull << 40}), "w.params"); });
  EXPECT_NE(m40.find("w.params: array 0: shape (1099511627776, 1099511627776)"), std::string::npos) << m40;
  // Within the limits but without its data: truncated, naming the array.
  EXPECT_ERROR(parse_mxnet_params(params_claiming({1000, 1000}), "w.params"),
               "w.params: truncated: array 0 of shape (1000, 1000) needs 4000000 data bytes");
}

// Found by fuzzing: the product of the other dims overflowed before the 0 was seen.
TEST(HostileFiles, ParamsEmptyArrayWithHugeDimsIsEmpty) {
  const auto arrays = parse_mxnet_params(params_claiming({1ull << 40, 1ull << 40, 0}), "w.params");
  EXPECT_EQ(arrays.at("arg:fc").type.num_elements(), 0);
  EXPECT_EQ(num_elements({int64_t{1} << 40, int64_t{1} << 40, 0}), 0);
}

TEST(HostileFiles, ParamsNamesMustBeText) {
  auto bytes = params_claiming({0});
  bytes.back() = 0xff;  // the name's last byte
  EXPECT_ERROR(parse_mxnet_params(bytes, "w.params"), "w.params: name 0 ('arg:f\\xff') is not valid UTF-8");
}

TEST(HostileFiles, ModelJsonShapesThatOverflowAreRefused) {
  for (const std::string shape : {"[9223372036854775807, 2]", "[4294967296, 4294967296]", "[1000000000, 1000000000]"}) {
    const std::string model = R"({"format": "hybgen-graph", "format_version": 1, "inputs": [{"name": "x", "shape": )" +
                              shape + R"(}], "outputs": ["x"], "nodes": []})";
    const std::string message = error_of([&] { graph_from_json(parse_json(model, "m.json"), "m.json"); });
    EXPECT_NE(message.find("m.json: input 0 ('x'): shape ("), std::string::npos) << message;
    EXPECT_NE(message.find("has more than 2147483647 elements"), std::string::npos) << message;
  }
}

TEST(HostileFiles, SafetensorsShapesThatOverflowAreRefused) {
  const std::string header = R"({"t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})";
  std::vector<uint8_t> file(8, 0);
  for (int i = 0; i < 8; ++i) file[i] = static_cast<uint8_t>(header.size() >> (8 * i));
  file.insert(file.end(), header.begin(), header.end());
  EXPECT_ERROR(parse_safetensors(file, "w.safetensors"), "w.safetensors: tensor 't': shape (4294967296, 4294967296)");
}

TEST(HostileFiles, OnlyRegularFilesOfSaneSizeAreRead) {
  EXPECT_ERROR(read_file_bytes("/dev/zero"), "/dev/zero: not a regular file");
  EXPECT_ERROR(read_json_file("/dev/zero"), "/dev/zero: not a regular file");
  EXPECT_ERROR(read_mxnet_params("/dev/zero"), "/dev/zero: not a regular file");
  EXPECT_ERROR(read_safetensors("/dev/zero"), "/dev/zero: not a regular file");
  TempDir tmp("hybgen-hostile-test");
  const std::string big = tmp.path() + "/big.json";
  { std::ofstream(big) << "{}"; }
  std::filesystem::resize_file(big, limits::kMaxJsonFileBytes + 1);  // sparse: costs no disk
  EXPECT_ERROR(read_json_file(big), "big.json: 268435457 bytes, more than the limit of 268435456");
}

TEST(HostileFiles, MxnetInputShapeThatIsNotANumberNamesFileAndInput) {
  const auto symbol = parse_json(R"json({"nodes": [{"op": "null", "name": "data", "attrs": {"__shape__": "(a, b)"}},
      {"op": "Activation", "name": "r", "attrs": {"act_type": "relu"}, "inputs": [[0, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})json", "s-symbol.json");
  EXPECT_ERROR(import_mxnet_symbol(symbol, "s-symbol.json", nullptr, "", {}),
               "s-symbol.json: input 'data': attribute '__shape__': 'a' is not an integer");
}

TEST(HostileFiles, SymbolFileWithoutHeadsIsCalledAnIncompleteSymbolFile) {
  const auto symbol = parse_json(R"({"nodes": [{"op": "null", "name": "data"}], "arg_nodes": [0]})", "s-symbol.json");
  EXPECT_TRUE(looks_like_mxnet_symbol(symbol));
  EXPECT_ERROR(import_mxnet_symbol(symbol, "s-symbol.json", nullptr, "", {}),
               "s-symbol.json: not a complete MXNet symbol file: field 'heads' is missing");
  EXPECT_FALSE(looks_like_mxnet_symbol(parse_json(R"({"format": "hybgen-graph", "nodes": [], "heads": []})", "m")));
}

TEST(HostileFiles, RandomWeightsNameFileAndNodeAndAllocateNothingAbsurd) {
  // A FullyConnected whose weight would be 1e3 x 1e6 floats: 4 GB.
  const auto symbol = parse_json(R"({"nodes": [{"op": "null", "name": "data"},
      {"op": "null", "name": "fc_weight"},
      {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "1000", "no_bias": "True"},
       "inputs": [[0, 0, 0], [1, 0, 0]]}], "arg_nodes": [0, 1], "heads": [[2, 0, 0]]})", "s-symbol.json");
  MxnetImportOptions options;
  options.random_weights_seed = 1;
  options.input_shapes["data"] = {1, 1000000};
  const std::string message = error_of([&] { import_mxnet_symbol(symbol, "s-symbol.json", nullptr, "", options); });
  EXPECT_NE(message.find("s-symbol.json: node 'fc' (FullyConnected): weight 'fc_weight' of shape (1000, 1000000)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("limit of --random-weights"), std::string::npos) << message;
  // Found by fuzzing: a node without its inputs reached the shape rule.
  const auto bare = parse_json(R"({"nodes": [{"op": "null", "name": "data"}, {"op": "squeeze", "name": "sq"}],
      "arg_nodes": [], "heads": [[1, 0]]})", "s-symbol.json");
  options.input_shapes.clear();
  EXPECT_ERROR(import_mxnet_symbol(bare, "s-symbol.json", nullptr, "", options),
               "s-symbol.json: node 'sq' (squeeze): has 0 inputs, expected 1");
  // Attributes the op refuses are named with the file and node too.
  const auto bad = parse_json(R"({"nodes": [{"op": "null", "name": "data"}, {"op": "null", "name": "fc_weight"},
      {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "-5", "no_bias": "True"},
       "inputs": [[0, 0, 0], [1, 0, 0]]}], "arg_nodes": [0, 1], "heads": [[2, 0, 0]]})", "s-symbol.json");
  options.input_shapes["data"] = {1, 8};
  EXPECT_ERROR(import_mxnet_symbol(bad, "s-symbol.json", nullptr, "", options), "s-symbol.json: node 'fc' (FullyConnected): ");
}

}  // namespace
}  // namespace hybgen
