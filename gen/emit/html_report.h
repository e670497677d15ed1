// `hybgen inspect --report`: one self-contained HTML page about a compiled
// graph (inline CSS and SVG, no scripts, nothing fetched): the headline
// numbers, the memory plan with every strategy tried and its arena as a
// picture, and the kernels in execution order with FLOPs, bytes and
// arithmetic intensity. The page skeleton is templates/report.html.in.
//
//   CompiledGraph c = compile_graph(load_model("mlp.json"));
//   write_file_atomic("report.html", html_report(c, "mlp.json"));
#pragma once

#include <string>
#include <vector>

#include "passes/quantize_graph.h"
#include "pipeline.h"

namespace hybgen {

// A quantized model's loss per int8 layer (`inspect --report --float-model
// M --calibration X.npy`): the SQNR of each one's output against the float
// model on the calibration data, worst first, and what it was measured on.
struct SqnrSection {
  std::string measured_on;  // "the float model m.json on 100 samples of calibration.npy"
  std::vector<NodeSqnr> layers;
};

// `source_name` is shown as where the model came from (the path given);
// `sqnr`, when given, adds its table. Deterministic: the same graph gives
// byte-identical text.
std::string html_report(const CompiledGraph& compiled, const std::string& source_name,
                        const SqnrSection* sqnr = nullptr);

}  // namespace hybgen
