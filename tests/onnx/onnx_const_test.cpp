// Import-time constants (io/onnx/onnx_ops.h): ONNX Cast's rules, the rounding
// of the half-precision dtypes and the wrapping of the narrow integers, the
// ONNX element types' DTypes, the converter registry, the shared helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/onnx/onnx_model.h"
#include "io/onnx/onnx_ops.h"
#include "ir/error.h"

namespace hybgen {
namespace {

TEST(OnnxConst, CastFollowsOnnxRules) {
  const OnnxConst f = OnnxConst::of_floats({5}, {-2.7, -0.5, 0.0, 1.9, 300.0});
  EXPECT_EQ(f.cast(DType::kInt64).ints, (std::vector<int64_t>{-2, 0, 0, 1, 300}));  // toward zero
  EXPECT_EQ(f.cast(DType::kInt8).ints, (std::vector<int64_t>{-2, 0, 0, 1, 44}));    // wraps
  EXPECT_EQ(f.cast(DType::kUInt8).ints, (std::vector<int64_t>{254, 0, 0, 1, 44}));
  EXPECT_EQ(f.cast(DType::kBool).ints, (std::vector<int64_t>{1, 1, 0, 1, 1}));
  const OnnxConst i = OnnxConst::of_ints({3}, {16777217, -1, 0});
  EXPECT_EQ(i.cast(DType::kFloat32).floats, (std::vector<double>{16777216.0, -1.0, 0.0}));  // float32 rounding
  EXPECT_EQ(i.cast(DType::kFloat64).floats, (std::vector<double>{16777217.0, -1.0, 0.0}));
  EXPECT_EQ(i.cast(DType::kFloat64).dtype, DType::kFloat64);
  EXPECT_THROW(OnnxConst::scalar_float(std::nan("")).cast(DType::kInt32), Error);
  EXPECT_THROW(OnnxConst::scalar_float(1e30).cast(DType::kInt64), Error);
}

// The element types hybgen computes wider keep their own width in a
// constant: a Cast wraps to it, and float64 keeps double precision.
TEST(OnnxConst, CastWrapsToTheNarrowIntegerTypesAndKeepsDoubles) {
  const OnnxConst i = OnnxConst::of_ints({4}, {40000, -40000, 70000, -1});
  EXPECT_EQ(i.cast(DType::kInt16).ints, (std::vector<int64_t>{-25536, 25536, 4464, -1}));
  EXPECT_EQ(i.cast(DType::kUInt16).ints, (std::vector<int64_t>{40000, 25536, 4464, 65535}));
  EXPECT_EQ(i.cast(DType::kUInt32).ints, (std::vector<int64_t>{40000, 4294927296, 70000, 4294967295}));
  EXPECT_EQ(i.cast(DType::kInt16).dtype, DType::kInt16);
  EXPECT_EQ(OnnxConst::of_floats({2}, {40000.9, -32769.5}).cast(DType::kInt16).ints,
            (std::vector<int64_t>{-25536, 32767}));
  const OnnxConst d = OnnxConst::of_floats({2}, {0.1, 16777217.0}, DType::kFloat64);
  EXPECT_EQ(d.cast(DType::kFloat64).floats, (std::vector<double>{0.1, 16777217.0}));
  EXPECT_EQ(d.cast(DType::kInt64).ints, (std::vector<int64_t>{0, 16777217}));
  EXPECT_EQ(d.cast(DType::kFloat32).floats, (std::vector<double>{static_cast<double>(0.1f), 16777216.0}));
}

// What the reference kernels compute each dtype in at import, and the
// graph constant an OnnxConst becomes.
TEST(OnnxConst, FoldDtypesAndGraphConstants) {
  EXPECT_EQ(fold_dtype(DType::kFloat64), DType::kFloat32);
  EXPECT_EQ(fold_dtype(DType::kFloat16), DType::kFloat32);
  EXPECT_EQ(fold_dtype(DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(fold_dtype(DType::kInt16), DType::kInt32);
  EXPECT_EQ(fold_dtype(DType::kUInt16), DType::kInt32);
  EXPECT_EQ(fold_dtype(DType::kUInt32), DType::kInt64);
  EXPECT_EQ(fold_dtype(DType::kUInt64), DType::kInt64);
  for (DType d : {DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64, DType::kBool})
    EXPECT_EQ(fold_dtype(d), d) << dtype_name(d);
  for (DType d : all_dtypes()) EXPECT_FALSE(is_storage_only_dtype(fold_dtype(d))) << dtype_name(d);
  const Constant c = OnnxConst::of_ints({2}, {-25536, 7}, DType::kInt16).to_constant();
  EXPECT_EQ(c.type, (TensorType{{2}, DType::kInt32}));
  const OnnxConst back = OnnxConst::of_constant(c);
  EXPECT_EQ(back.dtype, DType::kInt32);
  EXPECT_EQ(back.ints, (std::vector<int64_t>{-25536, 7}));
}

TEST(OnnxConst, HalfAndBfloat16RoundToNearestEven) {
  const double inf = std::numeric_limits<double>::infinity();
  const OnnxConst f = OnnxConst::of_floats({7}, {0.1, 65504.0, 65519.0, 65520.0, 1e-7, 2049.0, 2051.0});
  EXPECT_EQ(f.cast(DType::kFloat16).floats,
            (std::vector<double>{0.0999755859375, 65504.0, 65504.0, inf, 1.1920928955078125e-07, 2048.0, 2052.0}));
  const OnnxConst b = OnnxConst::of_floats({3}, {1.00390625, 1.01171875, -3.0e38});
  EXPECT_EQ(b.cast(DType::kBFloat16).floats, (std::vector<double>{1.0, 1.015625, -3.00405527047391e+38}));
}

// ONNX element types become DTypes in one place (io/onnx/onnx_model.h):
// each numeric one to its own, the others refused by their ONNX names.
TEST(OnnxElementTypes, EachMapsToItsDtypeOrIsRefusedByName) {
  const std::vector<std::pair<int64_t, DType>> mapped = {
      {1, DType::kFloat32}, {2, DType::kUInt8},   {3, DType::kInt8},     {4, DType::kUInt16},   {5, DType::kInt16},
      {6, DType::kInt32},   {7, DType::kInt64},   {9, DType::kBool},     {10, DType::kFloat16}, {11, DType::kFloat64},
      {12, DType::kUInt32}, {13, DType::kUInt64}, {16, DType::kBFloat16}};
  for (const auto& [element_type, dtype] : mapped) {
    EXPECT_EQ(onnx_element_dtype(element_type), dtype) << element_type;
    EXPECT_EQ(onnx_element_type(dtype), element_type) << dtype_name(dtype);
  }
  for (DType d : all_dtypes()) EXPECT_EQ(onnx_element_dtype(onnx_element_type(d)), d) << dtype_name(d);
  EXPECT_EQ(onnx_dtype_name(DType::kFloat64), "DOUBLE");
  EXPECT_EQ(onnx_dtype_name(DType::kUInt16), "UINT16");
  EXPECT_EQ(onnx_dtype_name(DType::kFloat32), "FLOAT");
  const std::vector<std::pair<int64_t, std::string>> refused = {{0, "UNDEFINED"},   {8, "STRING"},    {14, "COMPLEX64"},
                                                                {15, "COMPLEX128"}, {99, "dtype 99"}, {-1, "dtype -1"}};
  for (const auto& [element_type, name] : refused) {
    EXPECT_EQ(onnx_element_dtype(element_type), std::nullopt) << element_type;
    EXPECT_EQ(onnx_dtype_name(element_type), name);
  }
  EXPECT_EQ(onnx_element_dtype(int64_t{1} << 40), std::nullopt);  // past int32: no wrap onto FLOAT
  EXPECT_EQ(onnx_dtype_name(int64_t{1} << 40), "dtype 1099511627776");
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
