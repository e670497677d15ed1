// model.json + weights: the documented layout, exact round trips of every
// attribute kind, deterministic output, and one test per bad model or weights
// file, each checked for the file and node it names.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "graph_builders.h"

#include <filesystem>

#include "io/file_util.h"
#include "io/model_json.h"
#include "io/safetensors.h"
#include "ir/error.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

// One node carrying an attribute of every kind, floats that need all 17 digits included.
Graph every_attr_kind() {
  Graph g;
  g.name = "kinds";
  g.add_input("data", {{1, 3}});
  g.add_constant("w", Constant::f32({2, 3}, testing::seeded_values(6, 7)));
  g.add_constant("b", Constant::f32({2}, {0.5f, -0.5f}));
  g.nodes.push_back(testing::make_node(
      "fc", "FullyConnected", {"data", "w", "b"},
      testing::attrs_of({{"num_hidden", int64_t{2}},
                         {"big", int64_t{-9007199254740993}},
                         {"no_bias", false},
                         {"scale", 0.1},
                         {"tiny", 1e-300},
                         {"whole", 2.0},
                         {"act", std::string("relu")},
                         {"axes", std::vector<int64_t>{1, -1, kSliceNone}},
                         {"none", std::vector<int64_t>{}},
                         {"ratios", std::vector<double>{0.5, 2.0, 1.0 / 3.0}}})));
  g.nodes.push_back(testing::make_node("act", "relu", {"fc"}));
  g.outputs = {"act"};
  return g;
}

Graph parse(const std::string& text) { return graph_from_json(nlohmann::json::parse(text), "m.json"); }

// A model with input x and output y whose "nodes" (and "inputs") are the given JSON text.
std::string model_with(const std::string& nodes, const std::string& inputs = R"([{"name": "x", "shape": [1, 2]}])") {
  return R"({"format": "hybgen-graph", "format_version": 1, "name": "t", "inputs": )" + inputs +
         R"(, "outputs": ["y"], "nodes": )" + nodes + "}";
}

class ModelFiles : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_.path() + "/" + name; }

 private:
  TempDir tmp_{"hybgen-model-test"};
};

TEST(ModelJson, WritesTheDocumentedKeysInOrder) {
  const auto j = graph_to_json(every_attr_kind());
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "format_version", "name", "inputs", "outputs", "weights", "nodes"}));
  EXPECT_EQ(j["format"], "hybgen-graph");
  EXPECT_EQ(j["format_version"], 1);  // 2 only with quantization
  EXPECT_EQ(j["inputs"][0].dump(), R"({"name":"data","shape":[1,3],"dtype":"float32"})");
  EXPECT_EQ(j["weights"][0]["name"], "b");  // sorted by name
  EXPECT_EQ(j["weights"][1]["name"], "w");
  std::vector<std::string> node_keys;
  for (const auto& [k, v] : j["nodes"][0].items()) node_keys.push_back(k);
  EXPECT_EQ(node_keys, (std::vector<std::string>{"name", "op", "inputs", "outputs", "attrs"}));
  EXPECT_EQ(j["nodes"][0]["attrs"]["axes"].dump(), "[1,-1,null]");  // None in an int list
}

TEST(ModelJson, EveryAttributeKindRoundTripsExactly) {
  const Graph g = every_attr_kind();
  const Graph back = parse(model_json_text(g));
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(back.nodes[0].attrs, g.nodes[0].attrs);
  EXPECT_EQ(attr_kind_of(back.nodes[0].attrs.get("whole")), AttrKind::kFloat);  // 2.0 stays a float
  EXPECT_EQ(attr_kind_of(back.nodes[0].attrs.get("none")), AttrKind::kInts);
  EXPECT_EQ(back.nodes[0].attrs.get_floats("ratios")[2], 1.0 / 3.0);
  EXPECT_EQ(back.nodes[1].outputs, (std::vector<std::string>{"act"}));
  EXPECT_EQ(back.types.at("w"), g.constants.at("w").type);
  EXPECT_FALSE(back.constants.at("w").has_data());  // the json alone has no weights
  EXPECT_EQ(model_json_text(back), model_json_text(g));
}

TEST(ModelJson, TextIsDeterministicWithTwoSpaceIndentAndFinalNewline) {
  const std::string text = model_json_text(every_attr_kind());
  EXPECT_EQ(text, model_json_text(every_attr_kind()));
  EXPECT_EQ(text.rfind("{\n  \"format\": \"hybgen-graph\",\n  \"format_version\": 1,", 0), 0u) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(ModelJson, UnknownTypesAreWrittenAsNullShape) {
  Graph g = every_attr_kind();
  g.types.erase("data");
  EXPECT_TRUE(graph_to_json(g)["inputs"][0]["shape"].is_null());
}

TEST(ModelJson, NonFiniteFloatAttributesCannotBeWritten) {
  Graph g = every_attr_kind();
  g.nodes[0].attrs.set("scale", std::numeric_limits<double>::infinity());
  EXPECT_ERROR(graph_to_json(g), "node 'fc' (FullyConnected): attribute 'scale' is inf");
}

TEST(ModelJson, NodeOutputsDefaultToTheNodeName) {
  const Graph g = parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"]}])"));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"y"}));
  EXPECT_TRUE(g.nodes[0].attrs.empty());
}

TEST(ModelJson, AttributeJsonTypesMapToKinds) {
  const Graph g = parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"], "attrs":
      {"i": 3, "f": 3.0, "e": 1e3, "b": true, "s": "same", "is": [1, 2], "fs": [1, 2.5], "n": [null, 4]}}])"));
  const Attrs& a = g.nodes[0].attrs;
  EXPECT_EQ(attr_kind_of(a.get("i")), AttrKind::kInt);
  EXPECT_EQ(attr_kind_of(a.get("f")), AttrKind::kFloat);
  EXPECT_EQ(attr_kind_of(a.get("e")), AttrKind::kFloat);
  EXPECT_EQ(attr_kind_of(a.get("b")), AttrKind::kBool);
  EXPECT_EQ(attr_kind_of(a.get("s")), AttrKind::kString);
  EXPECT_EQ(a.get_ints("is"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a.get_floats("fs"), (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(a.get_ints("n"), (std::vector<int64_t>{kSliceNone, 4}));
}

TEST(ModelJson, RejectsAttributesOfOtherJsonTypes) {
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"], "attrs": {"k": {"a": 1}}}])")),
               "m.json: node 0 ('y'): attribute 'k' must be a number, string, bool or a list of numbers");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"], "attrs": {"k": [[1], [2]]}}])")),
               "node 0 ('y'): attribute 'k'");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"], "attrs": {"k": ["a"]}}])")),
               "node 0 ('y'): attribute 'k'");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"], "attrs": {"k": null}}])")),
               "node 0 ('y'): attribute 'k'");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x"], "attrs": [1]}])")),
               "node 0 ('y'): field 'attrs' must be an object");
}

TEST(ModelJson, RejectsMalformedJson) {
  TempDir tmp("hybgen-model-test");
  const std::string p = tmp.path() + "/m.json";
  write_file_atomic(p, std::string("{\"format\": \"hybgen-graph\", "));
  EXPECT_ERROR(read_model_json(p), p + ": malformed JSON: ");
  EXPECT_ERROR(read_model_json(p), "column 28");  // nlohmann's position of the error
}

TEST(ModelJson, RejectsAnotherFormat) {
  EXPECT_ERROR(parse(R"({"format": "onnx", "format_version": 1})"),
               "m.json: not a hybgen model (format \"onnx\", expected \"hybgen-graph\")");
  EXPECT_ERROR(parse(R"({"nodes": []})"), "m.json: not a hybgen model (no \"format\" field");
  EXPECT_ERROR(parse("[1, 2]"), "m.json: a model must be a JSON object");
}

TEST(ModelJson, RejectsFutureVersion) {
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 4})"),
               "m.json: written by a newer hybgen (format_version 4 > 3)");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": "1"})"),
               "format_version must be a positive integer");
}

// A run-time batch: written as version 3 with its bounds and inputs, read
// back the same; bounds that are not positive, or name no input, refused.
TEST(ModelJson, ARunTimeBatchRoundTripsAndBadOnesAreRefused) {
  Graph g = testing::seed_mlp();
  g.batch = BatchRange{2, 16, {"data"}};
  const nlohmann::json j = graph_to_json(g);
  EXPECT_EQ(j["format_version"], 3);
  const Graph back = graph_from_json(j, "m.json");
  EXPECT_EQ(back.batch.min, 2);
  EXPECT_EQ(back.batch.max, 16);
  EXPECT_EQ(back.batch.inputs, std::vector<std::string>{"data"});
  EXPECT_EQ(graph_to_json(testing::seed_mlp())["format_version"], 1);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"min": 0, "max": 4, "inputs": ["data"]})", "'min' must be a positive integer"},
      {R"({"min": 1, "max": "4", "inputs": ["data"]})", "'max' must be a positive integer"},
      {R"({"min": 5, "max": 4, "inputs": ["data"]})", "min 5 is above max 4"},
      {R"({"min": 1, "max": 4, "inputs": ["nope"]})", "'nope' is not an input"},
      {R"({"min": 1, "max": 4, "inputs": []})", "'inputs' names none"},
      {R"([1, 4])", "field 'batch' must be an object"}};
  for (const auto& [batch, message] : bad) {
    nlohmann::json broken = j;
    broken["batch"] = nlohmann::json::parse(batch);
    EXPECT_ERROR(graph_from_json(broken, "m.json"), message);
  }
}

TEST(ModelJson, RejectsMissingFields) {
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "inputs": []})"), "m.json: missing field 'format_version'");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": []})"),
               "m.json: missing field 'outputs'");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": [], "outputs": []})"),
               "m.json: missing field 'nodes'");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "inputs": ["x"]}])")), "m.json: node 0 ('y'): missing field 'op'");
  EXPECT_ERROR(parse(model_with(R"([{"op": "relu", "inputs": ["x"]}])")), "m.json: node 0: missing field 'name'");
}

TEST(ModelJson, RejectsFieldsOfTheWrongType) {
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": "x"}])")),
               "m.json: node 0 ('y'): field 'inputs' must be a list of strings");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": "relu", "inputs": ["x", 3]}])")),
               "node 0 ('y'): field 'inputs' must be a list of strings");
  EXPECT_ERROR(parse(model_with(R"([{"name": "y", "op": 7, "inputs": ["x"]}])")), "node 0 ('y'): field 'op' must be a string");
  EXPECT_ERROR(parse(model_with(R"(["y"])")), "m.json: node 0: must be a JSON object, got string");
  EXPECT_ERROR(parse(model_with(R"({"y": 1})")), "m.json: field 'nodes' must be a list");
  EXPECT_ERROR(parse(model_with("[]", R"([{"name": "x", "shape": [1, -2]}])")),
               "m.json: input 0 ('x'): field 'shape' must be a list of non-negative integers");
  EXPECT_ERROR(parse(model_with("[]", R"([{"name": "x", "shape": [1, 2], "dtype": "int4"}])")), "input 0 ('x')");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "name": 3})"), "field 'name' must be a string");
}

TEST(ModelJson, RejectsInputWithoutShape) {
  EXPECT_ERROR(parse(model_with("[]", R"([{"name": "data"}])")), "m.json: input 'data' has no shape");
  EXPECT_ERROR(parse(model_with("[]", R"([{"name": "data", "shape": null}])")), "m.json: input 'data' has no shape");
}

TEST(ModelJson, WeightsBecomeConstantsWithoutData) {
  const Graph g = parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": [], "outputs": [], "nodes": [],
                           "weights": [{"name": "w", "shape": [4, 2], "dtype": "float32"}]})");
  EXPECT_EQ(g.constants.at("w").type.shape, (Shape{4, 2}));
  EXPECT_TRUE(g.constants.at("w").data.empty());
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": [], "outputs": [], "nodes": [],
                         "weights": [{"name": "w"}]})"),
               "m.json: weight 'w' has no shape");
}

TEST_F(ModelFiles, SaveLoadRoundTripKeepsGraphAndWeights) {
  const Graph g = every_attr_kind();
  save_model(g, path("m"));
  EXPECT_EQ(read_file_text(path("m.json")), model_json_text(g));
  const Graph back = load_model(path("m.json"));
  EXPECT_EQ(back.name, "kinds");
  EXPECT_EQ(back.inputs, g.inputs);
  EXPECT_EQ(back.outputs, g.outputs);
  for (const auto& [name, c] : g.constants) EXPECT_EQ(back.constants.at(name).data, c.data) << name;
}

TEST_F(ModelFiles, SaveIsDeterministic) {
  save_model(every_attr_kind(), path("a"));
  save_model(every_attr_kind(), path("b"));
  EXPECT_EQ(read_file_bytes(path("a.json")), read_file_bytes(path("b.json")));
  EXPECT_EQ(read_file_bytes(path("a.safetensors")), read_file_bytes(path("b.safetensors")));
}

TEST_F(ModelFiles, SaveRefusesWeightsWithoutData) {
  Graph g = every_attr_kind();
  g.constants.at("w").data.clear();
  EXPECT_ERROR(save_model(g, path("m")), "weight 'w' has no data");
  EXPECT_FALSE(std::filesystem::exists(path("m.json")));
}

TEST_F(ModelFiles, LoadReadsAWeightsFileNamedExplicitly) {
  save_model(every_attr_kind(), path("m"));
  std::filesystem::rename(path("m.safetensors"), path("w.safetensors"));
  const Graph g = load_model(path("m.json"), path("w.safetensors"));
  EXPECT_EQ(g.constants.at("b").f32_data()[1], -0.5f);
}

TEST_F(ModelFiles, LoadIgnoresTensorsTheGraphDoesNotUse) {
  save_model(every_attr_kind(), path("m"));
  auto tensors = read_safetensors(path("m.safetensors"));
  tensors["unused"] = Constant::f32({1}, {9});
  write_safetensors(path("m.safetensors"), tensors);
  EXPECT_EQ(load_model(path("m.json")).constants.count("unused"), 0u);
}

TEST_F(ModelFiles, LoadRejectsMissingWeightsFile) {
  save_model(every_attr_kind(), path("m"));
  std::filesystem::remove(path("m.safetensors"));
  EXPECT_ERROR(load_model(path("m.json")),
               path("m.json") + ": weights file '" + path("m.safetensors") + "' not found (use --weights to name it)");
}

TEST_F(ModelFiles, LoadRejectsMissingTensor) {
  save_model(every_attr_kind(), path("m"));
  write_safetensors(path("m.safetensors"), {{"w", Constant::f32({2, 3}, testing::seeded_values(6, 7))}});
  EXPECT_ERROR(load_model(path("m.json")), path("m.json") + ": weight 'b' is missing from " + path("m.safetensors"));
}

TEST_F(ModelFiles, IntegerWeightsRoundTripWithTheirDtype) {
  Graph g = every_attr_kind();
  g.add_constant("ids", Constant::i64({3}, {(int64_t{1} << 40) + 1, -2, 3}));
  save_model(g, path("m"));
  const std::string text = model_json_text(g);
  EXPECT_NE(text.find("\"dtype\": \"int64\""), std::string::npos) << text;
  const Graph back = load_model(path("m.json"));
  EXPECT_EQ(back.constants.at("ids").type, (TensorType{{3}, DType::kInt64}));
  EXPECT_EQ(back.constants.at("ids").data, g.constants.at("ids").data);
}

TEST_F(ModelFiles, QuantizedInputsAndWeightsRoundTripAsFormatVersion2) {
  Graph g = every_attr_kind();
  EXPECT_EQ(graph_to_json(g)["format_version"], 1);  // files without quantization stay readable by earlier readers
  g.add_input("codes", TensorType{{1, 4}, DType::kUInt8, Quantization::per_tensor(0.05f, 128)});
  Constant w;
  w.type = TensorType{{2, 3}, DType::kInt8, Quantization::per_axis(0, {0.25f, 0.0078125f}, {0, 0})};
  w.data = {1, 2, 3, 0xFF, 0x80, 0x7F};
  g.add_constant("qw", w);
  save_model(g, path("m"));
  const std::string text = model_json_text(g);
  EXPECT_NE(text.find(R"("quantization": {
        "scale": [
          0.05
        ],)"),
            std::string::npos)
      << text;  // the float's shortest text, not 0.05000000074505806
  EXPECT_EQ(graph_to_json(g)["format_version"], 2);
  const Graph back = load_model(path("m.json"));
  EXPECT_EQ(back.types.at("codes"), g.types.at("codes"));
  EXPECT_EQ(back.constants.at("qw").type, w.type);
  EXPECT_EQ(back.constants.at("qw").data, w.data);
  EXPECT_EQ(model_json_text(back), text);
}

TEST(ModelJson, RejectsBadQuantization) {
  auto input = [](const std::string& fields) {
    return model_with("[]", R"([{"name": "x", "shape": [2, 3], "dtype": "int8", "quantization": )" + fields + "}]");
  };
  EXPECT_ERROR(parse(input("[0.5]")), "m.json: input 0 ('x'): field 'quantization' must be an object");
  EXPECT_ERROR(parse(input(R"({"zero_point": [0]})")), "field 'quantization': missing field 'scale'");
  EXPECT_ERROR(parse(input(R"({"scale": [], "zero_point": []})")), "'scale' must be a non-empty list of numbers");
  EXPECT_ERROR(parse(input(R"({"scale": ["a"], "zero_point": [0]})")), "'scale' must be a list of numbers");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5], "zero_point": [0.5]})")), "'zero_point' must be a list of integers");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5], "zero_point": [0], "axis": -1})")), "'axis' must be an axis");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5], "zero_point": [0], "shift": 3})")), "unknown field 'shift'");
  EXPECT_ERROR(parse(input(R"({"scale": [0], "zero_point": [0]})")),
               "input 0 ('x'): quantization scale 0 is not a finite positive number");
  EXPECT_ERROR(parse(input(R"({"scale": [1e39], "zero_point": [0]})")), "quantization scale inf");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5], "zero_point": [128]})")),
               "input 0 ('x'): zero point 128 is outside int8's range [-128, 127]");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5, 0.5], "zero_point": [0, 0]})")),
               "quantization per tensor needs 1 scales and zero points, got 2 and 2");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5, 0.5], "zero_point": [0, 0], "axis": 1})")),
               "quantization on axis 1 of shape (2, 3) needs 3 scales and zero points, got 2 and 2");
  EXPECT_ERROR(parse(input(R"({"scale": [0.5], "zero_point": [0], "axis": 2})")),
               "quantization axis 2 is not an axis of shape (2, 3)");
  EXPECT_ERROR(
      parse(model_with("[]", R"([{"name": "x", "shape": [2], "quantization": {"scale": [1], "zero_point": [0]}}])")),
      "input 0 ('x'): only integer values are quantized, not float32");
}

TEST_F(ModelFiles, HalfPrecisionFilesWidenAndOtherDtypesMustAgree) {
  save_model(every_attr_kind(), path("m"));
  auto tensors = read_safetensors(path("m.safetensors"));
  Constant half;
  half.type = TensorType{tensors.at("b").type.shape, DType::kFloat16};
  for (int64_t i = 0; i < half.type.num_elements(); ++i) {
    half.data.push_back(0x00);
    half.data.push_back(0xb8);  // -0.5 as float16
  }
  tensors["b"] = half;
  write_safetensors(path("m.safetensors"), tensors);
  EXPECT_EQ(load_model(path("m.json")).constants.at("b").f32_data()[1], -0.5f);

  Constant ints = Constant::i64(half.type.shape, std::vector<int64_t>(static_cast<std::size_t>(half.type.num_elements()), 1));
  tensors["b"] = ints;
  write_safetensors(path("m.safetensors"), tensors);
  EXPECT_ERROR(load_model(path("m.json")),
               path("m.json") + ": weight 'b' is int64 in " + path("m.safetensors") + ", but the model says float32");
}

TEST_F(ModelFiles, LoadRejectsWeightOfAnotherShape) {
  save_model(every_attr_kind(), path("m"));
  auto tensors = read_safetensors(path("m.safetensors"));
  tensors["w"] = Constant::f32({3, 2}, testing::seeded_values(6, 7));
  write_safetensors(path("m.safetensors"), tensors);
  EXPECT_ERROR(load_model(path("m.json")), path("m.json") + ": weight 'w' has shape (3, 2) in " +
                                                path("m.safetensors") + ", but the model says (2, 3)");
}

TEST_F(ModelFiles, LoadPassesOnWeightsFileErrors) {
  save_model(every_attr_kind(), path("m"));
  write_file_atomic(path("m.safetensors"), std::string("abc"));
  EXPECT_ERROR(load_model(path("m.json")), path("m.safetensors") + ": truncated");
}

}  // namespace
}  // namespace hybgen
