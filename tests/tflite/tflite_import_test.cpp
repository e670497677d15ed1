// TFLite import: small models made by TensorFlow's converter give TFLite's
// own outputs, the int8 ones exactly; TFLite Micro's example models and
// MLPerf Tiny's reference models, int8 as published, give TFLite Micro's
// integers exactly (scripts/make_tflite_test_models.py, tests/data/tflite/,
// docs/tflite.md): in the reference interpreter and in the generated code on
// generic and this machine's target. Hostile files (truncated, corrupted,
// unknown operators) give clear errors.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/tflite/tflite_model.h"
#include "io/tflite/tflite_schema.h"
#include "ir/error.h"
#include "pipeline.h"
#include "run_command.h"
#include "runtime-lite/interpreter.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

const std::string kData = std::string(HYBGEN_SOURCE_DIR) + "/tests/data/tflite/";

std::string read_bytes(const std::string& path) {
  const std::vector<uint8_t> b = read_file_bytes(path);
  return std::string(b.begin(), b.end());
}

// Sample i of a stack of samples (axis 0), as one batch-1 array.
NpyArray sample(const NpyArray& a, int64_t i) {
  NpyArray s;
  s.shape = a.shape;
  s.shape[0] = 1;
  const std::size_t n = a.data.size() / static_cast<std::size_t>(a.shape[0]);
  s.data.assign(a.data.begin() + static_cast<std::ptrdiff_t>(n * i),
                a.data.begin() + static_cast<std::ptrdiff_t>(n * (i + 1)));
  return s;
}

struct Case {
  const char* model;    // tests/data/tflite/MODEL.tflite
  const char* input;    // INPUT-input.npy
  const char* outputs;  // OUTPUTS-output.npy (TFLite's kernels), OUTPUTS-tflm-output.npy
                        // (TFLite Micro's), OUTPUTS-reference-output.npy (TFLite's reference kernels)
  bool int8;
  // The outputs hybgen must give exactly: "" TFLite's own kernels, "-tflm"
  // TFLite Micro's (docs/tflite.md says where they differ, and why).
  const char* exact = "";
  // The generated code on this machine's target only (the large models; the
  // int8 kernels on generic are the registry test's business).
  bool host_only = false;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.outputs; }

const Case kCases[] = {
    {"cnn_float", "cnn", "cnn_float", false},
    {"cnn_int8", "cnn", "cnn_int8", true},
    {"cnn_int8io", "cnn_int8io", "cnn_int8io", true},
    {"branches_float", "branches", "branches_float", false},
    {"branches_int8", "branches", "branches_int8", true},
    // TFLite Micro's hello_world example (tensorflow/tflite-micro), 16 samples, and every int8 input
    {"hello_world_float", "hello_world", "hello_world_float", false},
    {"hello_world_int8", "hello_world_int8", "hello_world_int8", true},
    {"hello_world_int8", "hello_world_int8_sweep", "hello_world_int8_sweep", true, "-tflm"},
    // TFLite Micro's micro_speech and person_detection models and MLPerf Tiny's four reference
    // models (mlcommons/tiny), int8 in and out, as published
    {"micro_speech_quantized", "micro_speech_quantized", "micro_speech_quantized", true, "-tflm"},
    {"person_detect", "person_detect", "person_detect", true, "-tflm", true},
    {"kws_ref_model", "kws_ref_model", "kws_ref_model", true, "-tflm", true},
    {"vww_96_int8", "vww_96_int8", "vww_96_int8", true, "-tflm", true},
    {"pretrainedResnet_quant", "pretrainedResnet_quant", "pretrainedResnet_quant", true, "-tflm", true},
    {"ad01_int8", "ad01_int8", "ad01_int8", true, "-tflm"}};

// The scale of an int8 model's output: its final dequantize's input.
float output_scale(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.outputs[0] == g.outputs[0] && n.op == "dequantize") return g.type(n.inputs[0]).quantization.scale.at(0);
  return 0;
}

class TfliteModels : public ::testing::TestWithParam<Case> {};

// The reference interpreter on every recorded sample: int8 models give
// TFLite's integers exactly (the outputs are their dequantized values, so
// any difference is a whole number of output steps), float ones agree to
// float rounding.
TEST_P(TfliteModels, ReferenceMatchesTfliteOnEverySample) {
  const Case& c = GetParam();
  const Graph g = import_tflite(kData + c.model + ".tflite", {});
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  const NpyArray x = read_npy(kData + c.input + "-input.npy");
  const NpyArray y = read_npy(kData + c.outputs + c.exact + "-output.npy");
  const float step = c.int8 ? output_scale(g) : 0;
  if (c.int8) {
    ASSERT_GT(step, 0);
  }
  Interpreter interp(g);
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    const NpyArray xi = sample(x, i), yi = sample(y, i);
    const std::vector<Tensor> out = interp.run({{g.inputs[0], Tensor::from_vector(xi.shape, xi.data)}});
    ASSERT_EQ(out[0].shape(), yi.shape);
    double scale = 0;
    for (float v : yi.data) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (std::size_t k = 0; k < yi.data.size(); ++k) {
      const double diff = std::fabs(static_cast<double>(out[0].data()[k]) - yi.data[k]);
      if (c.int8) {
        EXPECT_EQ(diff, 0) << "sample " << i << " element " << k << ": " << diff / step << " steps of " << step;
      } else {
        EXPECT_LE(diff, 1e-5 * scale) << "sample " << i << " element " << k;
      }
    }
  }
}

// The generated code on sample 0, against the reference (int8: the same
// bits) and TFLite's output, on generic (int8) and this machine's best target.
TEST_P(TfliteModels, GeneratedCodeMatchesOnGenericAndThisMachine) {
  const Case& c = GetParam();
  const Graph g = import_tflite(kData + c.model + ".tflite", {});
  // Float models on this machine's target alone: generic's float kernels are
  // the registry test's business; the int8 ones must give TFLite's bits on both.
  std::vector<std::string> targets;
  if (c.int8 && !c.host_only) targets.push_back("generic");
  if (host_target().name != "generic" || !c.int8 || c.host_only) targets.push_back(host_target().name);
  for (const std::string& target : targets) {
    VerifyOptions v;
    v.inputs[g.inputs[0]] = sample(read_npy(kData + c.input + "-input.npy"), 0);
    v.expected[g.outputs[0]] = sample(read_npy(kData + c.outputs + c.exact + "-output.npy"), 0);
    v.tolerance = c.int8 ? 0 : 1e-5;
    v.compile.target = find_target(target);
    const VerifyReport r = verify_model(g, v);
    EXPECT_TRUE(r.ok) << c.model << " on " << target;
    for (const OutputCheck& check : r.checks)
      EXPECT_TRUE(check.ok) << c.model << " on " << target << " against " << check.against << ": "
                            << check.max_abs_error;
  }
}

INSTANTIATE_TEST_SUITE_P(Data, TfliteModels, ::testing::ValuesIn(kCases));

// --io-precision quantized: run() takes and gives the model's int8 tensors,
// as TFLite Micro does; verify quantizes the sample at the input's scale and
// compares the output's integers, dequantized, with TFLite Micro's exactly,
// on generic and on a board. A float model has no quantized edges to give.
TEST(TfliteImport, QuantizedEdgesTakeAndGiveTheModelsIntegers) {
  const Graph g = import_tflite(kData + "micro_speech_quantized.tflite", {});
  for (const std::string target : {"generic", "cortex-m4"}) {
    VerifyOptions v;
    v.inputs[g.inputs[0]] = sample(read_npy(kData + "micro_speech_quantized-input.npy"), 1);
    v.expected[g.outputs[0]] = sample(read_npy(kData + "micro_speech_quantized-tflm-output.npy"), 1);
    v.tolerance = 0;
    v.compile.target = find_target(target);
    v.compile.io_precision = IoPrecision::kQuantized;
    const VerifyReport r = verify_model(g, v);
    EXPECT_TRUE(r.ok) << target;
    for (const OutputCheck& check : r.checks)
      EXPECT_TRUE(check.ok) << target << " against " << check.against << ": " << check.max_abs_error;
    const CompiledGraph compiled = compile_graph(g, v.compile);
    EXPECT_EQ(compiled.graph.type(g.inputs[0]).dtype, DType::kInt8);
    EXPECT_EQ(compiled.graph.type(g.outputs[0]).dtype, DType::kInt8);
  }
  CompileOptions float_edges;
  float_edges.io_precision = IoPrecision::kQuantized;
  EXPECT_ERROR(compile_graph(import_tflite(kData + "cnn_float.tflite", {}), float_edges), "not only by a quantize");
}

// ResNet-8's residual adds are epilogues of int8 convolutions: on the
// Cortex-M boards each sum is written over the block input it adds (the
// kernels read it at an index before they write there), so the arena holds
// two of a block's three activations at once, not three; other targets keep
// the sum apart.
TEST(TfliteImport, Int8ResidualSumsTakeOverTheirOperandOnTheCortexM) {
  const Graph g = import_tflite(kData + "pretrainedResnet_quant.tflite", {});
  auto block_of = [](const CompiledGraph& c, const std::string& prefix) {
    for (const auto& b : c.plan.buffers)
      if (b.value.compare(0, prefix.size(), prefix) == 0 && b.value.find("#scratch") == std::string::npos)
        return b.block;
    ADD_FAILURE() << "no buffer named " << prefix << "...";
    return -1;
  };
  const std::string first_block = "model/activation/Relu;", first_sum = "model/activation_2/Relu;model/add/add";
  for (const char* board : {"cortex-m4", "cortex-m55"}) {
    const CompiledGraph c = compile_graph(g, CompileOptions::for_target(find_target(board)));
    c.plan.verify();
    EXPECT_EQ(block_of(c, first_sum), block_of(c, first_block)) << board;
    EXPECT_EQ(block_of(c, "model/activation_4/Relu;model/add_1/add"), block_of(c, "model/conv2d_5/")) << board;
  }
  const CompiledGraph generic = compile_graph(g, CompileOptions::for_target(find_target("generic")));
  EXPECT_NE(block_of(generic, first_sum), block_of(generic, first_block));
}

TEST(TfliteImport, LooksLikeTfliteByContent) {
  EXPECT_TRUE(looks_like_tflite(kData + "cnn_int8.tflite"));
  EXPECT_TRUE(looks_like_tflite_bytes(read_bytes(kData + "cnn_float.tflite")));
  EXPECT_FALSE(looks_like_tflite_bytes("{\"nodes\": []}"));
  EXPECT_FALSE(looks_like_tflite_bytes(""));
  EXPECT_FALSE(looks_like_tflite(kData + "cnn-input.npy"));
  EXPECT_FALSE(looks_like_tflite(kData + "missing.tflite"));
  EXPECT_FALSE(looks_like_tflite(kData));
}

// An int8 file keeps its own scales: per-channel weights, int32 biases and
// the activations' parameters are the file's, on the IR's quantized types.
TEST(TfliteImport, Int8ModelKeepsItsOwnQuantization) {
  const Graph g = import_tflite(kData + "cnn_int8.tflite", {});
  int convolutions = 0;
  for (const Node& n : g.nodes) {
    if (n.op != "Convolution") continue;
    ++convolutions;
    const TensorType& w = g.type(n.inputs[1]);
    EXPECT_EQ(w.dtype, DType::kInt8);
    ASSERT_TRUE(w.quantization.axis.has_value()) << n.name;
    EXPECT_EQ(*w.quantization.axis, 0);
    EXPECT_EQ(w.quantization.scale.size(), static_cast<std::size_t>(w.shape[0]));
    EXPECT_EQ(g.type(n.inputs[2]).dtype, DType::kInt32);
    EXPECT_TRUE(n.attrs.has("out_scale"));
    EXPECT_EQ(g.type(n.outputs[0]).dtype, DType::kInt8);
  }
  EXPECT_EQ(convolutions, 2);
}

// TFLite Micro's person_detect was written by an old converter, which gave
// the depthwise convolutions' rank-1 biases their filter's
// quantized_dimension (3): read along the bias's one axis, as TFLite Micro
// reads it (TFLite's own interpreter refuses the file).
TEST(TfliteImport, Rank1BiasWithTheFiltersQuantizedDimension) {
  const Graph g = import_tflite(kData + "person_detect.tflite", {});
  int convolutions = 0;
  for (const Node& n : g.nodes) {
    if (n.op != "Convolution") continue;
    ++convolutions;
    const TensorType& b = g.type(n.inputs.at(2));
    ASSERT_TRUE(b.quantization.axis.has_value()) << n.name;
    EXPECT_EQ(*b.quantization.axis, 0) << n.name;
    EXPECT_EQ(b.quantization.scale.size(), static_cast<std::size_t>(b.shape[0])) << n.name;
  }
  EXPECT_EQ(convolutions, 28);  // 14 of them depthwise
}

// Every int8 input of hello_world: hybgen gives TFLite Micro's integers
// (Data/TfliteModels.*/hello_world_int8_sweep); TFLite's own kernels are one
// step apart at the two inputs where the last layer's rounding shift meets a
// tie below zero (they round it upward, gemmlowp and TFLite Micro away from
// zero), and TFLite's reference kernels, whose FULLY_CONNECTED requantizes
// in double precision, at 23 (up to 3 steps after three layers).
TEST(TfliteImport, HelloWorldEveryInputAgainstTflitesKernels) {
  const Graph g = import_tflite(kData + "hello_world_int8.tflite", {});
  const NpyArray x = read_npy(kData + "hello_world_int8_sweep-input.npy");
  const float step = output_scale(g);
  Interpreter interp(g);
  std::vector<float> got;
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    const NpyArray xi = sample(x, i);
    got.push_back(interp.run({{g.inputs[0], Tensor::from_vector(xi.shape, xi.data)}})[0].data()[0]);
  }
  for (const auto& [suffix, apart, most] :
       {std::tuple<std::string, int, int>{"-tflm", 0, 0}, {"", 2, 1}, {"-reference", 23, 3}}) {
    const NpyArray y = read_npy(kData + "hello_world_int8_sweep" + suffix + "-output.npy");
    ASSERT_EQ(y.data.size(), got.size());
    int differ = 0;
    long steps = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const long d = std::lround(std::fabs(got[k] - y.data[k]) / step);
      differ += d != 0;
      steps = std::max(steps, d);
    }
    EXPECT_EQ(differ, apart) << "against" << (suffix.empty() ? " TFLite's kernels" : suffix);
    EXPECT_EQ(steps, most) << "against" << (suffix.empty() ? " TFLite's kernels" : suffix);
  }
}

// ---------------------------------------------------------------- hostile files

// EXPECT_CONTAINS(text, part): the text, printed when the part is missing.
#define EXPECT_CONTAINS(text, part)                                                               \
  do {                                                                                            \
    const std::string text_ = (text);                                                             \
    EXPECT_NE(text_.find(part), std::string::npos) << "missing: " << (part) << "\nin: " << text_; \
  } while (0)

std::string error_of(const std::string& bytes) {
  try {
    import_tflite_bytes(bytes, "m.tflite", {});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TfliteImport, TruncatedFilesAreRefused) {
  const std::string bytes = read_bytes(kData + "cnn_int8.tflite");
  EXPECT_CONTAINS(error_of(""), "m.tflite: 0 bytes is too short for a FlatBuffer");
  EXPECT_CONTAINS(error_of(bytes.substr(0, 7)), "too short");
  EXPECT_CONTAINS(error_of(bytes.substr(0, 16)), "m.tflite: model: ");
  for (std::size_t n : {std::size_t{8}, std::size_t{100}, bytes.size() / 2, bytes.size() - 200}) {
    SCOPED_TRACE(std::to_string(n) + " bytes");
    EXPECT_CONTAINS(error_of(bytes.substr(0, n)), "outside the file");
  }
}

TEST(TfliteImport, BadOffsetsNameWhatIsWrong) {
  std::string bytes = read_bytes(kData + "cnn_int8.tflite");
  std::string bad = bytes;
  const uint32_t far = 0x7ffffff0;
  std::memcpy(&bad[0], &far, 4);
  EXPECT_CONTAINS(error_of(bad), "m.tflite: model: the root offset points outside the file");
  bad = bytes;
  std::memcpy(&bad[4], "XXXX", 4);
  EXPECT_CONTAINS(error_of(bad), "no TFLite identifier");
}

// Every byte of a model replaced in turn: each file imports (and compiles)
// or is refused with an Error, never a crash or a read out of bounds (the
// sanitizer stage runs this too).
TEST(TfliteImport, EveryCorruptedByteImportsOrIsRefused) {
  const std::string bytes = read_bytes(kData + "branches_int8.tflite");
  int refused = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (const char value : {'\xff', '\x07'}) {
      std::string bad = bytes;
      if (bad[i] == value) continue;
      bad[i] = value;
      try {
        import_tflite_bytes(bad, "m.tflite", {});
      } catch (const Error& e) {
        ++refused;
        EXPECT_CONTAINS(std::string(e.what()), "m.tflite: ");
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << " = " << static_cast<int>(value) << ": " << e.what();
      }
    }
  EXPECT_GT(refused, 0);
}

// A model written field by field: one float input [1, 4] and a chain of
// operators, each reading the last tensor and writing a new one.
struct OpSpec {
  int builtin;
  std::string custom;
  uint8_t options_type = 0;
  int fused = 0;  // with options_type kAdd
  std::vector<int32_t> extra_inputs;
};

OpSpec op_spec(int builtin, std::string custom = "", uint8_t options_type = 0, int fused = 0,
               std::vector<int32_t> extra_inputs = {}) {
  return OpSpec{builtin, std::move(custom), options_type, fused, std::move(extra_inputs)};
}

std::string write_model(const std::vector<OpSpec>& ops, uint32_t tensor_buffer = 0) {
  namespace t = tfl;
  using flatbuffers::Offset;
  using flatbuffers::Table;
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<Offset<Table>> codes, tensors, operators, buffers;
  auto table = [&](const std::function<void()>& fields) {
    const auto start = fbb.StartTable();
    fields();
    return Offset<Table>(fbb.EndTable(start));
  };
  for (const OpSpec& op : ops) {
    const auto custom = fbb.CreateString(op.custom);
    codes.push_back(table([&] {
      fbb.AddElement<int8_t>(t::operator_code::kDeprecatedBuiltinCode, static_cast<int8_t>(std::min(op.builtin, 127)),
                             0);
      fbb.AddOffset(t::operator_code::kCustomCode, custom);
      fbb.AddElement<int32_t>(t::operator_code::kBuiltinCode, op.builtin, 0);
    }));
  }
  for (std::size_t i = 0; i <= ops.size(); ++i) {
    const auto shape = fbb.CreateVector(std::vector<int32_t>{1, 4});
    const auto name = fbb.CreateString("t" + std::to_string(i));
    tensors.push_back(table([&] {
      fbb.AddOffset(t::tensor::kShape, shape);
      fbb.AddElement<int8_t>(t::tensor::kType, 0, -1);
      fbb.AddElement<uint32_t>(t::tensor::kBuffer, i == 0 ? tensor_buffer : 0, 0xffffffff);
      fbb.AddOffset(t::tensor::kName, name);
    }));
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    std::vector<int32_t> in = {static_cast<int32_t>(i)};
    in.insert(in.end(), ops[i].extra_inputs.begin(), ops[i].extra_inputs.end());
    const auto inputs = fbb.CreateVector(in);
    const auto outputs = fbb.CreateVector(std::vector<int32_t>{static_cast<int32_t>(i + 1)});
    Offset<Table> options;
    if (ops[i].options_type)
      options = table(
          [&] { fbb.AddElement<int8_t>(t::add_options::kFusedActivation, static_cast<int8_t>(ops[i].fused), -1); });
    operators.push_back(table([&] {
      fbb.AddElement<uint32_t>(t::op::kOpcodeIndex, static_cast<uint32_t>(i), 0xffffffff);
      fbb.AddOffset(t::op::kInputs, inputs);
      fbb.AddOffset(t::op::kOutputs, outputs);
      if (ops[i].options_type) {
        fbb.AddElement<uint8_t>(t::op::kBuiltinOptionsType, ops[i].options_type, 0);
        fbb.AddOffset(t::op::kBuiltinOptions, options);
      }
    }));
  }
  buffers.push_back(table([] {}));
  const auto tensor_vec = fbb.CreateVector(tensors);
  const auto op_vec = fbb.CreateVector(operators);
  const auto sg_in = fbb.CreateVector(std::vector<int32_t>{0});
  const auto sg_out = fbb.CreateVector(std::vector<int32_t>{static_cast<int32_t>(ops.size())});
  const auto subgraph = table([&] {
    fbb.AddOffset(t::subgraph::kTensors, tensor_vec);
    fbb.AddOffset(t::subgraph::kInputs, sg_in);
    fbb.AddOffset(t::subgraph::kOutputs, sg_out);
    fbb.AddOffset(t::subgraph::kOperators, op_vec);
  });
  const auto code_vec = fbb.CreateVector(codes);
  const auto sg_vec = fbb.CreateVector(std::vector<Offset<Table>>{subgraph});
  const auto buffer_vec = fbb.CreateVector(buffers);
  const auto model = table([&] {
    fbb.AddElement<uint32_t>(t::model::kVersion, 3, 0);
    fbb.AddOffset(t::model::kOperatorCodes, code_vec);
    fbb.AddOffset(t::model::kSubgraphs, sg_vec);
    fbb.AddOffset(t::model::kBuffers, buffer_vec);
  });
  fbb.Finish(model, t::kFileIdentifier);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

TEST(TfliteImport, WrittenModelImports) {
  // LOGISTIC, then ADD of the result to itself, with a fused RELU6.
  const std::string bytes =
      write_model({op_spec(tfl::builtin::kLogistic), op_spec(tfl::builtin::kAdd, "", tfl::options_type::kAdd, 3, {1})});
  const Graph g = import_tflite_bytes(bytes, "m.tflite", {});
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op, "Activation");
  EXPECT_EQ(g.nodes[1].op, "broadcast_add");
  EXPECT_EQ(g.nodes[2].op, "clip");
  EXPECT_EQ(g.outputs, std::vector<std::string>{"t2"});
}

// Every unsupported operator and fused activation, listed at once with the
// operators' indices, before anything is converted.
TEST(TfliteImport, UnknownOperatorsAreListedAtOnce) {
  const std::string bytes =
      write_model({op_spec(28),  // TANH
                   op_spec(tfl::builtin::kCustom, "MyOp"), op_spec(28),
                   op_spec(tfl::builtin::kAdd, "", tfl::options_type::kAdd, 4, {3}), op_spec(200)});  // STABLEHLO_WHILE
  const std::string e = error_of(bytes);
  EXPECT_CONTAINS(e, "m.tflite: 4 problems before conversion:");
  EXPECT_CONTAINS(e, "unsupported operator TANH (2 operators: #0, #2)");
  EXPECT_CONTAINS(e, "unsupported custom operator 'MyOp' (1 operator: #1)");
  EXPECT_CONTAINS(e, "unsupported operator STABLEHLO_WHILE (1 operator: #4)");
  EXPECT_CONTAINS(e, "operator #3 (ADD): fused activation 4 (TANH) is not supported");
}

TEST(TfliteImport, IndicesOutOfRangeNameTheirTable) {
  EXPECT_CONTAINS(error_of(write_model({op_spec(tfl::builtin::kLogistic)}, 7)),
                  "m.tflite: model: subgraph 0: tensor 0: buffer 7 is not among the model's 1 buffers");
  EXPECT_CONTAINS(error_of(write_model({op_spec(tfl::builtin::kAdd, "", 0, 0, {9})})),
                  "m.tflite: model: subgraph 0: operator 0: inputs names tensor 9 of 2");
}

TEST(TfliteImport, CliGeneratesCodeForATfliteFile) {
  using testing::quoted;
  TempDir tmp{"hybgen-tflite-cli"};
  auto r = testing::run_command(quoted(testing::kHybgen) + " " + quoted(kData + "branches_int8.tflite") + " -o " +
                                quoted(tmp.path() + "/out"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_command(quoted(testing::kHybgen) + " inspect " + quoted(kData + "cnn_int8.tflite") +
                           " --shape x=1,2");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_CONTAINS(r.output, "--shape is not for TFLite files");
}

}  // namespace
}  // namespace hybgen
