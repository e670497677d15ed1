// hybgen's RNN against MXNet itself: small Gluon recurrent networks exported
// by MXNet 1.9.1 with their parameters, and MXNet's outputs, recorded by
// tests/data/mxnet_rnn/make.py. Imported, run on the interpreter (the op's
// reference kernel, which tests/codegen checks every generated kernel
// against) and compared. No MXNet is needed to run this.
#include <gtest/gtest.h>

#include <cmath>

#include "io/mxnet_symbol.h"
#include "io/npy.h"
#include "runtime-lite/hybgen.h"

namespace hybgen {
namespace {

struct Recorded {
  const char* name;
  Shape state;  // an initial state the export takes as an input (zeros); empty: none
};

inline void PrintTo(const Recorded& r, std::ostream* os) { *os << r.name; }

class MxnetRnnReference : public ::testing::TestWithParam<Recorded> {};

TEST_P(MxnetRnnReference, MatchesMxnetsOutput) {
  const Recorded& r = GetParam();
  const std::string prefix = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet_rnn/" + r.name;
  const NpyArray x = read_npy(prefix + "-x.npy"), y = read_npy(prefix + "-y.npy");
  const std::string data = r.state.empty() ? "data" : "data0";
  MxnetImportOptions options;
  options.input_shapes[data] = x.shape;
  if (!r.state.empty()) options.input_shapes["data1"] = r.state;
  const Graph graph = import_mxnet(prefix + "-symbol.json", prefix + "-0000.params", options);
  ASSERT_EQ(graph.outputs.size(), 1u);
  std::map<std::string, Tensor> inputs{{data, Tensor::from_vector(x.shape, x.data)}};
  if (!r.state.empty()) inputs["data1"] = Tensor(r.state);
  Interpreter interpreter(graph);
  const std::vector<Tensor> out = interpreter.run(inputs);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), y.shape);
  double scale = 0, err = 0;
  for (std::size_t i = 0; i < y.data.size(); ++i) {
    scale = std::fmax(scale, std::fabs(y.data[i]));
    err = std::fmax(err, std::fabs(out[0].data()[i] - y.data[i]));
  }
  EXPECT_LE(err, 1e-5 * scale) << r.name;
}

INSTANTIATE_TEST_SUITE_P(Gluon, MxnetRnnReference,
                         ::testing::Values(Recorded{"lstm_ntc_classifier", {}}, Recorded{"gru_bidirectional", {4, 2, 6}},
                                           Recorded{"rnn_relu_classifier", {}}),
                         [](const ::testing::TestParamInfo<Recorded>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace hybgen
