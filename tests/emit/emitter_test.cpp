// Text-level checks of the C++ emitter: templates, names, determinism, the
// manifest and the comments that tie code to nodes.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cstdio>
#include <functional>

#include "emit/cpp_emitter.h"
#include "emit/generate.h"
#include "emit/templates.h"
#include "graph_builders.h"
#include "ir/error.h"
#include "lower/lowering.h"
#include "pipeline.h"

namespace hybgen {
namespace {

using testing::error_of;

std::map<std::string, std::string> by_name(const std::vector<EmittedFile>& files) {
  std::map<std::string, std::string> m;
  for (const auto& f : files) m[f.filename] = f.content;
  return m;
}

TEST(Templates, FillReplacesKeysAndRejectsMistakes) {
  EXPECT_EQ(fill_template("a {{X}} b {{Y}} {{X}}", {{"X", "1"}, {"Y", "2"}}, "t"), "a 1 b 2 1");
  EXPECT_NE(error_of([] { fill_template("{{X}} {{Z}}", {{"X", "1"}}, "t"); }).find("template 't': no value for {{Z}}"),
            std::string::npos);
  EXPECT_NE(error_of([] { fill_template("{{X}}", {{"X", "1"}, {"W", "2"}}, "t"); }).find("no {{W}}"),
            std::string::npos);
  EXPECT_FALSE(template_text("model.h").empty());
  EXPECT_FALSE(template_text("kernels/dense").empty());
  EXPECT_THROW(template_text("nope"), Error);
}

TEST(Emitter, CIdentifiers) {
  EXPECT_EQ(c_identifier("dense0_fwd"), "dense0_fwd");
  EXPECT_EQ(c_identifier("conv-1/out"), "conv_1_out");
  EXPECT_EQ(c_identifier("0abc"), "v_0abc");
}

TEST(Emitter, FilesManifestAndComments) {
  const auto files = by_name(generate_cpp(testing::seed_mlp(), {"mlp", "", "mlp.json"}));
  ASSERT_EQ(files.size(), 4u);
  const std::string& h = files.at("mlp.h");
  // dense0 with its relu (1024 bytes) and dense1 with its relu (512) live at once.
  EXPECT_NE(h.find("constexpr std::size_t kArenaBytes = 1536;"), std::string::npos);
  EXPECT_NE(h.find("int run(const float* data, float* dense2_fwd, void* arena);"), std::string::npos);
  EXPECT_NE(h.find("extern \"C\" {\n#endif\n"), std::string::npos) << h;
  EXPECT_NE(h.find("\nint mlp_run(const float* data, float* dense2_fwd, void* arena);"), std::string::npos);
  // The C view of the sizes.
  EXPECT_NE(h.find("#define MLP_ARENA_BYTES 1536u\n#define MLP_ARENA_ALIGNMENT 64u\n"
                   "#define MLP_INPUT0_FLOATS 512u  // data\n#define MLP_OUTPUT0_FLOATS 2u  // dense2_fwd\n"),
            std::string::npos);
  EXPECT_NE(h.find("kDataShape[] = {1, 512}"), std::string::npos);
  const std::string& cpp = files.at("mlp.cpp");
  // Each kernel's comment names the nodes it came from.
  EXPECT_NE(cpp.find("// kernel 0 (epilogue): dense0_fwd (FullyConnected) + dense0_relu (Activation) -> (1, 256)"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("// kernel 2 (op): dense2_fwd (FullyConnected) -> (1, 2)"), std::string::npos);
  EXPECT_EQ(cpp.find("malloc"), std::string::npos);
  // Dense weights are stored as W^T in GEMM panels, laid out at generation time.
  EXPECT_NE(files.at("mlp_weights.cpp").find("// dense0_weight packed for dense0_fwd: 131072 floats"), std::string::npos)
      << files.at("mlp_weights.cpp").substr(0, 600);
  EXPECT_NE(cpp.find("hg_gemm_packed_b(data, 512, dense0_weight_packed_for_dense0_fwd, dense0_bias, dense0_relu"),
            std::string::npos);
  const auto manifest = nlohmann::json::parse(files.at("mlp.manifest.json"));
  EXPECT_EQ(manifest["entry"], "mlp_run");
  EXPECT_EQ(manifest["arena_bytes"], 1536);
  EXPECT_EQ(manifest["inputs"][0]["shape"], nlohmann::json::array({1, 512}));
  ASSERT_EQ(manifest["kernels"].size(), 3u);
  EXPECT_EQ(manifest["kernels"][0]["nodes"], nlohmann::json::array({"dense0_fwd", "dense0_relu"}));
  EXPECT_EQ(manifest["kernels"][0]["kind"], "epilogue");
  EXPECT_EQ(manifest["memory_plan"]["lower_bound_bytes"], 1536);
}

TEST(Emitter, ExternalWeightsAreTheSameBlobInAFileRunTakes) {
  CppEmitOptions external{"mlp", "", "mlp.json"};
  external.external_weights = true;
  const auto files = by_name(generate_cpp(testing::seed_mlp(), external));
  const auto embedded = by_name(generate_cpp(testing::seed_mlp(), {"mlp", "", "mlp.json"}));
  ASSERT_EQ(files.size(), 4u);
  EXPECT_FALSE(files.count("mlp_weights.cpp"));
  const std::string& blob = files.at("mlp.weights.bin");
  const auto manifest = nlohmann::json::parse(files.at("mlp.manifest.json"));
  const auto embedded_manifest = nlohmann::json::parse(embedded.at("mlp.manifest.json"));
  EXPECT_EQ(manifest["weights_storage"], "external");
  EXPECT_EQ(manifest["weights_file"], "mlp.weights.bin");
  EXPECT_EQ(embedded_manifest["weights_storage"], "embedded");
  EXPECT_EQ(embedded_manifest["weights_file"], "mlp_weights.cpp");
  // The same bytes the embedded form compiles in: same size, same hash.
  EXPECT_EQ(blob.size(), manifest["weights_bytes"].get<std::size_t>());
  EXPECT_EQ(blob.size(), embedded_manifest["weights_bytes"].get<std::size_t>());
  EXPECT_EQ(manifest["weights_fnv1a64"], embedded_manifest["weights_fnv1a64"]);
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char b : blob) hash = (hash ^ b) * 1099511628211ull;
  char hex[19];
  std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(hash));
  EXPECT_EQ(manifest["weights_fnv1a64"], hex);
  const std::string& h = files.at("mlp.h");
  EXPECT_NE(h.find("constexpr std::uint64_t kWeightsFnv1a = " + std::string(hex) + "ull;"), std::string::npos) << h;
  EXPECT_NE(h.find("int run(const float* data, float* dense2_fwd, const void* weights, void* arena);"),
            std::string::npos);
  const std::string& cpp = files.at("mlp.cpp");
  EXPECT_EQ(cpp.find("kWeightBlob"), std::string::npos);
  EXPECT_NE(cpp.find("if (!weights || !data || !dense2_fwd || !arena) return kNullPointer;"), std::string::npos);
  EXPECT_NE(cpp.find("% kWeightAlignment != 0) return kMisalignedWeights;"), std::string::npos);
}

TEST(Emitter, LargeCompiledInWeightsGetANote) {
  EXPECT_EQ(large_weights_note("m", std::size_t{64} << 20, false), "");
  EXPECT_EQ(large_weights_note("m", std::size_t{600} << 20, true), "");
  const std::string note = large_weights_note("vgg", std::size_t{612} << 20, false);
  EXPECT_NE(note.find("612 MiB of weights compiled into vgg_weights.cpp"), std::string::npos) << note;
  EXPECT_NE(note.find("--external-weights writes them to vgg.weights.bin"), std::string::npos) << note;
}

TEST(Emitter, DeterministicOutput) {
  const auto a = generate_cpp(testing::seed_mlp(), {"mlp", "ns", "mlp.json"});
  const auto b = generate_cpp(testing::seed_mlp(), {"mlp", "ns", "mlp.json"});
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].content, b[i].content) << a[i].filename;
}

TEST(Emitter, ProfileHooksOnlyWhenAskedFor) {
  const std::string plain = by_name(generate_cpp(testing::seed_mlp(), {"mlp", "", "mlp.json"})).at("mlp.cpp");
  EXPECT_EQ(plain.find("hg_profile_mark"), std::string::npos);
  CppEmitOptions options{"mlp", "", "mlp.json"};
  options.profile_hooks = true;
  const std::string hooked = by_name(generate_cpp(testing::seed_mlp(), options)).at("mlp.cpp");
  EXPECT_NE(hooked.find("void hg_profile_mark(int kernel);"), std::string::npos);
  // One mark before the first kernel, then one after each of the three.
  const std::size_t start = hooked.find("  hg_profile_mark(-1);\n  // kernel 0 ");
  ASSERT_NE(start, std::string::npos) << hooked;
  std::size_t previous = start;
  for (int k = 0; k < 3; ++k) {
    const std::size_t kernel = hooked.find("  // kernel " + std::to_string(k) + " ", previous);
    const std::size_t mark = hooked.find("  hg_profile_mark(" + std::to_string(k) + ");\n", kernel);
    ASSERT_NE(kernel, std::string::npos);
    ASSERT_NE(mark, std::string::npos) << k;
    previous = mark;
  }
  EXPECT_EQ(hooked.find("hg_profile_mark(3)"), std::string::npos);
}

TEST(Emitter, RejectsBadNamesAndMissingWeights) {
  EXPECT_NE(error_of([] { generate_cpp(testing::seed_mlp(), {"my-model", "", ""}); }).find("not a C identifier"),
            std::string::npos);
  // 'o' is a fused kernel's local name in the generated code.
  EXPECT_NE(error_of([] { generate_cpp(testing::seed_mlp(), {"o", "", ""}); }).find("uses itself (use --name)"),
            std::string::npos);
  Graph g = testing::seed_mlp();
  g.constants["dense1_bias"].data.clear();
  EXPECT_NE(error_of([&] { generate_cpp(g, {"mlp", "", ""}); }).find("weight 'dense1_bias' has no data"),
            std::string::npos);
}

// Generated code computes float32: an int32 value left for run time is
// refused by the lowering, naming its node and dtype, before anything prints
// `float` for it.
// check_kernels, in compile_graph: every node whose dtypes the backend's
// kernel lacks, named at once.
// C++ casts to and from int32 but computes abs in float32, int8 and uint8;
// CUDA computes neither cast.
TEST(Emitter, ValuesOfOtherDtypesAreRefusedNamingEveryNode) {
  Graph g;
  g.add_input("x", {{2}});
  g.nodes.push_back(testing::make_node("to_int", "Cast", {"x"}, testing::attrs_of({{"dtype", std::string("int32")}})));
  g.nodes.push_back(testing::make_node("magnitude", "abs", {"to_int"}));
  g.nodes.push_back(
      testing::make_node("back", "Cast", {"magnitude"}, testing::attrs_of({{"dtype", std::string("float32")}})));
  g.outputs = {"back"};
  EXPECT_EQ(error_of([&] { compile_graph(g); }),
            "target generic (C++ backend) cannot compute these nodes:\n"
            "  node 'magnitude' (abs): input 'to_int' is int32; output 'magnitude' is int32 (its kernel computes "
            "float32, int8, uint8)");
  EXPECT_EQ(error_of([&] { compile_graph(g, CompileOptions::for_target(find_target("cuda"))); }),
            "target cuda (CUDA backend) cannot compute these nodes:\n"
            "  node 'to_int' (Cast): output 'to_int' is int32 (its kernel computes float32, float16, bfloat16)\n"
            "  node 'magnitude' (abs): input 'to_int' is int32; output 'magnitude' is int32 (its kernel computes "
            "float32, float16, bfloat16)\n"
            "  node 'back' (Cast): input 'magnitude' is int32 (its kernel computes float32, float16, bfloat16)");
}

}  // namespace
}  // namespace hybgen
