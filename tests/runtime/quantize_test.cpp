// quantize() (runtime-lite/quantize.h): a block quantized on calibration
// batches runs int8 eagerly on the reference interpreter, hybridized as
// generated int8 code with the same bits, exports the int8 graph, composes
// in a trace, and stays within a worst-case bound of the float block.
#include "runtime-lite/quantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace hybgen {
namespace {

// conv 3x3 (relu) -> max pool -> dense (relu) -> dense: every node has an int8 kernel.
class QuantNet : public HybridBlock {
 public:
  QuantNet() : HybridBlock("quantnet") {
    conv = register_child(
        std::make_shared<nn::Conv2D>(4, Shape{3, 3}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, 1, true, "relu"));
    pool = register_child(std::make_shared<nn::MaxPool2D>(Shape{2, 2}));
    fc1 = register_child(std::make_shared<nn::Dense>(16, "relu"));
    fc2 = register_child(std::make_shared<nn::Dense>(3));
  }
  Tensor hybrid_forward(const Ops&, const Tensor& x) override { return (*fc2)((*fc1)((*pool)((*conv)(x)))); }
  std::shared_ptr<nn::Conv2D> conv;
  std::shared_ptr<nn::MaxPool2D> pool;
  std::shared_ptr<nn::Dense> fc1, fc2;
};

const Shape kQuantNetInput{2, 1, 8, 8};

// Seeded "images" in [0, 1).
std::vector<Tensor> calibration_batches(int count, uint64_t seed) {
  std::vector<Tensor> out;
  for (int i = 0; i < count; ++i) out.push_back(Tensor::random_uniform(kQuantNetInput, 0.0f, 1.0f, seed + i));
  return out;
}

std::shared_ptr<QuantNet> seeded_net() {
  auto net = std::make_shared<QuantNet>();
  net->initialize(init::Xavier(), 11);
  return net;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * 4) == 0;
}

HybridizeOptions quick_jit() {
  HybridizeOptions options;
  options.compile = true;
  options.cxx_flags = "-O1 -march=native";  // the test checks bits, not speed
  options.tiered = false;                   // the first call runs the library
  return options;
}

// How far the int8 model's outputs can be from the float model's, from the
// arithmetic of TFLite's scheme, on values inside their calibrated ranges
// (minmax on the data the bounds are checked on, so nothing clips). Every
// rounding error is at most half its step: the input's quantize, each
// weight (s_w / 2), each bias (s_x s_w / 2), and the requantized output (a
// rounding high multiply then a rounding shift: one step at most). With W~
// the dequantized int8 weights, a layer's error is
//   W~ x~ - W x = W~ (x~ - x) + (W~ - W) x + bias rounding + requantization,
// and relu, clip, max pooling and reshapes are 1-Lipschitz (clamping to a
// range that holds the float value only shrinks an error).
//   worst: every error at its largest and of the sign that adds up:
//     ||W~_c||_1 err(x) + fan_in * s_w[c] / 2 * max|x| + s_x s_w[c] / 2 + s_out.
//     Always true (a larger difference is a bug), but far from what happens.
//   sigma: the standard quantization-noise model (each rounding error
//     independent, uniform, variance step^2 / 12), which SQNR assumes:
//     ||W~_c||_2^2 var(x) + fan_in * max|x|^2 * s_w[c]^2 / 12 + (s_x s_w[c])^2 / 12
//     + s_out^2 / 6 (two roundings). The output error is a sum of many such
//     terms, close to normal, so four sigmas bound it with high confidence.
struct ErrorBound {
  double worst = 0, sigma = 0;
};

ErrorBound int8_error_bound(const Graph& g) {
  std::map<std::string, double> worst, var;
  for (const auto& in : g.inputs) worst[in] = var[in] = 0.0;
  const auto step = [&](const std::string& v) { return static_cast<double>(g.type(v).quantization.scale.at(0)); };
  for (const Node& n : g.nodes) {
    const std::string& out = n.outputs.at(0);
    const std::string& in = n.inputs.at(0);
    if (n.op == "quantize") {
      worst[out] = worst.at(in) + step(out) / 2;
      var[out] = var.at(in) + step(out) * step(out) / 12;
    } else if (n.op == "Convolution" || n.op == "FullyConnected") {
      const TensorType& x = g.type(in);
      const double s_x = x.quantization.scale.at(0), zp = static_cast<double>(x.quantization.zero_point.at(0));
      const double max_x = s_x * std::max(std::fabs(-128.0 - zp), std::fabs(127.0 - zp));
      const Constant& w = g.constants.at(n.inputs[1]);
      EXPECT_EQ(w.type.dtype, DType::kInt8) << n.name;
      const int64_t channels = w.type.shape[0], fan_in = w.type.num_elements() / channels;
      const auto* q = reinterpret_cast<const int8_t*>(w.data.data());
      const double s_out = step(out);
      double w_out = 0, v_out = 0;
      for (int64_t c = 0; c < channels; ++c) {
        const double s_w = w.type.quantization.scale.at(static_cast<std::size_t>(c));
        double l1 = 0, l2 = 0;
        for (int64_t k = 0; k < fan_in; ++k) {
          const double wk = q[c * fan_in + k] * s_w;
          l1 += std::fabs(wk);
          l2 += wk * wk;
        }
        const double fan = static_cast<double>(fan_in);
        w_out = std::max(w_out, l1 * worst.at(in) + fan * s_w / 2 * max_x + s_x * s_w / 2 + s_out);
        v_out = std::max(v_out, l2 * var.at(in) + fan * max_x * max_x * s_w * s_w / 12 +
                                    (s_x * s_w) * (s_x * s_w) / 12 + s_out * s_out / 6);
      }
      worst[out] = w_out;
      var[out] = v_out;
    } else if (n.op == "Activation" || n.op == "clip" || n.op == "Pooling" || n.op == "Flatten" || n.op == "Reshape" ||
               n.op == "dequantize") {
      if (n.op == "Pooling") {
        EXPECT_EQ(n.attrs.get_string("pool_type"), "max") << n.name;
      }
      if (n.op == "Activation") {
        EXPECT_EQ(n.attrs.get_string("act_type"), "relu") << n.name;
      }
      worst[out] = worst.at(in);
      var[out] = var.at(in);
    } else {
      ADD_FAILURE() << "no error bound for " << n.op << " (" << n.name << ")";
      return {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    }
  }
  ErrorBound b;
  for (const auto& out : g.outputs) {
    b.worst = std::max(b.worst, worst.at(out));
    b.sigma = std::max(b.sigma, std::sqrt(var.at(out)));
  }
  return b;
}

float max_abs(const Tensor& t) {
  float m = 0;
  for (int64_t i = 0; i < t.size(); ++i) m = std::max(m, std::fabs(t.data()[i]));
  return m;
}

TEST(Quantize, EagerInt8EqualsTheGeneratedCodeAndStaysWithinItsBoundOfFloat) {
  auto net = seeded_net();
  const std::vector<Tensor> calibration = calibration_batches(8, 100);
  const auto q = quantize(*net, calibration);
  // Every layer is int8; nothing stayed float.
  for (const std::string& node : {net->conv->prefix() + "fwd", net->fc1->prefix() + "fwd", net->fc2->prefix() + "fwd"})
    EXPECT_NE(std::find(q->int8_nodes().begin(), q->int8_nodes().end(), node), q->int8_nodes().end()) << node << "\n"
                                                                                                      << q->report();
  EXPECT_TRUE(q->float_nodes().empty()) << q->report();
  EXPECT_EQ(q->sqnr().size(), q->int8_nodes().size());
  EXPECT_NE(q->report().find("SQNR of each int8 node"), std::string::npos) << q->report();

  // On the calibration data: within the scheme's worst case, and within
  // four sigmas of its noise model (the worst case alone is loose enough to
  // pass an output of zeros).
  const ErrorBound bound = int8_error_bound(q->graph());
  float largest = 0, worst = 0;
  double squares = 0;
  int64_t count = 0;
  for (const Tensor& x : calibration) {
    const Tensor f = (*net)(x), i8 = (*q)(x);
    worst = std::max(worst, max_abs_diff(i8, f));
    largest = std::max(largest, max_abs(f));
    for (int64_t i = 0; i < f.size(); ++i) squares += std::pow(i8.data()[i] - f.data()[i], 2.0);
    count += f.size();
  }
  const double rms = std::sqrt(squares / static_cast<double>(count));
  std::printf("int8 vs float: max |diff| %.5f (rms %.5f), worst case %.5f, noise model sigma %.5f, largest %.4f\n",
              worst, rms, bound.worst, bound.sigma, largest);
  // The float reference's own rounding: a few ulps of the largest output.
  EXPECT_LE(worst, bound.worst + 1e-5 * largest);
  EXPECT_LE(worst, 4 * bound.sigma);
  EXPECT_LT(4 * bound.sigma, 0.05 * largest);  // the model's bound says something
  EXPECT_GT(worst, 0.0f);                      // it did run in int8

  // On new data: eager (reference int8 kernels) and the compiled generated code agree bit for bit.
  const Tensor x = Tensor::random_uniform(kQuantNetInput, 0.0f, 1.0f, 7);
  const Tensor eager = (*q)(x);
  q->hybridize(true, quick_jit());
  const Tensor generated = (*q)(x);
  ASSERT_NE(q->first_call_cost(), nullptr);
  EXPECT_TRUE(q->first_call_cost()->compiled) << q->first_call_cost()->why_not_compiled;
  EXPECT_TRUE(same_bits(eager, generated)) << "max |diff| " << max_abs_diff(eager, generated);
  const Tensor generated_again = (*q)(calibration[0]);
  q->hybridize(false);
  EXPECT_TRUE(same_bits(generated_again, (*q)(calibration[0])));
}

// Without a compiler the optimized int8 graph runs on the interpreter: the same bits.
TEST(Quantize, HybridizedWithoutACompilerGivesTheSameBits) {
  auto net = seeded_net();
  const auto q = quantize(*net, calibration_batches(4, 200));
  const Tensor x = Tensor::random_uniform(kQuantNetInput, 0.0f, 1.0f, 9);
  const Tensor eager = (*q)(x);
  HybridizeOptions interpreted;
  interpreted.compile = false;
  q->hybridize(true, interpreted);
  EXPECT_TRUE(same_bits(eager, (*q)(x)));
  EXPECT_FALSE(q->first_call_cost()->compiled);
}

// export_model writes the int8 graph; a block around the quantized one traces
// its int8 nodes and hybridizes them with the rest.
TEST(Quantize, ExportsTheInt8GraphAndComposesInABlock) {
  auto net = seeded_net();
  const auto q = quantize(*net, calibration_batches(4, 300));
  const Tensor x = Tensor::random_uniform(kQuantNetInput, 0.0f, 1.0f, 3);
  const Tensor eager = (*q)(x);

  TempDir dir("quantize-export");
  q->export_model(dir.path() + "/q");
  const Graph exported = load_model(dir.path() + "/q.json");
  EXPECT_EQ(exported.constants.at(net->fc1->prefix() + "weight").type.dtype, DType::kInt8);
  EXPECT_EQ(exported.type("data").dtype, DType::kFloat32);
  EXPECT_TRUE(same_bits(Interpreter(exported).run({{"data", x}})[0], eager));

  auto outer = std::make_shared<nn::HybridSequential>();
  outer->add(q);
  outer->add(std::make_shared<nn::Activation>("relu"));
  Tensor expected = eager.copy();
  for (int64_t i = 0; i < expected.size(); ++i) expected.data()[i] = std::max(expected.data()[i], 0.0f);
  EXPECT_TRUE(same_bits((*outer)(x), expected));
  const Graph traced = outer->trace({kQuantNetInput}, "outer");
  EXPECT_EQ(traced.constants.at(net->conv->prefix() + "weight").type.dtype, DType::kInt8);
  outer->hybridize(true, quick_jit());
  EXPECT_TRUE(same_bits((*outer)(x), expected));
  EXPECT_TRUE(outer->first_call_cost()->compiled) << outer->first_call_cost()->why_not_compiled;
}

// The float block and its int8 form in one trace: their weights share names,
// which the int8 copies give way on.
class Int8MinusFloat : public HybridBlock {
 public:
  Int8MinusFloat(std::shared_ptr<HybridBlock> float_net, std::shared_ptr<HybridBlock> int8_net)
      : HybridBlock("int8minusfloat") {
    int8 = register_child(std::move(int8_net));
    fp32 = register_child(std::move(float_net));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.broadcast_sub((*int8)(x), (*fp32)(x)); }
  std::shared_ptr<HybridBlock> int8, fp32;
};

TEST(Quantize, TheFloatAndInt8FormsOfABlockTraceTogether) {
  auto net = seeded_net();
  const auto q = quantize(*net, calibration_batches(2, 600));
  auto both = std::make_shared<Int8MinusFloat>(net, q);
  const Graph g = both->trace({kQuantNetInput}, "both");
  const std::string weight = net->conv->prefix() + "weight";
  EXPECT_EQ(g.constants.at(weight).type.dtype, DType::kFloat32);
  EXPECT_EQ(g.constants.at(weight + "_1").type.dtype, DType::kInt8);

  const Tensor x = Tensor::random_uniform(kQuantNetInput, 0.0f, 1.0f, 5);
  const Tensor eager = (*both)(x);
  Tensor expected = (*q)(x).copy();
  const Tensor f = (*net)(x);
  for (int64_t i = 0; i < expected.size(); ++i) expected.data()[i] -= f.data()[i];
  EXPECT_TRUE(same_bits(eager, expected));
  both->hybridize(true, quick_jit());
  EXPECT_LE(max_abs_diff((*both)(x), eager), 1e-5f);  // the float half: another summation order
}

// Two inputs: each batch lists one call's inputs in order.
class TwoInputs : public HybridBlock {
 public:
  TwoInputs() : HybridBlock("twoinputs") {
    a = register_child(std::make_shared<nn::Dense>(6, "relu"));
    b = register_child(std::make_shared<nn::Dense>(6));
  }
  std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& x) override {
    return {F.broadcast_add((*a)(x[0]), (*b)(x[1]))};
  }
  using HybridBlock::hybrid_forward;
  std::shared_ptr<nn::Dense> a, b;
};

TEST(Quantize, BlocksOfSeveralInputs) {
  auto net = std::make_shared<TwoInputs>();
  net->initialize(init::Xavier(), 2);
  std::vector<std::vector<Tensor>> batches;
  for (uint64_t i = 0; i < 4; ++i)
    batches.push_back({Tensor::random_uniform({3, 5}, -1, 1, i), Tensor::random_uniform({3, 4}, -1, 1, 50 + i)});
  const auto q = quantize(*net, batches);
  EXPECT_EQ(q->graph().inputs, (std::vector<std::string>{"data0", "data1"}));
  EXPECT_EQ(q->int8_nodes().size(), 4u) << q->report();  // two dense, relu, add
  const std::vector<Tensor> x = {Tensor::random_uniform({3, 5}, -1, 1, 9), Tensor::random_uniform({3, 4}, -1, 1, 8)};
  // Near float on the calibration data, where nothing clips; inputs fed in another order would not be.
  for (const auto& b : batches) {
    const Tensor fp32 = (*net)(b)[0];
    EXPECT_LT(max_abs_diff((*q)(b)[0], fp32), 0.05f * max_abs(fp32));
  }
  const Tensor eager = (*q)(x)[0];
  q->hybridize(true, quick_jit());
  EXPECT_TRUE(same_bits((*q)(x)[0], eager));
  EXPECT_ERROR(quantize(*net, {batches[0], {x[0], x[1], x[0]}}),
               "calibration batch 2 has shapes (3, 5), (3, 4), (3, 5)");
  EXPECT_ERROR((*q)(x[0]), "takes 2 inputs (as it was quantized), given 1");
}

TEST(Quantize, OptionsChooseTheRangesAndKeepNodesFloat) {
  auto net = seeded_net();
  const std::vector<Tensor> calibration = calibration_batches(4, 400);
  const std::string fc2 = net->fc2->prefix() + "fwd";
  PostTrainingOptions options;
  options.method = CalibrationMethod::kPercentile;
  options.percentile = 90.0;
  options.keep_float = {fc2};
  const auto q = quantize(*net, calibration, options);
  EXPECT_EQ(std::find(q->int8_nodes().begin(), q->int8_nodes().end(), fc2), q->int8_nodes().end());
  ASSERT_EQ(q->float_nodes().size(), 1u) << q->report();
  EXPECT_EQ(q->float_nodes()[0].node, fc2);
  EXPECT_NE(q->float_nodes()[0].reason.find("keep-float"), std::string::npos) << q->float_nodes()[0].reason;
  EXPECT_NE(q->report().find("'" + fc2 + "': "), std::string::npos) << q->report();
  EXPECT_EQ(q->graph().constants.at(net->fc2->prefix() + "weight").type.dtype, DType::kFloat32);
  EXPECT_EQ(q->quantization().options.method, CalibrationMethod::kPercentile);

  // A 90th percentile clips the input's range below minmax's.
  const auto minmax = quantize(*net, calibration);
  const auto input_scale = [](const QuantizedBlock& b) {
    for (const Node& n : b.graph().nodes)
      if (n.op == "quantize" && n.inputs[0] == "data") return b.graph().type(n.outputs[0]).quantization.scale.at(0);
    return 0.0f;
  };
  EXPECT_LT(input_scale(*q), input_scale(*minmax));
  EXPECT_GT(input_scale(*q), 0.0f);
}

TEST(Quantize, BadInputsGiveClearErrors) {
  auto net = seeded_net();
  const std::vector<Tensor> calibration = calibration_batches(2, 500);
  EXPECT_ERROR(quantize(*net, std::vector<Tensor>{}), "no calibration batches");
  EXPECT_ERROR(quantize(*net, {calibration[0], Tensor::random_uniform({1, 1, 8, 8}, 0, 1, 1)}),
               "calibration batch 2 has shapes (1, 1, 8, 8), batch 1 (2, 1, 8, 8)");

  PostTrainingOptions misspelt;
  misspelt.keep_float = {"quantnet_dense9_fwd"};
  EXPECT_ERROR(quantize(*net, calibration, misspelt),
               "no node 'quantnet_dense9_fwd' (its nodes: '" + net->conv->prefix());
  PostTrainingOptions percentile;
  percentile.percentile = 0;
  EXPECT_ERROR(quantize(*net, calibration, percentile), "percentile must lie in (0, 100]");

  Tensor nan = calibration[1].copy();
  nan.data()[5] = std::nanf("");
  EXPECT_ERROR(quantize(*net, {calibration[0], nan}), "calibration batch 2: value 'data' has NaN at element 5");

  auto uninitialized = std::make_shared<QuantNet>();
  EXPECT_ERROR(quantize(*uninitialized, calibration), "initialize()");

  const auto q = quantize(*net, calibration);
  // The block's own shape checks, once its deferred shapes are known.
  EXPECT_ERROR(quantize(*net, {Tensor::random_uniform({2, 3, 8, 8}, 0, 1, 1)}),
               "weight has shape (4, 1, 3, 3), expected (4, 3, 3, 3)");
  const std::string wrong_shape = "has shape (1, 1, 8, 8); the block was quantized for (2, 1, 8, 8)";
  EXPECT_ERROR((*q)(Tensor::random_uniform({1, 1, 8, 8}, 0, 1, 1)), wrong_shape);
  q->hybridize(true, quick_jit());
  EXPECT_ERROR((*q)(Tensor::random_uniform({1, 1, 8, 8}, 0, 1, 1)), wrong_shape);
  EXPECT_ERROR((*q)(std::vector<Tensor>{calibration[0], calibration[1]}),
               "takes 1 inputs (as it was quantized), given 2");
}

}  // namespace
}  // namespace hybgen
