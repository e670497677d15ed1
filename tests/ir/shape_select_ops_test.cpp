// The reductions, selection, shape and indexing ops' reference kernels on
// small hand-checked cases (MXNet 1.9's documented results), and their
// shape rules refusing what does not fit. The generic op test then holds
// every generated kernel to these references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {

float round_to_half(float x);  // gen/ops/cast.cpp

namespace {

struct Array {
  Shape shape;
  std::vector<float> data;
};

std::vector<Array> run(const std::string& op, const Attrs& attrs, const std::vector<Array>& in) {
  const OpDef& def = find_op(op);
  const Attrs a = normalize_attrs(def, attrs);
  std::vector<TensorType> in_types;
  for (const auto& x : in) in_types.push_back(TensorType{x.shape});
  const std::vector<TensorType> out_types = def.infer(a, in_types);
  std::vector<Array> out;
  for (const auto& t : out_types) out.push_back({t.shape, std::vector<float>(static_cast<std::size_t>(t.num_elements()), -99.0f)});
  KernelIO io{a, {}, in_types, {}, out_types};
  for (const auto& x : in) io.in.push_back(x.data.data());
  for (auto& y : out) io.out.push_back(y.data.data());
  def.reference(io);
  return out;
}

Array one(const std::string& op, const Attrs& attrs, const std::vector<Array>& in) { return run(op, attrs, in).at(0); }

template <typename... KV>
Attrs attrs(KV... kv) {
  Attrs a;
  (a.set(kv.first, kv.second), ...);
  return a;
}
std::pair<const char*, AttrValue> kv(const char* k, AttrValue v) { return {k, std::move(v)}; }
using Ints = std::vector<int64_t>;

const Array kX23{{2, 3}, {0, 1, 2, 3, 4, 5}};

TEST(ShapeSelectOps, Reductions) {
  EXPECT_EQ(one("max", attrs(kv("axis", Ints{0})), {kX23}).data, (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(one("min", attrs(kv("axis", Ints{1}), kv("keepdims", true)), {kX23}).shape, (Shape{2, 1}));
  EXPECT_EQ(one("min", attrs(kv("axis", Ints{1})), {kX23}).data, (std::vector<float>{0, 3}));
  EXPECT_EQ(one("prod", attrs(kv("axis", Ints{1}), kv("exclude", true)), {kX23}).data, (std::vector<float>{0, 4, 10}));
  EXPECT_EQ(one("max_axis", {}, {kX23}).data, (std::vector<float>{5}));
  const Array n2 = one("norm", {}, {Array{{2, 2}, {3, -4, 0, 0}}});
  EXPECT_FLOAT_EQ(n2.data[0], 5.0f);
  EXPECT_EQ(one("norm", attrs(kv("ord", int64_t{1}), kv("axis", Ints{1})), {Array{{2, 2}, {3, -4, -1, 2}}}).data,
            (std::vector<float>{7, 3}));
  EXPECT_THROW(one("norm", attrs(kv("ord", int64_t{3})), {kX23}), Error);
  EXPECT_THROW(one("max", attrs(kv("axis", Ints{2})), {kX23}), Error);
  EXPECT_THROW(one("max", attrs(kv("axis", Ints{1, -1})), {kX23}), Error);
}

TEST(ShapeSelectOps, ArgmaxArgminAndTopk) {
  const Array x{{2, 3}, {1, 5, 5, 7, 0, 7}};
  EXPECT_EQ(one("argmax", attrs(kv("axis", int64_t{1})), {x}).data, (std::vector<float>{1, 0}));  // the first of equals
  EXPECT_EQ(one("argmin", attrs(kv("axis", int64_t{0})), {x}).data, (std::vector<float>{0, 1, 0}));
  const Array all = one("argmax", {}, {x});
  EXPECT_EQ(all.shape, (Shape{1}));
  EXPECT_EQ(all.data, (std::vector<float>{3}));
  EXPECT_EQ(one("argmax", attrs(kv("keepdims", true)), {x}).shape, (Shape{1, 1}));

  const Array t{{2, 4}, {0.3f, 0.1f, 0.4f, 0.2f, 2, -1, 5, 3}};
  EXPECT_EQ(one("topk", attrs(kv("k", int64_t{2})), {t}).data, (std::vector<float>{2, 0, 2, 3}));
  EXPECT_EQ(one("topk", attrs(kv("k", int64_t{2}), kv("ret_typ", std::string("value")), kv("is_ascend", true)), {t}).data,
            (std::vector<float>{0.1f, 0.2f, -1, 2}));
  EXPECT_EQ(one("topk", attrs(kv("k", int64_t{2}), kv("ret_typ", std::string("mask"))), {t}).data,
            (std::vector<float>{1, 0, 1, 0, 0, 0, 1, 1}));
  const auto both = run("topk", attrs(kv("axis", int64_t{0}), kv("ret_typ", std::string("both"))), {t});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].data, (std::vector<float>{2, 0.1f, 5, 3}));
  EXPECT_EQ(both[1].data, (std::vector<float>{1, 0, 1, 1}));
  EXPECT_EQ(one("topk", attrs(kv("k", int64_t{0}), kv("ret_typ", std::string("value"))), {t}).shape, (Shape{2, 4}));
  EXPECT_THROW(one("topk", attrs(kv("k", int64_t{5})), {t}), Error);
}

TEST(ShapeSelectOps, PickTakeOneHotWithFloatIndices) {
  const Array x{{3, 2}, {1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(one("pick", attrs(kv("axis", int64_t{1})), {x, Array{{3}, {0, 1, 0}}}).data, (std::vector<float>{1, 4, 5}));
  EXPECT_EQ(one("pick", attrs(kv("axis", int64_t{0})), {x, Array{{2}, {-1, 7}}}).data, (std::vector<float>{1, 6}));
  EXPECT_EQ(one("pick", attrs(kv("axis", int64_t{1}), kv("mode", std::string("wrap"))), {x, Array{{3}, {-1, 2.9f, 3}}}).data,
            (std::vector<float>{2, 3, 6}));
  EXPECT_THROW(one("pick", attrs(kv("axis", int64_t{1})), {x, Array{{2}, {0, 0}}}), Error);

  const Array take = one("take", {}, {x, Array{{2, 2}, {1, 0, 2, 9}}});
  EXPECT_EQ(take.shape, (Shape{2, 2, 2}));
  EXPECT_EQ(take.data, (std::vector<float>{3, 4, 1, 2, 5, 6, 5, 6}));
  EXPECT_EQ(one("take", attrs(kv("mode", std::string("wrap")), kv("axis", int64_t{1})), {x, Array{{1}, {-1}}}).data,
            (std::vector<float>{2, 4, 6}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(one("take", {}, {x, Array{{2}, {nan, -1e30f}}}).data, (std::vector<float>{1, 2, 1, 2}));

  EXPECT_EQ(one("one_hot", attrs(kv("depth", int64_t{3}), kv("on_value", 5.0), kv("off_value", -1.0)),
                {Array{{3}, {1, 7, -1}}})
                .data,
            (std::vector<float>{-1, 5, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(ShapeSelectOps, GathersTileRepeatReverseSliceLike) {
  EXPECT_EQ(one("tile", attrs(kv("reps", Ints{2})), {Array{{2}, {1, 2}}}).data, (std::vector<float>{1, 2, 1, 2}));
  const Array t = one("tile", attrs(kv("reps", Ints{2, 1, 2})), {Array{{1, 2}, {1, 2}}});
  EXPECT_EQ(t.shape, (Shape{2, 1, 4}));
  EXPECT_EQ(t.data, (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(one("repeat", attrs(kv("repeats", int64_t{2})), {kX23}).shape, (Shape{12}));
  EXPECT_EQ(one("repeat", attrs(kv("repeats", int64_t{2}), kv("axis", int64_t{0})), {kX23}).data,
            (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(one("repeat", attrs(kv("repeats", int64_t{2}), kv("axis", int64_t{1})), {kX23}).data,
            (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  EXPECT_EQ(one("flip", attrs(kv("axis", Ints{0, 1})), {kX23}).data, (std::vector<float>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(one("reverse", attrs(kv("axis", Ints{1})), {kX23}).data, (std::vector<float>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(one("slice_like", attrs(kv("axes", Ints{1})), {kX23, Array{{5, 2}, std::vector<float>(10)}}).data,
            (std::vector<float>{0, 1, 3, 4}));
  EXPECT_THROW(one("slice_like", {}, {kX23, Array{{3, 3}, std::vector<float>(9)}}), Error);
  EXPECT_THROW(one("tile", attrs(kv("reps", Ints{0})), {kX23}), Error);
  EXPECT_THROW(one("repeat", attrs(kv("repeats", int64_t{0})), {kX23}), Error);
  const Array stacked = one("stack", attrs(kv("axis", int64_t{1}), kv("num_args", int64_t{2})), {kX23, kX23});
  EXPECT_EQ(stacked.shape, (Shape{2, 2, 3}));
  EXPECT_EQ(stacked.data, (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_THROW(one("stack", attrs(kv("num_args", int64_t{2})), {kX23, Array{{3, 2}, kX23.data}}), Error);
}

TEST(ShapeSelectOps, DepthToSpaceInvertsSpaceToDepth) {
  // MXNet's example: x of shape (1, 4, 2, 3) holding 0..23.
  Array x{{1, 4, 2, 3}, {}};
  for (int i = 0; i < 24; ++i) x.data.push_back(static_cast<float>(i));
  const Array d = one("depth_to_space", attrs(kv("block_size", int64_t{2})), {x});
  EXPECT_EQ(d.shape, (Shape{1, 1, 4, 6}));
  EXPECT_EQ(d.data, (std::vector<float>{0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20,
                                        3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23}));
  const Array back = one("space_to_depth", attrs(kv("block_size", int64_t{2})), {d});
  EXPECT_EQ(back.shape, x.shape);
  EXPECT_EQ(back.data, x.data);
  EXPECT_THROW(one("space_to_depth", attrs(kv("block_size", int64_t{4})), {x}), Error);
  EXPECT_THROW(one("depth_to_space", attrs(kv("block_size", int64_t{2})), {Array{{2, 3}, kX23.data}}), Error);
}

TEST(ShapeSelectOps, PadModes) {
  const Array x{{1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}};
  auto pad = [&](const std::string& mode) {
    return one("Pad", attrs(kv("mode", mode), kv("pad_width", Ints{0, 0, 0, 0, 1, 0, 2, 1}), kv("constant_value", 9.0)),
               {x});
  };
  EXPECT_EQ(pad("constant").shape, (Shape{1, 1, 3, 6}));
  EXPECT_EQ(pad("constant").data, (std::vector<float>{9, 9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9}));
  EXPECT_EQ(pad("edge").data, (std::vector<float>{1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6}));
  EXPECT_EQ(pad("reflect").data, (std::vector<float>{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
  EXPECT_THROW(one("Pad", attrs(kv("mode", std::string("reflect")), kv("pad_width", Ints{0, 0, 0, 0, 2, 0, 0, 0})), {x}),
               Error);
  EXPECT_THROW(one("Pad", attrs(kv("pad_width", Ints{0, 0, 1, 1})), {x}), Error);
}

TEST(ShapeSelectOps, SequenceMask) {
  // (steps 3, batch 2, 1)
  const Array x{{3, 2, 1}, {1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(one("SequenceMask", attrs(kv("use_sequence_length", true), kv("value", -1.0)), {x, Array{{2}, {1, 3}}}).data,
            (std::vector<float>{1, 2, -1, 4, -1, 6}));
  EXPECT_EQ(one("SequenceMask", attrs(kv("use_sequence_length", true), kv("axis", int64_t{1})),
                {Array{{2, 3}, {1, 2, 3, 4, 5, 6}}, Array{{2}, {2, 0}}})
                .data,
            (std::vector<float>{1, 2, 0, 0, 0, 0}));
  EXPECT_THROW(one("SequenceMask", attrs(kv("use_sequence_length", true)), {x, Array{{3}, {1, 1, 1}}}), Error);
}

TEST(ShapeSelectOps, HostileSizesAreErrorsNotOverflows) {
  const Array x{{2, 3}, kX23.data};
  const int64_t big = int64_t{1} << 40;
  EXPECT_THROW(one("tile", attrs(kv("reps", Ints{big, big})), {x}), Error);
  EXPECT_THROW(one("repeat", attrs(kv("repeats", int64_t{1} << 62)), {x}), Error);
  EXPECT_THROW(one("one_hot", attrs(kv("depth", int64_t{1} << 62)), {x}), Error);
  EXPECT_THROW(one("Pad", attrs(kv("pad_width", Ints{0, int64_t{1} << 50, 0, 0})), {x}), Error);
  EXPECT_THROW(one("depth_to_space", attrs(kv("block_size", int64_t{1} << 33)), {Array{{1, 4, 1, 1}, {1, 2, 3, 4}}}),
               Error);
  EXPECT_THROW(one("space_to_depth", attrs(kv("block_size", int64_t{1} << 33)), {Array{{1, 1, 2, 2}, {1, 2, 3, 4}}}),
               Error);
  EXPECT_THROW(one("topk", attrs(kv("axis", int64_t{5})), {x}), Error);
  EXPECT_THROW(one("take", attrs(kv("axis", int64_t{-3})), {x, Array{{1}, {0}}}), Error);
  EXPECT_THROW(one("argmax", {}, {Array{{0, 3}, {}}}), Error);
}

TEST(ShapeSelectOps, CastToFloat16RoundsAsFloat16) {
  EXPECT_EQ(round_to_half(1.0f + 1.0f / 2048), 1.0f);  // a tie: to even
  EXPECT_EQ(round_to_half(1.0f + 3.0f / 2048), 1.0f + 1.0f / 512);  // a tie: to even (up)
  EXPECT_EQ(round_to_half(0.1f), 0.0999755859375f);
  EXPECT_EQ(round_to_half(65504.0f), 65504.0f);
  EXPECT_EQ(round_to_half(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(round_to_half(65520.0f)));
  EXPECT_EQ(round_to_half(-std::ldexp(1.0f, -24)), -std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(round_to_half(std::ldexp(1.0f, -25)), 0.0f);                     // a tie: to zero
  EXPECT_EQ(round_to_half(std::ldexp(3.0f, -26)), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(round_to_half(std::numeric_limits<float>::quiet_NaN())));
  // Every float16 value is kept; the midpoints between neighbours go to the even one.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const int e = static_cast<int>(h >> 10), m = static_cast<int>(h & 0x3ff);
    const float v = e ? std::ldexp(static_cast<float>(1024 + m), e - 25) : std::ldexp(static_cast<float>(m), -24);
    ASSERT_EQ(round_to_half(v), v) << h;
    const float next = e ? std::ldexp(static_cast<float>(1024 + m + 1), e - 25) : std::ldexp(static_cast<float>(m + 1), -24);
    if (h + 1 < 0x7c00) {
      ASSERT_EQ(round_to_half(0.5f * (v + next)), (m % 2 == 0) ? v : next) << h;
    }
  }
  const Array y = one("Cast", attrs(kv("dtype", std::string("float16"))), {Array{{2}, {0.1f, 70000.0f}}});
  EXPECT_EQ(y.data[0], 0.0999755859375f);
  EXPECT_TRUE(std::isinf(y.data[1]));
  EXPECT_EQ(one("amp_cast", attrs(kv("dtype", std::string("float32"))), {Array{{1}, {0.1f}}}).data[0], 0.1f);
  try {  // integer targets take their dtype (tests/ir/dtype_test.cpp); bfloat16 has no computing form
    one("Cast", attrs(kv("dtype", std::string("bfloat16"))), {Array{{1}, {1}}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos);
  }
}

}  // namespace
}  // namespace hybgen
