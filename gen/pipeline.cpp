#include "pipeline.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/names.h"
#include "passes/passes.h"

namespace hybgen {

std::vector<std::string> pass_names(const CompileOptions& options) {
  std::vector<std::string> names;
  if (!options.optimize) {
    names = {"validate",      "infer_shapes", "dequantize_graph",  "remove_identities", "half_storage",
             "check_kernels", "schedule",     "choose_algorithms", "plan_memory"};
  } else {
    names = {"validate",
             "infer_shapes",
             "dequantize_graph",
             "remove_identities",
             "remove_dead_code",
             "fold_qdq",
             "lower_batch_norm",
             "fold_scale_shift",
             "fold_constants",
             "fuse_pointwise_depthwise",
             "fuse_strided_batch_dot",
             "fuse_attention",
             "half_storage",
             "check_kernels",
             "schedule",
             "fuse",
             "choose_algorithms",
             "schedule_kernels",
             "plan_memory"};
  }
  if (options.io_precision == IoPrecision::kQuantized) {
    const auto after = std::find(names.begin(), names.end(), options.optimize ? "fold_qdq" : "remove_identities");
    names.insert(after + 1, "quantized_io");
  }
  if (!options.target.int8_through_float) names.erase(std::find(names.begin(), names.end(), "dequantize_graph"));
  return names;
}

std::string io_precision_name(IoPrecision precision) {
  switch (precision) {
    case IoPrecision::kQuantized:
      return "quantized";
    case IoPrecision::kHalf:
      return "half";
    default:
      return "fp32";
  }
}

IoPrecision parse_io_precision(const std::string& text) {
  for (IoPrecision p : {IoPrecision::kFloat32, IoPrecision::kQuantized, IoPrecision::kHalf})
    if (text == io_precision_name(p)) return p;
  throw Error("--io-precision " + quoted_name(text) + ": expected fp32, quantized or half");
}

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::kTF32:
      return "tf32";
    case Precision::kFP16:
      return "fp16";
    case Precision::kBF16:
      return "bf16";
    default:
      return "fp32";
  }
}

Precision parse_precision(const std::string& text) {
  for (Precision p : {Precision::kFP32, Precision::kTF32, Precision::kFP16, Precision::kBF16})
    if (text == precision_name(p)) return p;
  throw Error("--precision " + quoted_name(text) + ": expected fp32, tf32, fp16 or bf16");
}

// Relative to the largest output (docs/cuda.md#precision). TF32 keeps 10 of
// FP32's 23 mantissa bits: each product's operands are off by up to 2^-11
// relative, and a layer's sums and a network's layers add those up; 1e-2
// holds a ResNet-18 or a transformer layer while a wrong kernel misses by
// far more. FP16 rounds every stored activation and weight as well (2^-11
// each); BF16 keeps 7 bits (2^-8 each), eight times FP16's error. A deep
// chain of depthwise blocks (MobileNet v2) adds them up to 1.5e-2 in fp16
// and 9e-2 in bf16 with correct kernels; a wrong kernel misses by order 1.
double default_tolerance(Precision precision) {
  switch (precision) {
    case Precision::kTF32:
      return 1e-2;
    case Precision::kFP16:
      return 5e-2;
    case Precision::kBF16:
      return 2e-1;
    default:
      return 1e-5;
  }
}

CompileOptions CompileOptions::for_target(const Target& target, bool optimize) {
  CompileOptions options;
  options.target = target;
  options.optimize = optimize;
  return options;
}

CompiledGraph compile_graph(Graph graph, const CompileOptions& options) {
  CompiledGraph state;
  state.target = options.target;
  auto after = [&](const char* pass) {
    if (options.observer) options.observer(pass, state);
  };
  // A graph-rewriting pass; shapes are inferred again when it changed anything.
  auto rewrite = [&](const char* pass, bool (*run)(Graph&)) {
    if (run(state.graph)) infer_shapes(state.graph);
    after(pass);
  };
  if (options.io_precision == IoPrecision::kQuantized && options.target.int8_through_float)
    throw Error("--io-precision quantized: target " + options.target.name +
                " has no int8 kernels (it computes a quantized model in float), so its inputs and outputs are float32");
  const Precision precision = options.target.precision;
  if (precision != Precision::kFP32 && options.target.backend != Backend::kCuda)
    throw Error("--precision " + precision_name(precision) + ": target " + options.target.name +
                " computes exact float32; " + precision_name(precision) +
                " is the CUDA targets' tensor-core arithmetic");
  const bool half_precision = precision == Precision::kFP16 || precision == Precision::kBF16;
  if (options.io_precision == IoPrecision::kHalf && !half_precision)
    throw Error("--io-precision half: the edges take the halves --precision fp16 or bf16 stores; the precision is " +
                precision_name(precision));
  state.graph = std::move(graph);
  validate(state.graph);
  after("validate");
  infer_shapes(state.graph);
  after("infer_shapes");
  check_batch_separable(state.graph);
  // No int8 kernels on this target: the float graph on dequantized weights.
  if (options.target.int8_through_float) rewrite("dequantize_graph", dequantize_graph);
  rewrite("remove_identities", remove_identities);
  const bool quantized_edges = options.io_precision == IoPrecision::kQuantized;
  if (!options.optimize && quantized_edges) rewrite("quantized_io", quantized_io);
  if (options.optimize) {
    rewrite("remove_dead_code", remove_dead_code);
    rewrite("fold_qdq", fold_qdq);  // before fold_constants folds the weights' dequantize
    if (quantized_edges) rewrite("quantized_io", quantized_io);  // after fold_qdq: a QDQ model's edges as quantize
    rewrite("lower_batch_norm", lower_batch_norm);
    rewrite("fold_scale_shift", fold_scale_shift);
    rewrite("fold_constants", fold_constants);
    rewrite("fuse_pointwise_depthwise", fuse_pointwise_depthwise);
    rewrite("fuse_strided_batch_dot", fuse_strided_batch_dot);
    if (fuse_attention(state.graph, options.target)) infer_shapes(state.graph);
    after("fuse_attention");
  }
  if (half_storage(state.graph, options.target, options.io_precision == IoPrecision::kHalf)) infer_shapes(state.graph);
  after("half_storage");
  check_kernels(state.graph, options.target);
  after("check_kernels");
  schedule(state.graph);
  after("schedule");
  if (options.optimize) {
    state.kernels = fuse(state.graph);
    after("fuse");
    state.kernels = choose_algorithms(state.graph, std::move(state.kernels), options.target);
    after("choose_algorithms");
    state.kernels = schedule_kernels(state.graph, std::move(state.kernels), options.target, options.small_arena);
    after("schedule_kernels");
  } else {
    state.kernels = choose_algorithms(state.graph, unfused_kernels(state.graph), options.target);
    after("choose_algorithms");
  }
  state.plan = plan_memory(state.graph, state.kernels, options.target, options.optimize, options.small_arena);
  state.plan.verify();
  after("plan_memory");
  return state;
}

}  // namespace hybgen
