// `hybgen inspect --report/--dot` and `--dump-after` (inspect and generate)
// end to end: the files appear, are deterministic, are named after the
// passes, and a wrong pass name or a failed compilation writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "fusion_graphs.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "pipeline.h"
#include "run_command.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing::quoted;
using testing::run_command;

using testing::kHybgen;

class InspectFiles : public ::testing::Test {
 protected:
  TempDir tmp{"hybgen-inspect-files-test"};
  std::string path(const std::string& name) const { return tmp.path() + "/" + name; }
  testing::CommandResult hybgen(const std::string& args) { return run_command(quoted(kHybgen) + " " + args); }

  // Gluon's ResNet basic block (fusion_graphs.h): two fused conv kernels.
  std::string block_model() {
    save_model(testing::resnet_basic_block(), path("block"));
    return path("block.json");
  }

  std::set<std::string> files_in(const std::string& dir) const {
    std::set<std::string> names;
    if (fs::exists(dir))
      for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
    return names;
  }
};

// "NN-PASS.json" for the passes these options run.
std::string dump_name(const std::string& pass, const CompileOptions& options = {}) {
  const auto names = pass_names(options);
  const auto position = std::find(names.begin(), names.end(), pass) - names.begin();
  char prefix[8];
  std::snprintf(prefix, sizeof prefix, "%02d-", static_cast<int>(position));
  return prefix + pass + ".json";
}

TEST_F(InspectFiles, ReportAndDotAreWrittenAndDeterministic) {
  const std::string model = block_model();
  auto r = hybgen("inspect " + quoted(model) + " --report " + quoted(path("r.html")) + " --dot " + quoted(path("g.dot")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("r.html")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("g.dot")), std::string::npos) << r.output;
  const std::string html = read_file_text(path("r.html"));
  EXPECT_NE(html.find("<h1>basic_block</h1>"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find(model), std::string::npos) << "the report names its source";
  const std::string dot = read_file_text(path("g.dot"));
  EXPECT_NE(dot.find("digraph \"basic_block\" {"), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_"), std::string::npos);

  // A second run, with --json: the same bytes, and stdout stays one JSON document.
  r = hybgen("inspect --json " + quoted(model) + " --report " + quoted(path("r2.html")) + " --dot " +
             quoted(path("g2.dot")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(nlohmann::json::accept(r.output)) << r.output;
  EXPECT_EQ(read_file_text(path("r2.html")), html);
  EXPECT_EQ(read_file_text(path("g2.dot")), dot);
}

TEST_F(InspectFiles, DumpAfterAllWritesOnePerPassIntoTheCurrentFolder) {
  const std::string model = block_model();
  fs::create_directories(path("work"));
  const auto r = run_command("cd " + quoted(path("work")) + " && " + quoted(kHybgen) + " inspect " + quoted(model) +
                             " --dump-after all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> expected;
  for (const auto& pass : pass_names()) expected.insert(dump_name(pass));
  EXPECT_EQ(files_in(path("work")), expected);
  EXPECT_TRUE(expected.count("00-validate.json"));

  // The graph after every pass; kernels from fuse on; the plan at the end.
  const auto validated = nlohmann::json::parse(read_file_text(path("work/") + dump_name("validate")));
  EXPECT_EQ(validated["format"], "hybgen-graph");
  EXPECT_EQ(validated["nodes"].size(), testing::resnet_basic_block().nodes.size());
  EXPECT_FALSE(validated.contains("kernels"));
  EXPECT_FALSE(validated.contains("memory_plan"));
  const auto fused = nlohmann::json::parse(read_file_text(path("work/") + dump_name("fuse")));
  EXPECT_EQ(fused["kernels"].size(), 2u) << "conv-BN-relu and conv-BN-add-relu";
  EXPECT_FALSE(fused.contains("memory_plan"));
  // choose_algorithms records each convolution's kernel, which the plan keeps.
  const auto chosen = nlohmann::json::parse(read_file_text(path("work/") + dump_name("choose_algorithms")));
  for (const auto& kernel : chosen["kernels"]) EXPECT_TRUE(kernel.contains("algorithm")) << kernel;
  const auto planned = nlohmann::json::parse(read_file_text(path("work/") + dump_name("plan_memory")));
  EXPECT_EQ(planned["kernels"], chosen["kernels"]);
  EXPECT_GT(planned["memory_plan"]["arena_bytes"].get<std::size_t>(), 0u);

  // Byte-identical on a second run.
  const auto again = run_command("cd " + quoted(path("work")) + " && " + quoted(kHybgen) + " inspect " +
                                 quoted(model) + " --dump-after plan_memory --dump-dir again");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_file_text(path("work/again/") + dump_name("plan_memory")),
            read_file_text(path("work/") + dump_name("plan_memory")));
}

TEST_F(InspectFiles, DumpAfterChosenPassesRepeatedOrCommaSeparated) {
  const std::string model = block_model();
  auto r = hybgen("inspect " + quoted(model) + " --dump-after fuse --dump-after plan_memory --dump-dir " +
                  quoted(path("d1")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::set<std::string> expected = {dump_name("fuse"), dump_name("plan_memory")};
  EXPECT_EQ(files_in(path("d1")), expected);
  r = hybgen("inspect " + quoted(model) + " --dump-after fuse,plan_memory --dump-dir " + quoted(path("d2")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(files_in(path("d2")), expected);
}

TEST_F(InspectFiles, GenerateDumpsTooWithAndWithoutTheOptimizer) {
  const std::string model = block_model();
  auto r = hybgen(quoted(model) + " -o " + quoted(path("out")) + " --dump-after plan_memory --dump-dir " +
                  quoted(path("dumps")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("out/block.h")));
  EXPECT_EQ(files_in(path("dumps")), std::set<std::string>{dump_name("plan_memory")});

  CompileOptions unoptimized;
  unoptimized.optimize = false;
  r = hybgen(quoted(model) + " -o " + quoted(path("out2")) + " --no-optimize --dump-after all --dump-dir " +
             quoted(path("dumps2")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> expected;
  for (const auto& pass : pass_names(unoptimized)) expected.insert(dump_name(pass, unoptimized));
  EXPECT_EQ(files_in(path("dumps2")), expected);
}

TEST_F(InspectFiles, UnknownPassFailsListingThePassesAndWritesNothing) {
  const std::string model = block_model();
  auto r = hybgen("inspect " + quoted(model) + " --dump-after fuse --dump-after fusion --dump-dir " +
                  quoted(path("dumps")) + " --report " + quoted(path("r.html")) + " --dot " + quoted(path("g.dot")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("hybgen: error: --dump-after 'fusion': no such pass (passes: validate, ", 0), 0u)
      << r.output;
  for (const auto& pass : pass_names()) EXPECT_NE(r.output.find(pass), std::string::npos) << pass;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one message:\n" << r.output;
  EXPECT_FALSE(fs::exists(path("dumps")));
  EXPECT_FALSE(fs::exists(path("r.html")));
  EXPECT_FALSE(fs::exists(path("g.dot")));

  // generate, and a pass that only the optimizer runs.
  r = hybgen(quoted(model) + " -o " + quoted(path("out")) + " --no-optimize --dump-after fuse --dump-dir " +
             quoted(path("dumps")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("'fuse': no such pass with --no-optimize (passes: validate, infer_shapes"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("dumps")));
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(InspectFiles, FailedCompilationWritesNothing) {
  std::ofstream(path("bad.json")) << R"({"format": "hybgen-graph", "format_version": 1, "name": "bad",
    "inputs": [{"name": "data", "shape": [2, 8], "dtype": "float32"}], "outputs": ["prob"], "weights": [],
    "nodes": [{"name": "prob", "op": "softmax", "inputs": ["fc9"]}]})";
  const auto r = hybgen("inspect " + quoted(path("bad.json")) + " --report " + quoted(path("r.html")) + " --dot " +
                        quoted(path("g.dot")) + " --dump-after all --dump-dir " + quoted(path("dumps")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("hybgen: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input 'fc9' is not defined"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("r.html")));
  EXPECT_FALSE(fs::exists(path("g.dot")));
  EXPECT_FALSE(fs::exists(path("dumps")));
}

TEST_F(InspectFiles, HelpNamesTheNewFlags) {
  const auto r = hybgen("inspect --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--report", "--dot", "--dump-after", "--dump-dir"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << "\n" << r.output;
  EXPECT_NE(hybgen("--help").output.find("--dump-after"), std::string::npos);
}

}  // namespace
}  // namespace hybgen
