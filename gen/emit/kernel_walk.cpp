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
    // A run-time batch: a kernel on batch items runs once per item, on that
    // item's pointers (passes/batch_items.cpp says why that is exact), or
    // once on all of them where its printer takes the item count as rows.
    const bool on_items = kernel.kind != KernelKind::kView && !lowered.already_in_place && m.runs_per_item(lowered);
    const bool op = kernel.kind == KernelKind::kOp || kernel.kind == KernelKind::kEpilogue;
    const OpKernel* anchor_kernel = op ? find_kernel(printer.backend(), find_op(first.op).name) : nullptr;
    // (Its scratch, if any, is one item's, and so is an epilogue operand
    // that holds no items but more than one row, read at the output's
    // index: such a kernel runs per item.)
    const auto same_for_every_row = [&](const std::string& v) {
      if (m.batched().count(v)) return true;
      const Shape& shape = g.type(v).shape;
      return shape.empty() || g.type(v).num_elements() == shape.back();
    };
    const bool all_rows = on_items && anchor_kernel && anchor_kernel->rows_follow_batch && lowered.op.scratch.empty() &&
                          m.batched().count(first.inputs[0]) &&
                          std::none_of(first.inputs.begin() + 1, first.inputs.end(),
                                       [&](const std::string& v) { return m.batched().count(v) != 0; }) &&
                          std::all_of(kernel.inputs.begin(), kernel.inputs.end(), [&](const std::string& v) {
                            return std::count(first.inputs.begin(), first.inputs.end(), v) || same_for_every_row(v);
                          });
    const bool per_item = on_items && !all_rows;
    if (per_item) m.begin_item_loop();
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
          const OpKernel* op_kernel = anchor_kernel;
          if (!op_kernel || !op_kernel->emit)
            throw Error("the " + backend_name(printer.backend()) + " backend has no kernel for this op");
          EmitContext ctx = m.op_context(lowered);
          if (all_rows) ctx.batch = "batch";
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
      m.end_item_loop();
      throw Error(node_label(first.name, first.op) + ": " + e.what());
    }
    if (per_item) {
      std::string declarations;  // of the item pointers the code reads (a shape-only operand it does not)
      for (const auto& [name, declaration] : m.end_item_loop())
        if (mentions_identifier(code, name)) declarations += declaration + "\n";
      code = "for (std::int64_t hg_item = 0; hg_item < batch; ++hg_item) {\n" +
             indent_lines(declarations + code, "  ") + "}";
    }
    out.body += "  // " + lowered.heading + "\n" + indent_lines(code, "  ") + printer.after(lowered, pointer);
  }
  return out;
}

}  // namespace hybgen
