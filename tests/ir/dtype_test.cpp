// The dtypes of the IR (ir/tensor_type.h), the reference kernels that
// compute integers and bool (OpDef::reference_dtypes, run through
// evaluate_node as fold_constants and the ONNX import run them), and the
// refusal of non-float32 values by what has no kernels for them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "graph_builders.h"
#include "ir/error.h"
#include "ops/evaluate.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

TEST(DType, NamesSizesAndCTypesRoundTrip) {
  const std::vector<std::tuple<DType, const char*, std::size_t, const char*>> table = {
      {DType::kFloat32, "float32", 4, "float"},      {DType::kFloat16, "float16", 2, "uint16_t"},
      {DType::kBFloat16, "bfloat16", 2, "uint16_t"}, {DType::kInt8, "int8", 1, "int8_t"},
      {DType::kUInt8, "uint8", 1, "uint8_t"},        {DType::kInt32, "int32", 4, "int32_t"},
      {DType::kInt64, "int64", 8, "int64_t"},        {DType::kBool, "bool", 1, "bool"},
      {DType::kFloat64, "float64", 8, "double"},     {DType::kInt16, "int16", 2, "int16_t"},
      {DType::kUInt16, "uint16", 2, "uint16_t"},     {DType::kUInt32, "uint32", 4, "uint32_t"},
      {DType::kUInt64, "uint64", 8, "uint64_t"}};
  ASSERT_EQ(all_dtypes().size(), table.size());
  for (const auto& [dtype, name, size, c_type] : table) {
    EXPECT_EQ(dtype_name(dtype), name);
    EXPECT_EQ(parse_dtype(name), dtype);
    EXPECT_EQ(dtype_size(dtype), size) << name;
    EXPECT_EQ(dtype_c_type(dtype), c_type) << name;
  }
  EXPECT_EQ((TensorType{{2, 3}, DType::kInt64}).bytes(), 48u);
  EXPECT_EQ((TensorType{{2, 3}, DType::kInt64}).str(), "int64(2, 3)");
  try {
    parse_dtype("complex64");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported dtype 'complex64' (supported: float32, float16"),
              std::string::npos)
        << e.what();
  }
}

TEST(DType, StorageOnlyDtypesAreTheOnesNothingComputes) {
  std::vector<std::string> storage_only, floats;
  for (DType d : all_dtypes()) {
    if (is_storage_only_dtype(d)) storage_only.push_back(dtype_name(d));
    if (is_float_dtype(d)) floats.push_back(dtype_name(d));
  }
  EXPECT_EQ(storage_only, (std::vector<std::string>{"float64", "int16", "uint16", "uint32", "uint64"}));
  EXPECT_EQ(floats, (std::vector<std::string>{"float32", "float16", "bfloat16", "float64"}));
}

Constant i32(const Shape& shape, const std::vector<int32_t>& values) {
  Constant c;
  c.type = TensorType{shape, DType::kInt32};
  c.data.resize(values.size() * 4);
  std::memcpy(c.data.data(), values.data(), c.data.size());
  return c;
}

template <class T>
std::vector<T> values(const Constant& c) {
  std::vector<T> v(static_cast<std::size_t>(c.type.num_elements()));
  std::memcpy(v.data(), c.data.data(), c.data.size());
  return v;
}

// Infers and evaluates one node on constants.
std::vector<Constant> run(const Node& node, const std::vector<const Constant*>& in) {
  const OpDef& def = find_op(node.op);
  std::vector<TensorType> types;
  for (const Constant* c : in) types.push_back(c->type);
  return evaluate_node(node, in, def.infer(normalize_attrs(def, node.attrs), types));
}

const int64_t kBig = (int64_t{1} << 40) + 3;

TEST(IntegerReferences, MoveInt64ElementsExactly) {
  const Constant m = Constant::i64({2, 3}, {kBig, 1, 2, 3, 4, -kBig});
  const auto t = run(make_node("t", "transpose", {"m"}), {&m});
  EXPECT_EQ(t[0].type, (TensorType{{3, 2}, DType::kInt64}));
  EXPECT_EQ(values<int64_t>(t[0]), (std::vector<int64_t>{kBig, 3, 1, 4, 2, -kBig}));

  const auto s = run(make_node("s", "slice", {"m"}, attrs_of({{"begin", std::vector<int64_t>{kSliceNone, -1}},
                                                               {"end", std::vector<int64_t>{kSliceNone, kSliceNone}},
                                                               {"step", std::vector<int64_t>{-1, -1}}})),
                     {&m});
  EXPECT_EQ(values<int64_t>(s[0]), (std::vector<int64_t>{-kBig, 4, 3, 2, 1, kBig}));

  const auto r = run(make_node("r", "Reshape", {"m"}, attrs_of({{"shape", std::vector<int64_t>{-1}}})), {&m});
  EXPECT_EQ(r[0].type, (TensorType{{6}, DType::kInt64}));

  Node cat = make_node("c", "Concat", {"m", "m"}, attrs_of({{"dim", int64_t{1}}, {"num_args", int64_t{2}}}));
  EXPECT_EQ(values<int64_t>(run(cat, {&m, &m})[0]),
            (std::vector<int64_t>{kBig, 1, 2, kBig, 1, 2, 3, 4, -kBig, 3, 4, -kBig}));

  const Constant idx = Constant::i64({2}, {2, 0});
  EXPECT_EQ(values<int64_t>(run(make_node("g", "take", {"m", "idx"}, attrs_of({{"axis", int64_t{1}}})), {&m, &idx})[0]),
            (std::vector<int64_t>{2, kBig, -kBig, 3}));

  const Constant row = Constant::i64({1, 3}, {kBig, 0, -1});
  EXPECT_EQ(values<int64_t>(run(make_node("b", "broadcast_to", {"row"}, attrs_of({{"shape", std::vector<int64_t>{2, 3}}})),
                                {&row})[0]),
            (std::vector<int64_t>{kBig, 0, -1, kBig, 0, -1}));
}

TEST(IntegerReferences, ArithmeticWrapsAndDivisionTruncates) {
  const Constant a = i32({4}, {std::numeric_limits<int32_t>::max(), -7, 7, std::numeric_limits<int32_t>::min()});
  const Constant one = i32({1}, {1}), two = i32({1}, {2});
  EXPECT_EQ(values<int32_t>(run(make_node("s", "broadcast_add", {"a", "one"}), {&a, &one})[0]),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -6, 8, std::numeric_limits<int32_t>::min() + 1}));
  EXPECT_EQ(values<int32_t>(run(make_node("d", "broadcast_div", {"a", "two"}), {&a, &two})[0]),
            (std::vector<int32_t>{1073741823, -3, 3, -1073741824}));
  EXPECT_EQ(values<int32_t>(run(make_node("n", "negative", {"a"}), {&a})[0]),
            (std::vector<int32_t>{-std::numeric_limits<int32_t>::max(), 7, -7, std::numeric_limits<int32_t>::min()}));
  const Constant zero = i32({1}, {0});
  try {
    run(make_node("z", "broadcast_div", {"a", "zero"}), {&a, &zero});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "node 'z' (broadcast_div): integer division by zero");
  }
  const Constant b = i32({2}, {1, 2});
  const Constant f = Constant::f32({2}, {1, 2});
  EXPECT_THROW(find_op("broadcast_add").infer({}, {b.type, f.type}), Error);  // dtypes must agree
}

TEST(IntegerReferences, ComparisonsWhereAndCast) {
  const Constant a = Constant::i64({3}, {kBig, 2, 3}), b = Constant::i64({3}, {kBig + 1, 2, 1});
  const auto less = run(make_node("l", "broadcast_lesser", {"a", "b"}), {&a, &b});
  EXPECT_EQ(values<int64_t>(less[0]), (std::vector<int64_t>{1, 0, 0}));
  const auto mask = run(make_node("m", "Cast", {"l"}, attrs_of({{"dtype", std::string("bool")}})), {&less[0]});
  EXPECT_EQ(mask[0].type.dtype, DType::kBool);
  EXPECT_EQ(values<uint8_t>(mask[0]), (std::vector<uint8_t>{1, 0, 0}));
  const auto picked = run(make_node("w", "where", {"m", "a", "b"}), {&mask[0], &a, &b});
  EXPECT_EQ(values<int64_t>(picked[0]), (std::vector<int64_t>{kBig, 2, 1}));

  const Constant f = Constant::f32({5}, {-2.7f, 2.7f, 1e20f, -1e20f, std::numeric_limits<float>::quiet_NaN()});
  const auto to_i32 = run(make_node("c", "Cast", {"f"}, attrs_of({{"dtype", std::string("int32")}})), {&f});
  EXPECT_EQ(values<int32_t>(to_i32[0]), (std::vector<int32_t>{-2, 2, std::numeric_limits<int32_t>::max(),
                                                              std::numeric_limits<int32_t>::min(), 0}));
  const auto to_u8 = run(make_node("u", "Cast", {"a"}, attrs_of({{"dtype", std::string("uint8")}})), {&a});
  EXPECT_EQ(values<uint8_t>(to_u8[0]), (std::vector<uint8_t>{3, 2, 3}));  // wraps
  const auto back = run(make_node("x", "Cast", {"a"}, attrs_of({{"dtype", std::string("float32")}})), {&a});
  EXPECT_EQ(back[0].type.dtype, DType::kFloat32);
}

TEST(IntegerReferences, OpsThatComputeFloat32OnlyAreRefusedByDtype) {
  const Constant a = Constant::i64({2}, {1, 2});
  try {
    run(make_node("e", "exp", {"a"}), {&a});
    FAIL();
  } catch (const NoReferenceForDType& e) {
    // int8 and uint8 quantized, by a lookup table.
    EXPECT_EQ(std::string(e.what()), "node 'e' (exp): its reference kernel computes float32, int8, uint8, not int64");
  }
}

TEST(Quantization, TypesCompareAndPrintWithTheirQuantization) {
  const TensorType plain{{2, 3}, DType::kInt8};
  const TensorType q{{2, 3}, DType::kInt8, Quantization::per_tensor(0.05f, -3)};
  EXPECT_NE(plain, q);
  EXPECT_EQ(q, (TensorType{{2, 3}, DType::kInt8, Quantization::per_tensor(0.05f, -3)}));
  EXPECT_NE(q, (TensorType{{2, 3}, DType::kInt8, Quantization::per_tensor(0.05f, -2)}));
  EXPECT_EQ(q.str(), "int8(2, 3) scale 0.05 zero point -3");
  EXPECT_EQ(q.bytes(), 6u);
  const TensorType axis{{2, 3}, DType::kInt8, Quantization::per_axis(1, {0.5f, 0.25f, 1.0f}, {0, 0, 0})};
  EXPECT_EQ(axis.str(), "int8(2, 3) scales (3,) on axis 1, zero points 0");
  EXPECT_NE(axis, (TensorType{{2, 3}, DType::kInt8, Quantization::per_axis(0, {0.5f, 0.25f}, {0, 0})}));
  EXPECT_NO_THROW(check_quantization(q, "q"));
  EXPECT_NO_THROW(check_quantization(axis, "axis"));
  EXPECT_NO_THROW(check_quantization(TensorType{{4}}, "float"));
}

TEST(Quantization, InvalidParametersAreRefusedNamingTheValue) {
  auto refused = [](const TensorType& t) {
    try {
      check_quantization(t, "input 'x'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused({{4}, DType::kFloat32, Quantization::per_tensor(1.0f, 0)}),
            "input 'x': only integer values are quantized, not float32");
  EXPECT_EQ(refused({{4}, DType::kUInt8, Quantization::per_tensor(1.0f, -1)}),
            "input 'x': zero point -1 is outside uint8's range [0, 255]");
  EXPECT_EQ(refused({{4}, DType::kInt8, Quantization::per_tensor(-1.0f, 0)}),
            "input 'x': quantization scale -1 is not a finite positive number");
  EXPECT_EQ(refused({{4}, DType::kInt8, Quantization::per_tensor(std::numeric_limits<float>::quiet_NaN(), 0)}),
            "input 'x': quantization scale nan is not a finite positive number");
  EXPECT_EQ(refused({{4, 2}, DType::kInt8, Quantization::per_axis(0, {1.0f, 1.0f}, {0, 0})}),
            "input 'x': quantization on axis 0 of shape (4, 2) needs 4 scales and zero points, got 2 and 2");
  EXPECT_EQ(refused({{4, 2}, DType::kInt8, Quantization::per_axis(-1, {1.0f, 1.0f}, {0, 0})}),
            "input 'x': quantization axis -1 is not an axis of shape (4, 2)");
  Quantization no_scale;
  no_scale.zero_point = {0};
  EXPECT_EQ(refused({{4}, DType::kInt8, no_scale}), "input 'x': a quantization needs a scale");
  EXPECT_EQ(integer_dtype_range(DType::kInt32).first, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(integer_dtype_range(DType::kUInt8).second, 255);
}

}  // namespace
}  // namespace hybgen
