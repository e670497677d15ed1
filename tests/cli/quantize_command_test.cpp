// hybgen quantize end to end: the firmware example's MNIST CNN, calibrated
// on bundled digits (tests/data/mnist-digits/README.md), verified as
// generated code, and its accuracy compared with the float model's; the
// same accuracy check on a CNN trained on scikit-learn's digits
// (tests/data/digits-cnn/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "io/model_json.h"
#include "io/npy.h"
#include "run_command.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {
namespace {

using testing::kHybgen;
using testing::quoted;
using testing::run_command;

const std::string kModel = std::string(HYBGEN_SOURCE_DIR) + "/examples/firmware/model/mnist-symbol.json";
constexpr int64_t kPixels = 28 * 28;

struct Digits {
  std::vector<float> pixels;  // grey / 255, as the model was trained
  std::vector<int> labels;
  int64_t count() const { return static_cast<int64_t>(labels.size()); }
  NpyArray slice(int64_t first, int64_t n) const {
    return {{n, 1, 28, 28},
            std::vector<float>(pixels.begin() + first * kPixels, pixels.begin() + (first + n) * kPixels)};
  }
};

// 784 grey levels then the label, per digit.
Digits bundled_digits() {
  const auto bytes = read_file_bytes(std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mnist-digits/digits.u8");
  Digits d;
  for (std::size_t i = 0; i + kPixels < bytes.size(); i += kPixels + 1) {
    for (int64_t k = 0; k < kPixels; ++k)
      d.pixels.push_back(static_cast<float>(bytes[i + static_cast<std::size_t>(k)]) / 255.0f);
    d.labels.push_back(bytes[i + kPixels]);
  }
  return d;
}

double accuracy(const Graph& graph, const Digits& digits) {
  Interpreter interp(graph);
  int correct = 0;
  for (int64_t i = 0; i < digits.count(); ++i) {
    const NpyArray x = digits.slice(i, 1);
    const Tensor y = interp.run({{graph.inputs[0], Tensor::from_vector({1, 1, 28, 28}, x.data)}})[0];
    const float* s = y.data();
    correct += static_cast<int>(std::max_element(s, s + y.size()) - s) == digits.labels[static_cast<std::size_t>(i)];
  }
  return 100.0 * correct / static_cast<double>(digits.count());
}

class QuantizeCommand : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_.path() + "/" + name; }
  TempDir tmp_{"hybgen-quantize-test"};
};

TEST_F(QuantizeCommand, MnistKeepsItsAccuracyAndVerifies) {
  const Digits digits = bundled_digits();
  ASSERT_EQ(digits.count(), 400);
  write_npy(path("calibration.npy"), digits.slice(0, 100));
  write_npy(path("digit.npy"), digits.slice(7, 1));

  const auto q = run_command(kHybgen + " quantize " + quoted(kModel) + " --shape data=1,1,28,28 --calibration " +
                             quoted(path("calibration.npy")) + " -o " + quoted(path("mnist_int8")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  EXPECT_NE(q.output.find("int8 ("), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("float ("), std::string::npos) << q.output;
  ASSERT_TRUE(std::filesystem::exists(path("mnist_int8.safetensors")));

  // The generated code computes what the reference does: the int8 layers
  // bit for bit, so only float rounding before a quantize may move a value
  // by one step.
  const auto v = run_command(kHybgen + " verify " + quoted(path("mnist_int8.json")) +
                             " --input data=" + quoted(path("digit.npy")));
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("verify: PASS"), std::string::npos) << v.output;

  const auto f =
      run_command(kHybgen + " import " + quoted(kModel) + " --shape data=1,1,28,28 -o " + quoted(path("mnist_float")));
  ASSERT_EQ(f.exit_code, 0) << f.output;
  const Graph float_model = load_model(path("mnist_float.json"));
  const Graph int8_model = load_model(path("mnist_int8.json"));
  bool has_int8_weight = false;
  for (const auto& [name, c] : int8_model.constants) has_int8_weight |= c.type.dtype == DType::kInt8;
  EXPECT_TRUE(has_int8_weight);
  const double a_float = accuracy(float_model, digits), a_int8 = accuracy(int8_model, digits);
  std::printf("accuracy on %lld digits: float %.2f%%, int8 %.2f%%\n", static_cast<long long>(digits.count()), a_float,
              a_int8);
  EXPECT_GT(a_float, 90.0);
  EXPECT_NEAR(a_int8, a_float, 0.5) << "float " << a_float << "%, int8 " << a_int8 << "%";
}

// The second trained model: a small CNN on scikit-learn's 8x8 digits
// (tests/data/digits-cnn/README.md), calibrated on training digits and
// measured on 300 held-out ones. One digit is 0.33 points: int8 may lose at
// most one.
TEST_F(QuantizeCommand, DigitsCnnKeepsItsAccuracy) {
  const std::string dir = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/digits-cnn/";
  const auto q = run_command(kHybgen + " quantize " + quoted(dir + "digits_cnn.json") + " --calibration " +
                             quoted(dir + "calibration.npy") + " -o " + quoted(path("digits_int8")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  std::printf("%s", q.output.c_str());  // the report: which nodes are int8, each one's SQNR
  EXPECT_NE(q.output.find("float (0):"), std::string::npos) << q.output;  // every node int8

  const NpyArray x = read_npy(dir + "test_x.npy"), labels = read_npy(dir + "test_y.npy");
  ASSERT_EQ(x.shape, (Shape{300, 1, 8, 8}));
  ASSERT_EQ(labels.shape, (Shape{300}));
  auto accuracy_of = [&](const Graph& graph) {
    Interpreter interp(graph);
    int correct = 0;
    for (int64_t i = 0; i < 300; ++i) {
      const std::vector<float> digit(x.data.begin() + i * 64, x.data.begin() + (i + 1) * 64);
      const Tensor y = interp.run({{"data", Tensor::from_vector({1, 1, 8, 8}, digit)}})[0];
      const float* s = y.data();
      correct += static_cast<float>(std::max_element(s, s + y.size()) - s) == labels.data[static_cast<std::size_t>(i)];
    }
    return 100.0 * correct / 300.0;
  };
  const double a_float = accuracy_of(load_model(dir + "digits_cnn.json"));
  const double a_int8 = accuracy_of(load_model(path("digits_int8.json")));
  std::printf("accuracy on 300 held-out digits: float %.2f%%, int8 %.2f%%\n", a_float, a_int8);
  EXPECT_GT(a_float, 95.0);
  EXPECT_NEAR(a_int8, a_float, 0.5) << "float " << a_float << "%, int8 " << a_int8 << "%";
}

TEST_F(QuantizeCommand, EntropyAndKeepFloat) {
  const Digits digits = bundled_digits();
  write_npy(path("calibration.npy"), digits.slice(0, 100));
  const auto q = run_command(kHybgen + " quantize " + quoted(kModel) + " --shape data=1,1,28,28 --calibration " +
                             quoted(path("calibration.npy")) +
                             " --method entropy --keep-float hybridsequential9_dense1_fwd -o " + quoted(path("m")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  EXPECT_NE(q.output.find("'hybridsequential9_dense1_fwd': --keep-float"), std::string::npos) << q.output;
  const Graph m = load_model(path("m.json"));
  EXPECT_EQ(m.constants.at("hybridsequential9_dense1_weight").type.dtype, DType::kFloat32);
  EXPECT_EQ(m.constants.at("hybridsequential9_dense0_weight").type.dtype, DType::kInt8);
  EXPECT_GT(accuracy(m, digits), 98.0);
}

// Several files, run in chunks of the model's batch of 4.
TEST_F(QuantizeCommand, CalibratesInChunksOfTheModelsBatch) {
  const Digits digits = bundled_digits();
  write_npy(path("a.npy"), digits.slice(0, 8));
  write_npy(path("b.npy"), digits.slice(8, 4));
  write_npy(path("c.npy"), digits.slice(12, 6));
  const std::string base = kHybgen + " quantize " + quoted(kModel) + " --shape data=4,1,28,28 -o " + quoted(path("m"));
  const auto ok = run_command(base + " --calibration " + quoted(path("a.npy")) + " " + quoted(path("b.npy")));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("calibrated on 12 samples (3 runs)"), std::string::npos) << ok.output;
  EXPECT_EQ(load_model(path("m.json")).type("data").shape, (Shape{4, 1, 28, 28}));
  const auto bad = run_command(base + " --calibration " + quoted(path("c.npy")));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("not a multiple of the model's batch 4"), std::string::npos) << bad.output;
}

// Bad input: a clear message, a non-zero exit, and no file written.
TEST_F(QuantizeCommand, RefusesBadCalibrationAndWritesNothing) {
  const Digits digits = bundled_digits();
  write_npy(path("wrong_shape.npy"), {{2, 28, 28}, std::vector<float>(2 * kPixels, 0.5f)});
  NpyArray nan = digits.slice(0, 2);
  nan.data[5] = std::nanf("");
  write_npy(path("nan.npy"), nan);
  write_npy(path("good.npy"), digits.slice(0, 2));
  const std::string base =
      kHybgen + " quantize " + quoted(kModel) + " --shape data=1,1,28,28 -o " + quoted(path("out"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --calibration " + quoted(path("missing.npy")), "missing.npy"},
      {" --calibration " + quoted(path("wrong_shape.npy")), "expected (N, 1, 28, 28)"},
      {" --calibration " + quoted(path("nan.npy")), "NaN"},
      {" --calibration " + quoted(path("good.npy")) + " --method median", "unknown calibration method"},
      {" --calibration " + quoted(path("good.npy")) + " --keep-float nosuchnode", "nosuchnode"},
      {" --calibration " + quoted(path("good.npy")) + " --input label", "no input 'label'"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_command(base + args);
    EXPECT_NE(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("out.json"))) << args;
    EXPECT_FALSE(std::filesystem::exists(path("out.safetensors"))) << args;
  }
}

// The names an output line lists in quotes, after `prefix` up to the line's end.
std::vector<std::string> quoted_names_after(const std::string& output, const std::string& prefix) {
  std::vector<std::string> names;
  const std::size_t at = output.find(prefix);
  if (at == std::string::npos) return names;
  const std::string line = output.substr(at, output.find('\n', at) - at);
  for (std::size_t q = line.find('\''); q != std::string::npos; q = line.find('\'', line.find('\'', q + 1) + 1))
    names.push_back(line.substr(q + 1, line.find('\'', q + 1) - q - 1));
  return names;
}

// The SQNR table's rows: (dB, node), in the order printed.
std::vector<std::pair<double, std::string>> sqnr_rows(const std::string& text) {
  std::vector<std::pair<double, std::string>> rows;
  std::size_t at = text.find("SQNR of each int8 node");
  if (at == std::string::npos) return rows;
  at = text.find('\n', at) + 1;
  while (at < text.size() && text.compare(at, 2, "  ") == 0) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    const std::size_t q = line.find('\'');
    rows.emplace_back(std::stod(line.substr(0, q)), line.substr(q + 1, line.rfind('\'') - q - 1));
    at = end + 1;
  }
  return rows;
}

TEST_F(QuantizeCommand, ReportsTheSqnrOfEveryInt8NodeWorstFirst) {
  write_npy(path("calibration.npy"), bundled_digits().slice(0, 20));
  const auto q = run_command(kHybgen + " quantize " + quoted(kModel) + " --shape data=1,1,28,28 --calibration " +
                             quoted(path("calibration.npy")) + " --report " + quoted(path("sqnr.txt")) + " -o " +
                             quoted(path("m")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  std::vector<std::string> int8 = quoted_names_after(q.output, "int8 (");
  ASSERT_FALSE(int8.empty()) << q.output;
  const auto rows = sqnr_rows(q.output);
  std::vector<std::string> listed;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    listed.push_back(rows[i].second);
    EXPECT_GT(rows[i].first, 10.0) << rows[i].second;  // int8 keeps a usable signal
    if (i > 0) {
      EXPECT_LE(rows[i - 1].first, rows[i].first) << q.output;
    }
  }
  std::sort(int8.begin(), int8.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, int8) << q.output;
  EXPECT_EQ(sqnr_rows(read_file_text(path("sqnr.txt"))), rows);
}

// `inspect --float-model --calibration` measures what quantize measured: the
// same table for the model quantize wrote, printed, in --json and in the
// --report page.
TEST_F(QuantizeCommand, InspectShowsTheSqnrQuantizeMeasured) {
  const std::string dir = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/digits-cnn/";
  const std::string float_model = quoted(dir + "digits_cnn.json"), calibration = quoted(dir + "calibration.npy");
  const auto q =
      run_command(kHybgen + " quantize " + float_model + " --calibration " + calibration + " -o " + quoted(path("m")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  const auto rows = sqnr_rows(q.output);
  ASSERT_EQ(rows.size(), 7u) << q.output;

  const std::string inspect = kHybgen + " inspect " + quoted(path("m.json"));
  const std::string measure = " --float-model " + float_model + " --calibration " + calibration;
  const auto i = run_command(inspect + measure + " --report " + quoted(path("page.html")));
  ASSERT_EQ(i.exit_code, 0) << i.output;
  EXPECT_EQ(sqnr_rows(i.output), rows) << i.output;
  const std::string page = read_file_text(path("page.html"));
  const std::size_t section = page.find("Quantization: SQNR per int8 layer");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(page.find("on 100 samples of"), std::string::npos);
  std::size_t at = section;
  for (const auto& [db, node] : rows) {  // worst first, as printed
    char text[32] = "exact";             // how the page prints an infinite SQNR (a relu the compiled graph dropped)
    if (std::isfinite(db)) std::snprintf(text, sizeof text, "%.2f", db);
    at = page.find("<tr><td>" + node + "</td>", at);
    ASSERT_NE(at, std::string::npos) << node;
    EXPECT_NE(page.find(text, at), std::string::npos) << node;
  }
  const auto j = run_command(inspect + measure + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.output;
  const auto layers = nlohmann::json::parse(j.output)["sqnr"]["layers"];
  ASSERT_EQ(layers.size(), rows.size());
  EXPECT_EQ(layers[0]["node"], rows[0].second);

  // Either flag alone, a float model as the model: a clear error, no page written.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {inspect + " --float-model " + float_model, "--float-model needs --calibration"},
      {inspect + " --calibration " + calibration, "--calibration needs --float-model"},
      {kHybgen + " inspect " + float_model + measure, "has no int8 node that the float model"},
      {inspect + " --float-model " + float_model + " --calibration " + quoted(dir + "test_y.npy"), "test_y.npy: shape"},
  };
  for (const auto& [command, message] : cases) {
    const auto r = run_command(command + " --report " + quoted(path("bad.html")));
    EXPECT_NE(r.exit_code, 0) << command << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << command << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("bad.html"))) << command;
  }
}

// A threshold no int8 layer reaches keeps them all float; the result verifies.
TEST_F(QuantizeCommand, MinSqnrKeepsTheWorstLayersFloat) {
  write_npy(path("calibration.npy"), bundled_digits().slice(0, 20));
  const auto q = run_command(kHybgen + " quantize " + quoted(kModel) + " --shape data=1,1,28,28 --calibration " +
                             quoted(path("calibration.npy")) + " --min-sqnr 500 -o " + quoted(path("m")));
  ASSERT_EQ(q.exit_code, 0) << q.output;
  const std::vector<std::string> kept = quoted_names_after(q.output, "kept float by --min-sqnr 500 dB");
  EXPECT_FALSE(kept.empty()) << q.output;
  for (const auto& [db, node] : sqnr_rows(q.output)) EXPECT_GE(db, 500.0) << node;
  for (const std::string& node : kept)
    EXPECT_NE(q.output.find("'" + node + "': --min-sqnr"), std::string::npos) << node << "\n" << q.output;
  const Graph m = load_model(path("m.json"));
  EXPECT_EQ(m.constants.at("hybridsequential9_dense1_weight").type.dtype, DType::kFloat32);
  const auto v = run_command(kHybgen + " verify " + quoted(path("m.json")));
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("verify: PASS"), std::string::npos) << v.output;
}

}  // namespace
}  // namespace hybgen
