// hybgen run: the generated code of a float and an int8 model (the firmware
// example's MNIST CNN, quantized here) on a batch of several chunks, against
// the reference interpreter chunk by chunk; and bad arrays refused.
#include "run_command.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/file_util.h"
#include "io/model_json.h"
#include "io/npy.h"
#include "runtime-lite/interpreter.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

using testing::kHybgen;
using testing::quoted;
using testing::run_command;

const std::string kModel = std::string(HYBGEN_SOURCE_DIR) + "/examples/firmware/model/mnist-symbol.json";
constexpr int64_t kPixels = 28 * 28;

// The first `n` bundled digits (tests/data/mnist-digits/README.md), grey / 255.
NpyArray digits(int64_t n) {
  const auto bytes = read_file_bytes(std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mnist-digits/digits.u8");
  NpyArray a{{n, 1, 28, 28}, {}};
  for (int64_t d = 0; d < n; ++d)
    for (int64_t k = 0; k < kPixels; ++k)
      a.data.push_back(static_cast<float>(bytes[static_cast<std::size_t>(d * (kPixels + 1) + k)]) / 255.0f);
  return a;
}

class RunCommand : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_.path() + "/" + name; }
  // Runs `model` (batch 4) on 12 digits and compares each chunk with the interpreter.
  void expect_matches_reference(const std::string& model) {
    write_npy(path("x.npy"), digits(12));
    const Graph graph = load_model(model);
    const std::string out = graph.outputs.at(0);
    const auto r = run_command(kHybgen + " run " + quoted(model) + " --input data=" + quoted(path("x.npy")) +
                               " --output " + out + "=" + quoted(path("y.npy")));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const NpyArray y = read_npy(path("y.npy"));
    ASSERT_EQ(y.shape, (Shape{12, 10}));
    Interpreter interp(graph);
    const NpyArray x = read_npy(path("x.npy"));
    for (int64_t chunk = 0; chunk < 3; ++chunk) {
      const auto begin = x.data.begin() + chunk * 4 * kPixels;
      const Tensor ref = interp.run(
          {{"data", Tensor::from_vector({4, 1, 28, 28}, std::vector<float>(begin, begin + 4 * kPixels))}})[0];
      const std::vector<float> got(y.data.begin() + chunk * 40, y.data.begin() + (chunk + 1) * 40);
      EXPECT_LE(compare_outputs(got, ref.to_vector()).second, 1e-5) << "chunk " << chunk;
    }
  }
  TempDir tmp_{"hybgen-run-test"};
};

TEST_F(RunCommand, FloatAndInt8ModelsMatchTheReferenceOverSeveralChunks) {
  const auto f =
      run_command(kHybgen + " import " + quoted(kModel) + " --shape data=4,1,28,28 -o " + quoted(path("float")));
  ASSERT_EQ(f.exit_code, 0) << f.output;
  expect_matches_reference(path("float.json"));

  write_npy(path("calibration.npy"), digits(40));
  const auto q = run_command(kHybgen + " quantize " + quoted(path("float.json")) + " --calibration " +
                             quoted(path("calibration.npy")) + " -o " + quoted(path("int8")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  expect_matches_reference(path("int8.json"));
}

// A bad array: a clear message, exit 1, and no output written.
TEST_F(RunCommand, RefusesBadArraysAndWritesNothing) {
  write_npy(path("good.npy"), digits(8));
  write_npy(path("six.npy"), digits(6));
  write_npy(path("wrong_shape.npy"), {{8, 28, 28}, std::vector<float>(8 * kPixels, 0.5f)});
  // An int32 array: .npy of another dtype.
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (4, 1, 28, 28), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  npy += static_cast<char>(header.size());
  npy += '\0';
  npy += header + std::string(4 * kPixels * 4, '\0');
  write_file_atomic(path("int32.npy"), npy);

  const std::string base = kHybgen + " run " + quoted(kModel) + " --shape data=4,1,28,28";
  const std::string out = " --output hybridsequential9_dense1_tanh_fwd=" + quoted(path("y.npy"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --input data=" + quoted(path("missing.npy")) + out, "missing.npy"},
      {" --input data=" + quoted(path("wrong_shape.npy")) + out, "expected (N, 1, 28, 28)"},
      {" --input data=" + quoted(path("int32.npy")) + out, "dtype '<i4' is not supported"},
      {" --input label=" + quoted(path("good.npy")) + out, "not an input"},
      {" --input data=" + quoted(path("good.npy")) + " --output nosuch=" + quoted(path("y.npy")), "not an output"},
      {" --input data=" + quoted(path("six.npy")) + out, "6 samples, not a multiple of the model's batch 4"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_command(base + args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("y.npy"))) << args;
  }
}

}  // namespace
}  // namespace hybgen
