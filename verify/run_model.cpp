#include "verify/run_model.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "emit/backends.h"
#include "io/file_util.h"
#include "ir/error.h"
#include "ir/names.h"
#include "verify/bisect.h"
#include "verify/generated_build.h"

namespace hybgen {
namespace {

std::string quoted_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + quoted_name(n);
  return s;
}

}  // namespace

std::map<std::string, NpyArray> run_generated(const Graph& graph, const std::map<std::string, NpyArray>& inputs,
                                              const std::vector<std::string>& outputs, const RunOptions& options) {
  for (const auto& [name, array] : inputs)
    if (!graph.is_input(name))
      throw Error("--input names " + quoted_name(name) +
                  ", which is not an input (inputs: " + quoted_names(graph.inputs) + ")");
  if (outputs.empty())
    throw Error("no output to write: give --output NAME=y.npy (outputs: " + quoted_names(graph.outputs) + ")");
  for (const auto& name : outputs)
    if (!graph.is_output(name))
      throw Error("--output names " + quoted_name(name) +
                  ", which is not an output (outputs: " + quoted_names(graph.outputs) + ")");
  if (graph.batch.variable())
    throw Error(
        "hybgen run splits an array into runs of the model's fixed batch; a run-time batch (--shape "
        "NAME=MIN..MAX,...) is for generate, verify, bench and inspect");
  const CompiledGraph generated = compile_graph(graph, options.compile);
  const Graph& g = generated.graph;

  // Checked before compiling, so a wrong array costs no compiler run.
  int64_t chunks = -1;
  for (const std::string& in : g.inputs) {
    auto given = inputs.find(in);
    if (given == inputs.end())
      throw Error("input " + quoted_name(in) + " is not given (--input " + printable_name(in) + "=x.npy)");
    const Shape& shape = g.type(in).shape;
    const Shape& a = given->second.shape;
    if (shape.empty() || shape[0] < 1)
      throw Error("input " + quoted_name(in) + " has shape " + shape_str(shape) +
                  ": no batch dimension to run in chunks");
    const Shape tail(shape.begin() + 1, shape.end());
    if (a.size() != shape.size() || Shape(a.begin() + 1, a.end()) != tail || a[0] < 1)
      throw Error("the array for input " + quoted_name(in) + " has shape " + shape_str(a) + ", expected (N, " +
                  shape_str(tail).substr(1) + " with N a multiple of the model's batch " + std::to_string(shape[0]) +
                  " (the input is " + shape_str(shape) + ")");
    if (a[0] % shape[0] != 0)
      throw Error("the array for input " + quoted_name(in) + " has " + std::to_string(a[0]) +
                  " samples, not a multiple of the model's batch " + std::to_string(shape[0]) + " (the input is " +
                  shape_str(shape) + ")");
    if (chunks >= 0 && a[0] / shape[0] != chunks)
      throw Error("the arrays hold different numbers of batches: " + std::to_string(chunks) + " for " +
                  quoted_name(g.inputs[0]) + ", " + std::to_string(a[0] / shape[0]) + " for " + quoted_name(in));
    chunks = a[0] / shape[0];
  }
  if (chunks < 0) throw Error("the model has no input to run on");

  const BackendTraits& backend = backend_traits(generated.target.backend);
  if (backend.device_buffers || generated.target.runner == Runner::kQemuSystem)
    throw Error("--target " + generated.target.name +
                ": hybgen run builds C++ programs for this machine or qemu-user only (use hybgen verify --input for "
                "one batch)");

  // verify's driver runs the model once between READS and WRITES; opening a
  // loop over the chunks in READS and closing it in WRITES makes the same
  // driver stream every chunk through one process.
  const std::string n_chunks = std::to_string(chunks);
  std::string buffers, open, reads, writes, close, args;
  auto open_file = [](const std::string& var, const std::string& file, const char* mode) {
    return "  char " + var + "_path[4096];\n  std::snprintf(" + var + "_path, sizeof " + var + "_path, \"%s/" + file +
           "\", dir);\n  std::FILE* const " + var + " = std::fopen(" + var + "_path, \"" + mode + "\");\n  if (!" +
           var + ") {\n    std::fprintf(stderr, \"%s: cannot open\\n\", " + var + "_path);\n    return 4;\n  }\n";
  };
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string b = "in_" + std::to_string(i), n = std::to_string(g.type(g.inputs[i]).num_elements());
    buffers += "float " + b + "[" + n + "];\n";
    open += open_file(b + "_file", b + ".bin", "rb");
    reads += "    if (std::fread(" + b + ", sizeof(float), " + n + ", " + b + "_file) != " + n + ") return 4;\n";
    args += (args.empty() ? "" : ", ") + b;
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string b = "out_" + std::to_string(i), n = std::to_string(g.type(g.outputs[i]).num_elements());
    buffers += "float " + b + "[" + n + "];\n";
    open += open_file(b + "_file", b + ".bin", "wb");
    writes += "    if (std::fwrite(" + b + ", sizeof(float), " + n + ", " + b + "_file) != " + n + ") return 5;\n";
    close += "  if (std::fclose(" + b + "_file) != 0) return 5;\n";  // a full disk may show only here
    args += (args.empty() ? "" : ", ") + b;
  }
  std::map<std::string, std::string> driver = {
      {"BUFFERS", buffers},
      {"READS", open + "  for (long chunk = 0; chunk < " + n_chunks + "; ++chunk) {\n" + reads},
      {"WRITES", writes + "  }\n" + close},
      {"ARGS", args},
      {"THREADS", std::to_string(options.threads)},
      {"BATCH_LOOP_OPEN", ""},
      {"BATCH_LOOP_CLOSE", ""}};
  if (backend.kernel_hooks)
    for (auto& [key, text] : bisect_driver_values(generated_name(g), false)) driver[key] = text;
  BuildSettings settings{options.cxx, options.cxx_flags, false, false, Emulation::kAllowed};
  settings.unoptimized_driver = true;
  GeneratedBuild build(generated, backend.verify_driver, driver, settings);
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const std::vector<float>& v = inputs.at(g.inputs[i]).data;
    write_file_atomic(build.dir() + "/in_" + std::to_string(i) + ".bin",
                      std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                           reinterpret_cast<const uint8_t*>(v.data() + v.size())));
  }
  build.run();

  std::map<std::string, NpyArray> result;
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string& out = g.outputs[i];
    if (std::find(outputs.begin(), outputs.end(), out) == outputs.end()) continue;
    Shape shape = g.type(out).shape;
    if (shape.empty()) {
      if (chunks > 1) shape = {chunks};
    } else {
      shape[0] *= chunks;
    }
    const std::string path = build.dir() + "/out_" + std::to_string(i) + ".bin";
    const std::vector<uint8_t> bytes = read_file_bytes(path);
    const auto count = static_cast<std::size_t>(num_elements(shape));
    if (bytes.size() != count * sizeof(float))
      throw Error(path + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                  std::to_string(count * sizeof(float)));
    NpyArray a{shape, std::vector<float>(count)};
    std::memcpy(a.data.data(), bytes.data(), bytes.size());
    result[out] = std::move(a);
  }
  return result;
}

}  // namespace hybgen
