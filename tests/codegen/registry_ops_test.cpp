// The generic op test: every example of every registered op, generated as C++,
// compiled once with the strict flags of the generated-code contract, run,
// and compared with the op's reference kernel through the interpreter.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "emit/cpp_emitter.h"
#include "ops/op.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

struct ExampleOutput {
  std::string op;
  std::size_t example;
};

TEST(RegistryOps, EveryOpMatchesItsReferenceAsGeneratedCpp) {
  Graph g;
  g.name = "all_ops";
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  std::map<std::string, ExampleOutput> origin;
  std::set<std::string> covered;
  std::mt19937 rng(1234);
  for (const OpDef* op : all_ops()) {
    for (std::size_t e = 0; e < op->examples.size(); ++e) {
      const OpExample& ex = op->examples[e];
      const std::string base = c_identifier(op->name) + "_" + std::to_string(e);
      Node node{base, op->name, ex.attrs, {}, {}};
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) {
        const std::string in = base + "_in" + std::to_string(i);
        g.add_input(in, {ex.inputs[i]});
        node.inputs.push_back(in);
        const bool positive = std::count(op->positive_inputs.begin(), op->positive_inputs.end(), static_cast<int>(i));
        std::uniform_real_distribution<float> dist(positive ? 0.1f : -2.0f, 2.0f);
        NpyArray values{ex.inputs[i], std::vector<float>(static_cast<std::size_t>(num_elements(ex.inputs[i])))};
        for (auto& v : values.data) v = dist(rng);
        options.inputs[in] = values;
      }
      const int outputs = output_count(*op, normalize_attrs(*op, ex.attrs));
      for (int o = 0; o < outputs; ++o) {
        const std::string out = base + (outputs == 1 ? "" : "_out" + std::to_string(o));
        node.outputs.push_back(out);
        g.outputs.push_back(out);
        origin[out] = {op->name, e};
      }
      g.nodes.push_back(node);
      covered.insert(op->name);
    }
  }
  const VerifyReport report = verify_model(g, options);
  EXPECT_GT(report.checks.size(), 0u);
  for (const auto& check : report.checks) {
    const ExampleOutput& from = origin.at(check.name);
    EXPECT_LE(check.max_rel_error, 1e-5) << from.op << " example " << from.example << ": max abs error "
                                         << check.max_abs_error;
  }
  for (const OpDef* op : all_ops()) EXPECT_TRUE(covered.count(op->name)) << op->name << " has no example";
}

}  // namespace
}  // namespace hybgen
