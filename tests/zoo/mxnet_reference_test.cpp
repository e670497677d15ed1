// hybgen against MXNet itself: graphs exported by MXNet 1.9.1, with the
// made-up weights both sides compute from seed 1, on fixed inputs. MXNet's
// outputs were recorded by scripts/mxnet_zoo_reference.py (the Gluon vision
// zoo, tests/data/mxnet_zoo) and scripts/mxnet_families_reference.py (the
// other kinds of models Gluon users write: upsampling, recurrent, 1-D,
// normalization layers, standalone ops; tests/data/mxnet_families). No MXNet
// is needed to run this.
#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <sstream>

#include "io/mxnet/mxnet_symbol.h"
#include "io/npy.h"
#include "targets/target.h"
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
  for (std::size_t i = 0; i < x.data.size(); ++i)  // in double, as numpy computes it
    x.data[i] = static_cast<float>(static_cast<double>((i * 37) % 101) / 50.0 - 1.0);
  VerifyOptions verify;
  verify.inputs["data"] = x;
  verify.expected[graph.outputs[0]] = read_npy(prefix + "-output.npy");
  verify.tolerance = 1e-4;
  verify.external_weights = true;  // compiling the zoo's weight arrays would take most of the time
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

// A model of tests/data/mxnet_families: its inputs come from NAME-inputs.txt,
// one line per input: NAME KIND D0xD1x..., where KIND `wave` is
// ((i * 37) % 101) / 50 - 1 and `tokens:V` is (i * 37) % V.
struct RecordedInput {
  std::string name;
  NpyArray array;
};

std::vector<RecordedInput> recorded_inputs(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file) << path;
  std::vector<RecordedInput> inputs;
  std::string name, kind, dims;
  while (file >> name >> kind >> dims) {
    Shape shape;
    std::stringstream parts(dims);
    for (std::string d; std::getline(parts, d, 'x');) shape.push_back(std::stoll(d));
    std::vector<float> data(static_cast<std::size_t>(num_elements(shape)));
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (kind == "wave") {
        data[i] = static_cast<float>(static_cast<double>((i * 37) % 101) / 50.0 - 1.0);  // as numpy does
      } else {
        EXPECT_EQ(kind.rfind("tokens:", 0), 0u) << path << ": input kind " << kind;
        data[i] = static_cast<float>((i * 37) % std::stoul(kind.substr(7)));
      }
    }
    inputs.push_back({name, NpyArray{shape, std::move(data)}});
  }
  return inputs;
}

void check_family(const std::string& name, const std::string& target) {
  const std::string prefix = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet_families/" + name;
  // Recurrent models come with their weights (see the script); the others'
  // are made up from the seed.
  const std::string params = prefix + "-0000.params";
  const bool has_params = static_cast<bool>(std::ifstream(params));
  MxnetImportOptions options;
  if (!has_params) options.random_weights_seed = 1;
  options.note = [](const std::string&) {};
  VerifyOptions verify;
  for (RecordedInput& input : recorded_inputs(prefix + "-inputs.txt")) {
    options.input_shapes[input.name] = input.array.shape;
    verify.inputs[input.name] = std::move(input.array);
  }
  const Graph graph =
      import_mxnet(prefix + "-symbol.json", has_params ? std::optional<std::string>(params) : std::nullopt, options);
  verify.expected[graph.outputs[0]] = read_npy(prefix + "-output.npy");
  verify.tolerance = 1e-4;
  verify.compile.target = find_target(target);
  const VerifyReport report = verify_model(graph, verify);
  ASSERT_GE(report.checks.size(), 2u);
  for (const OutputCheck& check : report.checks)
    EXPECT_TRUE(check.ok) << name << " on " << target << ": output " << check.name << " against " << check.against
                          << ": relative error " << check.max_rel_error;
  EXPECT_EQ(report.checks.back().against, "expected");
}

class MxnetFamily : public ::testing::TestWithParam<const char*> {};

TEST_P(MxnetFamily, GeneratedCodeMatchesMxnetsOutput) { check_family(GetParam(), "generic"); }

// The convolutional ones again for this machine's best target, whose kernels
// differ (row kernels, Winograd from 16 channels on AVX2, packed deconvolution).
class MxnetFamilyOnThisMachine : public ::testing::TestWithParam<const char*> {};

TEST_P(MxnetFamilyOnThisMachine, GeneratedCodeMatchesMxnetsOutput) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine's best target is generic, checked above";
  check_family(GetParam(), host_target().name);
}

INSTANTIATE_TEST_SUITE_P(GluonModels, MxnetFamilyOnThisMachine,
                         ::testing::Values("unet", "upsample_fcn", "audio_cnn1d", "lstm_classifier"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

INSTANTIATE_TEST_SUITE_P(GluonModels, MxnetFamily,
                         ::testing::Values("unet", "upsample_fcn", "lstm_classifier", "bigru",
                                           "relu_rnn_classifier", "audio_cnn1d", "norm_block",
                                           "elementwise_ops", "reduce_ops", "shape_ops",
                                           "two_input_embedding"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace hybgen
