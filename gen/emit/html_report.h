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

#include "pipeline.h"

namespace hybgen {

// `source_name` is shown as where the model came from (the path given).
// Deterministic: the same graph gives byte-identical text.
std::string html_report(const CompiledGraph& compiled, const std::string& source_name);

}  // namespace hybgen
