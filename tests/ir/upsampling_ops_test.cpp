// Shape rules of Deconvolution, UpSampling and _contrib_BilinearResize2D as
// MXNet 1.9 computes them, and the errors bad attributes and shapes get
// (the kernels themselves: the generic op test).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {
namespace {

Shape out_shape(const std::string& op, const Attrs& attrs, const std::vector<Shape>& inputs) {
  const OpDef& def = find_op(op);
  std::vector<TensorType> in;
  for (const auto& s : inputs) in.push_back(TensorType{s});
  return def.infer(normalize_attrs(def, attrs), in).at(0).shape;
}

// The message of the Error the shape rule throws ("" when none).
std::string error_of(const std::string& op, const Attrs& attrs, const std::vector<Shape>& inputs) {
  try {
    out_shape(op, attrs, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Attrs deconv(std::vector<int64_t> kernel, int64_t filters, std::vector<int64_t> stride = {},
             std::vector<int64_t> pad = {}) {
  Attrs a;
  a.set("kernel", std::move(kernel));
  a.set("num_filter", filters);
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  return a;
}

Attrs with(Attrs a, const std::string& name, AttrValue v) {
  a.set(name, std::move(v));
  return a;
}

TEST(Deconvolution, OutputSizesAndWeights) {
  // s*(in-1) + d*(k-1) + 1 - 2p + adj; MXNet's default is no bias.
  EXPECT_EQ(out_shape("Deconvolution", deconv({4, 4}, 8, {2, 2}, {1, 1}), {{1, 3, 16, 9}, {3, 8, 4, 4}}),
            (Shape{1, 8, 32, 18}));
  EXPECT_EQ(normalize_attrs(find_op("Deconvolution"), deconv({2, 2}, 1)).get_bool("no_bias"), true);
  EXPECT_EQ(out_shape("Deconvolution", with(deconv({3, 3}, 4, {2, 2}, {1, 1}), "adj", std::vector<int64_t>{1, 0}),
                      {{1, 2, 5, 5}, {2, 4, 3, 3}}),
            (Shape{1, 4, 10, 9}));
  // target_shape overrides pad and adj.
  EXPECT_EQ(out_shape("Deconvolution", with(deconv({4, 4}, 2, {2, 2}, {7, 7}), "target_shape", std::vector<int64_t>{7, 8}),
                      {{1, 2, 4, 4}, {2, 2, 4, 4}}),
            (Shape{1, 2, 7, 8}));
  // 1-D (NCW) and groups: the weight is (C_in, num_filter / groups, k).
  EXPECT_EQ(out_shape("Deconvolution", with(deconv({5}, 6, {3}), "num_group", int64_t{2}), {{2, 4, 10}, {4, 3, 5}}),
            (Shape{2, 6, 32}));
}

TEST(Deconvolution, BadAttributesAndShapesSayWhatIsWrong) {
  EXPECT_NE(error_of("Deconvolution", with(deconv({3, 3}, 4, {2, 2}), "adj", std::vector<int64_t>{2, 0}),
                     {{1, 2, 5, 5}, {2, 4, 3, 3}})
                .find("adj"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", with(deconv({2, 2}, 4, {2, 2}), "target_shape", std::vector<int64_t>{99, 10}),
                     {{1, 2, 5, 5}, {2, 4, 2, 2}})
                .find("target_shape"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", deconv({3, 3}, 4), {{1, 2, 5}, {2, 4, 3, 3}}).find("NCHW"), std::string::npos);
  EXPECT_NE(error_of("Deconvolution", deconv({3, 3, 3}, 4), {{1, 2, 5, 5, 5}, {2, 4, 3, 3, 3}}).find("1-D and 2-D"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", deconv({3, 3}, 4), {{1, 2, 5, 5}, {4, 2, 3, 3}}).find("weight has shape"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", with(deconv({3, 3}, 4), "num_group", int64_t{3}), {{1, 2, 5, 5}, {2, 4, 3, 3}})
                .find("num_group"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", deconv({3, 3}, 4, {1, 1}, {5, 5}), {{1, 2, 2, 2}, {2, 4, 3, 3}})
                .find("no output pixels"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", deconv({3, 3}, 4, {int64_t{1} << 40, 1}), {{1, 2, 2, 2}, {2, 4, 3, 3}})
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of("Deconvolution", deconv({3, 3}, 4, {0, 1}), {{1, 2, 2, 2}, {2, 4, 3, 3}}).find("positive"),
            std::string::npos);
}

Attrs upsampling(int64_t scale, const std::string& type, const std::string& mode = "concat", int64_t filters = 0) {
  Attrs a;
  a.set("scale", scale);
  a.set("sample_type", type);
  a.set("multi_input_mode", mode);
  a.set("num_filter", filters);
  return a;
}

TEST(UpSampling, ShapesOfEveryKind) {
  EXPECT_EQ(out_shape("UpSampling", upsampling(3, "nearest"), {{2, 4, 5, 6}}), (Shape{2, 4, 15, 18}));
  // Several inputs reach the first's size times the scale, each by its own factor.
  EXPECT_EQ(out_shape("UpSampling", upsampling(2, "nearest"), {{1, 4, 4, 4}, {1, 3, 2, 2}}), (Shape{1, 7, 8, 8}));
  EXPECT_EQ(out_shape("UpSampling", upsampling(2, "nearest", "sum"), {{1, 4, 4, 4}, {1, 4, 8, 8}}),
            (Shape{1, 4, 8, 8}));
  // Bilinear: a weight (C, 1, 2*scale - scale%2, same).
  EXPECT_EQ(out_shape("UpSampling", upsampling(3, "bilinear", "concat", 5), {{1, 5, 4, 7}, {5, 1, 5, 5}}),
            (Shape{1, 5, 12, 21}));
  EXPECT_EQ(find_op("UpSampling").weight_shapes(upsampling(2, "bilinear", "concat", 5), {1, 5, 4, 7}),
            (std::vector<Shape>{{5, 1, 4, 4}}));
}

TEST(UpSampling, BadInputsSayWhatIsWrong) {
  EXPECT_NE(error_of("UpSampling", upsampling(2, "nearest"), {{1, 4, 4, 4}, {1, 3, 3, 3}}).find("whole factor"),
            std::string::npos);
  EXPECT_NE(error_of("UpSampling", upsampling(2, "nearest", "sum"), {{1, 4, 4, 4}, {1, 3, 8, 8}}).find("channels"),
            std::string::npos);
  EXPECT_NE(error_of("UpSampling", upsampling(2, "bilinear", "concat", 3), {{1, 4, 4, 4}, {4, 1, 4, 4}})
                .find("num_filter"),
            std::string::npos);
  EXPECT_NE(error_of("UpSampling", upsampling(2, "bilinear", "concat", 4), {{1, 4, 4, 4}}).find("data and weight"),
            std::string::npos);
  EXPECT_NE(error_of("UpSampling", upsampling(0, "nearest"), {{1, 4, 4, 4}}).find("scale"), std::string::npos);
  EXPECT_NE(error_of("UpSampling", with(upsampling(2, "nearest"), "num_args", int64_t{2}), {{1, 4, 4, 4}})
                .find("num_args"),
            std::string::npos);
}

Attrs resize(const std::string& mode, int64_t h = 1, int64_t w = 1, double sh = 0, double sw = 0) {
  Attrs a;
  a.set("mode", mode);
  a.set("height", h);
  a.set("width", w);
  a.set("scale_height", sh);
  a.set("scale_width", sw);
  return a;
}

TEST(BilinearResize2D, OutputSizesAsMxnetComputesThem) {
  const std::string op = "_contrib_BilinearResize2D";
  EXPECT_EQ(out_shape(op, resize("size", 17, 13), {{1, 2, 5, 6}}), (Shape{1, 2, 17, 13}));
  EXPECT_EQ(out_shape(op, resize("size", 17, 13, 1.5, 0.5), {{1, 2, 5, 7}}), (Shape{1, 2, 7, 3}));
  EXPECT_EQ(out_shape(op, resize("odd_scale", 1, 1, 2.0, 1.5), {{1, 2, 5, 8}}), (Shape{1, 2, 9, 12}));
  EXPECT_EQ(out_shape(op, resize("like"), {{1, 2, 5, 8}, {3, 1, 11, 4}}), (Shape{1, 2, 11, 4}));
  EXPECT_EQ(out_shape(op, resize("to_even_down"), {{1, 2, 5, 8}}), (Shape{1, 2, 4, 8}));
  EXPECT_EQ(out_shape(op, resize("to_even_up"), {{1, 2, 5, 8}}), (Shape{1, 2, 6, 8}));
  EXPECT_EQ(out_shape(op, resize("to_odd_down"), {{1, 2, 5, 8}}), (Shape{1, 2, 5, 7}));
  EXPECT_EQ(out_shape(op, resize("to_odd_up"), {{1, 2, 5, 8}}), (Shape{1, 2, 5, 9}));
  EXPECT_EQ(lookup_op("BilinearResize2D"), &find_op(op));
}

TEST(BilinearResize2D, BadModesAndSizesSayWhatIsWrong) {
  const std::string op = "_contrib_BilinearResize2D";
  EXPECT_NE(error_of(op, resize("like"), {{1, 2, 5, 8}}).find("2 inputs"), std::string::npos);
  EXPECT_NE(error_of(op, resize("size"), {{1, 2, 5, 8}, {1, 2, 5, 8}}).find("1 input"), std::string::npos);
  EXPECT_NE(error_of(op, resize("size", 1, 1, 2.0), {{1, 2, 5, 8}}).find("scale_width"), std::string::npos);
  EXPECT_NE(error_of(op, resize("odd_scale"), {{1, 2, 5, 8}}).find("scale_height"), std::string::npos);
  EXPECT_NE(error_of(op, resize("size", 40000, 2), {{1, 2, 5, 8}}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of(op, resize("size", 1, 1, 1e5, 1e5), {{1, 2, 5, 8}}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of(op, resize("to_odd_down"), {{1, 2, 5, 8, 3}}).find("NCHW"), std::string::npos);
}

}  // namespace
}  // namespace hybgen
