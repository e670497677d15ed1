// The generic op test (STYLE.md #8): every example of every registered op,
// generated for each backend in ONE graph (each example an independent subgraph, so the
// whole registry costs one compiler run), compiled with the strict flags of
// the generated-code contract, run, and compared with the op's reference
// kernel through the interpreter. A new op with examples is covered without
// writing a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "all_ops_graph.h"
#include "ops/op.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

// Relative error allowed unless an op is listed in kToleranceByOp.
constexpr double kTolerance = 1e-5;
// Ops that need more, with why. Empty today: every kernel matches its
// reference to float rounding on the examples' sizes.
const std::map<std::string, double> kToleranceByOp = {};

double tolerance_of(const std::string& op) {
  auto it = kToleranceByOp.find(op);
  return it == kToleranceByOp.end() ? kTolerance : it->second;
}

struct ExampleOutput {
  std::string op;
  std::size_t example;
};

// Every example of every op generated for `target` and checked.
void check_every_op(const std::string& target) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.target = target;
  const testing::AllOpsGraph all = testing::all_ops_graph(1234);
  options.inputs = all.inputs;
  const VerifyReport report = verify_model(all.graph, options);

  // One check per output, each against the reference (no expected arrays).
  ASSERT_EQ(report.checks.size(), all.graph.outputs.size());
  std::set<std::string> checked_ops;
  for (const auto& check : report.checks) {
    ASSERT_EQ(all.origin.count(check.name), 1u) << "unexpected output " << check.name;
    const testing::ExampleOutput& from = all.origin.at(check.name);
    EXPECT_EQ(check.against, "reference");
    EXPECT_LE(check.max_rel_error, tolerance_of(from.op))
        << from.op << " example " << from.example << " (output " << check.name << "): max abs error "
        << check.max_abs_error;
    checked_ops.insert(from.op);
  }
  for (const OpDef* op : all_ops())
    if (testing::op_selected(op->name))
      EXPECT_TRUE(checked_ops.count(op->name)) << op->name << " contributed no output (does it have examples?)";
}

TEST(RegistryOps, EveryOpMatchesItsReferenceAsGeneratedCpp) { check_every_op("generic"); }

// The same for this machine's best target, where ops choose other kernels
// and weight layouts (x86-64-v4: the pixel-major pointwise-depthwise
// kernel, the row-by-row convolution).
TEST(RegistryOps, EveryOpMatchesItsReferenceOnThisMachinesTarget) {
  const std::string target = host_target().name;
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine's best target is the portable one, checked above";
  check_every_op(target);
}

// The CUDA backend's kernels, the same .cu that nvcc builds, run on the CPU
// through the cuda-host layer (templates/cuda_host/cuda_runtime.h).
TEST(RegistryOps, EveryOpMatchesItsReferenceOnCudaHost) { check_every_op("cuda-host"); }

}  // namespace
}  // namespace hybgen
