// The seed MLP as generated code: strict C++11 without exceptions or RTTI,
// no heap symbols in its objects, matches the interpreter, reentrant, and
// refuses a misaligned arena.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "emit/generate.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "run_command.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::run_command;

// A driver program around `runs`, statements that fill out_a and out_b
// from `input` and set the status codes s0..s3: it prints the four codes,
// then both outputs value by value.
std::string driver(const std::string& includes_and_globals, const std::string& main_head, const std::string& runs) {
  return "#include <cstdio>\n" + includes_and_globals + main_head +
         "  static float input[mlp::kDataSize];\n"
         "  for (std::size_t i = 0; i < mlp::kDataSize; ++i)\n"
         "    input[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;\n"
         "  float out_a[mlp::kDense2FwdSize], out_b[mlp::kDense2FwdSize];\n" +
         runs +
         "  std::printf(\"%d %d %d %d\\n\", s0, s1, s2, s3);\n"
         "  for (std::size_t i = 0; i < mlp::kDense2FwdSize; ++i)\n"
         "    std::printf(\"%.9g %.9g\\n\", out_a[i], out_b[i]);\n"
         "  return 0;\n}\n";
}

// Runs the model into two arenas and once misaligned, and with a null input.
const std::string kMlpDriver = driver(R"(#include <cstring>
#include "mlp.h"
alignas(64) static unsigned char arena_a[mlp::kArenaBytes];
alignas(64) static unsigned char arena_b[mlp::kArenaBytes + 64];
)",
                                   "int main() {\n", R"(  const int s0 = mlp_run(input, out_a, arena_a);
  std::memset(arena_b, 0x7f, sizeof arena_b);  // garbage must not matter
  const int s1 = mlp::run(input, out_b, arena_b);
  const int s2 = mlp::run(input, out_b, arena_b + 4);  // misaligned
  const int s3 = mlp::run(nullptr, out_b, arena_a);
)");

TEST(MlpCodegen, StrictCpp11NoHeapMatchesReferenceReentrant) {
  TempDir dir("hybgen-codegen-test");
  const Graph graph = testing::seed_mlp();
  write_generated(generate_cpp(graph, {"mlp", "mlp", "mlp.json"}), dir.path());
  std::ofstream(dir.path() + "/main.cpp") << kMlpDriver;
  const std::string flags = " -std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti -I" + quoted(dir.path());
  const std::string cxx = quoted(HYBGEN_CXX);
  const std::string d = dir.path() + "/";
  auto r = run_command(cxx + flags + " -c " + quoted(d + "mlp.cpp") + " -o " + quoted(d + "mlp.o") + " && " + cxx +
                       flags + " -c " + quoted(d + "mlp_weights.cpp") + " -o " + quoted(d + "w.o") + " && " + cxx +
                       flags + " " + quoted(d + "main.cpp") + " " + quoted(d + "mlp.o") + " " + quoted(d + "w.o") +
                       " -o " + quoted(d + "app"));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  r = run_command("nm -C " + quoted(d + "mlp.o") + " " + quoted(d + "w.o"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* symbol : {"malloc", "free", "operator new", "operator delete", "calloc", "realloc"})
    EXPECT_EQ(r.output.find(symbol), std::string::npos) << symbol << " in\n" << r.output;

  r = run_command(quoted(d + "app"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream out(r.output);
  int status_a, status_b, misaligned, null_input;
  out >> status_a >> status_b >> misaligned >> null_input;
  EXPECT_EQ(status_a, 0);
  EXPECT_EQ(status_b, 0);
  EXPECT_EQ(misaligned, 2);  // kMisalignedArena
  EXPECT_EQ(null_input, 1);  // kNullPointer

  std::vector<float> input(512);
  for (std::size_t i = 0; i < 512; ++i) input[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  Interpreter interp(graph);
  const Tensor expected = interp.run({{"data", Tensor::from_vector({1, 512}, input)}})[0];
  double max_abs = 0, scale = 0;
  for (int i = 0; i < 2; ++i) {
    float a, b;
    out >> a >> b;
    EXPECT_EQ(a, b) << "two arenas gave different results";
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(a - expected.data()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(expected.data()[i])));
  }
  EXPECT_LE(max_abs / scale, 1e-5);
}

// The seed MLP generated twice, embedded (namespace mlp: out_a) and with
// external weights (mlp_ext: out_b, loaded from the file named by argv[1]
// into a static buffer), and the external form misaligned and with null weights.
const std::string kExternalDriver = driver(R"(#include "mlp.h"
#include "mlp_ext.h"
alignas(64) static unsigned char arena[mlp::kArenaBytes];
alignas(64) static unsigned char weights[mlp_ext::kWeightBytes + 64];
)",
                                           R"(int main(int, char** argv) {
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f || std::fread(weights, 1, mlp_ext::kWeightBytes, f) != mlp_ext::kWeightBytes) return 9;
  std::fclose(f);
)",
                                           R"(  const int s0 = mlp_run(input, out_a, arena);
  const int s1 = mlp_ext_run(input, out_b, weights, arena);
  const int s2 = mlp_ext::run(input, out_b, weights + 4, arena);  // misaligned
  const int s3 = mlp_ext::run(input, out_b, nullptr, arena);
)");

TEST(MlpCodegen, ExternalWeightsGiveTheSameResultsWithoutCompilingTheWeights) {
  TempDir dir("hybgen-codegen-test");
  const Graph graph = testing::seed_mlp();
  CppEmitOptions external{"mlp_ext", "mlp_ext", "mlp.json"};
  external.external_weights = true;
  write_generated(generate_cpp(graph, {"mlp", "mlp", "mlp.json"}), dir.path());
  write_generated(generate_cpp(graph, external), dir.path());
  std::ofstream(dir.path() + "/main.cpp") << kExternalDriver;
  const std::string flags =
      " -std=c++11 -O2 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti -I" + quoted(dir.path());
  const std::string cxx = quoted(HYBGEN_CXX);
  const std::string d = dir.path() + "/";
  auto r = run_command(cxx + flags + " -c " + quoted(d + "mlp_ext.cpp") + " -o " + quoted(d + "mlp_ext.o") + " && " +
                       cxx + flags + " " + quoted(d + "main.cpp") + " " + quoted(d + "mlp.cpp") + " " +
                       quoted(d + "mlp_weights.cpp") + " " + quoted(d + "mlp_ext.o") + " -o " + quoted(d + "app"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The object holds the code, not the 658 KB of weights.
  EXPECT_LT(std::filesystem::file_size(d + "mlp_ext.o"), std::uintmax_t{200000});

  r = run_command(quoted(d + "app") + " " + quoted(d + "mlp_ext.weights.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream out(r.output);
  int status_embedded, status_external, misaligned, null_weights;
  out >> status_embedded >> status_external >> misaligned >> null_weights;
  EXPECT_EQ(status_embedded, 0);
  EXPECT_EQ(status_external, 0);
  EXPECT_EQ(misaligned, 3);    // kMisalignedWeights
  EXPECT_EQ(null_weights, 1);  // kNullPointer
  for (int i = 0; i < 2; ++i) {
    float embedded, ext;
    out >> embedded >> ext;
    EXPECT_EQ(embedded, ext) << "output " << i;
  }
}

TEST(MlpCodegen, TutorialMemoryExampleNeedsNoArena) {
  // c = b * a; d = c + 1 is one loop: c never leaves a register, so the
  // arena is empty (declared as 1 byte so it can size an array).
  const auto files = generate_cpp(testing::tutorial_memory(), {"memory", "", ""});
  const std::string& header = files[0].content;
  EXPECT_NE(header.find("constexpr std::size_t kArenaBytes = 1;"), std::string::npos) << header;
}

}  // namespace
}  // namespace hybgen
