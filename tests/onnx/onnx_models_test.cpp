// hybgen against PyTorch itself: models exported by torch.onnx.export
// (tests/data/onnx, recorded by scripts/onnx_models_reference.py), imported,
// generated, compiled and run, and compared with PyTorch's outputs within 1e-4.
// No PyTorch is needed to run this.
//
// ResNet-18 and MobileNet v2 keep their weights as ONNX external data, which
// is not committed: every value is made again here by the script's seeded
// generator (made_up below) into a scratch copy of the model's folder, at the
// offset and length each initializer of the .onnx names, before the import.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/onnx/onnx_model.h"
#include "ir/error.h"
#include "onnx_builder.h"
#include "run_command.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/onnx/";

// ---------------------------------------------------------------- the generator
// scripts/onnx_models_reference.py defines it: value i of the tensor NAME is
// lo + (hi - lo) * u_i in double, rounded to float, where u_i holds the top 24
// bits of splitmix64 output number i + 1 from the state fnv1a64(NAME) + SEED * G.

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

uint64_t fnv1a64(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<float> made_up(const std::string& name, const std::vector<int64_t>& dims, uint64_t seed = 1) {
  double lo = 0.5, hi = 1.5;  // running variances and norm scales
  if (ends_with(name, "running_var")) {
  } else if (ends_with(name, "bias") || ends_with(name, "running_mean")) {
    lo = -0.1, hi = 0.1;
  } else if (dims.size() > 1) {
    int64_t fan_in = 1;
    for (std::size_t d = 1; d < dims.size(); ++d) fan_in *= dims[d];
    hi = std::sqrt(3.0 / static_cast<double>(fan_in > 0 ? fan_in : 1)), lo = -hi;
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const uint64_t key = fnv1a64(name) + seed * kGolden;
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const uint64_t z = mix64(key + (static_cast<uint64_t>(i) + 1) * kGolden);
    const double u = static_cast<double>(z >> 40) / 16777216.0;
    values[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  return values;
}

TEST(OnnxModelsGenerator, MakesTheScriptsNumbers) {
  // Values numpy computed with scripts/onnx_models_reference.py's made_up().
  const std::vector<float> conv = made_up("conv1.weight", {64, 3, 7, 7});
  EXPECT_EQ(conv[0], 0x1.1ee8c4p-4f);
  EXPECT_EQ(conv[1], -0x1.1728b2p-3f);
  EXPECT_EQ(conv.back(), 0x1.bec492p-9f);
  const std::vector<float> var = made_up("bn1.running_var", {64});
  EXPECT_EQ(var[0], 0x1.4968acp+0f);
  EXPECT_EQ(var.back(), 0x1.dda78cp-1f);
  const std::vector<float> bias = made_up("fc.bias", {1000});
  EXPECT_EQ(bias[2], -0x1.533434p-5f);
  EXPECT_EQ(bias.back(), 0x1.713d2cp-4f);
  EXPECT_EQ(made_up("features.0.1.weight", {32})[0], 0x1.42f73ap+0f);
}

// ---------------------------------------------------------------- staging a model

// A scratch folder, removed when the test ends.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() / ("hybgen-onnx-models-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Copies tests/data/onnx/NAME.onnx into `dir` and writes the external data
// files it names beside the copy, from the generator. Returns the copy's path.
std::string stage_model(const std::string& name, const fs::path& dir) {
  const std::string source = kData + name + ".onnx";
  const std::string bytes = read_file(source);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) ADD_FAILURE() << source << ": not a ModelProto";
  std::map<std::string, std::string> files;  // location -> contents
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::map<std::string, std::string> info;
    for (const auto& entry : t.external_data()) info[entry.key()] = entry.value();
    EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT) << t.name();
    EXPECT_EQ(info["location"].find('/'), std::string::npos) << t.name();
    const std::vector<float> values = made_up(t.name(), {t.dims().begin(), t.dims().end()});
    const std::size_t offset = std::stoull(info["offset"]), length = std::stoull(info["length"]);
    EXPECT_EQ(length, values.size() * sizeof(float)) << t.name();
    std::string& file = files[info["location"]];
    if (file.size() < offset + length) file.resize(offset + length);
    std::memcpy(&file[offset], values.data(), length);  // little-endian, as ONNX stores it
  }
  for (const auto& [location, contents] : files) {
    std::ofstream out(dir / location, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    EXPECT_TRUE(out) << (dir / location);
  }
  const fs::path copy = dir / (name + ".onnx");
  std::ofstream(copy, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return copy.string();
}

// ---------------------------------------------------------------- the models

struct Exported {
  const char* name;
  Shape batch_shape;  // for --shape, where the model's batch is symbolic; empty otherwise
  bool external;      // external weights: generate with external_weights (as the zoo test)
};

inline void PrintTo(const Exported& m, std::ostream* os) { *os << m.name; }

const Exported kLeNet{"lenet5", {2, 1, 28, 28}, false};
const Exported kTransformer{"transformer_encoder", {}, false};
const Exported kTransformer13{"transformer_encoder_op13", {}, false};
const Exported kResNet18{"resnet18", {}, true};
const Exported kMobileNetV2{"mobilenet_v2", {}, true};

void check_exported(const Exported& m, const std::string& target) {
  ScratchDir dir(std::string(m.name) + "-" + target);
  const std::string path = stage_model(m.name, dir.path);
  OnnxImportOptions options;
  if (!m.batch_shape.empty()) options.input_shapes["input"] = m.batch_shape;
  options.note = [](const std::string&) {};
  const Graph graph = import_onnx(path, options);
  ASSERT_EQ(graph.inputs.size(), 1u);
  ASSERT_EQ(graph.outputs.size(), 1u);

  VerifyOptions verify;
  verify.inputs[graph.inputs[0]] = read_npy(kData + m.name + "-input.npy");
  verify.expected[graph.outputs[0]] = read_npy(kData + m.name + "-output.npy");
  verify.tolerance = 1e-4;
  verify.compile.target = find_target(target);
  verify.external_weights = m.external;  // compiling ResNet-18's weight arrays would take most of the time
  const VerifyReport report = verify_model(graph, verify);
  ASSERT_EQ(report.checks.size(), 2u);
  for (const OutputCheck& check : report.checks)
    EXPECT_TRUE(check.ok) << m.name << " on " << target << ": output " << check.name << " against "
                          << check.against << ": relative error " << check.max_rel_error;
  EXPECT_EQ(report.checks.back().against, "expected");
}

class OnnxExported : public ::testing::TestWithParam<Exported> {};

TEST_P(OnnxExported, GeneratedCodeMatchesPyTorchsOutput) { check_exported(GetParam(), "generic"); }

INSTANTIATE_TEST_SUITE_P(PyTorch, OnnxExported,
                         ::testing::Values(kLeNet, kTransformer, kTransformer13, kResNet18, kMobileNetV2),
                         [](const ::testing::TestParamInfo<Exported>& info) { return std::string(info.param.name); });

// LeNet-5 again for this machine's best target, whose kernels differ (row
// kernels), at batch 2. ResNet-18 and MobileNet v2 are not repeated here:
// their imports generate the kernel calls (kernels, template arguments,
// geometry, epilogues) of the zoo's resnet18_v1 and mobilenet_v2 at 64x64,
// which Zoo.EagerHybridizedAndGeneratedAgree compiles for this machine's
// target and checks, and they are checked against PyTorch above.
class OnnxExportedOnThisMachine : public ::testing::TestWithParam<Exported> {};

TEST_P(OnnxExportedOnThisMachine, GeneratedCodeMatchesPyTorchsOutput) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine's best target is generic, checked above";
  check_exported(GetParam(), host_target().name);
}

INSTANTIATE_TEST_SUITE_P(PyTorch, OnnxExportedOnThisMachine, ::testing::Values(kLeNet),
                         [](const ::testing::TestParamInfo<Exported>& info) { return std::string(info.param.name); });

// LeNet's batch is the symbolic dim "batch": without --shape the import says
// which input and dim are left open.
TEST(OnnxExportedErrors, SymbolicBatchWithoutShapeIsNamed) {
  OnnxImportOptions options;
  options.note = [](const std::string&) {};
  try {
    import_onnx(kData + "lenet5.onnx", options);
    FAIL() << "imported a model whose batch dim is unknown";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lenet5.onnx"), std::string::npos) << what;
    EXPECT_NE(what.find("input"), std::string::npos) << what;
    EXPECT_NE(what.find("batch"), std::string::npos) << what;
  }
}

// The command line a user types: --shape fills the symbolic batch, and
// without it the error names the input, the dim and the flag.
TEST(OnnxExportedCli, ShapeFlagFillsTheSymbolicBatch) {
  using testing::quoted;
  const std::string inspect = quoted(HYBGEN_BINARY) + " inspect " + quoted(kData + "lenet5.onnx");
  const auto ok = testing::run_command(inspect + " --shape input=3,1,28,28");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("(3, 10)"), std::string::npos) << ok.output;
  const auto open = testing::run_command(inspect);
  EXPECT_NE(open.exit_code, 0) << open.output;
  for (const char* part : {"lenet5.onnx", "'input'", "batch", "--shape"})
    EXPECT_NE(open.output.find(part), std::string::npos) << part << " missing from: " << open.output;
}

// A run-time batch of LeNet's symbolic one (--shape input=1..8,...): its
// flatten, x.view(x.size(0), -1), reaches hybgen as a Reshape to a target
// folded at one item, (1, 400), which becomes (-1, 400); the model then
// verifies at 1, 4 and 8 items. A Reshape that moves the batch elsewhere is
// named.
TEST(OnnxExportedBatch, ARunTimeBatchFollowsTheFoldedFlatten) {
  OnnxImportOptions options;
  options.note = [](const std::string&) {};
  options.input_shapes["input"] = {1, 1, 28, 28};
  Graph g = import_onnx_with_batch(kData + "lenet5.onnx", options, {"input"});
  g.batch = BatchRange{1, 8, {"input"}};
  bool inferred = false;
  for (const Node& n : g.nodes)
    if (n.op == "Reshape") inferred = inferred || n.attrs.get_ints("shape") == std::vector<int64_t>{-1, 400};
  EXPECT_TRUE(inferred);
  VerifyOptions verify;
  const VerifyReport report = verify_model(g, verify);
  ASSERT_EQ(report.checks.size(), 3u);
  EXPECT_TRUE(report.ok) << report.checks[2].max_rel_error;

  using testing::quoted;
  const auto r = testing::run_command(quoted(HYBGEN_BINARY) + " inspect " + quoted(kData + "lenet5.onnx") +
                                      " --shape input=1..8,1,28,28");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("run-time batch 1..8 (input)"), std::string::npos) << r.output;
}

// Values folded from the batch that no attribute can follow are named: a
// constant the shape of the input (ConstantOfShape(Shape(x))), and a Reshape
// target whose batch entry does not double.
TEST(OnnxExportedBatch, ValuesComputedFromTheBatchAreNamed) {
  TempDir dir("onnx-batch");
  OnnxImportOptions options;
  options.note = [](const std::string&) {};
  options.input_shapes["x"] = {1, 6};
  {
    testing_onnx::OnnxBuilder b(13);
    b.input("x", {-1, 6});
    b.node("Shape", {"x"}, {"s"});
    b.node("ConstantOfShape", {"s"}, {"z"});
    b.node("Add", {"x", "z"}, {"y"});
    b.output("y");
    const std::string path = dir.path() + "/zeros.onnx";
    write_file_atomic(path, b.model.SerializeAsString());
    EXPECT_ERROR(import_onnx_with_batch(path, options, {"x"}), "is computed from the batch");
  }
  {
    // Reshape (N + 1, 6) to (2 (N + 1), 3): the first entry is 4 at one item and 6 at two.
    testing_onnx::OnnxBuilder b(13);
    b.input("x", {-1, 6});
    b.node("Shape", {"x"}, {"s"});
    b.initializer_i64("one", {1}, {1});
    b.node("Add", {"s", "one"}, {"grown"});  // (N + 1, 7)
    b.initializer_i64("first", {1}, {0});
    b.node("Gather", {"grown", "first"}, {"rows"});
    b.initializer_i64("two", {1}, {2});
    b.node("Mul", {"rows", "two"}, {"doubled"});
    b.initializer_i64("three", {1}, {3});
    b.node("Concat", {"doubled", "three"}, {"target"}).add_attribute()->CopyFrom([] {
      onnx::AttributeProto a;
      a.set_name("axis");
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(0);
      return a;
    }());
    b.node("Pad", {"x", "pads"}, {"padded"});
    b.initializer_i64("pads", {4}, {0, 0, 1, 0});
    b.node("Reshape", {"padded", "target"}, {"y"});
    b.output("y");
    const std::string path = dir.path() + "/grown.onnx";
    write_file_atomic(path, b.model.SerializeAsString());
    EXPECT_ERROR(import_onnx_with_batch(path, options, {"x"}), "only one entry may grow with the batch");
  }
}

// An exported model with ops hybgen does not know (here two of LeNet's nodes
// renamed to a made-up op, one to an op of another domain): one error lists
// every one of them with its node, before anything is converted.
TEST(OnnxExportedErrors, EveryUnsupportedOpInOneMessage) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(read_file(kData + "lenet5.onnx")));
  int renamed = 0;
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.name() == "/fc2/Gemm" || node.name() == "/conv2/Conv") node.set_op_type("FancyLayer"), ++renamed;
    if (node.name() == "/Relu_3") node.set_domain("com.example.custom"), ++renamed;
  }
  ASSERT_EQ(renamed, 3);
  auto* domain = model.add_opset_import();
  domain->set_domain("com.example.custom");
  domain->set_version(1);
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  OnnxImportOptions options;
  options.input_shapes["input"] = {1, 1, 28, 28};
  options.note = [](const std::string&) {};
  try {
    import_onnx_bytes(bytes, "lenet5-custom.onnx", "", options);
    FAIL() << "imported a model with unknown ops";
  } catch (const Error& e) {
    const std::string what = e.what();
    for (const char* part : {"lenet5-custom.onnx", "FancyLayer", "/fc2/Gemm", "/conv2/Conv", "com.example.custom",
                             "/Relu_3"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " missing from: " << what;
  }
}

// A conv net whose external data file is missing: an error naming the file
// and the tensor, not a crash (the committed files come without their data).
TEST(OnnxExportedErrors, MissingExternalDataIsNamed) {
  ScratchDir dir("missing-data");
  fs::copy_file(kData + "resnet18.onnx", dir.path / "resnet18.onnx");
  OnnxImportOptions options;
  options.note = [](const std::string&) {};
  try {
    import_onnx((dir.path / "resnet18.onnx").string(), options);
    FAIL() << "imported a model whose weights are missing";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("resnet18.onnx.data"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hybgen
