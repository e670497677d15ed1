// CUDA kernels of the reductions (templates/cuda/kernels/reduce.inc): sum
// and mean through hg_reduce_sum, max, min, prod and norm through
// hg_reduce<kOp>. The input's axes are merged into alternating kept and
// reduced runs (size-1 axes dropped), which the kernels walk as HgReduceAxes;
// which axes a node reduces comes from gen/ops/reduce.h, as in C++.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/reduce.h"

namespace hybgen {
namespace {

struct Run {
  int64_t size, stride;
  bool reduced;
};

std::string axes_literal(const std::string& op, const std::vector<Run>& runs) {
  if (runs.size() > 4) throw Error(op + ": more than 4 separate runs of axes");
  std::string size_list, stride_list;
  for (std::size_t i = 0; i < 4; ++i) {
    if (i) size_list += ", ", stride_list += ", ";
    size_list += i < runs.size() ? std::to_string(runs[i].size) : "1";
    stride_list += i < runs.size() ? std::to_string(runs[i].stride) + "L" : "0L";
  }
  return "HgReduceAxes{" + std::to_string(runs.size()) + ", {" + size_list + "}, {" + stride_list + "}}";
}

KernelCall emit_reduce(const EmitContext& ctx) {
  const std::string& op = find_op(ctx.node.op).name;
  const ReduceKind kind = reduce_kind(op, ctx.node.attrs);
  const Shape& in = ctx.in_types[0].shape;
  const std::vector<bool> reduced = reduced_axes(ctx.node.attrs, in.size());
  std::vector<Run> runs;
  int64_t stride = 1;
  for (int i = static_cast<int>(in.size()) - 1; i >= 0; --i) {
    if (in[i] != 1) {
      if (!runs.empty() && runs.back().reduced == reduced[i]) runs.back().size *= in[i];  // keeps the inner stride
      else runs.push_back({in[i], stride, reduced[i]});
    }
    stride *= in[i];
  }
  std::reverse(runs.begin(), runs.end());  // outermost first
  std::vector<Run> kept_runs, reduced_runs;
  for (const Run& r : runs) (r.reduced ? reduced_runs : kept_runs).push_back(r);
  int64_t n_out = 1, n_red = 1;
  for (const Run& r : kept_runs) n_out *= r.size;
  for (const Run& r : reduced_runs) n_red *= r.size;
  if (n_out != ctx.out_types[0].num_elements()) throw Error(op + ": output size mismatch");
  const bool innermost_reduced = runs.empty() || runs.back().reduced;
  const double scale = kind == ReduceKind::kMean ? 1.0 / static_cast<double>(n_red) : 1.0;
  const bool sum = kind == ReduceKind::kSum || kind == ReduceKind::kMean;
  const std::string kernel = sum ? "hg_reduce_sum" : "hg_reduce<" + std::to_string(reduce_kernel_code(kind)) + ">";
  return {{"reduce"}, "HG_CHECK(" + kernel + "(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                          std::to_string(n_out) + "L, " + std::to_string(n_red) + "L, " +
                          axes_literal(op, kept_runs) + ", " + axes_literal(op, reduced_runs) + ", " +
                          (innermost_reduced ? "true" : "false") + ", " + cpp_float(scale) + "));"};
}

const bool registered = [] {
  for (const char* op : {"sum", "mean", "max", "min", "prod", "norm"})
    register_kernel(Backend::kCuda, op, in_half_storage(OpKernel{emit_reduce}));
  return true;
}();

}  // namespace
}  // namespace hybgen
