// Import-time constants (io/onnx/onnx_ops.h): ONNX Cast's rules and the rounding
// of the half-precision dtypes, the converter registry, the shared helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/onnx/onnx_ops.h"
#include "ir/error.h"

namespace hybgen {
namespace {

TEST(OnnxConst, CastFollowsOnnxRules) {
  const OnnxConst f = OnnxConst::of_floats({5}, {-2.7, -0.5, 0.0, 1.9, 300.0});
  EXPECT_EQ(f.cast(onnx_dtype::kInt64).ints, (std::vector<int64_t>{-2, 0, 0, 1, 300}));  // toward zero
  EXPECT_EQ(f.cast(onnx_dtype::kInt8).ints, (std::vector<int64_t>{-2, 0, 0, 1, 44}));    // wraps
  EXPECT_EQ(f.cast(onnx_dtype::kUint8).ints, (std::vector<int64_t>{254, 0, 0, 1, 44}));
  EXPECT_EQ(f.cast(onnx_dtype::kBool).ints, (std::vector<int64_t>{1, 1, 0, 1, 1}));
  const OnnxConst i = OnnxConst::of_ints({3}, {16777217, -1, 0});
  EXPECT_EQ(i.cast(onnx_dtype::kFloat).floats, (std::vector<double>{16777216.0, -1.0, 0.0}));  // float32 rounding
  EXPECT_EQ(i.cast(onnx_dtype::kDouble).floats, (std::vector<double>{16777217.0, -1.0, 0.0}));
  EXPECT_THROW(OnnxConst::scalar_float(std::nan("")).cast(onnx_dtype::kInt32), Error);
  EXPECT_THROW(OnnxConst::scalar_float(1e30).cast(onnx_dtype::kInt64), Error);
  EXPECT_THROW(i.cast(onnx_dtype::kString), Error);
}

TEST(OnnxConst, HalfAndBfloat16RoundToNearestEven) {
  const double inf = std::numeric_limits<double>::infinity();
  const OnnxConst f = OnnxConst::of_floats({7}, {0.1, 65504.0, 65519.0, 65520.0, 1e-7, 2049.0, 2051.0});
  EXPECT_EQ(f.cast(onnx_dtype::kFloat16).floats,
            (std::vector<double>{0.0999755859375, 65504.0, 65504.0, inf, 1.1920928955078125e-07, 2048.0, 2052.0}));
  const OnnxConst b = OnnxConst::of_floats({3}, {1.00390625, 1.01171875, -3.0e38});
  EXPECT_EQ(b.cast(onnx_dtype::kBfloat16).floats, (std::vector<double>{1.0, 1.015625, -3.00405527047391e+38}));
}

TEST(OnnxConst, IntegerViewsOfValues) {
  EXPECT_EQ(OnnxConst::of_floats({2}, {3.0, -4.0}).as_ints(), (std::vector<int64_t>{3, -4}));
  EXPECT_THROW(OnnxConst::of_floats({1}, {0.5}).as_ints(), Error);
  EXPECT_EQ(OnnxConst::of_ints({2}, {7, 8}).as_floats(), (std::vector<float>{7, 8}));
}

TEST(OnnxConverters, TheCoreOpsAreRegisteredOnce) {
  for (const char* op : {"Conv", "Gemm", "MatMul", "Relu", "Reshape", "Shape", "Constant", "Concat", "Softmax"})
    EXPECT_NE(find_onnx_converter(op), nullptr) << op;
  EXPECT_EQ(find_onnx_converter("NoSuchOp"), nullptr);
  const OnnxConverter* shape = find_onnx_converter("Shape");
  EXPECT_TRUE(shape->fold_always);
  const OnnxConverter* concat = find_onnx_converter("Concat");
  EXPECT_TRUE(concat->convert && !concat->fold);  // evaluated at import through its converter
  const auto all = all_onnx_converters();
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1]->op_type, all[i]->op_type);
}

TEST(OnnxUtil, AxesAndBroadcasting) {
  EXPECT_EQ(onnx_util::normalize_axis(-1, 4, "t"), 3);
  EXPECT_THROW(onnx_util::normalize_axis(4, 4, "t"), Error);
  EXPECT_EQ(onnx_util::broadcast_shapes({2, 1, 3}, {4, 1}, "t"), (Shape{2, 4, 3}));
  EXPECT_EQ(onnx_util::broadcast_shapes({}, {5}, "t"), (Shape{5}));
  EXPECT_THROW(onnx_util::broadcast_shapes({2, 3}, {4, 3}, "t"), Error);
}

}  // namespace
}  // namespace hybgen
