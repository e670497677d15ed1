// Import-time evaluation: nodes whose inputs are all constants are converted
// into a scratch graph with their dtypes and run by the registry's reference
// kernels (io/onnx/onnx_ops.h). Each test ends the constant chain in a runtime
// Add, so what reaches the graph is one float32 constant to check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "onnx_builder.h"

namespace hybgen {
namespace {

using testing_onnx::import_error;
using testing_onnx::OnnxBuilder;

constexpr int64_t kBig = (int64_t{1} << 40) + 1;  // beyond float32's exact integers

// The float32 constant the graph's one Add reads beside its input "x".
std::vector<float> added_constant(const Graph& g) {
  EXPECT_EQ(g.nodes.size(), 1u);
  if (g.nodes.size() != 1) return {};
  EXPECT_EQ(g.nodes[0].op, "broadcast_add");
  const std::string& k = g.nodes[0].inputs.at(1);
  EXPECT_TRUE(g.is_constant(k)) << k;
  const Constant& c = g.constants.at(k);
  EXPECT_EQ(c.type.dtype, DType::kFloat32);
  return std::vector<float>(c.f32_data(), c.f32_data() + c.type.num_elements());
}

// `value` (int64) minus `expected`, cast to FLOAT and added to x: the
// constant the Add reads is all zeros exactly when `value` was exact.
void end_with_difference(OnnxBuilder& b, const std::string& value, const std::vector<int64_t>& expected,
                         const Shape& shape) {
  b.initializer_i64("expected", shape, expected);
  b.node("Sub", {value, "expected"}, {"difference"});
  auto& cast = b.node("Cast", {"difference"}, {"difference_f"});
  OnnxBuilder::attr(cast, "to", int64_t{1});
  b.node("Add", {"x", "difference_f"}, {"y"});
  b.output("y");
}

// Reshape -> Transpose -> Slice (step -1, INT64_MIN-style end, as torch
// writes F.pad's) -> Reshape on int64 values a float32 cannot hold.
TEST(OnnxImportFold, Int64ReshapeTransposeReversingSliceChain) {
  for (int64_t opset : {11, 13, 17}) {
    OnnxBuilder b(opset);
    b.input("x", {6});
    b.initializer_i64("v", {6}, {kBig, 2, kBig + 2, 4, -kBig, 6});
    b.initializer_i64("to_2x3", {2}, {2, 3});
    b.node("Reshape", {"v", "to_2x3"}, {"m"});  // [[B, 2, B+2], [4, -B, 6]]
    auto& t = b.node("Transpose", {"m"}, {"mt"});  // [[B, 4], [2, -B], [B+2, 6]]
    OnnxBuilder::attr(t, "perm", std::vector<int64_t>{1, 0});
    b.initializer_i64("starts", {1}, {-1});
    b.initializer_i64("ends", {1}, {-std::numeric_limits<int64_t>::max()});
    b.initializer_i64("axes", {1}, {0});
    b.initializer_i64("steps", {1}, {-1});
    b.node("Slice", {"mt", "starts", "ends", "axes", "steps"}, {"rows_reversed"});  // [[B+2, 6], [2, -B], [B, 4]]
    b.initializer_i64("flat", {1}, {-1});
    b.node("Reshape", {"rows_reversed", "flat"}, {"r"});
    end_with_difference(b, "r", {kBig + 2, 6, 2, -kBig, kBig, 4}, {6});
    EXPECT_EQ(added_constant(b.import()), std::vector<float>(6, 0.0f)) << "opset " << opset;
  }
}

// An end of INT64_MAX means "to the end" and a slice to the middle keeps
// the rest (Shape -> Slice is how torch reads trailing dims).
TEST(OnnxImportFold, SliceWithInt64MaxEndOfAShape) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 2});
  b.node("Shape", {"x"}, {"s"});
  b.initializer_i64("starts", {1}, {1});
  b.initializer_i64("ends", {1}, {std::numeric_limits<int64_t>::max()});
  b.node("Slice", {"s", "starts", "ends"}, {"tail"});  // [3, 2]
  b.initializer_i64("big", {2}, {kBig, kBig});
  b.node("Mul", {"tail", "big"}, {"scaled"});  // [3B, 2B]
  b.initializer_i64("expected", {2}, {3 * kBig, 2 * kBig});
  b.node("Sub", {"scaled", "expected"}, {"d"});
  auto& cast = b.node("Cast", {"d"}, {"df"});
  OnnxBuilder::attr(cast, "to", int64_t{1});
  b.node("Add", {"x", "df"}, {"y"});
  b.output("y");
  EXPECT_EQ(added_constant(b.import()), std::vector<float>(2, 0.0f));
}

// Integer arithmetic wraps in two's complement and Div truncates toward
// zero, as ONNX Runtime's kernels do; a Cast to INT32 wraps too.
TEST(OnnxImportFold, IntegerArithmeticWrapsAndDivTruncates) {
  const int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  OnnxBuilder b(13);
  b.input("x", {5});
  b.initializer_i64("a", {5}, {max, min, -7, 7, (int64_t{1} << 62) + 1});
  b.initializer_i64("one", {1}, {1});
  b.initializer_i64("two", {1}, {2});
  b.initializer_i64("four", {1}, {4});
  b.node("Add", {"a", "one"}, {"sum"});      // max + 1 wraps to min
  b.node("Sub", {"sum", "one"}, {"back"});   // min - 1 wraps to max: back == a
  b.node("Mul", {"back", "four"}, {"quad"}); // (2^62 + 1) * 4 wraps to 4
  b.node("Div", {"quad", "two"}, {"half"});  // -28 / 2, 28 / 2; truncates
  auto& narrow = b.node("Cast", {"half"}, {"half32"});
  OnnxBuilder::attr(narrow, "to", int64_t{6});  // INT32: keeps the low 32 bits
  auto& wide = b.node("Cast", {"half32"}, {"half64"});
  OnnxBuilder::attr(wide, "to", int64_t{7});
  // max * 4 = -4 (wrapped), / 2 = -2; min * 4 = 0; -7 * 4 / 2 = -14; 7 -> 14; (2^62 + 1) * 4 = 4 -> 2.
  end_with_difference(b, "half64", {-2, 0, -14, 14, 2}, {5});
  EXPECT_EQ(added_constant(b.import()), std::vector<float>(5, 0.0f));

  OnnxBuilder d(13);
  d.input("x", {2});
  d.initializer_i64("a", {2}, {-7, 7});
  d.initializer_i64("two", {1}, {2});
  d.node("Div", {"a", "two"}, {"q"});
  end_with_difference(d, "q", {-3, 3}, {2});
  EXPECT_EQ(added_constant(d.import()), std::vector<float>(2, 0.0f));

  OnnxBuilder z(13);
  z.input("x", {2});
  z.initializer_i64("a", {2}, {-7, 7});
  z.initializer_i64("zero", {1}, {0});
  z.node("Div", {"a", "zero"}, {"q"}, "div");
  end_with_difference(z, "q", {0, 0}, {2});
  const std::string e = import_error(z);
  EXPECT_NE(e.find("node 'div' (Div)"), std::string::npos) << e;
  EXPECT_NE(e.find("integer division by zero"), std::string::npos) << e;
}

// A Cast to INT16 wraps at 16 bits although the references compute int32;
// UINT32 keeps values past INT32's range.
TEST(OnnxImportFold, CastToNarrowIntegersWrapsToTheirWidth) {
  OnnxBuilder b(13);
  b.input("x", {4});
  b.initializer_i64("a", {4}, {40000, -40000, 32767, -1});
  auto& narrow = b.node("Cast", {"a"}, {"a16"});
  OnnxBuilder::attr(narrow, "to", int64_t{5});  // INT16
  auto& wide = b.node("Cast", {"a16"}, {"back"});
  OnnxBuilder::attr(wide, "to", int64_t{7});
  end_with_difference(b, "back", {-25536, 25536, 32767, -1}, {4});
  EXPECT_EQ(added_constant(b.import()), std::vector<float>(4, 0.0f));

  OnnxBuilder u(13);
  u.input("x", {2});
  u.initializer_i64("a", {2}, {-1, int64_t{1} << 33});
  auto& to_u32 = u.node("Cast", {"a"}, {"a32"});
  OnnxBuilder::attr(to_u32, "to", int64_t{12});  // UINT32
  auto& back = u.node("Cast", {"a32"}, {"back"});
  OnnxBuilder::attr(back, "to", int64_t{7});
  end_with_difference(u, "back", {4294967295, 0}, {2});
  EXPECT_EQ(added_constant(u.import()), std::vector<float>(2, 0.0f));
}

// A Cast to DOUBLE keeps every int64 a double holds (float32 would round
// 2^24 + 1), and one back to INT64 reads the double; a DOUBLE Range is not
// rounded to float32.
TEST(OnnxImportFold, CastToDoubleAndBackIsExact) {
  OnnxBuilder b(13);
  b.input("x", {2});
  b.initializer_i64("a", {2}, {(int64_t{1} << 24) + 1, -kBig});
  auto& to_double = b.node("Cast", {"a"}, {"d"});
  OnnxBuilder::attr(to_double, "to", int64_t{11});  // DOUBLE
  auto& back = b.node("Cast", {"d"}, {"back"});
  OnnxBuilder::attr(back, "to", int64_t{7});
  end_with_difference(b, "back", {(int64_t{1} << 24) + 1, -kBig}, {2});
  EXPECT_EQ(added_constant(b.import()), std::vector<float>(2, 0.0f));

  OnnxBuilder r(13);
  r.input("x", {3});
  r.initializer_i64("start", {}, {(int64_t{1} << 24) + 1});
  r.initializer_i64("limit", {}, {(int64_t{1} << 24) + 4});
  r.initializer_i64("delta", {}, {1});
  for (const char* name : {"start", "limit", "delta"}) {
    auto& cast = r.node("Cast", {name}, {std::string(name) + "_d"});
    OnnxBuilder::attr(cast, "to", int64_t{11});
  }
  r.node("Range", {"start_d", "limit_d", "delta_d"}, {"range"});
  auto& range_back = r.node("Cast", {"range"}, {"range_i"});
  OnnxBuilder::attr(range_back, "to", int64_t{7});
  end_with_difference(r, "range_i", {(int64_t{1} << 24) + 1, (int64_t{1} << 24) + 2, (int64_t{1} << 24) + 3}, {3});
  EXPECT_EQ(added_constant(r.import()), std::vector<float>(3, 0.0f));
}

// An element type no DType holds is refused up front, by its ONNX name
// (by number where the ONNX definitions predate it), naming the node.
TEST(OnnxImportFold, CastToAnUnsupportedElementTypeIsRefusedByName) {
  for (const auto& [to, name] : std::vector<std::pair<int64_t, std::string>>{
           {8, "STRING"}, {14, "COMPLEX64"}, {15, "COMPLEX128"}, {0, "UNDEFINED"}, {99, "dtype 99"}}) {
    OnnxBuilder b(13);
    b.input("x", {2});
    auto& cast = b.node("Cast", {"x"}, {"y"}, "to_it");
    OnnxBuilder::attr(cast, "to", to);
    b.output("y");
    const std::string e = import_error(b);
    EXPECT_NE(e.find("node 'to_it' (Cast): attribute 'to' = " + std::to_string(to) + ": " + name +
                     " is not a supported element type"),
              std::string::npos)
        << e;
  }
  OnnxBuilder b(13);
  b.input("x", {2});
  auto& cast = b.node("Cast", {"x"}, {"y"}, "to_bf16");
  OnnxBuilder::attr(cast, "to", int64_t{16});
  b.output("y");
  const std::string e = import_error(b);
  EXPECT_NE(e.find("node 'to_bf16' (Cast): attribute 'to' = 16: casting to BFLOAT16 is not supported"),
            std::string::npos)
      << e;
}

// Comparisons make BOOL, Where and Not read it, at import.
TEST(OnnxImportFold, ComparisonsWhereAndNotOnInt64) {
  OnnxBuilder b(13);
  b.input("x", {3});
  b.initializer_i64("a", {3}, {kBig, 2, 3});
  b.initializer_i64("b", {3}, {kBig + 1, 2, 1});
  b.node("Less", {"a", "b"}, {"less"});     // [1, 0, 0]
  b.node("Not", {"less"}, {"not_less"});    // [0, 1, 1]
  b.node("Where", {"not_less", "a", "b"}, {"picked"});  // [B+1, 2, 3]
  end_with_difference(b, "picked", {kBig + 1, 2, 3}, {3});
  EXPECT_EQ(added_constant(b.import()), std::vector<float>(3, 0.0f));
}

// A hostile model's import-time value past 2^22 elements is not computed at
// import: a node without a runtime form is refused, naming it.
TEST(OnnxImportFold, OversizedImportTimeValuesAreRefused) {
  OnnxBuilder b(13);
  b.input("x", {4});
  b.initializer_i64("dims", {2}, {int64_t{1} << 20, int64_t{1} << 20});
  b.node("ConstantOfShape", {"dims"}, {"huge"}, "huge");
  b.node("Shape", {"huge"}, {"s"});
  b.node("Cast", {"s"}, {"sf"});
  b.node("Add", {"x", "sf"}, {"y"});
  b.output("y");
  const std::string e = import_error(b);
  EXPECT_NE(e.find("node 'huge' (ConstantOfShape)"), std::string::npos) << e;
  EXPECT_NE(e.find("too large to compute at import"), std::string::npos) << e;

  // Expand of a constant to 2^24 elements: its runtime form then takes it,
  // and generation is left to refuse or compute it.
  OnnxBuilder x(13);
  x.input("x", {4096, 4096});
  x.initializer("one", {1}, {1.0f});
  x.initializer_i64("shape", {2}, {4096, 4096});
  x.node("Expand", {"one", "shape"}, {"big"});
  x.node("Add", {"x", "big"}, {"y"});
  x.output("y");
  const Graph g = x.import();
  ASSERT_FALSE(g.nodes.empty());
  EXPECT_EQ(g.nodes.back().op, "broadcast_add");
  EXPECT_TRUE(std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op == "broadcast_to"; }));
}

}  // namespace
}  // namespace hybgen
