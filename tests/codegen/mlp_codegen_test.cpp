// The seed MLP as generated code: strict C++11 without exceptions or RTTI,
// no heap symbols in its objects, matches the interpreter, reentrant, and
// refuses a misaligned arena.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emit/generate.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "run_command.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {
namespace {

using testing::quoted;
using testing::run_command;

// Writes the input, runs the model into two arenas and once misaligned,
// prints the outputs and the status codes.
const char* kDriver = R"(#include <cstdio>
#include <cstring>
#include "mlp.h"
alignas(64) static unsigned char arena_a[mlp::kArenaBytes];
alignas(64) static unsigned char arena_b[mlp::kArenaBytes + 64];
int main() {
  static float input[mlp::kDataSize];
  for (std::size_t i = 0; i < mlp::kDataSize; ++i) input[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  float out_a[mlp::kDense2FwdSize], out_b[mlp::kDense2FwdSize];
  const int status_a = mlp_run(input, out_a, arena_a);
  std::memset(arena_b, 0x7f, sizeof arena_b);  // garbage must not matter
  const int status_b = mlp::run(input, out_b, arena_b);
  const int misaligned = mlp::run(input, out_b, arena_b + 4);
  const int null_input = mlp::run(nullptr, out_b, arena_a);
  std::printf("%d %d %d %d\n", status_a, status_b, misaligned, null_input);
  for (std::size_t i = 0; i < mlp::kDense2FwdSize; ++i) std::printf("%.9g %.9g\n", out_a[i], out_b[i]);
  return 0;
}
)";

TEST(MlpCodegen, StrictCpp11NoHeapMatchesReferenceReentrant) {
  TempDir dir("hybgen-codegen-test");
  const Graph graph = testing::seed_mlp();
  write_generated(generate_cpp(graph, {"mlp", "mlp", "mlp.json"}), dir.path());
  std::ofstream(dir.path() + "/main.cpp") << kDriver;
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

// The seed MLP generated twice, embedded (namespace mlp) and with external
// weights (mlp_ext, loaded from mlp_ext.weights.bin into a static buffer):
// prints the status codes of the external form's runs, then both outputs.
const char* kExternalDriver = R"(#include <cstdio>
#include "mlp.h"
#include "mlp_ext.h"
alignas(64) static unsigned char arena[mlp::kArenaBytes];
alignas(64) static unsigned char weights[mlp_ext::kWeightBytes + 64];
int main(int, char** argv) {
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f || std::fread(weights, 1, mlp_ext::kWeightBytes, f) != mlp_ext::kWeightBytes) return 9;
  std::fclose(f);
  static float input[mlp::kDataSize];
  for (std::size_t i = 0; i < mlp::kDataSize; ++i) input[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  float embedded[mlp::kDense2FwdSize], external[mlp::kDense2FwdSize];
  const int status_embedded = mlp_run(input, embedded, arena);
  const int status_external = mlp_ext_run(input, external, weights, arena);
  const int misaligned = mlp_ext::run(input, external, weights + 4, arena);
  const int null_weights = mlp_ext::run(input, external, nullptr, arena);
  std::printf("%d %d %d %d\n", status_embedded, status_external, misaligned, null_weights);
  for (std::size_t i = 0; i < mlp::kDense2FwdSize; ++i) std::printf("%.9g %.9g\n", embedded[i], external[i]);
  return 0;
}
)";

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
