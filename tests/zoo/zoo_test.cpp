// Each zoo architecture: eager and hybridized (compiled for this machine, and
// on the interpreter) agree within 1e-5, and the generated C++ of its traced
// graph matches the reference within 1e-4 (relative to the largest output
// magnitude) for every other --target this machine runs, AArch64 under qemu
// where a cross compiler and qemu are installed (generic: where no other
// test builds the same kernel calls). Inputs are smaller than
// ImageNet's where the architecture allows, to keep the suite fast; the
// layers are the zoo's.
#include <gtest/gtest.h>

#include <ostream>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "pipeline.h"
#include "targets/toolchain.h"
#include "verify/verify.h"
#include "nvcc_compile.h"
#include "zoo.h"

namespace hybgen {
namespace {

struct ZooCase {
  const char* name;
  std::function<std::shared_ptr<HybridBlock>()> build;
  Shape input;
};

// gtest prints a parameter with this; test names then read "... # GetParam() = NAME".
inline void PrintTo(const ZooCase& c, std::ostream* os) { *os << c.name; }

// BatchNorm statistics and scales away from their identity initial values,
// so the test would notice a mistake in them.
void randomize_norm_params(Block& net, uint64_t seed) {
  for (Parameter* p : net.collect_params()) {
    const std::string& n = p->name();
    auto ends = [&](const std::string& s) { return n.size() > s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
    if (ends("running_var") || ends("gamma")) p->set_data(Tensor::random_uniform(p->shape(), 0.5f, 1.5f, ++seed));
    if (ends("running_mean") || ends("beta")) p->set_data(Tensor::random_uniform(p->shape(), -0.2f, 0.2f, ++seed));
  }
}

double relative_difference(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a.data()[i] - b.data()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b.data()[i])));
  }
  return diff / scale;
}

// The case's network with seeded weights and norm statistics, its input, and
// its output run eagerly.
struct Initialized {
  std::shared_ptr<HybridBlock> net;
  Tensor x, eager;
};

Initialized initialized(const ZooCase& c) {
  Initialized i{c.build(), Tensor::random_normal(c.input, 0.0f, 1.0f, 7), {}};
  i.net->initialize(init::Xavier(), 42);
  (*i.net)(i.x);  // resolves deferred shapes
  randomize_norm_params(*i.net, 100);
  i.eager = (*i.net)(i.x);
  return i;
}

VerifyReport verify_generated(const Graph& graph, const ZooCase& c, const Tensor& x, const std::string& target) {
  VerifyOptions options;
  options.inputs["data"] = NpyArray{c.input, x.to_vector()};
  options.tolerance = 1e-4;
  options.compile.target = find_target(target);
  // The weights from a file rather than compiled in: the same kernels, and a
  // compiler takes most of a big model's build time on its weight arrays
  // (Inception v3: 20 s against 5). LeNet keeps them compiled in.
  options.external_weights = c.name != std::string("lenet");
  return verify_model(graph, options);
}

// The models whose traced graph generates, for generic, the kernel calls
// (kernels, template arguments, geometry, epilogues) of an export of the
// model that another test builds for generic at the same input and checks
// against the reference and its framework's output: Gluon's, in
// MxnetReference, and for resnet18_v1 torchvision's ResNet-18, in
// OnnxExported (tests/onnx; Gluon's places its residual adds in other
// kernels). A generic build here would compile the same code again. The
// traced graph itself is still built for this machine (hybridize) and
// x86-64-v3 (ZooOnTarget).
bool generic_build_elsewhere(const std::string& name) {
  for (const char* model : {"resnet18_v1", "resnet18_v2", "mobilenet_v1", "mobilenet_v2", "squeezenet1_1",
                            "densenet121", "inception_v3", "vgg11_bn"})
    if (name == model) return true;
  return false;
}

class Zoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(Zoo, EagerHybridizedAndGeneratedAgree) {
  const ZooCase& c = GetParam();
  Initialized i = initialized(c);
  auto& net = i.net;
  const Tensor& x = i.x;
  const Tensor& eager = i.eager;
  // Hybridized: compiled for this machine (its best target, which
  // ZooOnTarget therefore leaves out), and on the interpreter. Tiered, the
  // first call runs on the interpreter while the library compiles; both
  // tiers agree with eager and with each other.
  HybridizeOptions compiled;
  compiled.compile = true;
  net->hybridize(true, compiled);
  const Tensor first = (*net)(x);
  EXPECT_LE(relative_difference(first, eager), 1e-5);
  EXPECT_FALSE(net->first_call_cost()->compiled);
  EXPECT_TRUE(net->compiled(true)) << net->first_call_cost()->why_not_compiled;
  const Tensor native = (*net)(x);
  EXPECT_LE(relative_difference(native, eager), 1e-5);
  EXPECT_LE(relative_difference(native, first), 1e-5);
  HybridizeOptions interpreted;
  interpreted.compile = false;
  net->hybridize(true, interpreted);
  EXPECT_LE(relative_difference((*net)(x), eager), 1e-5);

  const Graph graph = net->trace({c.input}, c.name, true);
  const CompiledGraph optimized = compile_graph(graph);
  EXPECT_EQ(optimized.graph.type(optimized.graph.outputs[0]).shape, eager.shape());
  if (!generic_build_elsewhere(c.name)) {
    const VerifyReport report = verify_generated(graph, c, x, "generic");
    ASSERT_EQ(report.checks.size(), 1u);
    EXPECT_TRUE(report.ok) << c.name << ": max relative error " << report.checks[0].max_rel_error;
    EXPECT_EQ(report.checks[0].shape, eager.shape());
  }

  // The optimizer's memory plan: within 5% of the most bytes live at any step
  // of its schedule, no worse than either simple greedy placement, and
  // smaller than the unoptimized pipeline's.
  const MemoryPlan& plan = optimized.plan;
  EXPECT_LE(static_cast<double>(plan.arena_bytes), 1.05 * static_cast<double>(plan.lower_bound_bytes)) << c.name;
  EXPECT_LE(plan.arena_bytes, plan.arena_by_strategy.at("greedy-by-size"));
  EXPECT_LE(plan.arena_bytes, plan.arena_by_strategy.at("greedy-by-first-use"));
  const CompiledGraph plain = compile_graph(graph, CompileOptions::for_target(default_target(), false));
  EXPECT_LE(plan.arena_bytes, plain.plan.arena_bytes) << c.name;
  EXPECT_LT(optimized.kernels.size(), plain.kernels.size()) << c.name << ": nothing fused";
}

const ZooCase kZoo[] = {ZooCase{"resnet18_v1", [] { return zoo::resnet18_v1(); }, {1, 3, 64, 64}},
                        ZooCase{"resnet18_v2", [] { return zoo::resnet18_v2(); }, {1, 3, 64, 64}},
                        ZooCase{"mobilenet_v1", [] { return zoo::mobilenet_v1(); }, {1, 3, 64, 64}},
                        ZooCase{"mobilenet_v2", [] { return zoo::mobilenet_v2(); }, {1, 3, 64, 64}},
                        ZooCase{"squeezenet1_1", [] { return zoo::squeezenet1_1(); }, {1, 3, 224, 224}},
                        ZooCase{"densenet121", [] { return zoo::densenet121(); }, {1, 3, 224, 224}},
                        ZooCase{"inception_v3", [] { return zoo::inception_v3(); }, {1, 3, 299, 299}},
                        ZooCase{"vgg11_bn", [] { return zoo::vgg11_bn(10); }, {1, 3, 32, 32}},
                        ZooCase{"transformer_encoder", [] { return zoo::transformer_encoder(); }, {1, 32, 256}},
                        ZooCase{"lenet", [] { return zoo::lenet(); }, {1, 1, 28, 28}}};

INSTANTIATE_TEST_SUITE_P(Architectures, Zoo, ::testing::ValuesIn(kZoo),
                         [](const ::testing::TestParamInfo<ZooCase>& info) { return std::string(info.param.name); });

// The SIMD targets, each model a test of its own (they run in parallel).
class ZooOnTarget : public ::testing::TestWithParam<std::tuple<ZooCase, std::string>> {};

TEST_P(ZooOnTarget, GeneratedCodeMatchesTheReference) {
  const auto& [c, target] = GetParam();
  const Target& t = find_target(target);
  if (t.name == host_target().name) GTEST_SKIP() << "Zoo.* runs " << target << " code: hybridize() compiles it";
  // The float kernels are one text per kernel branch: a target that differs
  // from this machine's only in its int8 instructions (x86-64-v4 beside
  // x86-64-v4-vnni) compiles the code Zoo.* already runs.
  if (t.macro == host_target().macro)
    GTEST_SKIP() << target << " has this machine's float kernels (" << t.macro << "), which Zoo.* runs";
  if (!machine_runs(t) && !(t.runner == Runner::kCrossQemu && on_path(t.cross_compiler) && on_path(t.emulator)))
    GTEST_SKIP() << "this machine neither runs nor emulates " << target << " code";
  const Initialized i = initialized(c);
  const Graph graph = i.net->trace({c.input}, c.name, true);
  const VerifyReport report = verify_generated(graph, c, i.x, target);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_TRUE(report.ok) << c.name << " on " << target << ": max relative error " << report.checks[0].max_rel_error;
}

// Every model on the x86-64 targets. Under qemu's AArch64 emulation, the
// models whose layers differ (residual, depthwise, concatenating, attention,
// small dense) but not the large convolutional ones, whose NEON kernels those
// and ConvKernel's NEON test (non-square kernels included) already run, at
// over three minutes of the suite's time.
std::vector<std::tuple<ZooCase, std::string>> zoo_on_simd_targets() {
  const std::vector<std::string> emulated = {"resnet18_v1", "mobilenet_v1", "mobilenet_v2",
                                             "squeezenet1_1", "transformer_encoder", "lenet"};
  std::vector<std::tuple<ZooCase, std::string>> cases;
  for (const ZooCase& c : kZoo) {
    cases.emplace_back(c, "x86-64-v4");
    cases.emplace_back(c, "x86-64-v3");
    if (std::find(emulated.begin(), emulated.end(), c.name) != emulated.end()) cases.emplace_back(c, "armv8-a");
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Architectures, ZooOnTarget, ::testing::ValuesIn(zoo_on_simd_targets()),
                         [](const ::testing::TestParamInfo<std::tuple<ZooCase, std::string>>& info) {
                           std::string target = std::get<1>(info.param);
                           for (char& ch : target)
                             if (ch == '-') ch = '_';
                           return std::string(std::get<0>(info.param).name) + "_" + target;
                         });

// The CUDA backend's kernels on the small models, run on the CPU through the
// cuda-host layer: MobileNet v2 at 32x32, LeNet, the transformer layer.
const ZooCase kCudaHostZoo[] = {ZooCase{"mobilenet_v2", [] { return zoo::mobilenet_v2(); }, {1, 3, 32, 32}},
                                ZooCase{"transformer_encoder", [] { return zoo::transformer_encoder(); }, {1, 32, 256}},
                                ZooCase{"lenet", [] { return zoo::lenet(); }, {1, 1, 28, 28}}};

class ZooOnCudaHost : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooOnCudaHost, GeneratedCudaMatchesTheReference) {
  const ZooCase& c = GetParam();
  const Initialized i = initialized(c);
  const Graph graph = i.net->trace({c.input}, c.name, true);
  const VerifyReport report = verify_generated(graph, c, i.x, "cuda-host");
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_TRUE(report.ok) << c.name << " on cuda-host: max relative error " << report.checks[0].max_rel_error;
}

INSTANTIATE_TEST_SUITE_P(Architectures, ZooOnCudaHost, ::testing::ValuesIn(kCudaHostZoo),
                         [](const ::testing::TestParamInfo<ZooCase>& info) { return std::string(info.param.name); });

// Every zoo model's CUDA compiles with nvcc for the GPUs the target names
// (sm_80 and sm_90), warning-free; ptxas's registers and spills go to the
// log (tests/nvcc_compile.h: how much spilling fails). Compile only: no GPU is needed.
class ZooNvcc : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooNvcc, GeneratedCudaCompiles) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on the PATH";
  const ZooCase& c = GetParam();
  const Initialized i = initialized(c);
  const Graph graph = i.net->trace({c.input}, c.name, true);
  const testing::NvccResult r = testing::nvcc_compile(graph, c.name);
  std::printf("%s", r.ptxas_summary.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LE(r.most_spilled, testing::kMostSpillBytes) << c.name << " spills registers:\n" << r.output;
}

// The zoo's distinct kernel mixes: plain and pre-activation residual blocks,
// inverted residuals with depthwise layers, concatenation (SqueezeNet's
// fire modules), attention, and small dense layers. MobileNet v1, VGG,
// DenseNet and Inception repeat those kernels at other sizes; every op's
// CUDA kernels compile in CudaBackend.EveryOpExampleCompilesWithNvcc.
std::vector<ZooCase> zoo_for_nvcc() {
  std::vector<ZooCase> cases;
  for (const ZooCase& c : kZoo)
    for (const char* name : {"resnet18_v1", "resnet18_v2", "mobilenet_v2", "squeezenet1_1", "transformer_encoder", "lenet"})
      if (c.name == std::string(name)) cases.push_back(c);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Architectures, ZooNvcc, ::testing::ValuesIn(zoo_for_nvcc()),
                         [](const ::testing::TestParamInfo<ZooCase>& info) { return std::string(info.param.name); });

// A run-time batch of 1 to 32 items (docs/generated-code.md#a-run-time-batch):
// the traced graph of one item, generated for this machine's target and for
// cuda-host, matches the reference at 1, 16 and 32 items, each item different
// (MobileNet v2 on cuda-host at 1, 4 and 8: emulated, its 32 items take a minute).
struct BatchCase {
  ZooCase model;
  std::string target;
  int64_t max_batch;
};
inline void PrintTo(const BatchCase& c, std::ostream* os) { *os << c.model.name << " on " << c.target; }

class ZooRunTimeBatch : public ::testing::TestWithParam<BatchCase> {};

TEST_P(ZooRunTimeBatch, GeneratedCodeMatchesTheReferenceAtSeveralBatches) {
  const BatchCase& c = GetParam();
  const Initialized i = initialized(c.model);
  Graph graph = i.net->trace({c.model.input}, c.model.name, true);
  graph.batch = BatchRange{1, c.max_batch, {graph.inputs[0]}};
  const VerifyReport report = verify_generated(graph, c.model, i.x, c.target);
  ASSERT_EQ(report.checks.size(), 3u);
  for (const OutputCheck& check : report.checks)
    EXPECT_TRUE(check.ok) << c.model.name << " on " << c.target << " at " << check.batch
                          << " items: max relative error " << check.max_rel_error;
}

std::vector<BatchCase> zoo_with_a_batch() {
  const ZooCase resnet{"resnet18_v1", [] { return zoo::resnet18_v1(); }, {1, 3, 32, 32}};
  const ZooCase mobilenet{"mobilenet_v2", [] { return zoo::mobilenet_v2(); }, {1, 3, 32, 32}};
  const ZooCase transformer{"transformer_encoder", [] { return zoo::transformer_encoder(); }, {1, 32, 256}};
  const std::string host = host_target().name;
  return {{resnet, host, 32},
          {mobilenet, host, 32},
          {transformer, host, 32},
          {mobilenet, "cuda-host", 8},
          {transformer, "cuda-host", 32}};
}

INSTANTIATE_TEST_SUITE_P(Architectures, ZooRunTimeBatch, ::testing::ValuesIn(zoo_with_a_batch()),
                         [](const ::testing::TestParamInfo<BatchCase>& info) {
                           std::string target = info.param.target;
                           for (char& ch : target)
                             if (ch == '-') ch = '_';
                           return std::string(info.param.model.name) + "_" + target;
                         });

// The batch build's host code (a loop over the items around a kernel's
// launches, run() and capture() taking the batch) compiles with nvcc.
TEST(ZooRunTimeBatchNvcc, TheTransformerLayerCompiles) {
  if (!on_path("nvcc")) GTEST_SKIP() << "nvcc is not on the PATH";
  const ZooCase c{"transformer_encoder", [] { return zoo::transformer_encoder(); }, {1, 32, 256}};
  const Initialized i = initialized(c);
  Graph graph = i.net->trace({c.input}, c.name, true);
  graph.batch = BatchRange{1, 32, {graph.inputs[0]}};
  const testing::NvccResult r = testing::nvcc_compile(graph, c.name);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace hybgen
