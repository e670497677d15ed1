// _attention's reference on a hand-checked case, and its shape rule refusing
// attributes that do not fit the inputs (the op's attributes come from
// files as well as from fuse_attention). The generic op test holds the
// CUDA kernel to this reference.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "ops/op.h"

namespace hybgen {
namespace {

using AttentionInts = std::vector<int64_t>;

// One query against two keys, d = 1, dv = 2, no batch stride.
Attrs attention_case() {
  Attrs a;
  a.set("batch", int64_t{1});
  a.set("m", int64_t{1});
  a.set("n", int64_t{2});
  a.set("d", int64_t{1});
  a.set("dv", int64_t{2});
  a.set("q_strides", AttentionInts{1, 1, 1});
  a.set("k_strides", AttentionInts{2, 1, 1});
  a.set("v_strides", AttentionInts{4, 2, 1});
  a.set("out_strides", AttentionInts{2, 2, 1});
  a.set("out_shape", AttentionInts{1, 2});
  a.set("scale", 0.5);
  return a;
}

const std::vector<TensorType> kAttentionInputs{TensorType{{1, 1}}, TensorType{{2, 1}}, TensorType{{2, 2}}};

std::string attention_error(const Attrs& attrs, std::vector<TensorType> in = kAttentionInputs) {
  const OpDef& def = find_op("_attention");
  return testing::error_of([&] { def.infer(normalize_attrs(def, attrs), in); });
}

TEST(AttentionOp, ReferenceIsSoftmaxOfScaledScoresTimesValues) {
  const OpDef& def = find_op("_attention");
  const Attrs a = normalize_attrs(def, attention_case());
  const std::vector<TensorType> out = def.infer(a, kAttentionInputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{1, 2}));
  const float q[] = {2.0f}, k[] = {1.0f, 3.0f}, v[] = {10.0f, 1.0f, 20.0f, 2.0f};
  float y[2] = {-1, -1};
  def.reference(KernelIO{a, {q, k, v}, kAttentionInputs, {y}, out});
  // Scores 2 and 6, scaled 1 and 3: weights 1 / (1 + e^2) and e^2 / (1 + e^2).
  const double w0 = 1.0 / (1.0 + std::exp(2.0)), w1 = 1.0 - w0;
  EXPECT_NEAR(y[0], w0 * 10 + w1 * 20, 1e-5);
  EXPECT_NEAR(y[1], w0 * 1 + w1 * 2, 1e-6);
}

TEST(AttentionOp, AttributesThatDoNotFitAreRefused) {
  EXPECT_EQ(attention_error(attention_case()), "(no error)");
  auto with = [](const char* name, AttrValue value) {
    Attrs a = attention_case();
    a.set(name, std::move(value));
    return a;
  };
  EXPECT_NE(attention_error(with("n", int64_t{0})).find("must be positive"), std::string::npos);
  EXPECT_NE(attention_error(with("k_strides", AttentionInts{2, 1})).find("k_strides needs 3 strides"),
            std::string::npos);
  EXPECT_NE(attention_error(with("v_strides", AttentionInts{4, -2, 1})).find("v_strides has a negative stride"),
            std::string::npos);
  EXPECT_NE(attention_error(with("n", int64_t{3})).find("k_strides (2, 1, 1) read element"), std::string::npos);
  EXPECT_NE(attention_error(with("v_strides", AttentionInts{4, 1, 1})).find("neither rows nor columns"),
            std::string::npos);
  EXPECT_NE(attention_error(with("batch", int64_t{1} << 62)).find("read element"), std::string::npos);
  EXPECT_NE(attention_error(with("out_shape", AttentionInts{3})).find("does not hold 1 x 1 x 2 values"),
            std::string::npos);
  EXPECT_NE(attention_error(with("out_shape", AttentionInts{-1, -2})).find("has an axis below 1"), std::string::npos);
  EXPECT_NE(attention_error(with("out_shape", AttentionInts{int64_t{1} << 20, int64_t{1} << 20})).find("limit"),
            std::string::npos);
  EXPECT_NE(attention_error(with("out_strides", AttentionInts{2, 2, 2})).find("need a unit column stride"),
            std::string::npos);
  EXPECT_NE(attention_error(with("scale", std::nan(""))).find("scale must be finite"), std::string::npos);
  EXPECT_NE(
      attention_error(attention_case(), {TensorType{{1, 1}}, TensorType{{2, 1}, DType::kInt8}, TensorType{{2, 2}}})
          .find("k must be float32"),
      std::string::npos);
  EXPECT_NE(
      attention_error(attention_case(), {TensorType{{1, 1}}, TensorType{{2, 1}, DType::kFloat16}, TensorType{{2, 2}}})
          .find("k is float16"),
      std::string::npos);
}

}  // namespace
}  // namespace hybgen
