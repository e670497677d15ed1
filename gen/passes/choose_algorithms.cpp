// choose_algorithms: the C++ kernel of every op kernel whose op has several
// (OpDef::choose_kernel: a convolution's direct, im2col GEMM, Winograd...),
// chosen once for the target and recorded as Kernel::algorithm. The memory
// plan sizes its scratch, the lowering packs its weights and the printer
// calls it from that record, so the three cannot disagree.
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace hybgen {

std::vector<Kernel> choose_algorithms(const Graph& graph, std::vector<Kernel> kernels, const Target& target) {
  if (target.backend != Backend::kCpp) return kernels;  // the CUDA kernels choose in their printers
  for (Kernel& kernel : kernels) {
    if (kernel.kind != KernelKind::kOp && kernel.kind != KernelKind::kEpilogue) continue;
    const Node& node = graph.nodes[kernel.nodes.front()];
    const OpDef& def = find_op(node.op);
    if (!def.choose_kernel) continue;
    std::vector<TensorType> in;
    std::vector<bool> constant;
    for (const auto& v : node.inputs) {
      in.push_back(graph.type(v));
      constant.push_back(graph.is_constant(v) && graph.constants.at(v).has_data());
    }
    try {
      kernel.algorithm = def.choose_kernel(node.attrs, in, constant, target);
    } catch (const Error& e) {
      throw Error(node_label(node.name, node.op) + ": " + e.what());
    }
  }
  return kernels;
}

}  // namespace hybgen
