// The optional thread pool of the generated-code contract: a model run on
// real threads (templates/hg_spin_pool.h.in) gives the same bits as on the
// calling thread, its kernels do split their work, and they do so without
// data races (ThreadSanitizer, where the compiler has it).
#include <gtest/gtest.h>

#include <fstream>

#include "emit/generate.h"
#include "emit/templates.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "ops/gemm_pack.h"
#include "run_command.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;
using testing::quoted;
using testing::run_command;
using testing::seeded_values;

Attrs conv(int64_t filters, int64_t kernel, int64_t pad, int64_t groups = 1) {
  return attrs_of({{"kernel", std::vector<int64_t>{kernel, kernel}},
                   {"num_filter", filters},
                   {"pad", std::vector<int64_t>{pad, pad}},
                   {"num_group", groups}});
}

// Large enough that the kernels split in 3 on every target: 3x3 (im2col, row
// by row or Winograd), 1x1 and depthwise convolutions, a batch-1 dense layer (GEMV), a
// dense layer on 6 rows, a batch_dot of two products, a max pool, and a 1x1
// expansion fused with the depthwise convolution after it (split by panels).
Graph splittable_net() {
  Graph g;
  g.name = "split";
  g.add_input("data", {{1, 16, 20, 20}});
  g.add_input("vec", {{1, 1024}});
  g.add_input("rows", {{6, 256}});
  g.add_input("lhs", {{2, 64, 96}});
  g.add_input("rhs", {{2, 96, 80}});
  auto constant = [&](const std::string& name, Shape shape, uint32_t seed) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    g.add_constant(name, Constant::f32(shape, seeded_values(n, seed)));
  };
  constant("c1_weight", {32, 16, 3, 3}, 1);
  constant("c1_bias", {32}, 2);
  constant("c2_weight", {48, 32, 1, 1}, 3);
  constant("c2_bias", {48}, 4);
  constant("fc_weight", {400, 1024}, 5);
  constant("fc_bias", {400}, 6);
  constant("rows_weight", {400, 256}, 7);
  constant("rows_bias", {400}, 8);
  constant("dw_weight", {32, 1, 3, 3}, 9);
  constant("dw_bias", {32}, 10);
  constant("c3_weight", {32, 32, 3, 3}, 11);
  constant("c3_bias", {32}, 12);
  constant("pw_weight", {96, 16, 1, 1}, 13);
  constant("pw_bias", {96}, 14);
  constant("pdw_weight", {96, 1, 3, 3}, 15);
  constant("pdw_bias", {96}, 16);
  g.nodes.push_back(make_node("c1", "Convolution", {"data", "c1_weight", "c1_bias"}, conv(32, 3, 1)));
  g.nodes.push_back(make_node("r1", "Activation", {"c1"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("c2", "Convolution", {"r1", "c2_weight", "c2_bias"}, conv(48, 1, 0)));
  g.nodes.push_back(make_node("fc", "FullyConnected", {"vec", "fc_weight", "fc_bias"}, attrs_of({{"num_hidden", 400}})));
  g.nodes.push_back(
      make_node("rows_fc", "FullyConnected", {"rows", "rows_weight", "rows_bias"}, attrs_of({{"num_hidden", 400}})));
  g.nodes.push_back(make_node("bd", "batch_dot", {"lhs", "rhs"}));
  g.nodes.push_back(make_node("dw", "Convolution", {"r1", "dw_weight", "dw_bias"}, conv(32, 3, 1, 32)));
  g.nodes.push_back(make_node("c3", "Convolution", {"r1", "c3_weight", "c3_bias"}, conv(32, 3, 1)));
  Attrs max_pool = attrs_of({{"pool_type", std::string("max")},
                             {"kernel", std::vector<int64_t>{5, 5}},
                             {"pad", std::vector<int64_t>{2, 2}}});
  g.nodes.push_back(make_node("mp", "Pooling", {"c2"}, max_pool));
  g.nodes.push_back(make_node("pw", "Convolution", {"data", "pw_weight", "pw_bias"}, conv(96, 1, 0)));
  g.nodes.push_back(make_node("pw_relu", "Activation", {"pw"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("pdw", "Convolution", {"pw_relu", "pdw_weight", "pdw_bias"}, conv(96, 3, 1, 96)));
  g.outputs = {"c2", "fc", "rows_fc", "bd", "dw", "c3", "mp", "pdw"};
  return g;
}

// Runs the model on the calling thread, then repeatedly on a pool of 3
// threads that counts the parts it was given, and compares the bits.
const char* kThreadPoolDriver = R"DRV(#include <cstdio>
#include <cstring>

#include "split.h"
#include "hg_spin_pool.h"

namespace {
alignas(split::kArenaAlignment) unsigned char arena[split::kArenaBytes];
float data[split::kDataSize], vec[split::kVecSize], rows[split::kRowsSize];
float lhs[split::kLhsSize], rhs[split::kRhsSize];
float c2[split::kC2Size], fc[split::kFcSize], rows_fc[split::kRowsFcSize], bd[split::kBdSize];
float c2_serial[split::kC2Size], fc_serial[split::kFcSize], rows_fc_serial[split::kRowsFcSize];
float bd_serial[split::kBdSize];
float dw[split::kDwSize], dw_serial[split::kDwSize], c3[split::kC3Size], c3_serial[split::kC3Size];
float mp[split::kMpSize], mp_serial[split::kMpSize], pdw[split::kPdwSize], pdw_serial[split::kPdwSize];
long parts_run = 0;

struct Counting {
  HgSpinPool* workers;
};
void counting_parallel_for(void* self, long count, void (*task)(void*, long), void* context) {
  parts_run += count;
  HgSpinPool::parallel_for(static_cast<Counting*>(self)->workers, count, task, context);
}
}  // namespace

int main() {
  for (unsigned long i = 0; i < split::kDataSize; ++i) data[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  for (unsigned long i = 0; i < split::kVecSize; ++i) vec[i] = static_cast<float>((i * 7) % 31) / 15.0f - 1.0f;
  for (unsigned long i = 0; i < split::kRowsSize; ++i) rows[i] = static_cast<float>((i * 13) % 29) / 14.0f - 1.0f;
  for (unsigned long i = 0; i < split::kLhsSize; ++i) lhs[i] = static_cast<float>((i * 11) % 23) / 11.0f - 1.0f;
  for (unsigned long i = 0; i < split::kRhsSize; ++i) rhs[i] = static_cast<float>((i * 5) % 19) / 9.0f - 1.0f;
  if (split::run(data, vec, rows, lhs, rhs, c2_serial, fc_serial, rows_fc_serial, bd_serial, dw_serial, c3_serial,
                 mp_serial, pdw_serial, arena) != 0)
    return 3;
  HgSpinPool workers(3);
  Counting counting = {&workers};
  const hg_thread_pool pool = {&counting_parallel_for, &counting, 3};
  for (int round = 0; round < 20; ++round) {
    std::memset(c2, 0, sizeof c2);
    std::memset(fc, 0, sizeof fc);
    std::memset(rows_fc, 0, sizeof rows_fc);
    std::memset(bd, 0, sizeof bd);
    std::memset(dw, 0, sizeof dw);
    std::memset(c3, 0, sizeof c3);
    std::memset(mp, 0, sizeof mp);
    std::memset(pdw, 0, sizeof pdw);
    if (split_run_pool(data, vec, rows, lhs, rhs, c2, fc, rows_fc, bd, dw, c3, mp, pdw, arena, &pool) != 0) return 4;
    if (std::memcmp(c2, c2_serial, sizeof c2) != 0 || std::memcmp(fc, fc_serial, sizeof fc) != 0 ||
        std::memcmp(rows_fc, rows_fc_serial, sizeof rows_fc) != 0 || std::memcmp(bd, bd_serial, sizeof bd) != 0 ||
        std::memcmp(dw, dw_serial, sizeof dw) != 0 || std::memcmp(c3, c3_serial, sizeof c3) != 0 ||
        std::memcmp(mp, mp_serial, sizeof mp) != 0 || std::memcmp(pdw, pdw_serial, sizeof pdw) != 0) {
      std::printf("round %d: results differ on the pool\n", round);
      return 5;
    }
  }
  std::printf("parts %ld\n", parts_run);
  return 0;
}
)DRV";

// Generates the model for `target`, builds it with the driver and `flags`,
// runs it and returns its output.
std::string build_and_run(const std::string& target, const std::string& flags) {
  const TempDir dir("hybgen-pool-test");
  const auto files = generate_cpp(splittable_net(), {"split", "", ""}, {true, nullptr, find_target(target)});
  EXPECT_NE(files[1].content.find("hg_conv_pointwise_depthwise("), std::string::npos) << "pw and pdw not fused";
  write_generated(files, dir.path());
  const std::string d = dir.path() + "/";
  std::ofstream(d + "hg_spin_pool.h") << template_text("hg_spin_pool.h");
  std::ofstream(d + "main.cpp") << kThreadPoolDriver;
  const std::string target_flags = find_target(target).compiler_flags;
  auto r = run_command(quoted(HYBGEN_CXX) + " -std=c++11 -Wall -Wextra -Wpedantic -Werror -pthread " + flags + " " +
                       target_flags + " -I" + quoted(dir.path()) + " " + quoted(d + "main.cpp") + " " +
                       quoted(d + "split.cpp") + " " + quoted(d + "split_weights.cpp") + " -o " + quoted(d + "driver"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return "";
  r = run_command(quoted(d + "driver"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// Parts handed to the pool in one run, from the driver's "parts N" line.
long parts_per_run(const std::string& output) {
  const std::size_t at = output.find("parts ");
  return at == std::string::npos ? -1 : std::stol(output.substr(at + 6)) / 20;
}

TEST(ThreadPool, GenericTargetGivesTheSameBitsOnRealThreads) {
  const std::string out = build_and_run("generic", "-O2");
  // 3 parts for each of: c1 (im2col GEMM; row by row on x86-64-v4), c2, fc, rows_fc, dw, c3
  // (Winograd's GEMMs), batch_dot's two products, mp and pw + pdw.
  EXPECT_GE(parts_per_run(out), 30) << out;
}

TEST(ThreadPool, HostTargetGivesTheSameBitsOnRealThreads) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine has no SIMD target";
  EXPECT_GE(parts_per_run(build_and_run(host_target().name, "-O2")), 30);
}

TEST(ThreadPool, NoDataRacesUnderThreadSanitizer) {
  const TempDir probe("hybgen-tsan-probe");
  std::ofstream(probe.path() + "/t.cpp") << "int main() { return 0; }\n";
  if (run_command(quoted(HYBGEN_CXX) + " -fsanitize=thread " + quoted(probe.path() + "/t.cpp") + " -o " +
                  quoted(probe.path() + "/t") + " && " + quoted(probe.path() + "/t"))
          .exit_code != 0)
    GTEST_SKIP() << "no ThreadSanitizer with this compiler";
  EXPECT_GE(parts_per_run(build_and_run("generic", "-O1 -g -fsanitize=thread")), 30);
}

TEST(ThreadPool, VerifyRunsTheModelOnAPool) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.threads = 3;
  const VerifyReport report = verify_model(splittable_net(), options);
  EXPECT_TRUE(report.ok);
  for (const auto& check : report.checks) EXPECT_LE(check.max_rel_error, 1e-5) << check.name;
}

}  // namespace
}  // namespace hybgen
