// The generated header from C: a C99 program includes two models' headers
// (one with external weights), sizes its arrays with their macros, calls the
// extern "C" entry points and matches the interpreter. The values are named
// to collide with what the headers define (macros, C-only keywords), which
// the generated names must avoid.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
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

// product = restrict * NAMES_INPUT1_FLOATS; sum = product + HG_THREAD_POOL_DEFINED
// (a weight), with the outputs named _Bool and HYBGEN_NAMES_H_.
Graph hostile_names() {
  Graph g;
  g.name = "names";
  g.add_input("restrict", {{2, 3}});
  g.add_input("NAMES_INPUT1_FLOATS", {{2, 3}});
  g.add_constant("HG_THREAD_POOL_DEFINED", Constant::f32({1, 3}, testing::seeded_values(3, 7)));
  g.nodes.push_back(testing::make_node("_Bool", "broadcast_mul", {"restrict", "NAMES_INPUT1_FLOATS"}));
  g.nodes.push_back(testing::make_node("HYBGEN_NAMES_H_", "broadcast_add", {"_Bool", "HG_THREAD_POOL_DEFINED"}));
  g.outputs = {"_Bool", "HYBGEN_NAMES_H_"};
  return g;
}

// Prints both models' status codes, their macros, then every output value.
const char* const kCDriver = R"(#include <stdio.h>
#include "names.h"
#include "ext.h"

static void serial_for(void* pool, long count, void (*task)(void* context, long index), void* context) {
  long i;
  (void)pool;
  for (i = 0; i < count; ++i) task(context, i);
}

static unsigned char* aligned(unsigned char* storage, size_t alignment) {
  return storage + (alignment - (uintptr_t)storage % alignment) % alignment;
}

static unsigned char names_arena[NAMES_ARENA_BYTES + NAMES_ARENA_ALIGNMENT];
static unsigned char ext_arena[EXT_ARENA_BYTES + EXT_ARENA_ALIGNMENT];
static unsigned char ext_weights[EXT_WEIGHT_BYTES + EXT_WEIGHT_ALIGNMENT];

int main(int argc, char** argv) {
  float a[NAMES_INPUT0_FLOATS], b[NAMES_INPUT1_FLOATS];
  float product[NAMES_OUTPUT0_FLOATS], sum[NAMES_OUTPUT1_FLOATS];
  float ext_product[EXT_OUTPUT0_FLOATS], ext_sum[EXT_OUTPUT1_FLOATS];
  hg_thread_pool pool = {serial_for, NULL, 2};
  unsigned char* const weights = aligned(ext_weights, EXT_WEIGHT_ALIGNMENT);
  FILE* f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  size_t i;
  if (!f || fread(weights, 1, EXT_WEIGHT_BYTES, f) != EXT_WEIGHT_BYTES) return 9;
  fclose(f);
  for (i = 0; i < NAMES_INPUT0_FLOATS; ++i) a[i] = (float)i - 2.5f;
  for (i = 0; i < NAMES_INPUT1_FLOATS; ++i) b[i] = 0.25f * (float)i + 1.0f;
  printf("%d %d\n", names_run(a, b, product, sum, aligned(names_arena, NAMES_ARENA_ALIGNMENT)),
         ext_run_pool(a, b, ext_product, ext_sum, weights, aligned(ext_arena, EXT_ARENA_ALIGNMENT), &pool));
  printf("%lu %lu %lu %lu %lu %lu %lu\n", (unsigned long)NAMES_ARENA_BYTES, (unsigned long)NAMES_ARENA_ALIGNMENT,
         (unsigned long)NAMES_INPUT0_FLOATS, (unsigned long)NAMES_INPUT1_FLOATS, (unsigned long)NAMES_OUTPUT0_FLOATS,
         (unsigned long)NAMES_OUTPUT1_FLOATS, (unsigned long)EXT_WEIGHT_BYTES);
  for (i = 0; i < NAMES_OUTPUT0_FLOATS; ++i) printf("%.9g %.9g %.9g %.9g\n", product[i], sum[i], ext_product[i], ext_sum[i]);
  return 0;
}
)";

// The value of `constexpr std::size_t NAME = value;` in a header.
unsigned long constant(const std::string& header, const std::string& name) {
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("constexpr std::size_t " + name + " = ([0-9]+);"))) return 0;
  return std::stoul(match[1]);
}

TEST(CHeader, TwoModelsFromC99MatchTheInterpreter) {
  TempDir dir("hybgen-c-header-test");
  const std::string d = dir.path() + "/";
  const Graph graph = hostile_names();
  const auto names = generate_cpp(graph, {"names", "", "names.json"});
  CppEmitOptions external{"ext", "", "names.json"};
  external.external_weights = true;
  const auto ext = generate_cpp(graph, external);
  write_generated(names, dir.path());
  write_generated(ext, dir.path());
  std::ofstream(d + "main.c") << kCDriver;

  const std::string cxx = quoted(HYBGEN_CXX) + " -std=c++11 -O1 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti";
  const std::string cc = quoted(HYBGEN_CC) + " -std=c99 -O1 -Wall -Wextra -pedantic -Werror -I" + quoted(d);
  auto r = run_command("cd " + quoted(d) + " && " + cc + " -c main.c -o main.o && " + cxx +
                       " -c names.cpp names_weights.cpp ext.cpp && " + cxx +
                       " main.o names.o names_weights.o ext.o -o app");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command(quoted(d + "app") + " " + quoted(d + "ext.weights.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::istringstream out(r.output);
  int status_names = -1, status_ext = -1;
  unsigned long arena_bytes, arena_alignment, input0, input1, output0, output1, weight_bytes;
  out >> status_names >> status_ext >> arena_bytes >> arena_alignment >> input0 >> input1 >> output0 >> output1 >>
      weight_bytes;
  EXPECT_EQ(status_names, 0);
  EXPECT_EQ(status_ext, 0);
  // The macros hold the C++ constants' values.
  const std::string& header = names[0].content;
  const std::string& ext_header = ext[0].content;
  EXPECT_EQ(arena_bytes, constant(header, "kArenaBytes")) << header;
  EXPECT_EQ(arena_alignment, constant(header, "kArenaAlignment"));
  EXPECT_EQ(weight_bytes, constant(ext_header, "kWeightBytes")) << ext_header;
  EXPECT_GT(weight_bytes, 0u);
  for (unsigned long size : {input0, input1, output0, output1}) EXPECT_EQ(size, 6u);

  Interpreter interp(graph);
  std::vector<float> a(6), b(6);
  for (int i = 0; i < 6; ++i) {
    a[i] = static_cast<float>(i) - 2.5f;
    b[i] = 0.25f * static_cast<float>(i) + 1.0f;
  }
  const auto expected =
      interp.run({{"restrict", Tensor::from_vector({2, 3}, a)}, {"NAMES_INPUT1_FLOATS", Tensor::from_vector({2, 3}, b)}});
  for (int i = 0; i < 6; ++i) {
    float product, sum, ext_product, ext_sum;
    out >> product >> sum >> ext_product >> ext_sum;
    EXPECT_NEAR(product, expected[0].data()[i], 1e-6) << i;
    EXPECT_NEAR(sum, expected[1].data()[i], 1e-6) << i;
    EXPECT_EQ(ext_product, product) << i;
    EXPECT_EQ(ext_sum, sum) << i;
  }
}

// A run-time batch from C: the seed MLP taking 1 to 6 items, run at 1, 4
// and 6 in an arena of NAME_arena_bytes(batch); 0 and 7 items are refused
// with status 4 before anything is read. Each item matches the interpreter.
const char* const kBatchDriver = R"(#include <stdio.h>
#include <stdlib.h>
#include "mlp.h"

int main(void) {
  static float data[MLP_INPUT0_FLOATS], out[MLP_OUTPUT0_FLOATS];
  const int64_t batches[3] = {1, 4, 6};
  size_t i;
  int k;
  for (i = 0; i < MLP_INPUT0_FLOATS; ++i) data[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
  void* largest = aligned_alloc(MLP_ARENA_ALIGNMENT, (MLP_ARENA_BYTES + 63) / 64 * 64);
  printf("%d %d %d %d\n", mlp_run(data, out, 0, largest), mlp_run(data, out, 7, largest), MLP_MIN_BATCH, MLP_MAX_BATCH);
  free(largest);
  printf("%lu %lu %lu\n", (unsigned long)mlp_arena_bytes(1), (unsigned long)mlp_arena_bytes(6),
         (unsigned long)MLP_ARENA_BYTES);
  for (k = 0; k < 3; ++k) {
    void* arena = aligned_alloc(MLP_ARENA_ALIGNMENT, (mlp_arena_bytes(batches[k]) + 63) / 64 * 64);
    for (i = 0; i < MLP_OUTPUT0_FLOATS; ++i) out[i] = -1.0f;
    printf("%d\n", mlp_run(data, out, batches[k], arena));
    for (i = 0; i < (size_t)batches[k] * 2; ++i) printf("%.9g\n", out[i]);
    free(arena);
  }
  return 0;
}
)";

TEST(CHeader, ARunTimeBatchFromC99MatchesTheInterpreterAtEachBatch) {
  TempDir dir("hybgen-c-batch-test");
  const std::string d = dir.path() + "/";
  Graph graph = testing::seed_mlp();
  graph.batch = BatchRange{1, 6, {"data"}};
  const auto files = generate_cpp(graph, {"mlp", "", "mlp.json"});
  write_generated(files, dir.path());
  std::ofstream(d + "main.c") << kBatchDriver;
  const std::string cxx =
      quoted(HYBGEN_CXX) + " -std=c++11 -O1 -Wall -Wextra -Wpedantic -Werror -fno-exceptions -fno-rtti";
  const std::string cc = quoted(HYBGEN_CC) + " -std=c11 -O1 -Wall -Wextra -pedantic -Werror -I" + quoted(d);
  auto r = run_command("cd " + quoted(d) + " && " + cc + " -c main.c -o main.o && " + cxx +
                       " -c mlp.cpp mlp_weights.cpp && " + cxx + " main.o mlp.o mlp_weights.o -o app");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_command(quoted(d + "app"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream out(r.output);
  int too_few = -1, too_many = -1, min_batch = 0, max_batch = 0;
  unsigned long arena_1 = 0, arena_6 = 0, arena_macro = 0;
  out >> too_few >> too_many >> min_batch >> max_batch >> arena_1 >> arena_6 >> arena_macro;
  EXPECT_EQ(too_few, 4);
  EXPECT_EQ(too_many, 4);
  EXPECT_EQ(min_batch, 1);
  EXPECT_EQ(max_batch, 6);
  EXPECT_EQ(arena_6, arena_macro);
  EXPECT_LT(arena_1, arena_6);
  EXPECT_NE(files[0].content.find("int run(const float* data, float* dense2_fwd, int64_t batch, void* arena);"),
            std::string::npos)
      << files[0].content;

  std::vector<float> data(6 * 512);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
  for (int64_t batch : {1, 4, 6}) {
    Graph at = testing::seed_mlp(batch);
    Interpreter interp(at);
    const auto expected = interp.run(
        {{"data", Tensor::from_vector({batch, 512}, std::vector<float>(data.begin(), data.begin() + batch * 512))}});
    int status = -1;
    out >> status;
    EXPECT_EQ(status, 0) << batch;
    for (int64_t i = 0; i < batch * 2; ++i) {
      float v;
      out >> v;
      EXPECT_NEAR(v, expected[0].data()[i], 1e-5) << "batch " << batch << " value " << i;
    }
  }
}

}  // namespace
}  // namespace hybgen
