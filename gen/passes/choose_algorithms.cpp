// choose_algorithms: the algorithm of every op kernel whose backend kernel
// has several (OpKernel::choose_algorithm: a convolution's direct, im2col
// GEMM, Winograd...), chosen once for the target and recorded as
// Kernel::algorithm. The memory
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
  for (Kernel& kernel : kernels) {
    if (kernel.kind != KernelKind::kOp && kernel.kind != KernelKind::kEpilogue) continue;
    const Node& node = graph.nodes[kernel.nodes.front()];
    const OpKernel* op_kernel = find_kernel(target.backend, find_op(node.op).name);
    if (!op_kernel || !op_kernel->choose_algorithm) continue;
    try {
      kernel.algorithm = op_kernel->choose_algorithm(kernel_site(graph, node, target, ""));
    } catch (const Error& e) {
      throw Error(node_label(node.name, node.op) + ": " + e.what());
    }
  }
  return kernels;
}

}  // namespace hybgen
