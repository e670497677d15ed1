// The generic op test (STYLE.md #8): every example of every registered op,
// generated as C++ in ONE graph (each example an independent subgraph, so the
// whole registry costs one compiler run), compiled with the strict flags of
// the generated-code contract, run, and compared with the op's reference
// kernel through the interpreter. A new op with examples is covered without
// writing a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "emit/cpp_emitter.h"
#include "ops/gemm_pack.h"
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

// Seeded inputs; an op's positive inputs (a variance) are drawn from (0.1, 2).
NpyArray random_input(const OpDef& op, std::size_t input, const Shape& shape, std::mt19937& rng) {
  const bool positive =
      std::count(op.positive_inputs.begin(), op.positive_inputs.end(), static_cast<int>(input)) != 0;
  std::uniform_real_distribution<float> dist(positive ? 0.1f : -2.0f, 2.0f);
  NpyArray values{shape, std::vector<float>(static_cast<std::size_t>(num_elements(shape)))};
  for (auto& v : values.data) v = dist(rng);
  return values;
}

// Every example of every op generated for `target` and checked.
void check_every_op(const std::string& target) {
  Graph g;
  g.name = "all_ops";
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.target = target;
  std::map<std::string, ExampleOutput> origin;  // output value -> the op and example it came from
  std::mt19937 rng(1234);
  for (const OpDef* op : all_ops()) {
    for (std::size_t e = 0; e < op->examples.size(); ++e) {
      const OpExample& ex = op->examples[e];
      const std::string base = c_identifier(op->name) + "_" + std::to_string(e);
      Node node{base, op->name, ex.attrs, {}, {}};
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) {
        const std::string in = base + "_in_" + std::to_string(i);
        NpyArray values = random_input(*op, i, ex.inputs[i], rng);
        // Weights are constants, as in a real model, so the kernels that
        // re-lay them out at generation time (packed GEMM panels) are covered.
        if (op->weight_shapes && i > 0) {
          g.add_constant(in, Constant::f32(ex.inputs[i], values.data));
        } else {
          g.add_input(in, {ex.inputs[i]});
          options.inputs[in] = std::move(values);
        }
        node.inputs.push_back(in);
      }
      const int outputs = output_count(*op, normalize_attrs(*op, ex.attrs));
      for (int o = 0; o < outputs; ++o) {
        const std::string out = base + (outputs == 1 ? "" : "_out" + std::to_string(o));
        node.outputs.push_back(out);
        g.outputs.push_back(out);
        origin[out] = {op->name, e};
      }
      g.nodes.push_back(node);
    }
  }
  const VerifyReport report = verify_model(g, options);

  // One check per output, each against the reference (no expected arrays).
  ASSERT_EQ(report.checks.size(), g.outputs.size());
  std::set<std::string> checked_ops;
  for (const auto& check : report.checks) {
    ASSERT_EQ(origin.count(check.name), 1u) << "unexpected output " << check.name;
    const ExampleOutput& from = origin.at(check.name);
    EXPECT_EQ(check.against, "reference");
    EXPECT_LE(check.max_rel_error, tolerance_of(from.op))
        << from.op << " example " << from.example << " (output " << check.name << "): max abs error "
        << check.max_abs_error;
    checked_ops.insert(from.op);
  }
  for (const OpDef* op : all_ops())
    EXPECT_TRUE(checked_ops.count(op->name)) << op->name << " contributed no output (does it have examples?)";
}

TEST(RegistryOps, EveryOpMatchesItsReferenceAsGeneratedCpp) { check_every_op("generic"); }

// The same for this machine's best target, where ops choose other kernels
// and weight layouts (x86-64-v4: the pixel-major pointwise-depthwise
// kernel, the row-by-row convolution).
TEST(RegistryOps, EveryOpMatchesItsReferenceOnThisMachinesTarget) {
  const std::string target = host_target();
  if (target == "generic") GTEST_SKIP() << "this machine's best target is the portable one, checked above";
  check_every_op(target);
}

}  // namespace
}  // namespace hybgen
