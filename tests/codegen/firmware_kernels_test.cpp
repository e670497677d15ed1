// The code generated for the microcontroller targets (cortex-m4, cortex-m7,
// cortex-m55) as firmware needs it. The model's object in every board build
// references no software double-precision routine (__aeabi_d*: the FPUs
// have single precision only), no heap and no exception machinery
// (verify checks it with arm-none-eabi-nm). LeNet and the MNIST CNN run on each target's board
// under qemu-system-arm and match the reference, LeNet's inference within
// 2 KiB of stack (the firmware contract, docs/firmware.md: no stack buffers beyond a few hundred bytes).
// A 164k-parameter MLP, its weights larger than the AN547's code memory,
// runs on the cortex-m55's board from the memory kept for weights.
// A model computed wholly in int8 has no floating-point instruction in its
// object on any of them (float_instructions_in), and one float op in it is found.
// Skipped where the toolchain or the emulator is not installed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "all_ops_graph.h"
#include "emit/backends.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "io/mxnet/mxnet_symbol.h"
#include "ops/quantized.h"
#include "pipeline.h"
#include "run_command.h"
#include "targets/target.h"
#include "targets/toolchain.h"
#include "verify/generated_build.h"
#include "verify/verify.h"
#include "zoo.h"

namespace hybgen {
namespace {

const char* const kTargets[] = {"cortex-m4", "cortex-m7", "cortex-m55"};

bool toolchain_missing(std::string* why) {
  const Target& t = find_target(kTargets[0]);
  for (const std::string& program : {t.cross_compiler, t.emulator, t.symbol_tool})
    if (!on_path(program)) {
      *why = program + " is not on the PATH (Debian: " + t.packages + ")";
      return true;
    }
  return false;
}

#define SKIP_WITHOUT_TOOLCHAIN()                  \
  do {                                            \
    std::string why;                              \
    if (toolchain_missing(&why)) GTEST_SKIP() << why; \
  } while (0)

Graph lenet_graph() {
  auto net = zoo::lenet();
  net->initialize(init::Xavier(), 42);
  return net->trace({{1, 1, 28, 28}}, "lenet", true);
}

Graph mnist_graph() {
  const std::string symbol =
      std::string(HYBGEN_SOURCE_DIR) + "/tests/data/mxnet-real/mnist-cnn-gluon-1.6/mnist-symbol.json";
  MxnetImportOptions options;
  options.input_shapes["data"] = {1, 1, 28, 28};
  return import_mxnet(symbol, find_mxnet_params(symbol), options);
}

// The firmware contract's symbols (Target::forbidden_symbol_prefixes), as
// arm-none-eabi-nm -u lists an object's undefined ones: every verify on a
// board checks the model's object with them (GeneratedBuild), so the board
// tests here and the op test on each board (RegistryOps) hold every op's
// kernels to them.
TEST(FirmwareKernels, TheHeapExceptionsAndSoftDoubleAreForbiddenSymbols) {
  const std::string nm_output =
      "         U __aeabi_d2f\n         U __aeabi_fmul\n         U _Znwj\n         U __cxa_throw\n"
      "         U malloc\n         U memcpy\n         U __aeabi_unwind_cpp_pr0\n         U sqrtf\n";
  for (const char* name : kTargets) {
    const Target& target = find_target(name);
    EXPECT_EQ(target.symbol_tool, "arm-none-eabi-nm") << name;
    EXPECT_EQ(symbols_with_prefixes(nm_output, target.forbidden_symbol_prefixes),
              (std::vector<std::string>{"__aeabi_d2f", "_Znwj", "__cxa_throw", "malloc", "__aeabi_unwind_cpp_pr0"}))
        << name;
  }
  EXPECT_TRUE(find_target("x86-64-v3").forbidden_symbol_prefixes.empty());
}

// The instructions with a floating-point data type are found, whatever else
// the FPU's registers are used for.
TEST(FirmwareKernels, FloatInstructionsAreThoseWithAFloatDataType) {
  const std::string listing =
      "00000000 <run>:\n"
      "   0:\tsmlad\tr6, r7, sl, r6\n"
      "   4:\tsxtb16\tr2, r2, ror #8\n"
      "   8:\tvmov\ts15, r3\n"
      "   c:\tvstr\td7, [sp, #104]\t@ 0x68\n"
      "  10:\tvmladava.s8\tr0, q0, q1\n"
      "  14:\tvpush\t{d8-d15}\n"
      "  18:\tvmla.f32\ts14, s15, s13\n"
      "  1c:\tvcvt.s32.f32\ts15, s15\n"
      "  20:\tvmov.f32\ts15, #96\t@ 0x3f000000  0.5\n"
      "  24:\tvfma.f32\tq0, q1, q2\n"
      "  28:\tbl\t0 <__aeabi_f2d>\n";
  EXPECT_EQ(float_instructions(listing),
            (std::vector<std::string>{"  18:\tvmla.f32\ts14, s15, s13", "  1c:\tvcvt.s32.f32\ts15, s15",
                                      "  20:\tvmov.f32\ts15, #96\t@ 0x3f000000  0.5", "  24:\tvfma.f32\tq0, q1, q2"}));
}

// int8 in, int8 out: a 3x3 convolution (the packed GEMM), relu, a 3x3
// depthwise convolution, max pooling and a dense layer, all in integers.
// With `float_output`, a dequantize after the dense layer: one float op.
Graph int8_graph(bool float_output) {
  std::mt19937 rng(7);
  Graph g;
  g.name = "int8_cnn";
  g.add_input("data", quantized_data({1, 4, 12, 12}, DType::kInt8, 0.05f, -3));
  auto constant = [&](const std::string& name, const TensorType& type) {
    g.add_constant(name, testing::random_integer_constant(type, rng));
    return name;
  };
  auto conv_attrs = [](int64_t filters, int64_t groups, double scale, int64_t zero_point) {
    return with_output_quantization(testing::attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                                       {"num_filter", filters},
                                                       {"pad", std::vector<int64_t>{1, 1}},
                                                       {"num_group", groups}}),
                                    scale, zero_point);
  };
  g.nodes.push_back(testing::make_node(
      "conv", "Convolution",
      {"data", constant("conv_w", quantized_weight({8, 4, 3, 3}, 8)), constant("conv_b", {{8}, DType::kInt32})},
      conv_attrs(8, 1, 0.1, 2)));
  g.nodes.push_back(
      testing::make_node("relu", "Activation", {"conv"}, testing::attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(testing::make_node(
      "dw", "Convolution",
      {"relu", constant("dw_w", quantized_weight({8, 1, 3, 3}, 8)), constant("dw_b", {{8}, DType::kInt32})},
      conv_attrs(8, 8, 0.08, -1)));
  g.nodes.push_back(testing::make_node("pool", "Pooling", {"dw"},
                                       testing::attrs_of({{"kernel", std::vector<int64_t>{2, 2}},
                                                          {"stride", std::vector<int64_t>{2, 2}},
                                                          {"pool_type", std::string("max")}})));
  g.nodes.push_back(testing::make_node(
      "fc", "FullyConnected",
      {"pool", constant("fc_w", quantized_weight({10, 288}, 10)), constant("fc_b", {{10}, DType::kInt32})},
      with_output_quantization(testing::attrs_of({{"num_hidden", int64_t{10}}}), 0.2, 5)));
  g.outputs = {"fc"};
  if (float_output) {
    g.nodes.push_back(testing::make_node("fc_float", "dequantize", {"fc"}, {}));
    g.outputs = {"fc_float"};
  }
  return g;
}

// The model's object as a board build compiles it (the target's flags and
// the generated-code contract's), and its floating-point instructions.
std::vector<std::string> float_instructions_of(const Graph& graph, const Target& target,
                                               IoPrecision io = IoPrecision::kFloat32) {
  CppEmitOptions emit{"int8_cnn", "int8_cnn", "int8_cnn"};
  TempDir dir("hybgen-int8-object");
  const std::string d = dir.path() + "/";
  CompileOptions options = CompileOptions::for_target(target);
  options.io_precision = io;
  for (const EmittedFile& f : emit_for_target(compile_graph(graph, options), emit))
    write_file_atomic(d + f.filename, f.content);
  const VerifyOptions defaults;
  const testing::CommandResult r =
      testing::run_command(target.cross_compiler + " " + target.compiler_flags + " " + defaults.cxx_flags + " -c " +
                           testing::quoted(d + "int8_cnn.cpp") + " -o " + testing::quoted(d + "int8_cnn.o"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return float_instructions_in(target, d + "int8_cnn.o");
}

// The firmware contract for int8 (docs/firmware.md): a model computed
// wholly in int8 runs on a core without a floating-point unit. Its
// kernels (the DSP extension's on the M4 and M7, Helium's on the M55)
// have no floating-point instruction; a dequantize added to the same model
// brings them in, and the check finds them; with --io-precision quantized
// the caller takes the integers instead, and they are gone again.
TEST(FirmwareKernels, AnInt8ModelHasNoFloatInstructionOnEveryBoard) {
  SKIP_WITHOUT_TOOLCHAIN();
  const Graph int8_only = int8_graph(false), with_float = int8_graph(true);
  EXPECT_TRUE(
      computes_in_integers_only(compile_graph(int8_only, CompileOptions::for_target(find_target("cortex-m4"))).graph));
  EXPECT_FALSE(
      computes_in_integers_only(compile_graph(with_float, CompileOptions::for_target(find_target("cortex-m4"))).graph));
  for (const char* name : kTargets) {
    const Target& target = find_target(name);
    ASSERT_EQ(target.disassembler, "arm-none-eabi-objdump") << name;
    EXPECT_EQ(float_instructions_of(int8_only, target), std::vector<std::string>{}) << name;
    EXPECT_FALSE(float_instructions_of(with_float, target).empty()) << name;
    EXPECT_EQ(float_instructions_of(with_float, target, IoPrecision::kQuantized), std::vector<std::string>{}) << name;
  }
}

// Helium's predicate (VPR) is a register GCC allocates: it may keep a
// predicate of its own there (a store's lanes) across an asm statement. An
// asm that writes VPR (VCTP, VMSR P0, VPNOT) must say so with an "=Up"
// output, or GCC's predicate is silently replaced (a dense layer whose k is
// not a multiple of 16 then stored half its outputs). Checked on the text of
// every kernel template, since whether GCC keeps one there depends on inlining.
TEST(FirmwareKernels, HeliumAsmThatWritesThePredicateDeclaresIt) {
  const std::string dir = std::string(HYBGEN_SOURCE_DIR) + "/templates/kernels/";
  int statements = 0;
  for (const char* name : {"gemm_q8.inc", "quantized_kernels.inc", "quantized_simd.inc", "quantized.inc"}) {
    const std::vector<uint8_t> bytes = read_file_bytes(dir + name);
    const std::string text(bytes.begin(), bytes.end());
    for (std::size_t at = text.find("__asm__"); at != std::string::npos; at = text.find("__asm__", at + 1)) {
      const std::size_t end = text.find(");", at);
      const std::string statement = text.substr(at, end - at);
      const bool writes_vpr = statement.find("vctp.") != std::string::npos ||
                              statement.find("vmsr p0") != std::string::npos ||
                              statement.find("vpnot") != std::string::npos;
      if (!writes_vpr) continue;
      ++statements;
      EXPECT_NE(statement.find("\"=Up\""), std::string::npos) << name << ":\n" << statement;
    }
  }
  EXPECT_GE(statements, 5);  // the check reads the asm it is meant for
}

VerifyReport verify_on_board(const Graph& graph, const std::string& target) {
  VerifyOptions options;
  options.compile.target = find_target(target);
  options.tolerance = 1e-5;
  return verify_model(graph, options);
}

// Outputs within 1e-5 of the reference on every board, in at most 2 KiB of stack.
void expect_runs_on_every_board_in_two_kilobytes(const Graph& graph) {
  for (const char* name : kTargets) {
    const VerifyReport report = verify_on_board(graph, name);
    ASSERT_EQ(report.checks.size(), 1u);
    EXPECT_TRUE(report.ok) << name << ": max relative error " << report.checks[0].max_rel_error;
    ASSERT_TRUE(report.board_measured) << name;
    EXPECT_LE(report.stack_bytes, 2048u) << name;
    EXPECT_GT(report.instructions, 0u) << name;
  }
}

TEST(FirmwareKernels, LenetRunsOnEveryBoardInTwoKilobytesOfStack) {
  SKIP_WITHOUT_TOOLCHAIN();
  expect_runs_on_every_board_in_two_kilobytes(lenet_graph());
}

TEST(FirmwareKernels, MnistCnnRunsOnEveryBoardInTwoKilobytesOfStack) {
  SKIP_WITHOUT_TOOLCHAIN();
  expect_runs_on_every_board_in_two_kilobytes(mnist_graph());
}

// An int8 3x3 convolution whose output (scale `conv_scale`) TFLite's ADD
// sums with the input (scale 0.05) into `out_scale`: the add is the
// convolution's epilogue (run() takes and gives the integers:
// --io-precision quantized). 11x11 pixels: rows of 32 and one of 25, which
// ends within a vector.
Graph int8_residual_graph(double conv_scale, double out_scale) {
  std::mt19937 rng(11);
  Graph g;
  g.name = "int8_residual";
  g.add_input("x", {{1, 8, 11, 11}});
  auto constant = [&](const std::string& name, const TensorType& type) {
    g.add_constant(name, testing::random_integer_constant(type, rng));
    return name;
  };
  g.nodes.push_back(testing::make_node(
      "data", "quantize", {"x"},
      testing::attrs_of({{"out_scale", 0.05}, {"out_zero_point", int64_t{-3}}, {"out_dtype", std::string("int8")}})));
  g.nodes.push_back(testing::make_node(
      "conv", "Convolution",
      {"data", constant("conv_w", quantized_weight({8, 8, 3, 3}, 8)), constant("conv_b", {{8}, DType::kInt32})},
      with_output_quantization(testing::attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                                  {"num_filter", int64_t{8}},
                                                  {"pad", std::vector<int64_t>{1, 1}}}),
                               conv_scale, 7)));
  g.nodes.push_back(
      testing::make_node("sum", "broadcast_add", {"data", "conv"}, with_output_quantization(Attrs{}, out_scale, -20)));
  g.nodes.push_back(testing::make_node("y", "dequantize", {"sum"}));
  g.outputs = {"y"};
  return g;
}

// The residual add as the convolution's epilogue object, which the
// Cortex-M55 applies eight lanes at a time: the same bytes as the reference
// where the input's scale is the larger, the convolution's, or both equal
// (each side's shift of 0 or below), and into a small output scale (sums
// past the clamp).
TEST(FirmwareKernels, Int8ResidualAddEpilogueIsExactOnTheM55) {
  SKIP_WITHOUT_TOOLCHAIN();
  const Target& m55 = find_target("cortex-m55");
  const double scales[][2] = {{0.03, 0.09}, {0.08, 0.09}, {0.05, 0.09}, {0.08, 0.01}};
  for (const auto& [conv_scale, out_scale] : scales) {
    const Graph graph = int8_residual_graph(conv_scale, out_scale);
    VerifyOptions options;
    options.compile = CompileOptions::for_target(m55);
    options.compile.io_precision = IoPrecision::kQuantized;
    options.tolerance = 0;
    std::string cpp;
    for (const EmittedFile& f : emit_for_target(compile_graph(graph, options.compile), CppEmitOptions{"r", "r", "r"}))
      if (f.filename == "r.cpp") cpp = f.content;
    EXPECT_NE(cpp.find("hg_q8_add_epilogue("), std::string::npos) << conv_scale;
    EXPECT_NE(cpp.find("HgQuantizedAdd{-3, 7,"), std::string::npos) << conv_scale;
    const VerifyReport report = verify_model(graph, options);
    ASSERT_EQ(report.checks.size(), 1u);
    EXPECT_TRUE(report.ok) << conv_scale << ": max abs error " << report.checks[0].max_abs_error;
  }
}

// data(1x784) -> Dense(192) -> relu -> Dense(64) -> relu -> Dense(10): 163722
// parameters, 654888 bytes of float32 weights.
Graph mlp_164k() {
  Graph g;
  g.name = "mlp164k";
  g.add_input("data", {{1, 784}});
  const int64_t sizes[] = {784, 192, 64, 10};
  std::string x = "data";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string p = "dense" + std::to_string(layer);
    g.add_constant(p + "_weight", Constant::f32({sizes[layer + 1], sizes[layer]},
                                                testing::seeded_values(sizes[layer + 1] * sizes[layer], 30 + layer)));
    g.add_constant(p + "_bias", Constant::f32({sizes[layer + 1]}, testing::seeded_values(sizes[layer + 1], 40 + layer)));
    g.nodes.push_back(testing::make_node(p + "_fwd", "FullyConnected", {x, p + "_weight", p + "_bias"},
                                         testing::attrs_of({{"num_hidden", sizes[layer + 1]}})));
    x = p + "_fwd";
    if (layer < 2) {
      g.nodes.push_back(testing::make_node(p + "_relu", "Activation", {x}, testing::attrs_of({{"act_type", std::string("relu")}})));
      x = p + "_relu";
    }
  }
  g.outputs = {x};
  return g;
}

TEST(FirmwareKernels, WeightsLargerThanTheCodeMemoryRunOnTheM55sBoard) {
  SKIP_WITHOUT_TOOLCHAIN();
  const Graph graph = mlp_164k();
  const Target& m55 = find_target("cortex-m55");
  ASSERT_GT(graph.weight_bytes(), m55.code.bytes) << "the model must not fit the code memory to test anything";
  const VerifyReport report = verify_on_board(graph, m55.name);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_TRUE(report.ok) << "max relative error " << report.checks[0].max_rel_error;
  EXPECT_GT(report.weight_bytes, m55.code.bytes);
  EXPECT_GT(report.instructions, 0u);
}

}  // namespace
}  // namespace hybgen
