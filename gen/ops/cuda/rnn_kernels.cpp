// CUDA kernels of the recurrent ops: RNN (templates/cuda/kernels/rnn.inc,
// sizes and weight offsets as gen/ops/rnn.h gives them) and SwapAxis, which
// prints transpose's kernel for the permutation that swaps its two axes.
#include <string>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/rnn.h"
#include "ops/swap_axis.h"

namespace hybgen {
namespace {

KernelCall emit_rnn(const EmitContext& ctx) {
  const RnnDims d = rnn_dims(ctx.node.attrs, ctx.in_types[0].shape);
  auto n = [](int64_t v) { return std::to_string(v) + "L"; };
  const std::string none = "static_cast<float*>(nullptr)";
  if (ctx.scratch.empty()) throw Error("RNN: the CUDA kernel has no scratch memory");
  return {{"rnn"}, "HG_CHECK(hg_rnn<" + std::to_string(d.mode_index()) + ">(" + ctx.stream + ", " + ctx.in[0] + ", " +
                       ctx.in[1] + ", " + ctx.in[2] + ", " +
                       (d.mode == "lstm" ? ctx.in[3] : "static_cast<const float*>(nullptr)") + ", " + ctx.out[0] +
                       ", " + (ctx.out.size() > 1 ? ctx.out[1] : none) + ", " +
                       (ctx.out.size() > 2 ? ctx.out[2] : none) + ", " + ctx.scratch + ", " + n(d.layers) + ", " +
                       n(d.dirs) + ", " + n(d.steps) + ", " + n(d.batch) + ", " + n(d.input) + ", " + n(d.hidden) +
                       "));"};
}

int64_t rnn_scratch_bytes(const KernelSite& site) {
  const RnnDims d = rnn_dims(site.attrs, site.in[0].shape);
  const int64_t rows = d.steps * d.batch;
  return kFloatBytes * (d.dirs * rows * d.gates() * d.hidden + d.dirs * d.batch * d.hidden +
                        (d.layers > 1 ? rows * d.dirs * d.hidden : 0));
}

KernelCall emit_swap_axis(const EmitContext& ctx) {
  const OpKernel* transpose = find_kernel(Backend::kCuda, "transpose");
  if (!transpose) throw Error("SwapAxis: transpose has no CUDA kernel");
  Node node = ctx.node;
  node.attrs = swap_axis_as_transpose(ctx.node.attrs, ctx.in_types[0].shape.size());
  return transpose->emit(emit_context_for(node, ctx));
}

const KernelRegistrar rnn_reg(Backend::kCuda, "RNN", [] {
  OpKernel k{emit_rnn};
  k.scratch_bytes = rnn_scratch_bytes;
  return k;
}());
const KernelRegistrar swap_axis_reg(Backend::kCuda, "SwapAxis", in_half_storage(OpKernel{emit_swap_axis}));

}  // namespace
}  // namespace hybgen
