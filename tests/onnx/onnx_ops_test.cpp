// The converters of gen/io/onnx/onnx_ops_*.cpp: small ONNX models built in C++,
// imported and run by the reference interpreter, against the outputs ONNX
// Runtime gave for the same inputs (onnx_ops_cases.inc, written by
// make_onnx_ops_cases.py); and what is refused, up front and all at once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "onnx/onnx_builder.h"

namespace hybgen {
namespace {

using testing_onnx::import_error;
using testing_onnx::OnnxBuilder;
using testing_onnx::run_graph;

struct Expected {
  Shape shape;
  std::vector<float> values;
};

void expect_outputs(const OnnxBuilder& b, const std::map<std::string, Tensor>& inputs,
                    const std::vector<Expected>& expected) {
  const Graph g = b.import();
  const std::vector<Tensor> out = run_graph(g, inputs);
  ASSERT_EQ(out.size(), expected.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i].shape(), expected[i].shape) << "output " << i;
    for (std::size_t k = 0; k < expected[i].values.size(); ++k) {
      const float want = expected[i].values[k], got = out[i].data()[k];
      ASSERT_NEAR(got, want, 1e-5 + 1e-4 * std::fabs(want)) << "output " << i << " element " << k;
    }
  }
}

#include "onnx/onnx_ops_cases.inc"

TEST(OnnxOpsRefused, EveryUnsupportedAttributeIsListedAtOnce) {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 6, 6});
  b.initializer("scales", {4}, {1, 1, 2, 2});
  auto& r = b.node("Resize", {"x", "", "scales"}, {"r"}, "resize_cubic");
  OnnxBuilder::attr(r, "mode", std::string("cubic"));
  auto& p = b.node("AveragePool", {"r"}, {"p"}, "pool_dilated");
  OnnxBuilder::attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(p, "dilations", std::vector<int64_t>{2, 2});
  auto& a = b.node("ArgMax", {"p"}, {"a"}, "argmax_last");
  OnnxBuilder::attr(a, "select_last_index", int64_t{1});
  auto& d = b.node("DepthToSpace", {"p"}, {"d"}, "d2s_mode");
  OnnxBuilder::attr(d, "blocksize", int64_t{2});
  OnnxBuilder::attr(d, "mode", std::string("XYZ"));
  b.node("Einsum", {"p"}, {"e"}, "einsum");
  b.output("a");
  b.output("d");
  b.output("e");
  const std::string m = import_error(b);
  for (const char* part : {"resize_cubic", "cubic", "pool_dilated", "dilations", "argmax_last", "select_last_index",
                           "d2s_mode", "DCR or CRD", "Einsum"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
}

TEST(OnnxOpsRefused, GatherWithRuntimeIndices) {
  OnnxBuilder b(13);
  b.input("x", {4, 3});
  b.input("i", {2});
  b.node("Gather", {"x", "i"}, {"y"}, "lookup");
  b.output("y");
  const std::string m = import_error(b);
  EXPECT_NE(m.find("lookup"), std::string::npos) << m;
}

// ONNX's reference maps align_corners through length * scale unrounded (7.5
// rows here), ONNX Runtime through the output size (7): refused, not guessed.
TEST(OnnxOpsRefused, AlignCornersWithScalesThatGiveNoWholeSize) {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 3, 5});
  b.initializer("scales", {4}, {1.0f, 1.0f, 2.5f, 1.5f});
  auto& n = b.node("Resize", {"x", "", "scales"}, {"y"}, "up");
  OnnxBuilder::attr(n, "mode", std::string("linear"));
  OnnxBuilder::attr(n, "coordinate_transformation_mode", std::string("align_corners"));
  b.output("y");
  const std::string m = import_error(b);
  EXPECT_NE(m.find("'up'"), std::string::npos) << m;
  EXPECT_NE(m.find("give sizes instead"), std::string::npos) << m;
}

TEST(OnnxOpsRefused, ArgMaxAsAGraphOutputIsInt64) {
  OnnxBuilder b(13);
  b.input("x", {2, 5});
  auto& n = b.node("ArgMax", {"x"}, {"y"});
  OnnxBuilder::attr(n, "axis", int64_t{1});
  b.output("y");
  const std::string m = import_error(b);
  EXPECT_NE(m.find("INT64"), std::string::npos) << m;
}

TEST(OnnxOpsRefused, HostilePadsAndShapes) {
  {  // negative (cropping) pads
    OnnxBuilder b(13);
    b.input("x", {2, 3});
    b.initializer_i64("p", {4}, {0, -1, 0, 0});
    b.node("Pad", {"x", "p"}, {"y"}, "crop");
    b.output("y");
    EXPECT_NE(import_error(b).find("crop"), std::string::npos);
  }
  {  // pads of the wrong length on a convolution
    OnnxBuilder b(13);
    b.input("x", {1, 1, 4, 4});
    b.initializer("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    auto& n = b.node("Conv", {"x", "w"}, {"y"}, "conv_pads");
    OnnxBuilder::attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1, 1, 1});
    b.output("y");
    EXPECT_NE(import_error(b).find("conv_pads"), std::string::npos);
  }
  {  // a huge Tile
    OnnxBuilder b(13);
    b.input("x", {1000, 1000});
    b.initializer_i64("r", {2}, {int64_t{1} << 40, int64_t{1} << 40});
    b.node("Tile", {"x", "r"}, {"y"}, "tile_huge");
    b.output("y");
    EXPECT_NE(import_error(b).find("tile_huge"), std::string::npos);
  }
  {  // Resize to an absurd size
    OnnxBuilder b(13);
    b.input("x", {1, 1, 4, 4});
    b.initializer("s", {4}, {1, 1, 1e9f, 1e9f});
    b.node("Resize", {"x", "", "s"}, {"y"}, "resize_huge");
    b.output("y");
    EXPECT_NE(import_error(b).find("resize_huge"), std::string::npos);
  }
  {  // Expand to an absurd shape
    OnnxBuilder b(13);
    b.input("x", {3, 1});
    b.initializer_i64("s", {3}, {int64_t{1} << 40, 3, int64_t{1} << 40});
    b.node("Expand", {"x", "s"}, {"y"}, "expand_huge");
    b.output("y");
    EXPECT_NE(import_error(b).find("expand_huge"), std::string::npos);
  }
  {  // Resize by sizes to an absurd output
    OnnxBuilder b(13);
    b.input("x", {1, 1, 4, 4});
    b.initializer_i64("s", {4}, {1, 1, int64_t{1} << 30, int64_t{1} << 30});
    b.node("Resize", {"x", "", "", "s"}, {"y"}, "resize_sizes_huge");
    b.output("y");
    EXPECT_NE(import_error(b).find("resize_sizes_huge"), std::string::npos);
  }
  {  // Split parts that overflow when summed
    OnnxBuilder b(13);
    b.input("x", {4, 3});
    b.initializer_i64("s", {2}, {INT64_MAX, INT64_MAX});
    b.node("Split", {"x", "s"}, {"y0", "y1"}, "split_huge");
    b.output("y0");
    b.output("y1");
    EXPECT_NE(import_error(b).find("split_huge"), std::string::npos);
  }
  {  // Slice with extreme starts and steps: clamped, no overflow
    OnnxBuilder b(13);
    b.input("x", {5, 3});
    b.initializer_i64("s", {2}, {INT64_MIN, INT64_MAX});
    b.initializer_i64("e", {2}, {INT64_MAX, INT64_MIN});
    b.initializer_i64("a", {2}, {0, 1});
    b.initializer_i64("t", {2}, {INT64_MAX, INT64_MIN});
    b.node("Slice", {"x", "s", "e", "a", "t"}, {"y"}, "slice_extreme");
    b.output("y");
    const Graph g = b.import();
    std::vector<float> x(15);
    for (int i = 0; i < 15; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
    const auto out = run_graph(g, {{"x", Tensor::from_vector({5, 3}, x)}});
    ASSERT_EQ(out[0].shape(), (Shape{1, 1}));
    EXPECT_EQ(out[0].data()[0], 2.0f);  // row 0, the last column
  }
  {  // ConvTranspose with absurd strides
    OnnxBuilder b(13);
    b.input("x", {1, 1, 3, 3});
    b.initializer("w", {1, 1, 2, 2}, std::vector<float>(4, 1.0f));
    auto& n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "deconv_far");
    OnnxBuilder::attr(n, "strides", std::vector<int64_t>{INT64_MAX, 2});
    b.output("y");
    EXPECT_NE(import_error(b).find("deconv_far"), std::string::npos);
  }
  {  // Gather index out of range
    OnnxBuilder b(13);
    b.input("x", {4, 3});
    b.initializer_i64("i", {1}, {7});
    b.node("Gather", {"x", "i"}, {"y"}, "gather_far");
    b.output("y");
    const std::string m = import_error(b);
    EXPECT_NE(m.find("gather_far"), std::string::npos);
    EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace hybgen
