#include "emit/kernel_walk.h"

#include <algorithm>

#include "emit/cpp_emitter.h"
#include "emit/templates.h"
#include "ir/error.h"
#include "ir/names.h"
#include "ops/op.h"

namespace hybgen {
WalkedKernels walk_kernels(LoweredModel& m, KernelPrinter& printer, const std::vector<std::string>& first_templates) {
  const Graph& g = m.graph;
  const PointerOf pointer = [&](const std::string& value) { return m.pointer(value); };
  WalkedKernels out;
  auto use_templates = [&](const std::vector<std::string>& names) {
    for (const auto& name : names)
      for (const auto& k : kernel_templates_with_needs(name, printer.template_folder()))
        if (std::find(out.templates.begin(), out.templates.end(), k) == out.templates.end()) out.templates.push_back(k);
  };
  use_templates(first_templates);
  for (const LoweredKernel& lowered : m.kernels) {
    const Kernel& kernel = *lowered.kernel;
    const Node& first = g.nodes[kernel.nodes.front()];
    std::string code;
    try {
      switch (kernel.kind) {
        case KernelKind::kView:
          code = view_code(m, lowered);
          break;
        case KernelKind::kElementwise:
          use_templates(scalar_kernel_templates(g, kernel));
          code = printer.elementwise(lowered, pointer);
          break;
        case KernelKind::kOp:
        case KernelKind::kEpilogue: {
          if (lowered.already_in_place) {
            code = in_place_comment(lowered);
            break;
          }
          const OpKernel* op_kernel = find_kernel(printer.backend(), find_op(first.op).name);
          if (!op_kernel || !op_kernel->emit)
            throw Error("the " + backend_name(printer.backend()) + " backend has no kernel for this op");
          EmitContext ctx = m.op_context(lowered);
          const bool fused = kernel.kind == KernelKind::kEpilogue;
          if (fused) {
            use_templates(scalar_kernel_templates(g, kernel));
            code = printer.epilogue(lowered, pointer, "epilogue") + "\n";
            ctx.epilogue = "epilogue";
          }
          const KernelCall call = op_kernel->emit(ctx);
          use_templates(call.kernels);
          out.uses_pool = out.uses_pool || mentions_identifier(call.code, ctx.pool);
          code += call.code;
          if (fused) code = "{\n" + indent_lines(code, "  ") + "}";
          break;
        }
      }
    } catch (const Error& e) {
      throw Error(node_label(first.name, first.op) + ": " + e.what());
    }
    out.body += "  // " + lowered.heading + "\n" + indent_lines(code, "  ") + printer.after(lowered, pointer);
  }
  return out;
}

}  // namespace hybgen
