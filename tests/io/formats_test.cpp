// safetensors, npy and model.json: round trips, determinism, and every kind of
// bad input the readers must reject with a message naming the file.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <filesystem>
#include <fstream>
#include <functional>

#include "io/file_util.h"
#include "io/model_json.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "ops/op_util.h"
#include "ir/error.h"

namespace hybgen {
namespace {

std::map<std::string, Constant> tensors() {
  return {{"b", Constant::f32({2}, {0.5f, -1.0f})}, {"a", Constant::f32({2, 3}, {1, 2, 3, 4, 5, 6})}};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> with_header(const std::string& header, std::size_t data_bytes) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>(header.size() >> (8 * i));
  bytes += header;
  bytes.append(data_bytes, '\0');
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

TEST(Safetensors, RoundTripIsExactAndDeterministic) {
  const auto bytes = serialize_safetensors(tensors());
  EXPECT_EQ(bytes, serialize_safetensors(tensors()));
  const uint64_t header_len = bytes[0] | (bytes[1] << 8);
  EXPECT_EQ((8 + header_len) % 8, 0u);
  const auto back = parse_safetensors(bytes, "t.safetensors");
  EXPECT_EQ(back.at("a").type.shape, (Shape{2, 3}));
  EXPECT_EQ(back.at("a").data, tensors().at("a").data);
  EXPECT_EQ(back.at("b").f32_data()[1], -1.0f);
}

TEST(Safetensors, RejectsBadFiles) {
  const auto good = serialize_safetensors(tensors());
  EXPECT_ERROR(parse_safetensors({1, 2, 3}, "x.st"), "x.st: truncated");
  auto lying = good;
  lying[0] = 0xff, lying[1] = 0xff, lying[2] = 0x0f;
  EXPECT_ERROR(parse_safetensors(lying, "x.st"), "x.st: header length");
  std::vector<uint8_t> cut(good.begin(), good.end() - 4);
  EXPECT_ERROR(parse_safetensors(cut, "x.st"), "outside");
  EXPECT_ERROR(parse_safetensors(with_header("{not json", 0), "x.st"), "not valid JSON");
  EXPECT_ERROR(parse_safetensors(with_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 8), "x.st"),
               "needs 8");
  EXPECT_ERROR(parse_safetensors(with_header(R"({"w":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})", 2), "x.st"),
               "unsupported dtype I8");
  EXPECT_ERROR(parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                             12),
                                 "x.st"),
               "overlap");
  EXPECT_ERROR(parse_safetensors(with_header(R"({"w":{"dtype":"F32","shape":[2]}})", 8), "x.st"), "tensor 'w'");
}

TEST(Safetensors, ReadsHalfPrecision) {
  // 1.0 and -2.0 in IEEE half precision.
  auto bytes = with_header(R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 0);
  for (uint8_t b : {0x00, 0x3c, 0x00, 0xc0}) bytes.push_back(b);
  const auto t = parse_safetensors(bytes, "h.st");
  EXPECT_EQ(t.at("h").f32_data()[0], 1.0f);
  EXPECT_EQ(t.at("h").f32_data()[1], -2.0f);
}

TEST(Npy, RoundTripAndErrors) {
  TempDir tmp("hybgen-io-test");
  const std::string path = tmp.path() + "/x.npy";
  write_npy(path, {{2, 3}, {1, 2, 3, 4, 5, 6}});
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.shape, (Shape{2, 3}));
  EXPECT_EQ(a.data[5], 6.0f);
  const auto bytes = read_file_bytes(path);
  EXPECT_EQ((bytes[8] + 10) % 64, 0);  // numpy pads the header to 64 bytes
  write_bytes(tmp.path() + "/bad.npy", {'n', 'o', 'p', 'e', 0, 0, 0, 0, 0, 0, 0});
  EXPECT_ERROR(read_npy(tmp.path() + "/bad.npy"), "bad magic");
  std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - 5);
  write_bytes(tmp.path() + "/short.npy", truncated);
  EXPECT_ERROR(read_npy(tmp.path() + "/short.npy"), "truncated data");
  std::string fortran = std::string("\x93NUMPY\x01\x00", 8);
  std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n";
  fortran += static_cast<char>(header.size());
  fortran += '\0';
  fortran += header + std::string(4, '\0');
  write_bytes(tmp.path() + "/f.npy", std::vector<uint8_t>(fortran.begin(), fortran.end()));
  EXPECT_ERROR(read_npy(tmp.path() + "/f.npy"), "Fortran");
}

Graph small_graph() {
  Graph g;
  g.name = "small";
  g.add_input("data", {{1, 3}});
  g.add_constant("w", Constant::f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  Node fc{"fc", "FullyConnected", {}, {"data", "w"}, {"fc"}};
  fc.attrs.set("num_hidden", int64_t{2});
  fc.attrs.set("no_bias", true);
  fc.attrs.set("scale", 0.5);
  fc.attrs.set("axes", std::vector<int64_t>{1, -1, kSliceNone});
  fc.attrs.set("mode", std::string("x"));
  fc.attrs.set("ratios", std::vector<double>{0.5, 2});
  g.nodes.push_back(fc);
  g.outputs = {"fc"};
  return g;
}

TEST(ModelJson, SaveLoadRoundTripKeepsEveryAttributeKind) {
  TempDir tmp("hybgen-io-test");
  const Graph g = small_graph();
  save_model(g, tmp.path() + "/m");
  const Graph back = load_model(tmp.path() + "/m.json");
  EXPECT_EQ(back.name, "small");
  EXPECT_EQ(back.inputs, g.inputs);
  EXPECT_EQ(back.outputs, g.outputs);
  ASSERT_EQ(back.nodes.size(), 1u);
  EXPECT_EQ(back.nodes[0].attrs, g.nodes[0].attrs);
  EXPECT_EQ(back.constants.at("w").data, g.constants.at("w").data);
  EXPECT_EQ(model_json_text(g), model_json_text(back));
  const std::string text = read_file_text(tmp.path() + "/m.json");
  EXPECT_LT(text.find("\"format\""), text.find("\"nodes\""));  // documented key order
}

TEST(ModelJson, RejectsBadModels) {
  TempDir tmp("hybgen-io-test");
  const std::string p = tmp.path() + "/m.json";
  std::ofstream(p) << "{\"format\": \"hybgen-graph\", ";
  EXPECT_ERROR(read_model_json(p), "m.json: malformed JSON");
  const auto parse = [](const std::string& text) { return graph_from_json(nlohmann::json::parse(text), "m.json"); };
  EXPECT_ERROR(parse(R"({"format": "onnx"})"), "not a hybgen model");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 9})"), "newer hybgen");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": []})"), "missing field 'outputs'");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": [{"name": "data"}],
                         "outputs": [], "nodes": []})"),
               "'data' has no shape");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": [], "outputs": ["y"],
                         "nodes": [{"name": "y", "op": "relu", "inputs": "x"}]})"),
               "node 0 ('y'): field 'inputs' must be a list of strings");
  EXPECT_ERROR(parse(R"({"format": "hybgen-graph", "format_version": 1, "inputs": [], "outputs": ["y"],
                         "nodes": [{"name": "y", "op": "relu", "inputs": [], "attrs": {"k": {"a": 1}}}]})"),
               "attribute 'k'");
}

TEST(ModelJson, WeightsProblemsNameBothFiles) {
  TempDir tmp("hybgen-io-test");
  save_model(small_graph(), tmp.path() + "/m");
  std::filesystem::rename(tmp.path() + "/m.safetensors", tmp.path() + "/other.safetensors");
  EXPECT_ERROR(load_model(tmp.path() + "/m.json"), "weights file '" + tmp.path() + "/m.safetensors' not found");
  write_safetensors(tmp.path() + "/wrong.safetensors", {{"w", Constant::f32({3, 2}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_ERROR(load_model(tmp.path() + "/m.json", tmp.path() + "/wrong.safetensors"),
               "weight 'w' has shape (3, 2)");
  write_safetensors(tmp.path() + "/none.safetensors", {});
  EXPECT_ERROR(load_model(tmp.path() + "/m.json", tmp.path() + "/none.safetensors"), "weight 'w' is missing from");
}

TEST(FileUtil, PublishReplacesFilesAndTempDirCleansUp) {
  std::string kept;
  {
    TempDir tmp("hybgen-io-test");
    kept = tmp.path();
    const std::string out = tmp.path() + "/out";
    for (int round = 0; round < 2; ++round) {
      TempDir staging("stage", tmp.path());
      write_file_atomic(staging.path() + "/a.txt", std::string(round ? "second" : "first"));
      publish_directory(staging.path(), out);
      staging.release();
    }
    EXPECT_EQ(read_file_text(out + "/a.txt"), "second");
    EXPECT_ERROR(read_file_bytes(tmp.path() + "/missing"), "missing: cannot open");
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace hybgen
