#include "verify/verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <tuple>

#include "emit/backends.h"
#include "emit/board_files.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "ir/half.h"
#include "ir/names.h"
#include "ops/gemm_pack.h"
#include "ops/quantized.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "runtime-lite/interpreter.h"
#include "verify/generated_build.h"

namespace hybgen {
namespace {

std::vector<float> read_floats(const std::string& path, std::size_t count) {
  const auto bytes = read_file_bytes(path);
  if (bytes.size() != count * sizeof(float))
    throw Error(path + ": " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(count * sizeof(float)));
  std::vector<float> v(count);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// A quantized edge's integers (--io-precision quantized) as the bytes the
// driver reads: each real value quantized at the edge's scale and zero
// point, as the graph's own quantize would; `reals` then holds what those
// integers stand for, which the reference is given.
std::vector<uint8_t> quantize_edge(const TensorType& edge, std::vector<float>& reals) {
  const float scale = edge.quantization.scale[0];
  const auto zero_point = static_cast<std::int32_t>(edge.quantization.zero_point[0]);
  const auto [lo, hi] = int32_range(edge.dtype);
  std::vector<uint8_t> bytes(reals.size());
  for (std::size_t i = 0; i < reals.size(); ++i) {
    const std::int32_t q = quantize_float(reals[i], scale, zero_point, lo, hi);
    bytes[i] = static_cast<uint8_t>(q);  // int8's two's complement, or uint8
    reals[i] = dequantize_value(q, zero_point, scale);
  }
  return bytes;
}

// A half edge's values (--io-precision half) as the bytes the driver reads:
// each rounded to the edge's type; `values` then holds what the halves are,
// which the reference is given.
std::vector<uint8_t> half_edge(const TensorType& edge, std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = float_to_half_bits(edge.dtype, values[i]);
    std::memcpy(&bytes[2 * i], &h, 2);
    values[i] = half_bits_to_float(edge.dtype, h);
  }
  return bytes;
}

// An input's bytes as the driver reads them: float32, a half edge's halves,
// or a quantized edge's integers (`values` then become the reals those
// integers stand for, what the reference takes).
std::vector<uint8_t> encode_edge(const TensorType& edge, std::vector<float>& values) {
  if (is_half_dtype(edge.dtype)) return half_edge(edge, values);
  if (!edge.quantization.empty()) return quantize_edge(edge, values);
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                              reinterpret_cast<const uint8_t*>(values.data() + values.size()));
}

// The driver's output file as float32: the real values of a quantized edge's
// integers, or a half edge's values.
std::vector<float> read_edge(const std::string& path, const TensorType& edge) {
  if (is_half_dtype(edge.dtype)) {
    const auto bytes = read_file_bytes(path);
    if (bytes.size() != edge.bytes())
      throw Error(path + ": " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(edge.bytes()));
    std::vector<float> v(bytes.size() / 2);
    for (std::size_t i = 0; i < v.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      v[i] = half_bits_to_float(edge.dtype, h);
    }
    return v;
  }
  if (edge.quantization.empty()) return read_floats(path, static_cast<std::size_t>(edge.num_elements()));
  const auto bytes = read_file_bytes(path);
  if (bytes.size() != static_cast<std::size_t>(edge.num_elements()))
    throw Error(path + ": " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(edge.num_elements()));
  const auto zero_point = static_cast<std::int32_t>(edge.quantization.zero_point[0]);
  std::vector<float> v(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const std::int32_t q = edge.dtype == DType::kInt8 ? static_cast<std::int8_t>(bytes[i]) : bytes[i];
    v[i] = dequantize_value(q, zero_point, edge.quantization.scale[0]);
  }
  return v;
}

std::string names_of(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The RAM verify's driver takes beside the model: a buffer per input and
// output, of the generated graph's types.
std::size_t driver_buffer_bytes(const Graph& graph) {
  std::size_t bytes = 0;
  for (const auto* list : {&graph.inputs, &graph.outputs})
    for (const std::string& v : *list) bytes += graph.type(v).bytes();
  return bytes;
}

}  // namespace

std::string verify_board_fit_problem(const CompiledGraph& compiled, std::size_t weight_bytes) {
  if (compiled.target.runner != Runner::kQemuSystem) return "";
  return board_fit_problem(compiled.target, {weight_bytes, compiled.plan.arena_bytes, kBoardProgramStackBytes,
                                             driver_buffer_bytes(compiled.graph)});
}

std::pair<double, double> compare_outputs(const std::vector<float>& actual, const std::vector<float>& reference) {
  if (actual.size() != reference.size())
    throw Error("compare_outputs: " + std::to_string(actual.size()) + " values against " +
                std::to_string(reference.size()) + " reference values");
  double abs_err = 0, scale = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(actual[i]) - reference[i]);
    abs_err = std::isnan(diff) ? INFINITY : std::max(abs_err, diff);
    scale = std::max(scale, static_cast<double>(std::fabs(reference[i])));
  }
  return {abs_err, abs_err / std::max(scale, 1e-30)};
}

namespace {

// The CUDA driver's device side: the host arrays in_I / out_I (of `edges`'s
// inputs and outputs) copied to and from device buffers of their own, the
// outputs also read back after a replay of the captured graph and compared
// with run()'s. `bytes(value)` is the C++ expression of a value's bytes.
void add_device_buffers(const Graph& edges, const std::function<std::string(const std::string&)>& bytes_of,
                        std::map<std::string, std::string>& driver) {
  std::string device, device_args, downloads, clear, replay_checks;
  auto add = [&](const std::string& host, const std::string& value, bool output) {
    const TensorType& edge = edges.type(value);
    const std::string bytes = bytes_of(value), type = storage_c_type(edge.dtype, Backend::kCuda);
    const std::string d = "d_" + host;
    device += "  " + type + "* " + d + " = nullptr;\n  if (!cuda_ok(cudaMalloc(&" + d + ", " + bytes +
              "), \"cudaMalloc\")) return 6;\n";
    if (!output)
      device += "  if (!cuda_ok(cudaMemcpy(" + d + ", " + host + ", " + bytes +
                ", cudaMemcpyHostToDevice), \"upload\")) return 6;\n";
    device_args += (device_args.empty() ? "" : ", ") + d;
    if (!output) return;
    downloads += "  if (!cuda_ok(cudaMemcpy(" + host + ", " + d + ", " + bytes +
                 ", cudaMemcpyDeviceToHost), \"download\")) return 6;\n";
    clear += "  if (!cuda_ok(cudaMemset(" + d + ", 0xff, " + bytes + "), \"cudaMemset\")) return 6;\n";
    driver["BUFFERS"] += type + " replay_" + host + "[" +
                         std::to_string(edge.num_elements() * (edges.batch.variable() ? edges.batch.max : 1)) + "];\n";
    replay_checks += "  if (!cuda_ok(cudaMemcpy(replay_" + host + ", " + d + ", " + bytes +
                     ", cudaMemcpyDeviceToHost), \"download\")) return 6;\n"
                     "  if (std::memcmp(replay_" +
                     host + ", " + host + ", " + bytes +
                     ") != 0) {\n    std::fprintf(stderr, \"the replayed graph gave other values than run()\\n\");\n"
                     "    return 7;\n  }\n";
  };
  for (std::size_t i = 0; i < edges.inputs.size(); ++i) add("in_" + std::to_string(i), edges.inputs[i], false);
  for (std::size_t i = 0; i < edges.outputs.size(); ++i) add("out_" + std::to_string(i), edges.outputs[i], true);
  driver["DEVICE_BUFFERS"] = device;
  driver["DEVICE_ARGS"] = device_args;
  driver["DOWNLOADS"] = downloads;
  driver["CLEAR_OUTPUTS"] = clear;
  driver["REPLAY_CHECKS"] = replay_checks;
}

// The graph at `batch` items, fixed: what the reference runs.
Graph graph_at_batch(const Graph& graph, int64_t batch) {
  Graph at = graph;
  for (const auto& input : graph.batch.inputs) at.types.at(input).shape[0] *= batch;
  at.batch = BatchRange{};
  return at;
}

// verify_model for a run-time batch (Graph::batch): one build whose driver
// runs the bounds and a batch between them, each against the reference at
// that batch, on seeded N(0, 1) inputs. A given input is one item's values;
// item k takes them rotated by k * 7919 elements, so that items differ (an
// op that mixed them would show) and the values stay the ones given (in the
// range an op takes).
VerifyReport verify_batches(const Graph& g, const CompiledGraph& generated, const VerifyOptions& options) {
  std::vector<int64_t> batches = {g.batch.min, (g.batch.min + g.batch.max) / 2, g.batch.max};
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  const Graph& edges = generated.graph;
  const std::set<std::string> batched = batch_values(edges);
  std::string buffers, reads, writes, args, list;
  for (int64_t b : batches) list += (list.empty() ? "" : ", ") + std::to_string(b);
  auto edge_code = [&](const std::string& value, const std::string& name, bool output) {
    const TensorType& edge = edges.type(value);
    const bool items = batched.count(value) != 0;
    const std::string type = storage_c_type(edge.dtype, generated.target.backend);
    buffers += type + " " + name + "[" + std::to_string(edge.num_elements() * (items ? g.batch.max : 1)) + "];\n";
    const std::string bytes = std::to_string(edge.bytes()) + "u" + (items ? " * static_cast<std::size_t>(batch)" : "");
    std::string& code = output ? writes : reads;
    code += "  char " + name + "_file[64];\n  std::snprintf(" + name + "_file, sizeof " + name + "_file, \"" + name +
            "_b%d.bin\", static_cast<int>(batch));\n";
    code += "  if (!" + std::string(output ? "write_values" : "read_values") + "(dir, " + name + "_file, " + name +
            ", " + bytes + ")) return " + (output ? "5" : "4") + ";\n";
    args += (args.empty() ? "" : ", ") + name;
  };
  for (std::size_t i = 0; i < edges.inputs.size(); ++i) edge_code(edges.inputs[i], "in_" + std::to_string(i), false);
  for (std::size_t i = 0; i < edges.outputs.size(); ++i) edge_code(edges.outputs[i], "out_" + std::to_string(i), true);
  std::map<std::string, std::string> driver = {
      {"BUFFERS", buffers},
      {"READS", reads},
      {"WRITES", writes},
      {"ARGS", args + ", batch"},
      {"THREADS", std::to_string(options.threads)},
      {"BATCH_LOOP_OPEN", "  const int64_t batches[] = {" + list +
                              "};\n  for (std::size_t run = 0; run < sizeof batches / sizeof batches[0]; ++run) {\n  "
                              "const int64_t batch = batches[run];\n"},
      {"BATCH_LOOP_CLOSE", "  }\n"}};
  const BackendTraits& backend = backend_traits(generated.target.backend);
  if (backend.device_buffers) {
    add_device_buffers(
        edges,
        [&](const std::string& value) {
          return std::to_string(edges.type(value).bytes()) + "u" +
                 (batched.count(value) ? " * static_cast<std::size_t>(batch)" : "");
        },
        driver);
    driver["DEVICE_ARGS"] += ", batch";
    driver.erase("ARGS");
    driver.erase("THREADS");
  } else {
    for (auto& [key, text] : bisect_driver_values(generated_name(generated.graph), false)) driver[key] = text;
  }
  BuildSettings settings{options.cxx, options.cxx_flags, false, options.external_weights, Emulation::kAllowed};
  settings.unoptimized_driver = true;
  GeneratedBuild build(generated, backend.verify_driver, driver, settings);

  // Per batch: inputs drawn at that many items, the reference at that batch.
  std::vector<std::vector<Tensor>> references;
  for (std::size_t k = 0; k < batches.size(); ++k) {
    Interpreter interpreter(graph_at_batch(g, batches[k]));
    std::map<std::string, Tensor> inputs;
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
      const Shape& shape = interpreter.graph().type(g.inputs[i]).shape;
      Tensor values = Tensor::random_normal(shape, 0.0f, 1.0f, options.seed + i + 7919 * k);
      auto given = options.inputs.find(g.inputs[i]);
      if (given != options.inputs.end()) {
        const std::vector<float>& item = given->second.data;
        const bool items = std::find(g.batch.inputs.begin(), g.batch.inputs.end(), g.inputs[i]) != g.batch.inputs.end();
        std::vector<float> all(static_cast<std::size_t>(num_elements(shape)));
        for (std::size_t j = 0; j < all.size(); ++j) {
          const std::size_t n = item.size(), at = j / n, within = j % n;
          all[j] = item[(within + (items ? at : 0) * 7919) % n];
        }
        values = Tensor::from_vector(shape, all);
      }
      // The edge's own type: float32, halves or a quantized model's integers (which the reference takes as reals).
      std::vector<float> reals = values.to_vector();
      TensorType edge = edges.type(g.inputs[i]);
      edge.shape = shape;
      const std::vector<uint8_t> bytes = encode_edge(edge, reals);
      inputs[g.inputs[i]] = Tensor::from_vector(shape, reals);
      write_file_atomic(build.dir() + "/in_" + std::to_string(i) + "_b" + std::to_string(batches[k]) + ".bin", bytes);
    }
    references.push_back(interpreter.run(inputs));
  }
  VerifyReport report;
  report.compile_seconds = build.compile_seconds();
  report.compiler = build.toolchain().cxx;
  report.runner = build.toolchain().runner;
  build.run();
  report.ok = true;
  for (std::size_t k = 0; k < batches.size(); ++k)
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
      const Tensor& ref = references[k][i];
      TensorType edge = edges.type(g.outputs[i]);
      edge.shape = ref.shape();
      const std::vector<float> actual =
          read_edge(build.dir() + "/out_" + std::to_string(i) + "_b" + std::to_string(batches[k]) + ".bin", edge);
      OutputCheck c{g.outputs[i], ref.shape(), "reference", 0, 0, false, batches[k]};
      std::tie(c.max_abs_error, c.max_rel_error) = compare_outputs(actual, ref.to_vector());
      c.ok = c.max_rel_error <= options.tolerance;
      report.ok = report.ok && c.ok;
      report.checks.push_back(c);
    }
  if (options.keep_build) {
    report.build_dir = build.dir();
    build.keep();
  }
  return report;
}

}  // namespace

VerifyReport verify_model(const Graph& graph, const VerifyOptions& options) {
  const Graph& g = graph;
  for (const auto& [name, array] : options.inputs)
    if (!g.is_input(name)) throw Error("--input names " + quoted_name(name) + ", which is not an input (inputs: " + names_of(g.inputs) + ")");
  for (const auto& [name, array] : options.expected)
    if (!g.is_output(name))
      throw Error("--expected names " + quoted_name(name) + ", which is not an output (outputs: " + names_of(g.outputs) + ")");

  // A target without int8 kernels computes a quantized model in float on
  // its dequantized weights (the pass dequantize_graph): so does the reference.
  Graph reference_graph = g;
  const bool dequantized = options.compile.target.int8_through_float && dequantize_graph(reference_graph);
  Interpreter interpreter(reference_graph);
  const Graph& compiled = interpreter.graph();
  // Checked before compiling, so a wrong array costs no compiler run.
  for (const auto& [name, array] : options.expected)
    if (array.shape != compiled.type(name).shape)
      throw Error("expected array for output " + quoted_name(name) + " has shape " + shape_str(array.shape) +
                  ", the model gives " + shape_str(compiled.type(name).shape));

  // The generated code's edges: float32, or with --io-precision quantized a
  // quantized model's integers, which the reference takes and gives as the
  // real values they stand for.
  const CompiledGraph generated = compile_graph(g, options.compile);
  const Graph& edges = generated.graph;

  // Inputs: given arrays or seeded N(0, 1); the driver reads and writes raw values of the edges' types.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> input_files;
  std::map<std::string, Tensor> inputs;
  std::string buffers, reads, writes, args;
  if (g.batch.variable()) {
    if (!options.expected.empty())
      throw Error("--expected: a model with a run-time batch is checked against the reference at several batches");
    for (const auto& [name, array] : options.inputs)
      if (array.shape != compiled.type(name).shape)
        throw Error("input " + quoted_name(name) + " has shape " + shape_str(array.shape) +
                    " in the array given; with a run-time batch verify takes one item, " +
                    shape_str(compiled.type(name).shape));
    if (generated.target.runner == Runner::kQemuSystem)
      throw Error("verify: a run-time batch is verified on this machine's targets (and cuda-host) so far; " +
                  generated.target.name + " runs on an emulated board");
    if (options.bisect == BisectMode::kAlways) throw Error("--bisect: not for a model with a run-time batch yet");
    return verify_batches(reference_graph, generated, options);
  }
  for (std::size_t i = 0; i < compiled.inputs.size(); ++i) {
    const std::string& in = compiled.inputs[i];
    const Shape& shape = compiled.type(in).shape;
    auto given = options.inputs.find(in);
    std::vector<float> values;
    if (given != options.inputs.end()) {
      if (given->second.shape != shape)
        throw Error("input " + quoted_name(in) + " has shape " + shape_str(given->second.shape) +
                    " in the array given, the model expects " + shape_str(shape));
      values = given->second.data;
    } else {
      values = Tensor::random_normal(shape, 0.0f, 1.0f, options.seed + i).to_vector();
    }
    const TensorType& edge = edges.type(in);
    std::vector<uint8_t> bytes = encode_edge(edge, values);
    inputs[in] = Tensor::from_vector(shape, values);
    input_files.emplace_back("in_" + std::to_string(i) + ".bin", std::move(bytes));
    const std::string name = "in_" + std::to_string(i);
    buffers += storage_c_type(edge.dtype, generated.target.backend) + " " + name + "[" +
               std::to_string(edge.num_elements()) + "];\n";
    reads += "  if (!read_values(dir, \"" + name + ".bin\", " + name + ", " + std::to_string(edge.bytes()) +
             ")) return 4;\n";
    args += (args.empty() ? "" : ", ") + name;
  }
  for (std::size_t i = 0; i < compiled.outputs.size(); ++i) {
    const TensorType& edge = edges.type(compiled.outputs[i]);
    const std::string name = "out_" + std::to_string(i);
    buffers += storage_c_type(edge.dtype, generated.target.backend) + " " + name + "[" +
               std::to_string(edge.num_elements()) + "];\n";
    writes += "  if (!write_values(dir, \"" + name + ".bin\", " + name + ", " + std::to_string(edge.bytes()) +
              ")) return 5;\n";
    args += (args.empty() ? "" : ", ") + name;
  }
  std::map<std::string, std::string> driver = {{"BUFFERS", buffers}, {"READS", reads}, {"WRITES", writes}};
  const BackendTraits& backend = backend_traits(generated.target.backend);
  std::string driver_template = backend.verify_driver;
  if (backend.device_buffers) {
    add_device_buffers(
        edges, [&](const std::string& value) { return std::to_string(edges.type(value).bytes()); }, driver);
    driver["BATCH_LOOP_OPEN"] = driver["BATCH_LOOP_CLOSE"] = "";
  } else if (generated.target.runner == Runner::kQemuSystem) {
    if (options.threads > 1)
      throw Error("--threads " + std::to_string(options.threads) + " with --target " + generated.target.name +
                  ": a microcontroller program runs on one core");
    if (options.external_weights)
      throw Error("--external-weights with --target " + generated.target.name +
                  ": the verify program keeps its weights in the board's flash");
    driver_template = "firmware/verify_main.cpp";
    driver["ARGS"] = args;
  } else {
    driver["ARGS"] = args;
    driver["THREADS"] = std::to_string(options.threads);
    driver["BATCH_LOOP_OPEN"] = driver["BATCH_LOOP_CLOSE"] = "";
  }
  const std::string no_bisect = bisect_unsupported(generated);
  if (options.bisect == BisectMode::kAlways && !no_bisect.empty()) throw Error(no_bisect);
  // The C++ driver takes the hook's pieces (empty without hooks); the others have none.
  auto make_build = [&](bool hooks) {
    std::map<std::string, std::string> values = driver;
    if (backend.kernel_hooks && driver_template == backend.verify_driver)
      for (auto& [key, text] : bisect_driver_values(generated_name(generated.graph), hooks))
        values[key] = text;
    BuildSettings settings{options.cxx, options.cxx_flags, false, options.external_weights, Emulation::kAllowed};
    settings.unoptimized_driver = true;
    settings.kernel_hooks = hooks;
    settings.board_buffer_bytes = driver_buffer_bytes(edges);
    auto b = std::make_unique<GeneratedBuild>(generated, driver_template, values, settings);
    for (const auto& [file, data] : input_files) write_file_atomic(b->dir() + "/" + file, data);
    return b;
  };
  const bool hooked = options.bisect == BisectMode::kAlways;
  std::unique_ptr<GeneratedBuild> first_build = make_build(hooked);
  GeneratedBuild& build = *first_build;
  const std::string dir = build.dir();
  VerifyReport report;
  if (dequantized)
    report.reference_note = "target " + generated.target.name +
                            " has no int8 kernels: the model runs in float on its dequantized weights, and so "
                            "does the reference";
  report.compile_seconds = build.compile_seconds();
  report.compiler = build.toolchain().cxx;
  report.runner = build.toolchain().runner;
  const std::string output = build.run();
  if (generated.target.runner == Runner::kQemuSystem) {
    const std::size_t at = output.find("hybgen-firmware ");
    if (at == std::string::npos ||
        std::sscanf(output.c_str() + at, "hybgen-firmware stack_bytes=%lu instructions=%lu", &report.stack_bytes,
                    &report.instructions) != 2)
      throw Error("the program on the board printed no measurements: " + output);
    report.board_measured = true;
    report.weight_bytes = build.weight_bytes();
    report.arena_bytes = generated.plan.arena_bytes;
    if (options.measure_code) report.code_bytes = build.model_code_bytes();
  }

  const std::vector<Tensor> reference = interpreter.run(inputs);
  report.ok = true;
  for (std::size_t i = 0; i < compiled.outputs.size(); ++i) {
    const std::string& out = compiled.outputs[i];
    const Shape& shape = compiled.type(out).shape;
    const std::vector<float> actual = read_edge(dir + "/out_" + std::to_string(i) + ".bin", edges.type(out));
    auto check = [&](const std::vector<float>& ref, const std::string& against) {
      OutputCheck c{out, shape, against, 0, 0, false};
      std::tie(c.max_abs_error, c.max_rel_error) = compare_outputs(actual, ref);
      c.ok = c.max_rel_error <= options.tolerance;
      report.ok = report.ok && c.ok;
      report.checks.push_back(c);
    };
    check(reference[i].to_vector(), "reference");
    auto expected = options.expected.find(out);
    if (expected != options.expected.end()) check(expected->second.data, "expected");
  }
  if (hooked) {
    report.bisect = bisect_kernels(generated, inputs, dir + "/kernels.bin", options.tolerance);
  } else if (options.bisect == BisectMode::kOnFailure && !report.ok) {
    if (no_bisect.empty()) {
      // The outputs' report stands even when the hooked build fails.
      try {
        const std::unique_ptr<GeneratedBuild> bisect_build = make_build(true);
        bisect_build->run();
        report.bisect = bisect_kernels(generated, inputs, bisect_build->dir() + "/kernels.bin", options.tolerance);
        if (options.keep_build) {
          report.bisect.build_dir = bisect_build->dir();
          bisect_build->keep();
        }
      } catch (const Error& e) {
        report.bisect.skipped = std::string("the build with kernel hooks failed: ") + e.what();
      }
    } else {
      report.bisect.skipped = no_bisect;
    }
  }
  if (report.bisect.first) report.ok = false;
  if (options.keep_build) {
    report.build_dir = dir;
    if (hooked) report.bisect.build_dir = dir;
    build.keep();
  }
  return report;
}

}  // namespace hybgen
