// The generic op test (docs/contributing.md): every example of every registered op,
// generated for each backend in ONE graph (each example an independent subgraph, so the
// whole registry costs one compiler run), compiled with the strict flags of
// the generated-code contract, run, and compared with the op's reference
// kernel through the interpreter. A new op with examples is covered without
// writing a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "all_ops_graph.h"
#include "emit/backends.h"
#include "io/file_util.h"
#include "ir/half.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "run_command.h"
#include "targets/target.h"
#include "targets/toolchain.h"
#include "verify/generated_build.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

// Relative error allowed unless an op is listed in kToleranceByOp.
constexpr double kTolerance = 1e-5;
// Ops that need more, with why; every other kernel matches its reference to
// float rounding on the examples' sizes.
const std::map<std::string, double> kToleranceByOp = {
    // One step of one unit: every output is below 5e-3, so the rounding of the
    // gate sums (GEMM order, branch-free sigmoid/tanh) is a larger share of it.
    {"RNN", 3e-5},
};

double tolerance_of(const std::string& op) {
  auto it = kToleranceByOp.find(op);
  return it == kToleranceByOp.end() ? kTolerance : it->second;
}

// Every example of every op generated for `target` and checked (those named
// in `only` when it is not empty: testing::example_name).
void check_every_op(const std::string& target, const std::set<std::string>& only = {},
                    Precision precision = Precision::kFP32, double precision_tolerance = 0.0) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.compile.target = find_target(target);
  options.compile.target.precision = precision;
  testing::AllOpsGraph all = testing::all_ops_graph(1234, only, options.compile.target.backend);
  if (precision == Precision::kFP16 || precision == Precision::kBF16) {
    // Inputs and weights the half format holds exactly, so that the reference
    // sees what the kernels read: a rounding step (ceil, fix) or a steep
    // function (tan) would otherwise magnify the inputs' own rounding.
    auto round = [&](float& v) {
      v = precision == Precision::kFP16 ? half_to_float(float_to_half(v)) : bfloat16_to_float(float_to_bfloat16(v));
    };
    for (auto& [name, array] : all.inputs)
      for (float& v : array.data) round(v);
    for (auto& [name, constant] : all.graph.constants)
      if (constant.type.dtype == DType::kFloat32 && constant.has_data())
        for (int64_t i = 0; i < constant.type.num_elements(); ++i) round(constant.f32_data()[i]);
  }
  options.inputs = all.inputs;
  const VerifyReport report = verify_model(all.graph, options);

  // One check per output, each against the reference (no expected arrays).
  ASSERT_EQ(report.checks.size(), all.graph.outputs.size());
  std::set<std::string> checked_ops;
  for (const auto& check : report.checks) {
    ASSERT_EQ(all.origin.count(check.name), 1u) << "unexpected output " << check.name;
    const testing::ExampleOutput& from = all.origin.at(check.name);
    EXPECT_EQ(check.against, "reference");
    EXPECT_LE(check.max_rel_error, std::max(tolerance_of(from.op), precision_tolerance))
        << from.op << " example " << from.example << " (output " << check.name << "): max abs error "
        << check.max_abs_error;
    // Integer arithmetic (docs/quantization.md) is exact: the same bits as the reference.
    if (from.quantized) {
      EXPECT_EQ(check.max_abs_error, 0.0) << from.op << " example " << from.example << " (output " << check.name
                                          << ") is quantized: it must equal the reference";
    }
    checked_ops.insert(from.op);
  }
  for (const OpDef* op : all_ops()) {
    // Ops whose every example is of dtypes this backend does not compute (quantize on CUDA) have none here.
    const bool computed = std::any_of(op->examples.begin(), op->examples.end(), [&](const OpExample& ex) {
      return testing::backend_computes(options.compile.target.backend, *op, ex);
    });
    if (computed && testing::op_selected(op->name) &&
        (only.empty() || only.count(testing::example_name(op->name, 0)))) {
      EXPECT_TRUE(checked_ops.count(op->name)) << op->name << " contributed no output (does it have examples?)";
    }
  }
}

TEST(RegistryOps, EveryOpMatchesItsReferenceAsGeneratedCpp) { check_every_op("generic"); }

// The same for this machine's best target, where ops choose other kernels
// and weight layouts (x86-64-v4: the pixel-major pointwise-depthwise
// kernel, the row-by-row convolution).
TEST(RegistryOps, EveryOpMatchesItsReferenceOnThisMachinesTarget) {
  const std::string target = host_target().name;
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine's best target is the portable one, checked above";
  check_every_op(target);
}

// The quantized examples (docs/quantization.md) on every CPU target this
// machine runs natively or under qemu-user: each SIMD path of the int8
// kernels (AVX2's vpmaddwd, AVX-VNNI's and AVX-512 VNNI's vpdpbusd, NEON's
// smull) must give the reference's bits; the two tests above run the
// generic one and this machine's.
std::set<std::string> quantized_examples() {
  std::set<std::string> names;
  for (const OpDef* op : all_ops())
    for (std::size_t e = 0; e < op->examples.size(); ++e)
      if (!op->examples[e].input_types.empty() || op->name == "quantize")
        names.insert(testing::example_name(op->name, e));
  return names;
}

TEST(RegistryOps, QuantizedExamplesGiveTheReferencesBitsOnEveryCpuTarget) {
  for (const char* name : {"x86-64-v3", "x86-64-v3-vnni", "x86-64-v4", "x86-64-v4-vnni", "armv8-a"}) {
    const Target& target = find_target(name);
    const bool emulated = target.runner == Runner::kCrossQemu;
    if (emulated ? !(on_path(target.cross_compiler) && on_path(target.emulator)) : !machine_runs(target)) {
      std::cout << "[ SKIPPED  ] " << name << ": this machine cannot run it (" << target.needs << ")\n";
      continue;
    }
    if (target.name == host_target().name) {
      std::cout << "[ SKIPPED  ] " << name << ": EveryOpMatchesItsReferenceOnThisMachinesTarget runs it\n";
      continue;
    }
    SCOPED_TRACE(name);
    check_every_op(name, quantized_examples());
  }
}

// Every example with a run-time batch (Graph::batch, docs/generated-code.md):
// its data inputs hold the items, 1 to 3 of them. An example is either
// refused by check_batch_separable, naming its node, or its generated code
// matches the reference at 1, 2 and 3 items, each item different. That also
// holds each op's OpDef::mixes_first_axis to account: an op that mixes the
// items without saying so gives other values than the reference at two.
void check_every_op_with_a_batch(const std::string& target_name) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.compile.target = find_target(target_name);
  const Backend backend = options.compile.target.backend;
  std::set<std::string> accepted, accepted_ops, refused_ops;
  std::vector<std::string> batched_inputs;
  for (const OpDef* op : all_ops())
    for (std::size_t e = 0; e < op->examples.size(); ++e) {
      const std::string name = testing::example_name(op->name, e);
      Graph g = testing::all_ops_graph(1234, {name}, backend).graph;
      if (g.inputs.empty()) continue;  // not computed on this backend, or nothing but weights
      validate(g);
      infer_shapes(g);
      // Every input holding items, else the first alone (the others fixed, as a mask or a bias would be).
      std::string refusal;
      for (const std::vector<std::string>& inputs : {g.inputs, std::vector<std::string>{g.inputs[0]}}) {
        g.batch = BatchRange{1, 3, inputs};
        try {
          check_batch_separable(g);
          refusal.clear();
          accepted.insert(name);
          accepted_ops.insert(op->name);
          batched_inputs.insert(batched_inputs.end(), inputs.begin(), inputs.end());
          break;
        } catch (const Error& e) {
          refusal = e.what();
        }
      }
      if (refusal.empty()) continue;
      EXPECT_NE(refusal.find("cannot take a run-time batch"), std::string::npos) << name << ": " << refusal;
      refused_ops.insert(op->name);
      if (std::getenv("HYBGEN_SHOW_REFUSED")) std::cout << name << ": " << refusal << "\n";
    }
  testing::AllOpsGraph all = testing::all_ops_graph(1234, accepted, backend);
  all.graph.batch = BatchRange{1, 3, batched_inputs};
  options.inputs = all.inputs;
  const VerifyReport report = verify_model(all.graph, options);
  ASSERT_EQ(report.checks.size(), 3 * all.graph.outputs.size());
  std::set<int64_t> batches;
  for (const auto& check : report.checks) {
    const testing::ExampleOutput& from = all.origin.at(check.name);
    batches.insert(check.batch);
    EXPECT_LE(check.max_rel_error, tolerance_of(from.op))
        << from.op << " example " << from.example << " at " << check.batch << " items: max abs error "
        << check.max_abs_error;
    if (from.quantized) {
      EXPECT_EQ(check.max_abs_error, 0.0) << from.op << " example " << from.example;
    }
  }
  EXPECT_EQ(batches, (std::set<int64_t>{1, 2, 3}));
  // The ops refused in every example, each for a reason of its own.
  std::set<std::string> never;
  for (const auto& op : refused_ops)
    if (!accepted_ops.count(op)) never.insert(op);
  std::cout << accepted.size() << " examples of " << accepted_ops.size() << " ops take a run-time batch; ops refused "
            << "in some example: " << refused_ops.size() << " (HYBGEN_SHOW_REFUSED=1 lists why)\n";
  const std::set<std::string> may_never = {
      "RNN",                 // time along axis 0
      "_strided_batch_dot",  // its output shape is an attribute (made by a pass or the ONNX importer)
      "_attention",          // likewise (made by fuse_attention, after the check)
  };
  for (const std::string& op : never) EXPECT_TRUE(may_never.count(op)) << op << " takes a run-time batch in no example";
}

TEST(RegistryOps, EveryOpExampleTakesARunTimeBatchOrIsRefusedByName) { check_every_op_with_a_batch("generic"); }
TEST(RegistryOps, EveryOpExampleTakesARunTimeBatchOnCudaHost) { check_every_op_with_a_batch("cuda-host"); }
TEST(RegistryOps, EveryOpExampleTakesARunTimeBatchOnThisMachinesTarget) {
  if (host_target().isa == Isa::kPortable)
    GTEST_SKIP() << "this machine's best target is the portable one, checked above";
  check_every_op_with_a_batch(host_target().name);
}

// The CUDA backend's kernels, the same .cu that nvcc builds, run on the CPU
// through the cuda-host layer (templates/cuda_host/cuda_runtime.h).
TEST(RegistryOps, EveryOpMatchesItsReferenceOnCudaHost) { check_every_op("cuda-host"); }

// The same under --precision fp16 and bf16 (the pass half_storage): each op
// whose CUDA kernel computes the half type reads and writes halves, so an
// example's inputs, weights and outputs are each rounded once to the
// format's 11 (fp16) or 8 (bf16) significant bits; the tolerances allow a
// few such roundings relative to the largest output, far below what a
// kernel reading the wrong type or element gives.
TEST(RegistryOps, EveryOpMatchesItsReferenceOnCudaHostInFp16) {
  check_every_op("cuda-host", {}, Precision::kFP16, 4e-3);
}
TEST(RegistryOps, EveryOpMatchesItsReferenceOnCudaHostInBf16) {
  check_every_op("cuda-host", {}, Precision::kBF16, 3e-2);
}

// The half-precision tests above are only as wide as the kernels that run
// in half: every example node whose CUDA kernel declares a half type runs in
// it under half_storage (none falls back to float32 because its shape rule
// refuses halves, which would leave the tests above checking float32).
TEST(RegistryOps, EveryNodeWhoseCudaKernelComputesHalvesRunsInThem) {
  for (Precision precision : {Precision::kFP16, Precision::kBF16}) {
    const DType half = precision == Precision::kFP16 ? DType::kFloat16 : DType::kBFloat16;
    Target target = find_target("cuda-host");
    target.precision = precision;
    Graph g = testing::all_ops_graph(1234, {}, Backend::kCuda).graph;
    validate(g);
    infer_shapes(g);
    const Graph before = g;
    half_storage(g, target);
    infer_shapes(g);
    for (const Node& node : g.nodes) {
      if (node.op == "_storage_cast" || before.producer(node.outputs[0]) < 0) continue;
      const OpKernel* kernel = find_kernel(Backend::kCuda, find_op(node.op).name);
      ASSERT_NE(kernel, nullptr) << node.op;
      if (std::find(kernel->dtypes.begin(), kernel->dtypes.end(), half) == kernel->dtypes.end()) continue;
      for (const auto& in : node.inputs)
        EXPECT_FALSE(g.type(in).dtype == DType::kFloat32 && g.producer(in) >= 0 &&
                     g.nodes[g.producer(in)].op == "_storage_cast")
            << node.name << " (" << node.op << ") reads float32 under --precision " << precision_name(precision);
      // Cast to float32 gives float32 by its attribute; every other such node makes halves.
      if (node.op != "Cast") {
        for (const auto& out : node.outputs)
          EXPECT_FALSE(g.type(out).dtype == DType::kFloat32 && g.type(out).quantization.empty())
              << node.name << " (" << node.op << ") makes float32 under --precision " << precision_name(precision);
      }
    }
  }
}

// The microcontroller kernels (single precision, no stack arrays, Helium on
// the M55), as a bare-metal program on the target's board under
// qemu-system-arm.
// A board's RAM holds the arena and the input and output buffers of the
// verify program besides its 64 KiB stack and the driver's data: the
// AN547's 512 KiB (cortex-m55) not those of every example at once. The
// examples then go in groups, each one program, a group taking examples
// while their buffers (summed: an upper bound of what the group's program
// needs) fit. An example too large alone is left out, in `too_large` with
// its bytes; its object is still checked (check_board_objects).
constexpr std::size_t kBoardReservedBytes = 96 * 1024;

std::vector<std::set<std::string>> example_groups_fitting(const Target& target, std::map<std::string, std::size_t>* too_large) {
  const std::size_t budget = target.ram.bytes - kBoardReservedBytes;
  std::vector<std::set<std::string>> groups(1);
  std::size_t used = 0;
  for (const OpDef* op : all_ops()) {
    if (!testing::op_selected(op->name)) continue;
    for (std::size_t e = 0; e < op->examples.size(); ++e) {
      // As check_every_op's graph: the examples of dtypes the board's kernels compute (not _storage_cast's halves).
      if (!testing::backend_computes(target.backend, *op, op->examples[e])) continue;
      const std::string example = testing::example_name(op->name, e);
      const CompiledGraph compiled =
          compile_graph(testing::all_ops_graph(1234, {example}).graph, CompileOptions::for_target(target));
      std::size_t bytes = compiled.plan.arena_bytes;
      for (const std::string& v : compiled.graph.inputs) bytes += compiled.graph.type(v).num_elements() * sizeof(float);
      for (const std::string& v : compiled.graph.outputs) bytes += compiled.graph.type(v).num_elements() * sizeof(float);
      if (bytes > budget) {
        (*too_large)[example] = bytes;
        continue;
      }
      if (used + bytes > budget) {
        groups.emplace_back();
        used = 0;
      }
      groups.back().insert(example);
      used += bytes;
    }
  }
  return groups;
}

// The examples in `examples`, compiled as one model object with the board's
// flags and the generated-code contract's, need no symbol the target forbids
// (the check verify makes of every board build it runs).
void check_board_objects(const Target& target, const std::set<std::string>& examples) {
  const testing::AllOpsGraph all = testing::all_ops_graph(1234, examples, target.backend);
  CppEmitOptions emit{"board_objects", "board_objects", "board_objects"};
  TempDir dir("hybgen-board-objects");
  const std::string d = dir.path() + "/";
  for (const EmittedFile& f : emit_for_target(compile_graph(all.graph, CompileOptions::for_target(target)), emit))
    write_file_atomic(d + f.filename, f.content);
  const VerifyOptions defaults;
  const testing::CommandResult r =
      testing::run_command(target.cross_compiler + " " + target.compiler_flags + " " + defaults.cxx_flags + " -c " +
                           testing::quoted(d + "board_objects.cpp") + " -o " + testing::quoted(d + "board_objects.o"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(forbidden_symbols_in(target, d + "board_objects.o"), std::vector<std::string>{})
      << ::testing::PrintToString(examples);
}

void check_every_op_on_board(const std::string& name) {
  const Target& target = find_target(name);
  if (!on_path(target.cross_compiler) || !on_path(target.emulator))
    GTEST_SKIP() << target.cross_compiler << " or " << target.emulator << " is not on the PATH (Debian: "
                 << target.packages << ")";
  std::map<std::string, std::size_t> too_large;
  const std::vector<std::set<std::string>> groups = example_groups_fitting(target, &too_large);
  if (!too_large.empty()) {
    std::cout << "[ NOTE     ] examples larger than " << target.board << "'s RAM, not run on " << name
              << " (their object is compiled and its symbols checked): " << ::testing::PrintToString(too_large) << "\n";
    std::set<std::string> names;
    for (const auto& [example, bytes] : too_large) names.insert(example);
    check_board_objects(target, names);
  }
  if (groups.size() == 1 && too_large.empty()) return check_every_op(name);
  for (const std::set<std::string>& examples : groups) {
    SCOPED_TRACE(::testing::PrintToString(examples));
    check_every_op(name, examples);
  }
}

TEST(RegistryOps, EveryOpMatchesItsReferenceOnCortexM4) { check_every_op_on_board("cortex-m4"); }
TEST(RegistryOps, EveryOpMatchesItsReferenceOnCortexM7) { check_every_op_on_board("cortex-m7"); }
TEST(RegistryOps, EveryOpMatchesItsReferenceOnCortexM55) { check_every_op_on_board("cortex-m55"); }

}  // namespace
}  // namespace hybgen
