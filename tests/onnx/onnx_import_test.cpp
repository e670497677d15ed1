// The ONNX reader: file format, initializers, inputs, constants, refusals.
#include <gtest/gtest.h>

#include "onnx/onnx_builder.h"
#include "ir/error.h"

namespace hybgen {
namespace {

using testing_onnx::OnnxBuilder;
using testing_onnx::run_graph;

TEST(OnnxImport, ReluRunsThroughTheInterpreter) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const Graph g = b.import();
  ASSERT_EQ(g.inputs, std::vector<std::string>{"x"});
  ASSERT_EQ(g.outputs, std::vector<std::string>{"y"});
  auto out = run_graph(g, {{"x", Tensor::from_vector({2, 3}, {-1, 2, -3, 4, 0, 6})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::vector<float>(out[0].data(), out[0].data() + 6), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

}  // namespace
}  // namespace hybgen
