#include <cstdio>
#include <map>
#include <string>

#include "cli/commands.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "ir/error.h"
#include "ir/names.h"
#include "verify/run_model.h"

namespace hybgen {

int run_run(const RunFlags& flags) {
  RunOptions options;
  options.compile = flags.compile.options();
  if (options.compile.io_precision != IoPrecision::kFloat32)
    throw Error("--io-precision " + flags.compile.io_precision +
                ": hybgen run reads and writes float32 .npy arrays (a quantized model gives the same results with "
                "fp32 edges); generate, verify, bench and inspect take it");
  options.threads = flags.threads;
  std::map<std::string, NpyArray> inputs;
  for (const auto& text : flags.inputs) {
    auto [name, path] = parse_named_path(text, "--input");
    if (inputs.count(name)) throw Error("--input " + quoted_name(name) + " is given twice");
    inputs[name] = read_npy(path);
  }
  std::vector<std::string> outputs;
  std::map<std::string, std::string> paths;  // output -> .npy
  for (const auto& text : flags.outputs) {
    auto [name, path] = parse_named_path(text, "--output");
    if (paths.count(name)) throw Error("--output " + quoted_name(name) + " is given twice");
    outputs.push_back(name);
    paths[name] = path;
  }
  const Graph graph = load_any_model(flags.model.source());
  std::map<std::string, NpyArray> results;
  try {
    results = run_generated(graph, inputs, outputs, options);
  } catch (const Error& e) {
    throw with_context(flags.model.model, e);
  }
  std::vector<OutputFile> files;
  for (const std::string& name : outputs) files.push_back({paths[name], npy_bytes(results.at(name), paths[name])});
  write_files_atomic(files);
  for (const std::string& name : outputs)
    std::printf("%s %s -> %s\n", printable_name(name).c_str(), shape_str(results.at(name).shape).c_str(),
                paths[name].c_str());
  return 0;
}

}  // namespace hybgen
