// hybgen against MXNet itself: the Gluon zoo graphs exported by MXNet 1.9.1,
// with the made-up weights both sides compute from seed 1, on a fixed input;
// MXNet's outputs were recorded by scripts/mxnet_zoo_reference.py into
// tests/data/mxnet_zoo. No MXNet is needed to run this.
#include <gtest/gtest.h>

#include <ostream>

#include "io/mxnet_symbol.h"
#include "io/npy.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

struct Recorded {
  const char* name;
  Shape input;
};

// gtest prints a parameter with this; test names then read "... # GetParam() = NAME".
inline void PrintTo(const Recorded& c, std::ostream* os) { *os << c.name; }

class MxnetReference : public ::testing::TestWithParam<Recorded> {};

TEST_P(MxnetReference, GeneratedCodeMatchesMxnetsOutput) {
  const Recorded& r = GetParam();
  const std::string prefix = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet_zoo/" + r.name;
  MxnetImportOptions options;
  options.input_shapes["data"] = r.input;
  options.random_weights_seed = 1;
  const Graph graph = import_mxnet(prefix + "-symbol.json", std::nullopt, options);
  ASSERT_EQ(graph.outputs.size(), 1u);

  NpyArray x{r.input, std::vector<float>(static_cast<std::size_t>(num_elements(r.input)))};
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  VerifyOptions verify;
  verify.inputs["data"] = x;
  verify.expected[graph.outputs[0]] = read_npy(prefix + "-output.npy");
  verify.tolerance = 1e-4;
  const VerifyReport report = verify_model(graph, verify);
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_EQ(report.checks[1].against, "expected");
  EXPECT_TRUE(report.ok) << r.name << ": relative error vs reference " << report.checks[0].max_rel_error
                         << ", vs MXNet " << report.checks[1].max_rel_error;
}

INSTANTIATE_TEST_SUITE_P(
    GluonZoo, MxnetReference,
    ::testing::Values(Recorded{"resnet18_v1", {1, 3, 64, 64}}, Recorded{"resnet18_v2", {1, 3, 64, 64}},
                      Recorded{"mobilenet_v1", {1, 3, 64, 64}}, Recorded{"mobilenet_v2", {1, 3, 64, 64}},
                      Recorded{"squeezenet1_1", {1, 3, 224, 224}}, Recorded{"densenet121", {1, 3, 224, 224}},
                      Recorded{"inception_v3", {1, 3, 299, 299}}, Recorded{"vgg11_bn", {1, 3, 32, 32}}),
    [](const ::testing::TestParamInfo<Recorded>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace hybgen
