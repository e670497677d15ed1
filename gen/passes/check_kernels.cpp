// check_kernels: before anything is scheduled for a target, every node must
// have a kernel on the target's backend (OpKernel, ops/op_kernel.h) that
// computes the dtypes of its inputs and outputs (OpKernel::dtypes). Every
// node that lacks one is named in one Error, with what it lacks, so a model
// is mended in one go rather than one node per run.
#include <algorithm>
#include <string>

#include "ir/error.h"
#include "ir/names.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace hybgen {
namespace {

// What `kernel` lacks for `node`: "" when nothing.
std::string lacking(const Graph& graph, const Node& node, const OpKernel& kernel) {
  std::string what;
  auto check = [&](const std::string& role, const std::string& value) {
    const DType dtype = graph.type(value).dtype;
    if (std::find(kernel.dtypes.begin(), kernel.dtypes.end(), dtype) != kernel.dtypes.end()) return;
    what += (what.empty() ? "" : "; ") + role + " " + quoted_name(value) + " is " + dtype_name(dtype);
  };
  for (const auto& in : node.inputs) check("input", in);
  for (const auto& out : node.outputs) check("output", out);
  if (what.empty()) return what;
  return what + " (its kernel computes " + dtype_names(kernel.dtypes) + ")";
}

}  // namespace

void check_kernels(const Graph& graph, const Target& target) {
  std::string missing;
  for (const Node& node : graph.nodes) {
    const OpKernel* kernel = find_kernel(target.backend, find_op(node.op).name);
    const std::string what = kernel ? lacking(graph, node, *kernel) : "no kernel for the op";
    if (!what.empty()) missing += "\n  " + node_label(node.name, node.op) + ": " + what;
  }
  if (!missing.empty())
    throw Error("target " + target.name + " (" + backend_name(target.backend) +
                " backend) cannot compute these nodes:" + missing);
}

}  // namespace hybgen
