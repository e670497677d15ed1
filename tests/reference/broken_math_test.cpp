// The reference is independent of the generated code's math: this binary
// links every room against templates whose hg_exp (templates/kernels/
// math.inc) has a wrong polynomial coefficient (tests/CMakeLists.txt), and
// verify must fail exactly the outputs computed through it. The reference
// kernels use the standard library, so they cannot share the error.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "emit/templates.h"
#include "ir/graph.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

TEST(IndependentReference, BrokenExpApproximationFailsVerify) {
  // The patch is in place: without it this test would prove nothing.
  ASSERT_NE(template_text("kernels/math").find(HYBGEN_BROKEN_MATH_TEXT), std::string::npos);

  Graph g;
  g.name = "broken_math";
  g.add_input("x", {{4, 33}});
  Attrs sigmoid;
  sigmoid.set("act_type", std::string("sigmoid"));
  Attrs relu;
  relu.set("act_type", std::string("relu"));
  g.nodes.push_back({"e", "exp", {}, {"x"}, {"exp_out"}});
  g.nodes.push_back({"sm", "softmax", {}, {"x"}, {"softmax_out"}});
  g.nodes.push_back({"sig", "Activation", sigmoid, {"x"}, {"sigmoid_out"}});
  g.nodes.push_back({"r", "Activation", relu, {"x"}, {"relu_out"}});
  g.outputs = {"exp_out", "softmax_out", "sigmoid_out", "relu_out"};

  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.bisect = BisectMode::kOff;
  const VerifyReport report = verify_model(g, options);  // generic target, tolerance 1e-5
  EXPECT_FALSE(report.ok);
  std::map<std::string, bool> ok;
  for (const auto& check : report.checks) ok[check.name] = check.ok;
  EXPECT_FALSE(ok.at("exp_out"));
  EXPECT_FALSE(ok.at("softmax_out"));
  EXPECT_FALSE(ok.at("sigmoid_out"));
  EXPECT_TRUE(ok.at("relu_out")) << "an output that does not use math.inc must still match";
}

}  // namespace
}  // namespace hybgen
