// PyTorch's exports whose shape arithmetic (Shape, Gather, Concat, Slice with
// step -1, ConstantOfShape, Cast ...) hybgen evaluates at import: F.pad,
// F.interpolate (nearest, bilinear), x.view(x.size(0), -1) and
// torch.flatten, each at opsets 11, 13 and 17 with a symbolic batch
// (tests/data/onnx/fold, recorded by scripts/onnx_fold_exports.py). Each is
// imported and generated, then compiled and run, and compared with PyTorch's
// output, unless it generates the very files of its model's opset-11 export
// (most do: the imports differ, their results do not), which are.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "emit/generate.h"
#include "io/npy.h"
#include "io/onnx/onnx_model.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

const std::string kFold = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/onnx/fold/";

struct Export {
  std::string model;  // NAME: NAME-input.npy, NAME-output.npy
  std::string file;   // NAME_opsetN
};

std::vector<Export> exports() {
  std::vector<Export> out;
  for (const char* model : {"pad", "pad_unfolded", "interpolate_nearest", "interpolate_bilinear", "view_linear", "flatten_linear"})
    for (const char* opset : {"_opset11", "_opset13", "_opset17"}) out.push_back({model, std::string(model) + opset});
  return out;
}

// The export's graph, with the batch of the model's input.
Graph import_export(const std::string& file, const Shape& input_shape) {
  OnnxImportOptions options;
  options.input_shapes["x"] = input_shape;  // the batch is symbolic in the file
  options.note = [](const std::string&) {};
  return import_onnx(kFold + file + ".onnx", options);
}

// What verify_model compiles of `graph` (code and weights), under one name
// (the graph's, from the file's, is in the comments).
std::vector<EmittedFile> generated_files(Graph graph, const VerifyOptions& verify) {
  graph.name = "fold";
  return generate_cpp(graph, {"fold", "fold", "fold"}, verify.compile);
}

bool same_files(const std::vector<EmittedFile>& a, const std::vector<EmittedFile>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].filename != b[i].filename || a[i].content != b[i].content) return false;
  return true;
}

// `first_checked`: the model's opset-11 export is verified for `target` too.
void check_export(const Export& e, const std::string& target, bool first_checked) {
  const NpyArray input = read_npy(kFold + e.model + "-input.npy");
  const Graph graph = import_export(e.file, input.shape);
  ASSERT_EQ(graph.inputs.size(), 1u);
  ASSERT_EQ(graph.outputs.size(), 1u);
  for (const Node& n : graph.nodes)  // the shape arithmetic left nothing for run time
    EXPECT_TRUE(n.op != "Cast" && n.op != "take" && n.op != "Concat") << e.file << ": " << n.name << " (" << n.op << ")";

  VerifyOptions verify;
  verify.inputs[graph.inputs[0]] = input;
  verify.expected[graph.outputs[0]] = read_npy(kFold + e.model + "-output.npy");
  verify.tolerance = 1e-4;
  verify.compile.target = find_target(target);
  // An opset whose import generates the very files of the model's first
  // export runs the same program on the same input: its test compiles it.
  const std::string first = e.model + "_opset11";
  if (first_checked && e.file != first &&
      same_files(generated_files(graph, verify), generated_files(import_export(first, input.shape), verify))) {
    std::cout << "[ NOTE     ] " << e.file << " generates the program of " << first << ", verified there\n";
    return;
  }
  const VerifyReport report = verify_model(graph, verify);
  ASSERT_EQ(report.checks.size(), 2u);
  for (const OutputCheck& check : report.checks)
    EXPECT_TRUE(check.ok) << e.file << " on " << target << ": output " << check.name << " against " << check.against
                          << ": relative error " << check.max_rel_error;
}

class OnnxFoldExports : public ::testing::TestWithParam<Export> {};

TEST_P(OnnxFoldExports, GeneratedCodeMatchesPyTorchsOutput) { check_export(GetParam(), "generic", true); }

INSTANTIATE_TEST_SUITE_P(PyTorch, OnnxFoldExports, ::testing::ValuesIn(exports()),
                         [](const ::testing::TestParamInfo<Export>& info) { return info.param.file; });

// F.pad's chain and the bilinear resize once more on this machine's best target.
TEST(OnnxFoldExportsOnThisMachine, PadAndBilinearMatchPyTorch) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine's best target is generic, checked above";
  check_export({"pad_unfolded", "pad_unfolded_opset17"}, host_target().name, false);
  check_export({"interpolate_bilinear", "interpolate_bilinear_opset13"}, host_target().name, false);
}

}  // namespace
}  // namespace hybgen
