// The hybgen CLI end to end: generate, verify, inspect, ops, import, and what
// each kind of bad input gets: one clear message naming the file and node, a
// non-zero exit, and no output folder.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "graph_builders.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "io/mxnet/mxnet_params.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "ops/gemm_pack.h"
#include "run_command.h"
#include "targets/toolchain.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing::quoted;
using testing::run_command;

using testing::kHybgen;

class Cli : public ::testing::Test {
 protected:
  TempDir tmp{"hybgen-cli-test"};
  std::string path(const std::string& name) const { return tmp.path() + "/" + name; }
  testing::CommandResult hybgen(const std::string& args) { return run_command(quoted(kHybgen) + " " + args); }

  // A small MLP saved as model.json + model.safetensors.
  std::string small_model() {
    Graph g;
    g.name = "small";
    g.add_input("data", {{2, 8}});
    g.add_constant("w1", Constant::f32({16, 8}, testing::seeded_values(128, 1)));
    g.add_constant("b1", Constant::f32({16}, testing::seeded_values(16, 2)));
    g.add_constant("w2", Constant::f32({3, 16}, testing::seeded_values(48, 3)));
    g.nodes.push_back(testing::make_node("fc1", "FullyConnected", {"data", "w1", "b1"},
                                         testing::attrs_of({{"num_hidden", int64_t{16}}})));
    g.nodes.push_back(testing::make_node("act", "Activation", {"fc1"}, testing::attrs_of({{"act_type", std::string("tanh")}})));
    g.nodes.push_back(testing::make_node("drop", "Dropout", {"act"}));
    g.nodes.push_back(testing::make_node("fc2", "FullyConnected", {"drop", "w2"},
                                         testing::attrs_of({{"num_hidden", int64_t{3}}, {"no_bias", true}})));
    g.nodes.push_back(testing::make_node("prob", "softmax", {"fc2"}));
    g.outputs = {"prob"};
    save_model(g, path("model"));
    return path("model.json");
  }

  // Writes `json_text` as bad.json beside the small model's weights.
  std::string bad_model(const std::string& json_text) {
    small_model();
    std::ofstream(path("bad.json")) << json_text;
    fs::copy_file(path("model.safetensors"), path("bad.safetensors"), fs::copy_options::overwrite_existing);
    return path("bad.json");
  }

  void expect_clean_failure(const std::string& model, const std::vector<std::string>& expected_text) {
    const auto r = hybgen(quoted(model) + " -o " + quoted(path("out")));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("hybgen: error: "), std::string::npos) << r.output;
    for (const auto& text : expected_text) EXPECT_NE(r.output.find(text), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("out"))) << "a failed run left its output folder";
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one message:\n" << r.output;
  }
};

std::string model_text(const std::string& nodes, const std::string& outputs = R"(["prob"])") {
  return R"({"format": "hybgen-graph", "format_version": 1, "name": "bad",
    "inputs": [{"name": "data", "shape": [2, 8], "dtype": "float32"}], "outputs": )" + outputs + R"(,
    "weights": [{"name": "b1", "shape": [16], "dtype": "float32"}, {"name": "w1", "shape": [16, 8], "dtype": "float32"},
                {"name": "w2", "shape": [3, 16], "dtype": "float32"}],
    "nodes": [)" + nodes + "]}";
}

const std::string kFc1 = R"({"name": "fc1", "op": "FullyConnected", "inputs": ["data", "w1", "b1"], "attrs": {"num_hidden": 16}})";

TEST_F(Cli, GenerateWritesTheFourFilesDeterministically) {
  const std::string model = small_model();
  const auto r = hybgen(quoted(model) + " -o " + quoted(path("out")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("arena"), std::string::npos);
  // The weights as the generated code holds them: fc2's 3 x 16 weight as one
  // zero-padded 8-column panel (512 bytes, not 192).
  EXPECT_NE(r.output.find("weights 1088 bytes as generated (768 in the model)"), std::string::npos) << r.output;
  for (const char* f : {"model.h", "model.cpp", "model_weights.cpp", "model.manifest.json"})
    EXPECT_TRUE(fs::exists(path("out/") + f)) << f;
  ASSERT_EQ(hybgen(quoted(model) + " -o " + quoted(path("again")) + "").exit_code, 0);
  for (const char* f : {"model.h", "model.cpp", "model_weights.cpp", "model.manifest.json"})
    EXPECT_EQ(read_file_text(path("out/") + f), read_file_text(path("again/") + f)) << f;
  // --name and --namespace
  ASSERT_EQ(hybgen(quoted(model) + " -o " + quoted(path("named")) + " --name tiny --namespace acme").exit_code, 0);
  EXPECT_NE(read_file_text(path("named/tiny.h")).find("namespace acme {"), std::string::npos);
}

TEST_F(Cli, ExternalWeightsReplaceTheWeightsSourceAndVerify) {
  const std::string model = small_model();
  ASSERT_EQ(hybgen(quoted(model) + " -o " + quoted(path("out"))).exit_code, 0);
  auto r = hybgen(quoted(model) + " -o " + quoted(path("out")) + " --external-weights");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("out") + "/model.weights.bin"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(path("out/model.weights.bin")), 1088u);
  // The embedded form an earlier run left would be stale: it is removed, and back again.
  EXPECT_FALSE(fs::exists(path("out/model_weights.cpp")));
  EXPECT_NE(read_file_text(path("out/model.h")).find("const void* weights, void* arena);"), std::string::npos);
  ASSERT_EQ(hybgen(quoted(model) + " -o " + quoted(path("out"))).exit_code, 0);
  EXPECT_TRUE(fs::exists(path("out/model_weights.cpp")));
  EXPECT_FALSE(fs::exists(path("out/model.weights.bin")));

  r = hybgen("verify " + quoted(model) + " --external-weights");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;
  r = hybgen("bench " + quoted(model) + " --external-weights --runs 3 --warmup 1 --target generic");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("latency us"), std::string::npos) << r.output;
}

TEST_F(Cli, VerifyPassesAndFailsOnWrongExpectedValues) {
  const std::string model = small_model();
  auto r = hybgen("verify " + quoted(model));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;

  write_npy(path("x.npy"), {{2, 8}, testing::seeded_values(16, 9)});
  write_npy(path("wrong.npy"), {{2, 3}, std::vector<float>(6, 0.5f)});
  r = hybgen("verify " + quoted(model) + " --input data=" + quoted(path("x.npy")) + " --expected prob=" +
             quoted(path("wrong.npy")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("OK     reference"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAIL   expected " + path("wrong.npy")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verify: FAIL"), std::string::npos) << r.output;

  // The right answer, computed by a first run kept on disk, passes as --expected.
  r = hybgen("verify --keep " + quoted(model) + " --input data=" + quoted(path("x.npy")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string kept = r.output.substr(r.output.find("build kept in ") + 14);
  const std::string build_dir = kept.substr(0, kept.find('\n'));
  const auto out_bytes = read_file_bytes(build_dir + "/out_0.bin");
  std::vector<float> prob(6);
  ASSERT_EQ(out_bytes.size(), prob.size() * sizeof(float));
  std::memcpy(prob.data(), out_bytes.data(), out_bytes.size());
  fs::remove_all(build_dir);
  write_npy(path("right.npy"), {{2, 3}, prob});
  r = hybgen("verify " + quoted(model) + " --input data=" + quoted(path("x.npy")) + " --expected prob=" +
             quoted(path("right.npy")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OK     expected " + path("right.npy")), std::string::npos) << r.output;
}

// --cxx-flags reach the compiler after verify's own: a macro definition
// builds and passes, a flag the compiler refuses fails the build.
TEST_F(Cli, VerifyAddsTheCxxFlagsToItsOwn) {
  const std::string model = small_model();
  auto r = hybgen("verify --target generic --cxx-flags \"-DHG_UNUSED_MACRO=1\" " + quoted(model));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;
  r = hybgen("verify --target generic --cxx-flags \"-fno-such-compiler-flag\" " + quoted(model));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("-fno-such-compiler-flag"), std::string::npos) << r.output;
}

TEST_F(Cli, VerifyRejectsArraysThatDoNotFitTheModel) {
  const std::string model = small_model();
  write_npy(path("x.npy"), {{2, 8}, testing::seeded_values(16, 9)});
  write_npy(path("x_wrong.npy"), {{8, 2}, testing::seeded_values(16, 9)});
  auto r = hybgen("verify " + quoted(model) + " --input nothere=" + quoted(path("x.npy")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("model.json: --input names 'nothere', which is not an input (inputs: data)"),
            std::string::npos)
      << r.output;
  r = hybgen("verify " + quoted(model) + " --expected fc1=" + quoted(path("x.npy")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("'fc1', which is not an output (outputs: prob)"), std::string::npos) << r.output;
  r = hybgen("verify " + quoted(model) + " --input data=" + quoted(path("x_wrong.npy")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("input 'data' has shape (8, 2) in the array given, the model expects (2, 8)"),
            std::string::npos)
      << r.output;
  r = hybgen("verify " + quoted(model) + " --input data=" + quoted(path("missing.npy")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("missing.npy"), std::string::npos) << r.output;
  r = hybgen("verify " + quoted(model) + " --tolerance -1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--tolerance must be a non-negative number"), std::string::npos) << r.output;
  r = hybgen("verify " + quoted(model) + " --input data");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--input 'data' must look like NAME=file.npy"), std::string::npos) << r.output;
}

TEST_F(Cli, VerifyHelpDefinesTheRelativeError) {
  const auto r = hybgen("verify --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("max |generated - reference| / max |reference|"), std::string::npos) << r.output;
}

// --max-weight-growth bounds how many values a kernel keeps per weight:
// a 3x3 convolution on a 16x16 map takes Winograd F(4x4) (36 values per 9)
// without it, F(2x2) (16 per 9) below 4, and below 16/9 F(2x2) on the raw
// filters (9 per 9), which verify checks end to end; inspect reports the
// growth, which generate's weights line agrees with.
TEST_F(Cli, MaxWeightGrowthBoundsWinogradAndInspectReportsIt) {
  Graph g;
  g.name = "conv";
  g.add_input("data", {{1, 32, 16, 16}});
  // 64 filters: two blocks of the raw filters' kernel for two threads on every SIMD path.
  g.add_constant("w", Constant::f32({64, 32, 3, 3}, testing::seeded_values(64 * 32 * 9, 5)));
  g.nodes.push_back(testing::make_node("conv", "Convolution", {"data", "w"},
                                       testing::attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                                          {"num_filter", int64_t{64}},
                                                          {"pad", std::vector<int64_t>{1, 1}},
                                                          {"no_bias", true}})));
  g.outputs = {"conv"};
  save_model(g, path("conv"));
  const std::string model = quoted(path("conv.json"));
  struct Case {
    std::string flag, algorithm;
    double least, most;
  };
  for (const Case& c : {Case{"", "winograd", 3.9, 4.1}, Case{" --max-weight-growth 3.5", "winograd", 1.7, 1.9},
                        Case{" --max-weight-growth 1", "winograd_raw_filters", 0.99, 1.1}}) {
    const auto r = hybgen("inspect --json --target x86-64-v4 " + model + c.flag);
    ASSERT_EQ(r.exit_code, 0) << c.flag << "\n" << r.output;
    const nlohmann::json j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j.at("kernels").at(0).at("algorithm"), c.algorithm) << c.flag;
    const double growth = j.at("weight_growth").get<double>();
    EXPECT_GE(growth, c.least) << c.flag;
    EXPECT_LE(growth, c.most) << c.flag;
    EXPECT_EQ(j.at("max_weight_growth").is_null(), c.flag.empty()) << c.flag;
    const auto text = hybgen("inspect --target x86-64-v4 " + model + c.flag);
    EXPECT_NE(text.output.find("weights as generated " + std::to_string(j.at("generated_weight_bytes").get<size_t>()) +
                               " bytes"),
              std::string::npos)
        << text.output;
    const auto gen = hybgen(model + " --target x86-64-v4 -o " + quoted(path("out")) + c.flag);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    EXPECT_NE(gen.output.find("weights " + std::to_string(j.at("generated_weight_bytes").get<size_t>()) + " bytes"),
              std::string::npos)
        << gen.output;
  }
  // The raw filters' kernel on the portable path, and on this machine's
  // SIMD path split over two threads.
  for (const std::string& flags : {std::string(), " --target " + host_target().name + " --threads 2"}) {
    const auto verified = hybgen("verify " + model + " --max-weight-growth 1" + flags);
    EXPECT_EQ(verified.exit_code, 0) << flags << "\n" << verified.output;
    EXPECT_NE(verified.output.find("verify: PASS"), std::string::npos) << flags << "\n" << verified.output;
  }
  // Without the weights' values the growth is not known, and said so.
  fs::remove(path("conv.safetensors"));
  const auto unknown = hybgen("inspect --json " + model);
  ASSERT_EQ(unknown.exit_code, 0) << unknown.output;
  EXPECT_TRUE(nlohmann::json::parse(unknown.output).at("weight_growth").is_null()) << unknown.output;
  EXPECT_NE(hybgen("inspect " + model).output.find("weights as generated: not known"), std::string::npos);
  const auto bad = hybgen("inspect " + model + " --max-weight-growth 0.5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--max-weight-growth"), std::string::npos) << bad.output;
}

TEST_F(Cli, InspectOpsAndVersion) {
  const std::string model = small_model();
  auto r = hybgen("inspect " + quoted(model));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("memory plan"), std::string::npos);
  EXPECT_NE(r.output.find("fc1"), std::string::npos);
  EXPECT_EQ(r.output.find("drop "), std::string::npos);  // Dropout removed by the passes
  r = hybgen("inspect --json " + quoted(model));
  const auto inspected = nlohmann::json::parse(r.output);
  // fc1 with its tanh is one kernel: its result and fc2's are the buffers.
  EXPECT_EQ(inspected["memory_plan"]["buffers"].size(), 2u);
  EXPECT_EQ(inspected["kernels"].size(), 3u);
  // Weights are optional for inspect: the graph alone is enough.
  fs::remove(path("model.safetensors"));
  r = hybgen("inspect " + quoted(model));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("parameters 192 "), std::string::npos) << r.output;
  r = hybgen("ops");
  EXPECT_NE(r.output.find("FullyConnected(data, weight, bias)"), std::string::npos);
  EXPECT_NE(r.output.find("kernels: C++ float32 int8 uint8 int32, CUDA float32 float16 bfloat16"), std::string::npos)
      << r.output;
  r = hybgen("ops --json");
  bool listed = false;
  for (const auto& op : nlohmann::json::parse(r.output))
    if (op["name"] == "FullyConnected") {
      listed = true;
      EXPECT_EQ(op["kernels"]["C++"], nlohmann::json::array({"float32", "int8", "uint8", "int32"}));
      EXPECT_EQ(op["kernels"]["CUDA"], nlohmann::json::array({"float32", "float16", "bfloat16"}));
    }
  EXPECT_TRUE(listed);
  r = hybgen("--version");
  EXPECT_EQ(r.output, "hybgen 0.1.0\n");
  EXPECT_EQ(hybgen("verify --help").exit_code, 0);
}

// The arena holds the scratch of the kernels the target runs: the MNIST
// CNN's 5x5 convolutions go through im2col columns in generic code, row by
// row without them on AVX-512. inspect and generate agree on it.
TEST_F(Cli, TheArenaIsPlannedForTheTarget) {
  const std::string model = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/mnist-cnn-gluon-1.6/mnist-symbol.json";
  std::map<std::string, std::size_t> arena;
  for (const std::string target : {"generic", "x86-64-v4"}) {
    const std::string flags = " --shape data=1,1,28,28 --target " + target;
    auto r = hybgen("inspect --json " + quoted(model) + flags);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto inspected = nlohmann::json::parse(r.output);
    EXPECT_EQ(inspected["target"], target);
    arena[target] = inspected["memory_plan"]["arena_bytes"].get<std::size_t>();
    r = hybgen(quoted(model) + flags + " -o " + quoted(path(target)));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto manifest = nlohmann::json::parse(read_file_text(path(target + "/mnist.manifest.json")));
    EXPECT_EQ(manifest["arena_bytes"].get<std::size_t>(), arena[target]) << target;
  }
  EXPECT_EQ(arena["generic"], 76160u);    // the second layer's columns (250 values x 64 pixels), its input and output
  EXPECT_EQ(arena["x86-64-v4"], 28800u);  // that output and the pooled one
}

// --shape NAME=MIN..MAX,...: generate, inspect and verify a run-time batch;
// malformed ranges and models that cannot take one are refused by name.
TEST_F(Cli, ARunTimeBatchGeneratesVerifiesAndIsRefusedWhereItCannot) {
  const std::string model =
      std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/mnist-cnn-gluon-1.6/mnist-symbol.json";
  auto r = hybgen("verify --shape data=1..5,1,28,28 " + quoted(model));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* shape : {"(1, 10)", "(3, 10)", "(5, 10)"})
    EXPECT_NE(r.output.find(shape), std::string::npos) << r.output;
  r = hybgen(quoted(model) + " --shape data=1..8,1,28,28 -o " + quoted(path("out")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string header = read_file_text(path("out/mnist.h"));
  for (const char* text :
       {"constexpr int64_t kMaxBatch = 8;", "int64_t batch, void* arena);", "size_t mnist_arena_bytes(int64_t batch);",
        "#define MNIST_MAX_BATCH 8", "kBatchOutOfRange = 4"})
    EXPECT_NE(header.find(text), std::string::npos) << text << "\n" << header;
  const auto manifest = nlohmann::json::parse(read_file_text(path("out/mnist.manifest.json")));
  EXPECT_EQ(manifest["batch"]["max"], 8);
  EXPECT_EQ(manifest["batch"]["inputs"], nlohmann::json::array({"data"}));
  EXPECT_LT(manifest["batch"]["arena_bytes_at_min"].get<std::size_t>(),
            manifest["batch"]["arena_bytes_at_max"].get<std::size_t>());
  EXPECT_EQ(manifest["batch"]["arena_bytes_at_max"], manifest["arena_bytes"]);
  EXPECT_EQ(manifest["inputs"][0]["shape"], nlohmann::json::array({1, 1, 28, 28}));
  EXPECT_EQ(manifest["inputs"][0]["per_item"], true);
  r = hybgen("inspect " + quoted(model) + " --shape data=1..8,1,28,28");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("run-time batch 1..8 (data)"), std::string::npos) << r.output;

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"data=4..2,1,28,28", "the batch range 4..2 is empty"},
      {"data=1,1..4,28,28", "only the first dimension may be a range"},
      {"data=0..4,1,28,28", "'0' is not a positive integer"},
      {"data=1..x,1,28,28", "'x' is not a positive integer"}};
  for (const auto& [flag, message] : refused) {
    r = hybgen(quoted(model) + " --shape " + flag + " -o " + quoted(path("bad")));
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_NE(r.output.find(message), std::string::npos) << flag << ": " << r.output;
    EXPECT_FALSE(fs::exists(path("bad")));
  }
  r = hybgen(quoted(model) + " --shape data=1..4,1,28,28 --target cuda -o " + quoted(path("cuda")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string cuda_header = read_file_text(path("cuda/mnist.h"));
  for (const char* text :
       {"int64_t batch, cudaStream_t stream);", "kBatchOutOfRange = 5", "constexpr int64_t kMaxBatch = 4;"})
    EXPECT_NE(cuda_header.find(text), std::string::npos) << text << "\n" << cuda_header;
}

TEST_F(Cli, BenchTimesTheGeneratedCode) {
  const auto r = hybgen("bench --runs 3 --warmup 1 " + quoted(small_model()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("latency us: min "), std::string::npos) << r.output;
  // act (2x16 floats) and fc2 (2x3) live together; softmax writes the output.
  EXPECT_NE(r.output.find("arena 152 bytes (lower bound 152"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("build kept in"), std::string::npos) << r.output;
}

TEST_F(Cli, BenchKeepLeavesAProgramThatTimesAgain) {
  auto r = hybgen("bench --runs 3 --warmup 1 --keep " + quoted(small_model()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string kept = r.output.substr(r.output.find("build kept in ") + 14);
  const std::string build_dir = kept.substr(0, kept.find('\n'));
  // The program prints min, median and max again: three positive numbers.
  r = run_command(quoted(build_dir + "/program") + " " + quoted(build_dir));
  fs::remove_all(build_dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream times(r.output);
  double min_us = 0, median_us = 0, max_us = 0;
  ASSERT_TRUE(static_cast<bool>(times >> min_us >> median_us >> max_us)) << r.output;
  EXPECT_GT(min_us, 0);
  EXPECT_LE(min_us, median_us);
  EXPECT_LE(median_us, max_us);
}

// This machine's own target builds with -march=native; another (x86-64-v3 on
// an AVX-512 machine) with its own -march and -mtune=native, as a machine
// with only its instructions would build it.
TEST_F(Cli, BenchBuildsAnotherTargetForItsOwnInstructions) {
  const Isa host = host_target().isa;
  if (host != Isa::kAvx512 && host != Isa::kAvx2) GTEST_SKIP() << "needs an x86-64 host with AVX2";
  auto r = hybgen("bench --runs 2 --warmup 1 --target x86-64-v3 " + quoted(small_model()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string own = host == Isa::kAvx2 ? "-march=native" : "-mtune=native";
  EXPECT_NE(r.output.find("built with -march=x86-64-v3 -std=c++11 -O3 " + own + " ("), std::string::npos) << r.output;
  r = hybgen("bench --runs 2 --warmup 1 --target x86-64-v3 --cxx-flags \"-std=c++11 -O2\" " + quoted(small_model()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("built with -march=x86-64-v3 -std=c++11 -O2 ("), std::string::npos) << r.output;
}

// AArch64 code on another machine: verify compiles it with the cross
// compiler and runs it under qemu; without them, and for bench (an
// emulator's timings mean nothing), a clear error before any work.
TEST_F(Cli, ArmCodeVerifiesUnderEmulationAndIsNotTimedThere) {
  if (host_target().isa == Isa::kNeon) GTEST_SKIP() << "this machine runs AArch64 code itself";
  const std::string model = small_model();
  if (on_path("aarch64-linux-gnu-g++") && on_path("qemu-aarch64")) {
    const auto r = hybgen("verify --target armv8-a " + quoted(model));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("by aarch64-linux-gnu-g++, run under qemu-aarch64;"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;
  }
  const fs::path empty = path("empty-path");
  fs::create_directories(empty);
  auto r = run_command("PATH=" + quoted(empty.string()) + " " + quoted(kHybgen) + " verify --target armv8-a " +
                       quoted(model));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("put aarch64-linux-gnu-g++ and qemu-aarch64 on the PATH (Debian: apt-get install "
                          "g++-aarch64-linux-gnu qemu-user)"),
            std::string::npos)
      << r.output;
  r = hybgen("bench --runs 2 --target armv8-a " + quoted(model));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--target armv8-a code cannot be timed here (this machine runs " + host_target().name + " code)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one message:\n" << r.output;
}

TEST_F(Cli, BenchProfileTimesEachKernel) {
  const auto r = hybgen("bench --runs 5 --warmup 1 --profile " + quoted(small_model()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("latency us: min "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("per kernel (medians over the runs; sum "), std::string::npos) << r.output;
  // Its three kernels, each with its nodes; dropout is gone.
  for (const char* nodes : {"  fc1 (FullyConnected) + act (Activation)\n", "  fc2 (FullyConnected)\n", "  prob (softmax)\n"})
    EXPECT_NE(r.output.find(nodes), std::string::npos) << nodes << "\n" << r.output;
  EXPECT_EQ(r.output.find("drop"), std::string::npos) << r.output;
}

TEST_F(Cli, MalformedJson) {
  expect_clean_failure(bad_model("{\"format\": \"hybgen-graph\", \"nodes\": ["), {"bad.json: malformed JSON"});
}

TEST_F(Cli, UnknownOpsAreListedTogether) {
  expect_clean_failure(bad_model(model_text(kFc1 + R"(, {"name": "x", "op": "Swish", "inputs": ["fc1"]},
      {"name": "prob", "op": "Mish", "inputs": ["x"]})")),
                       {"bad.json", "node 'x' (Swish)", "node 'prob' (Mish)"});
}

// check_kernels: every node whose dtype the target's kernels lack, named in
// one error, before anything is written.
// C++ casts to and from int32 (ONNX's integer ops need it) but computes abs
// in float32, int8 and uint8 only; CUDA computes neither cast.
TEST_F(Cli, NodesOfDtypesTheTargetLacksAreListedTogether) {
  const std::string model =
      bad_model(model_text(kFc1 + R"(, {"name": "to_int", "op": "Cast", "inputs": ["fc1"], "attrs": {"dtype": "int32"}},
      {"name": "magnitude", "op": "abs", "inputs": ["to_int"]},
      {"name": "prob", "op": "Cast", "inputs": ["magnitude"], "attrs": {"dtype": "float32"}})"));
  const std::vector<std::pair<std::string, std::vector<std::string>>> lacking = {
      {"generic", {"node 'magnitude' (abs): input 'to_int' is int32; output 'magnitude' is int32"}},
      {"cuda",
       {"node 'to_int' (Cast): output 'to_int' is int32", "node 'magnitude' (abs): input 'to_int' is int32",
        "node 'prob' (Cast): input 'magnitude' is int32"}}};
  for (const auto& [target, nodes] : lacking) {
    const auto r = hybgen(quoted(model) + " --target " + target + " -o " + quoted(path("out")));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    for (const std::string text : {"hybgen: error: ", "cannot compute these nodes"})
      EXPECT_NE(r.output.find(text), std::string::npos) << r.output;
    for (const std::string& text : nodes) EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
    EXPECT_FALSE(fs::exists(path("out"))) << "a failed run left its output folder";
  }
}

TEST_F(Cli, DanglingInput) {
  expect_clean_failure(bad_model(model_text(kFc1 + R"(, {"name": "prob", "op": "softmax", "inputs": ["fc9"]})")),
                       {"bad.json", "node 'prob' (softmax): input 'fc9' is not defined"});
}

TEST_F(Cli, Cycle) {
  expect_clean_failure(bad_model(model_text(R"({"name": "a", "op": "Activation", "inputs": ["prob"], "attrs": {"act_type": "relu"}},
      {"name": "prob", "op": "Activation", "inputs": ["a"], "attrs": {"act_type": "relu"}})")),
                       {"bad.json", "cycle", "a", "prob"});
}

TEST_F(Cli, WrongWeightShape) {
  small_model();
  write_safetensors(path("model.safetensors"),
                    {{"w1", Constant::f32({8, 16}, std::vector<float>(128, 0.0f))},
                     {"b1", Constant::f32({16}, std::vector<float>(16, 0.0f))},
                     {"w2", Constant::f32({3, 16}, std::vector<float>(48, 0.0f))}});
  expect_clean_failure(path("model.json"), {"model.json", "weight 'w1' has shape (8, 16)", "(16, 8)"});
}

TEST_F(Cli, WeightShapeThatDisagreesWithTheGraph) {
  // Consistent files, but the graph's fc2 cannot take w1's output.
  expect_clean_failure(bad_model(model_text(kFc1 + R"(, {"name": "prob", "op": "FullyConnected", "inputs": ["fc1", "w1"],
      "attrs": {"num_hidden": 16, "no_bias": true}})")),
                       {"bad.json", "node 'prob' (FullyConnected): weight has shape (16, 8), expected (16, 16)"});
}

TEST_F(Cli, TruncatedSafetensors) {
  small_model();
  const auto bytes = read_file_bytes(path("model.safetensors"));
  write_file_atomic(path("model.safetensors"), std::vector<uint8_t>(bytes.begin(), bytes.begin() + 100));
  expect_clean_failure(path("model.json"), {"model.safetensors"});
}

TEST_F(Cli, SafetensorsHeaderLongerThanTheFile) {
  small_model();
  auto bytes = read_file_bytes(path("model.safetensors"));
  bytes[3] = 0x7f;  // header length in the terabytes
  write_file_atomic(path("model.safetensors"), bytes);
  expect_clean_failure(path("model.json"), {"model.safetensors: header length", "exceeds the file size"});
}

TEST_F(Cli, MissingWeightsFile) {
  small_model();
  fs::remove(path("model.safetensors"));
  expect_clean_failure(path("model.json"), {"model.json: weights file", "not found"});
}

TEST_F(Cli, MxnetExportsImportGenerateAndVerify) {
  const std::string dir = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/mlp-gluon-1.3";
  auto r = hybgen(quoted(dir + "/model-symbol.json") + " -o " + quoted(path("mx")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("input 'data' has no shape"), std::string::npos) << r.output;
  r = hybgen(quoted(dir + "/model-symbol.json") + " --shape data=1,4 -o " + quoted(path("mx")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("mx/model.h")));
  r = hybgen("verify --shape data=3,4 " + quoted(dir + "/model-symbol.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = hybgen("import --shape data=1,4 " + quoted(dir + "/model-symbol.json") + " -o " + quoted(path("mlp13")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(hybgen("verify " + quoted(path("mlp13.json"))).exit_code, 0);
}

TEST_F(Cli, MxnetParamsWhoseShapeDisagreesWithTheGraph) {
  std::ofstream(path("net-symbol.json")) << R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "fc_weight", "inputs": []},
      {"op": "null", "name": "fc_bias", "inputs": []},
      {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "3"}, "inputs": [[0,0,0],[1,0,0],[2,0,0]]}],
    "arg_nodes": [0, 1, 2], "heads": [[3, 0, 0]]})";
  write_mxnet_params(path("net-0000.params"), {{"arg:fc_weight", Constant::f32({4, 2}, std::vector<float>(8, 0.5f))},
                                               {"arg:fc_bias", Constant::f32({3}, std::vector<float>(3, 0.0f))}});
  const auto r = hybgen(quoted(path("net-symbol.json")) + " --shape data=1,2 -o " + quoted(path("out")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("net-symbol.json: node 'fc' (FullyConnected): weight has shape (4, 2), expected (3, 2)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("out")));
}

// A symbol file that lacks a field every symbol file has is told so, not that
// no .params lies beside it: the file's own fault comes first.
TEST_F(Cli, AnIncompleteMxnetSymbolIsToldSoBeforeItsMissingParams) {
  std::ofstream(path("net-symbol.json")) << R"({"nodes": [{"op": "null", "name": "data", "inputs": []}],
    "arg_nodes": [0]})";
  expect_clean_failure(path("net-symbol.json"),
                       {"net-symbol.json: not a complete MXNet symbol file: field 'heads' is missing"});
  std::ofstream(path("list-symbol.json")) << R"({"nodes": {"op": "null"}, "arg_nodes": [0], "heads": [[0, 0, 0]]})";
  expect_clean_failure(path("list-symbol.json"), {"list-symbol.json: 'nodes' must be a list"});
  // Complete, it is the .params that is missing.
  std::ofstream(path("net-symbol.json")) << R"({"nodes": [{"op": "null", "name": "data", "inputs": []}],
    "arg_nodes": [0], "heads": [[0, 0, 0]]})";
  expect_clean_failure(path("net-symbol.json"), {"net-symbol.json: no NAME-XXXX.params beside this MXNet symbol file"});
}

// Every real MXNet export in tests/data/mxnet-real: the CNNs with their .params, the
// symbol-only zoo graphs with seeded random weights.
TEST_F(Cli, RealMxnetExportsVerify) {
  const std::string models = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/";
  for (const char* m : {"mnist-cnn-gluon-1.6/mnist-symbol.json", "fashion-mnist-cnn-gluon-1.6/fashion-mnist-symbol.json"}) {
    const auto r = hybgen("verify --shape data=2,1,28,28 " + quoted(models + m));
    EXPECT_EQ(r.exit_code, 0) << m << "\n" << r.output;
  }
  for (const char* m : {"squeezenet-v1.2-mxnet-0.9", "mobilenet-v2-mxnet-0.11", "mobilenetv2-1.0-gluon-1.6"}) {
    const std::string file = models + "symbol-only/" + m + "-symbol.json";
    auto r = hybgen("verify --shape data=1,3,224,224 " + quoted(file));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("--random-weights"), std::string::npos) << r.output;
    // The weights in a file: compiling MobileNet's as arrays is most of a build.
    r = hybgen("verify --random-weights 7 --external-weights --shape data=1,3,224,224 " + quoted(file));
    EXPECT_EQ(r.exit_code, 0) << m << "\n" << r.output;
  }
}

// MXNet 0.8 files (tests/data/mxnet-legacy): `param`, keys MXNet ignores, and
// a 3-input BatchNorm whose moving statistics are aux: arrays of the .params.
TEST_F(Cli, MxnetLegacy080FileVerifies) {
  const std::string file = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-legacy/save_000800.json";
  auto r = hybgen("verify --random-weights 7 --shape data=2,20 " + quoted(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("hybgen: note: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("node 'fc1' (FullyConnected): attribute 'weight_lr_mult' ignored"), std::string::npos)
      << r.output;

  std::ofstream(path("bn-symbol.json")) << R"({"nodes": [
      {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1},
      {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [], "backward_source_id": -1},
      {"op": "null", "param": {}, "name": "bn_beta", "inputs": [], "backward_source_id": -1},
      {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "False"}, "name": "bn",
       "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1}],
    "arg_nodes": [0, 1, 2], "heads": [[3, 0]]})";
  const std::map<std::string, Constant> weights = {{"arg:bn_gamma", Constant::f32({3}, {1.5f, 0.5f, 2.0f})},
                                                   {"arg:bn_beta", Constant::f32({3}, {0.1f, -0.2f, 0.3f})}};
  write_mxnet_params(path("bn-0000.params"), weights);
  r = hybgen(quoted(path("bn-symbol.json")) + " --shape data=2,3,4 -o " + quoted(path("out")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("node 'bn' (BatchNorm): has 3 inputs (the MXNet 0.8 form), and its moving statistic "
                          "'aux:bn_moving_mean' is missing from"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("out")));
  // Without the statistics, --random-weights makes them up.
  r = hybgen("verify --random-weights 3 --shape data=2,3,4 " + quoted(path("bn-symbol.json")));
  EXPECT_EQ(r.exit_code, 0) << r.output;

  auto with_stats = weights;
  with_stats.emplace("aux:bn_moving_mean", Constant::f32({3}, {0.25f, -1.0f, 2.0f}));
  with_stats.emplace("aux:bn_moving_var", Constant::f32({3}, {0.5f, 2.0f, 4.0f}));
  write_mxnet_params(path("bn-0000.params"), with_stats);
  r = hybgen("verify --shape data=2,3,4 " + quoted(path("bn-symbol.json")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// Standalone activations (F.relu(x), F.sigmoid(x), Swish) generate and verify.
TEST_F(Cli, MxnetStandaloneActivationsVerify) {
  std::ofstream(path("act-symbol.json")) << R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "fc_weight", "inputs": []},
      {"op": "null", "name": "fc_bias", "inputs": []},
      {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "6"}, "inputs": [[0,0,0],[1,0,0],[2,0,0]]},
      {"op": "relu", "name": "r", "inputs": [[3, 0, 0]]},
      {"op": "sigmoid", "name": "s", "inputs": [[3, 0, 0]]},
      {"op": "elemwise_mul", "name": "swish", "inputs": [[3, 0, 0], [5, 0, 0]]},
      {"op": "tanh", "name": "t", "inputs": [[6, 0, 0]]},
      {"op": "softsign", "name": "ss", "inputs": [[7, 0, 0]]}],
    "arg_nodes": [0, 1, 2], "heads": [[4, 0, 0], [8, 0, 0]]})";
  const auto r = hybgen("verify --random-weights 5 --shape data=3,4 " + quoted(path("act-symbol.json")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace hybgen
