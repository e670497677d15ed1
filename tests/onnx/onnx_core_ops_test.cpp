// The plain ONNX converters (gen/io/onnx/onnx_core_ops.cpp) against references
// written out here: Gemm's alpha/beta/transA/transB and C shapes, MatMul's
// forms, Softmax by opset, Clip by opset, the n-ary ops, the shape ops.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "io/onnx/onnx_model.h"
#include "ir/error.h"
#include "onnx/onnx_builder.h"

namespace hybgen {
namespace {

using testing_onnx::expect_near;
using testing_onnx::import_error;
using testing_onnx::OnnxBuilder;
using testing_onnx::run_graph;
using testing_onnx::seeded;
using testing_onnx::values;

// Gemm over every combination of transA, transB, a constant or runtime B and
// the shapes C may have.
TEST(OnnxCoreOps, GemmMatchesItsDefinition) {
  const int64_t m = 3, k = 4, n = 5;
  const std::vector<float> a = seeded(m * k, 1), bm = seeded(k * n, 2);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (bool b_const : {true, false})
        for (const Shape& c_shape : {Shape{}, Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n}, Shape{1}}) {
          SCOPED_TRACE("transA " + std::to_string(ta) + " transB " + std::to_string(tb) + " B constant " +
                       std::to_string(b_const) + " C " + shape_str(c_shape));
          const float alpha = 0.5f, beta = 2.0f;
          const std::vector<float> c = seeded(static_cast<std::size_t>(num_elements(c_shape)), 3);
          // A stored as (m, k) or (k, m); B as (k, n) or (n, k).
          std::vector<float> a_st(a.size()), b_st(bm.size());
          for (int64_t i = 0; i < m; ++i)
            for (int64_t q = 0; q < k; ++q) a_st[ta ? q * m + i : i * k + q] = a[i * k + q];
          for (int64_t q = 0; q < k; ++q)
            for (int64_t j = 0; j < n; ++j) b_st[tb ? j * k + q : q * n + j] = bm[q * n + j];
          OnnxBuilder g(13);
          g.input("a", ta ? Shape{k, m} : Shape{m, k});
          if (b_const) g.initializer("b", tb ? Shape{n, k} : Shape{k, n}, b_st);
          else g.input("b", tb ? Shape{n, k} : Shape{k, n});
          g.initializer("c", c_shape, c);
          auto& node = g.node("Gemm", {"a", "b", "c"}, {"y"});
          OnnxBuilder::attr(node, "alpha", alpha);
          OnnxBuilder::attr(node, "beta", beta);
          OnnxBuilder::attr(node, "transA", ta);
          OnnxBuilder::attr(node, "transB", tb);
          g.output("y");
          std::map<std::string, Tensor> in = {{"a", Tensor::from_vector(ta ? Shape{k, m} : Shape{m, k}, a_st)}};
          if (!b_const) in["b"] = Tensor::from_vector(tb ? Shape{n, k} : Shape{k, n}, b_st);
          const auto out = run_graph(g.import(), in);
          std::vector<float> expect(m * n);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double s = 0;
              for (int64_t q = 0; q < k; ++q) s += a[i * k + q] * bm[q * n + j];
              const std::size_t ci = c_shape.size() == 2 ? (c_shape[0] == 1 ? j : c_shape[1] == 1 ? i : i * n + j)
                                     : c_shape.size() == 1 && c_shape[0] == n ? j
                                                                              : 0;
              expect[i * n + j] = static_cast<float>(alpha * s + beta * c[ci]);
            }
          expect_near(values(out[0]), expect);
        }
}

TEST(OnnxCoreOps, MatMulConstantWeightBatchedAndTwoDimensional) {
  // A (2, 3, 4) x constant B (4, 5): FullyConnected over the leading axes.
  // A (2, 2, 3, 4) x runtime B (2, 2, 4, 5): batch_dot over 4 matrices.
  const std::vector<float> a = seeded(48, 1), b = seeded(80, 2);
  for (bool b_const : {true, false}) {
    OnnxBuilder g(13);
    const Shape sa = b_const ? Shape{2, 6, 4} : Shape{2, 2, 3, 4};
    const Shape sb = b_const ? Shape{4, 5} : Shape{2, 2, 4, 5};
    g.input("a", sa);
    if (b_const) g.initializer("b", sb, std::vector<float>(b.begin(), b.begin() + 20));
    else g.input("b", sb);
    g.node("MatMul", {"a", "b"}, {"y"});
    g.output("y");
    std::map<std::string, Tensor> in = {{"a", Tensor::from_vector(sa, a)}};
    if (!b_const) in["b"] = Tensor::from_vector(sb, b);
    const Graph graph = g.import();
    const auto out = run_graph(graph, in);
    const int64_t batches = 4, rows = b_const ? 3 : 3;
    std::vector<float> expect;
    for (int64_t t = 0; t < batches; ++t)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          double s = 0;
          for (int64_t q = 0; q < 4; ++q)
            s += a[(t * rows + i) * 4 + q] * b[(b_const ? 0 : t * 20) + q * 5 + j];
          expect.push_back(static_cast<float>(s));
        }
    Shape so = sa;
    so.back() = 5;
    EXPECT_EQ(out[0].shape(), so);
    expect_near(values(out[0]), expect);
  }
}

TEST(OnnxCoreOps, MatMulRefusesWhatItCannotExpress) {
  OnnxBuilder g(13);
  g.input("a", {4});
  g.input("b", {4});
  g.node("MatMul", {"a", "b"}, {"y"}, "mm");
  g.output("y");
  EXPECT_NE(import_error(g).find("node 'mm' (MatMul): 1-D by 1-D (a scalar result) is not supported"), std::string::npos)
      << import_error(g);
}

std::vector<float> softmax_rows(const std::vector<float>& x, int64_t rows, int64_t cols, bool log) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -1e30, s = 0;
    for (int64_t c = 0; c < cols; ++c) mx = std::max<double>(mx, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - mx);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = static_cast<float>(log ? x[r * cols + c] - mx - std::log(s) : std::exp(x[r * cols + c] - mx) / s);
  }
  return y;
}

TEST(OnnxCoreOps, SoftmaxFlattensBeforeOpset13AndTakesOneAxisAfter) {
  const Shape shape = {2, 3, 4};
  const std::vector<float> x = seeded(24, 5);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const bool log = std::string(op) == "LogSoftmax";
    // Opset 11, axis 1: the (3, 4) block of each sample is one row of 12.
    OnnxBuilder old(11);
    old.input("x", shape);
    OnnxBuilder::attr(old.node(op, {"x"}, {"y"}), "axis", 1);
    old.output("y");
    expect_near(values(run_graph(old.import(), {{"x", Tensor::from_vector(shape, x)}})[0]), softmax_rows(x, 2, 12, log));
    // Opset 13, axis -1 by default: rows of 4.
    OnnxBuilder now(13);
    now.input("x", shape);
    now.node(op, {"x"}, {"y"});
    now.output("y");
    expect_near(values(run_graph(now.import(), {{"x", Tensor::from_vector(shape, x)}})[0]), softmax_rows(x, 6, 4, log));
  }
}

TEST(OnnxCoreOps, ClipBoundsAsAttributesOrInputs) {
  const std::vector<float> x = {-3, -1, 0, 0.5f, 2, 7};
  auto clipped = [&](float lo, float hi) {
    std::vector<float> y;
    for (float v : x) y.push_back(std::min(std::max(v, lo), hi));
    return y;
  };
  OnnxBuilder old(9);
  old.input("x", {6});
  auto& n = old.node("Clip", {"x"}, {"y"});
  OnnxBuilder::attr(n, "min", -1.0f);
  OnnxBuilder::attr(n, "max", 1.0f);
  old.output("y");
  EXPECT_EQ(values(run_graph(old.import(), {{"x", Tensor::from_vector({6}, x)}})[0]), clipped(-1, 1));

  OnnxBuilder constant(13);
  constant.input("x", {6});
  constant.initializer("hi", {}, {0.5f});
  constant.node("Clip", {"x", "", "hi"}, {"y"});
  constant.output("y");
  EXPECT_EQ(values(run_graph(constant.import(), {{"x", Tensor::from_vector({6}, x)}})[0]), clipped(-1e30f, 0.5f));

  // Runtime bounds, min > max: every value is max.
  OnnxBuilder runtime(13);
  runtime.input("x", {6});
  runtime.input("lo", {});
  runtime.input("hi", {});
  runtime.node("Clip", {"x", "lo", "hi"}, {"y"});
  runtime.output("y");
  const Graph g = runtime.import();
  auto run = [&](float lo, float hi) {
    return values(run_graph(g, {{"x", Tensor::from_vector({6}, x)}, {"lo", Tensor::from_vector({}, {lo})},
                                {"hi", Tensor::from_vector({}, {hi})}})[0]);
  };
  EXPECT_EQ(run(-1, 1), clipped(-1, 1));
  EXPECT_EQ(run(2, 1), std::vector<float>(6, 1.0f));
}

TEST(OnnxCoreOps, NaryOpsAndBroadcasting) {
  OnnxBuilder g(13);
  g.input("a", {2, 3});
  g.input("b", {3});
  g.input("c", {2, 1});
  g.node("Sum", {"a", "b", "c"}, {"s"});
  g.node("Max", {"a", "b", "c"}, {"mx"});
  g.node("Min", {"a"}, {"mn"});
  g.node("Sub", {"s", "b"}, {"d"});
  g.node("Div", {"d", "c"}, {"q"});
  g.output("s");
  g.output("mx");
  g.output("mn");
  g.output("q");
  const std::vector<float> a = {1, -2, 3, -4, 5, -6}, b = {0.5f, 1, 2}, c = {2, -1};
  const auto out = run_graph(g.import(), {{"a", Tensor::from_vector({2, 3}, a)}, {"b", Tensor::from_vector({3}, b)},
                                          {"c", Tensor::from_vector({2, 1}, c)}});
  std::vector<float> s, mx, q;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      s.push_back(a[i * 3 + j] + b[j] + c[i]);
      mx.push_back(std::max({a[i * 3 + j], b[j], c[i]}));
      q.push_back((a[i * 3 + j] + c[i]) / c[i]);
    }
  expect_near(values(out[0]), s);
  expect_near(values(out[1]), mx);
  EXPECT_EQ(values(out[2]), a);
  expect_near(values(out[3]), q);
}

TEST(OnnxCoreOps, ShapeOpsAndLayers) {
  OnnxBuilder g(11);
  g.input("x", {1, 2, 1, 3});
  g.node("Squeeze", {"x"}, {"sq"});  // (2, 3)
  g.node("Transpose", {"sq"}, {"t"});  // (3, 2)
  auto& u = g.node("Unsqueeze", {"t"}, {"u"});
  OnnxBuilder::attr(u, "axes", std::vector<int64_t>{0, -1});  // (1, 3, 2, 1)
  auto& f = g.node("Flatten", {"u"}, {"f"});
  OnnxBuilder::attr(f, "axis", 2);  // (3, 2)
  auto& d = g.node("Dropout", {"f"}, {"dr"});
  OnnxBuilder::attr(d, "ratio", 0.3f);
  auto& cat = g.node("Concat", {"dr", "t"}, {"y"});
  OnnxBuilder::attr(cat, "axis", -1);  // (3, 4)
  g.output("y");
  const Graph graph = g.import();
  EXPECT_EQ(graph.type("y").shape, (Shape{3, 4}));
  const auto out = run_graph(graph, {{"x", Tensor::from_vector({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(values(out[0]), (std::vector<float>{1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6}));
}

TEST(OnnxCoreOps, BatchNormPoolingAndActivations) {
  OnnxBuilder g(15);
  g.input("x", {1, 2, 4, 4});
  g.initializer("scale", {2}, {1.5f, -0.5f});
  g.initializer("bias", {2}, {0.1f, 0.2f});
  g.initializer("mean", {2}, {0.3f, -0.2f});
  g.initializer("var", {2}, {0.8f, 1.2f});
  auto& bn = g.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"b"});
  OnnxBuilder::attr(bn, "epsilon", 1e-3f);
  OnnxBuilder::attr(bn, "momentum", 0.9f);
  auto& ap = g.node("AveragePool", {"b"}, {"p"});
  OnnxBuilder::attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  OnnxBuilder::attr(ap, "strides", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
  g.node("Sigmoid", {"p"}, {"y"});
  g.output("y");
  const std::vector<float> x = seeded(32, 8);
  const float scale[2] = {1.5f, -0.5f}, bias[2] = {0.1f, 0.2f}, mean[2] = {0.3f, -0.2f}, var[2] = {0.8f, 1.2f};
  std::vector<float> expect;
  for (int c = 0; c < 2; ++c)
    for (int oi = 0; oi < 2; ++oi)
      for (int oj = 0; oj < 2; ++oj) {
        double s = 0;
        int count = 0;
        for (int ki = 0; ki < 3; ++ki)
          for (int kj = 0; kj < 3; ++kj) {
            const int i = oi * 2 + ki - 1, j = oj * 2 + kj - 1;
            if (i < 0 || i >= 4 || j < 0 || j >= 4) continue;  // count_include_pad = 0
            ++count;
            s += (x[(c * 4 + i) * 4 + j] - mean[c]) / std::sqrt(var[c] + 1e-3) * scale[c] + bias[c];
          }
        expect.push_back(static_cast<float>(1.0 / (1.0 + std::exp(-s / count))));
      }
  expect_near(values(run_graph(g.import(), {{"x", Tensor::from_vector({1, 2, 4, 4}, x)}})[0]), expect);
}

TEST(OnnxCoreOps, RefusalsUpFront) {
  OnnxBuilder g(15);
  g.input("x", {1, 1, 5, 5});
  g.initializer("w", {1, 1, 3, 3}, seeded(9, 1));
  auto& conv = g.node("Conv", {"x", "w"}, {"c"}, "conv");
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{0, 0, -1, 1});
  auto& pool = g.node("AveragePool", {"c"}, {"p"}, "pool");
  OnnxBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(pool, "dilations", std::vector<int64_t>{2, 2});
  auto& bn = g.node("BatchNormalization", {"p", "w", "w", "w", "w"}, {"b"}, "bn");
  OnnxBuilder::attr(bn, "training_mode", 1);
  auto& selu = g.node("Selu", {"b"}, {"y"}, "selu");
  OnnxBuilder::attr(selu, "alpha", 2.0f);
  g.output("y");
  const std::string e = import_error(g);
  EXPECT_NE(e.find("4 problems before conversion"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'conv' (Conv): attribute 'pads' = [0, 0, -1, 1]: negative padding"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'pool' (AveragePool): attribute 'dilations' = [2, 2]"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'bn' (BatchNormalization): attribute 'training_mode' = 1"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'selu' (Selu): attribute 'alpha' = 2"), std::string::npos) << e;
}

}  // namespace
}  // namespace hybgen
