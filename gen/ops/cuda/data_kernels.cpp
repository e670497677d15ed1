// CUDA kernels of the data-movement ops: Concat, stack, slice, slice_axis,
// SliceChannel, transpose, Embedding, the strided gathers of tile, repeat,
// reverse, slice_like, space_to_depth and depth_to_space, and the copies
// (Reshape, Flatten, expand_dims, squeeze, Dropout, _copy). Kernel texts: templates/cuda/
// kernels/{copy,concat,slice,transpose,embedding}.inc.
//
// Every strided view is simplified at generation time before it is printed:
// size-1 axes are dropped and axes that stay adjacent in memory are merged,
// so a slice of NCHW on C is a rank-2 gather, a contiguous slice a memcpy,
// and NCHW -> NHWC a (N, C, HW) -> (N, HW, C) tiled transpose.
#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/indexing.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/slice.h"
#include "ops/transpose.h"

namespace hybgen {
namespace {

constexpr std::size_t kMaxRank = 8;
constexpr int kMaxParts = 8;  // parts per hg_concat / hg_split launch

// Output dims of a gather from its input, the input stride of each output
// axis, and the input offset of the first element.
using View = StridedView;

// Size-1 axes dropped, axes that walk memory as one merged (ops/indexing.h).
void simplify(View& v) { simplify_view(v); }

std::string plus(const std::string& ptr, int64_t offset) {
  return offset == 0 ? ptr : "(" + ptr + ") + " + std::to_string(offset);
}

std::string copy_call(const EmitContext& ctx, const std::string& x, const std::string& y, int64_t n) {
  return "HG_CHECK(hg_copy(" + ctx.stream + ", " + x + ", " + y + ", " + std::to_string(n) + "));";
}

// y = the view of x: a memcpy when it is one contiguous run, else a gather.
KernelCall gather_call(const EmitContext& ctx, View v, const std::string& x, const std::string& y) {
  simplify(v);
  if (v.dims.size() > kMaxRank) throw Error("rank above 8 is not supported");
  if (v.dims.size() == 1 && v.strides[0] == 1) return {{"copy"}, copy_call(ctx, plus(x, v.offset), y, v.dims[0])};
  return {{"slice"}, "HG_CHECK(hg_strided_copy<" + std::to_string(v.dims.size()) + ">(" + ctx.stream + ", " +
                         plus(x, v.offset) + ", " + y + ", HgStrided{" + cpp_int_list(v.dims) + ", " +
                         cpp_int_list(v.strides) + "}));"};
}

// ---- copies --------------------------------------------------------------

KernelCall emit_copy(const EmitContext& ctx) {
  return {{"copy"}, copy_call(ctx, ctx.in[0], ctx.out[0], ctx.out_types[0].num_elements())};
}

// ---- slice, slice_axis ---------------------------------------------------

KernelCall emit_slice(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& in = ctx.in_types[0].shape;
  if (in.size() > kMaxRank) throw Error("rank above 8 is not supported");
  return gather_call(ctx, slice_view(in, a.get_ints("begin"), a.get_ints("end"), a.get_ints("step")), ctx.in[0],
                     ctx.out[0]);
}

KernelCall emit_slice_axis(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& in = ctx.in_types[0].shape;
  const int axis = normalize_axis(a.get_int("axis"), in.size());
  std::vector<int64_t> begin(in.size(), kSliceNone), end(in.size(), kSliceNone);
  begin[axis] = a.get_int("begin");
  end[axis] = a.get_int("end");
  return gather_call(ctx, slice_view(in, begin, end, {}), ctx.in[0], ctx.out[0]);
}

// ---- Concat, SliceChannel ------------------------------------------------

// Launches moving parts `which` between `whole` ([outer, row]) and their
// buffers, kMaxParts per launch.
std::string parts_calls(const EmitContext& ctx, bool split, const std::string& whole, int64_t outer, int64_t row,
                        const std::vector<std::string>& ptrs, const std::vector<int64_t>& offsets,
                        const std::vector<int64_t>& parts) {
  const std::string element = storage_c_type((split ? ctx.in_types : ctx.out_types)[0].dtype, Backend::kCuda);
  std::string code;
  for (std::size_t first = 0; first < ptrs.size(); first += kMaxParts) {
    const std::size_t last = std::min(ptrs.size(), first + kMaxParts);
    std::string p = "{", o = "{", s = "{";
    for (std::size_t k = first; k < last; ++k) {
      const char* sep = k == first ? "" : ", ";
      p += sep + ptrs[k];
      o += sep + std::to_string(offsets[k]);
      s += sep + std::to_string(parts[k]);
    }
    if (!code.empty()) code += "\n";
    code += std::string("HG_CHECK(") + (split ? "hg_split(" : "hg_concat(") + ctx.stream + ", " + whole + ", " +
            std::to_string(outer) + ", " + std::to_string(row) + ", " + std::to_string(last - first) + ", " +
            (split ? "HgSplitParts<" : "HgConcatParts<") + element + ">{" + p + "}, " + o + "}, " + s + "}}));";
  }
  return code;
}

KernelCall emit_concat(const EmitContext& ctx) {
  const Shape& out = ctx.out_types[0].shape;
  const int axis = normalize_axis(ctx.node.attrs.get_int("dim"), out.size());
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.size());
  const int64_t row = out[axis] * inner;
  std::vector<std::string> ptrs;
  std::vector<int64_t> offsets, parts;
  std::string placed_note;
  int64_t offset = 0;
  for (std::size_t i = 0; i < ctx.in.size(); ++i) {
    const int64_t part = ctx.in_types[i].shape[axis] * inner;
    if (i < ctx.in_placed.size() && ctx.in_placed[i]) {
      placed_note += "// input " + std::to_string(i) + " was written in place by its producer\n";
    } else if (part > 0 && outer > 0) {
      ptrs.push_back(ctx.in[i]);
      offsets.push_back(offset);
      parts.push_back(part);
    }
    offset += part;
  }
  if (ptrs.empty()) return {{}, placed_note.empty() ? "// nothing to copy" : placed_note.substr(0, placed_note.size() - 1)};
  // One part filling whole rows (outer 1 or a single input) is one memcpy.
  if (ptrs.size() == 1 && (outer == 1 || parts[0] == row))
    return {{"copy"}, placed_note + copy_call(ctx, ptrs[0], plus(ctx.out[0], offsets[0]), outer * parts[0])};
  return {{"concat"}, placed_note + parts_calls(ctx, false, ctx.out[0], outer, row, ptrs, offsets, parts)};
}

KernelCall emit_split(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& in = ctx.in_types[0].shape;
  const int axis = normalize_axis(a.get_int("axis"), in.size());
  const int64_t count = a.get_int("num_outputs");
  if (count <= 0 || in[axis] % count) throw Error("cannot split " + shape_str(in) + " into " + std::to_string(count));
  const int64_t outer = dims_product(in, 0, axis), inner = dims_product(in, axis + 1, in.size());
  const int64_t row = in[axis] * inner, part = in[axis] / count * inner;
  if (outer == 1) {  // each output is one contiguous run of the input
    std::string code;
    for (int64_t k = 0; k < count; ++k)
      code += (k ? "\n" : "") + copy_call(ctx, plus(ctx.in[0], k * part), ctx.out[static_cast<std::size_t>(k)], part);
    return {{"copy"}, code};
  }
  std::vector<int64_t> offsets, parts;
  for (int64_t k = 0; k < count; ++k) {
    offsets.push_back(k * part);
    parts.push_back(part);
  }
  return {{"concat"}, parts_calls(ctx, true, ctx.in[0], outer, row, ctx.out, offsets, parts)};
}

KernelCall emit_stack(const EmitContext& ctx) {
  const Shape& s = ctx.in_types[0].shape;
  const int axis = normalize_axis(ctx.node.attrs.get_int("axis"), s.size() + 1);
  const int64_t outer = dims_product(s, 0, axis), part = dims_product(s, axis, s.size());
  const int64_t n = static_cast<int64_t>(ctx.in.size());
  if (outer == 1) {  // each input is one contiguous block of the output
    std::string code;
    for (int64_t i = 0; i < n; ++i)
      code += (i ? "\n" : "") + copy_call(ctx, ctx.in[static_cast<std::size_t>(i)], plus(ctx.out[0], i * part), part);
    return {{"copy"}, code};
  }
  std::vector<int64_t> offsets, parts;
  for (int64_t i = 0; i < n; ++i) {
    offsets.push_back(i * part);
    parts.push_back(part);
  }
  return {{"concat"}, parts_calls(ctx, false, ctx.out[0], outer, n * part, ctx.in, offsets, parts)};
}

// ---- tile, repeat, reverse, slice_like, space_to_depth, depth_to_space ----

KernelCall emit_gather_op(const EmitContext& ctx) {
  std::vector<Shape> in;
  for (const auto& t : ctx.in_types) in.push_back(t.shape);
  KernelCall call = gather_call(ctx, gather_view(find_op(ctx.node.op).name, ctx.node.attrs, in).view, ctx.in[0], ctx.out[0]);
  // slice_like reads only the shape of its second input.
  for (std::size_t i = 1; i < ctx.in.size(); ++i) call.code = "(void)(" + ctx.in[i] + ");\n" + call.code;
  return call;
}

// ---- transpose -----------------------------------------------------------

KernelCall emit_transpose(const EmitContext& ctx) {
  const Shape& in_shape = ctx.in_types[0].shape;
  if (in_shape.size() > kMaxRank) throw Error("rank above 8 is not supported");
  const std::vector<int64_t> full_perm = transpose_axes(ctx.node.attrs, in_shape.size());
  // Drop size-1 input axes, then merge input axes i, i+1 that follow each
  // other in the output.
  Shape in;
  std::vector<int> renumber(in_shape.size(), -1);
  for (std::size_t d = 0; d < in_shape.size(); ++d)
    if (in_shape[d] != 1) {
      renumber[d] = static_cast<int>(in.size());
      in.push_back(in_shape[d]);
    }
  std::vector<int> perm;
  for (int64_t p : full_perm)
    if (renumber[p] >= 0) perm.push_back(renumber[p]);
  for (bool merged = true; merged && perm.size() > 1;) {
    merged = false;
    for (std::size_t j = 0; j + 1 < perm.size(); ++j) {
      if (perm[j + 1] != perm[j] + 1) continue;
      const int i = perm[j];
      in[i] *= in[i + 1];
      in.erase(in.begin() + i + 1);
      perm.erase(perm.begin() + static_cast<std::ptrdiff_t>(j) + 1);
      for (int& p : perm)
        if (p > i) --p;
      merged = true;
      break;
    }
  }
  const int64_t n = ctx.out_types[0].num_elements();
  const int rank = static_cast<int>(in.size());
  if (rank <= 1) return {{"copy"}, copy_call(ctx, ctx.in[0], ctx.out[0], n)};
  const auto in_strides = row_major_strides(in);
  Shape out;
  for (int p : perm) out.push_back(in[p]);
  const auto out_strides = row_major_strides(out);
  const int a_axis = rank - 1, b_axis = perm[rank - 1];
  // The last axis stays (a gather, float4 where it can), or one of the two
  // contiguous axes is short (a tile would idle most threads; a gather's
  // reads then still fall on few lines).
  if (b_axis == a_axis || in[a_axis] < 16 || in[b_axis] < 16) {
    View v;
    v.dims = out;
    for (int p : perm) v.strides.push_back(in_strides[p]);
    return gather_call(ctx, v, ctx.in[0], ctx.out[0]);
  }
  std::vector<int64_t> dims, batch_in, batch_out;
  int64_t out_stride_a = 0;
  for (int j = 0; j < rank; ++j) {
    if (perm[j] == a_axis) out_stride_a = out_strides[j];
    if (perm[j] == a_axis || j == rank - 1) continue;
    dims.push_back(out[j]);
    batch_in.push_back(in_strides[perm[j]]);
    batch_out.push_back(out_strides[j]);
  }
  auto padded = [](std::vector<int64_t> v) {
    v.resize(6, 0);
    return cpp_int_list(v);
  };
  return {{"transpose"}, "HG_CHECK(hg_transpose<" + std::to_string(dims.size()) + ">(" + ctx.stream + ", " + ctx.in[0] +
                             ", " + ctx.out[0] + ", HgTransposeGeometry{" + std::to_string(in[a_axis]) + ", " +
                             std::to_string(in[b_axis]) + ", " + std::to_string(in_strides[b_axis]) + ", " +
                             std::to_string(out_stride_a) + ", " + padded(dims) + ", " + padded(batch_in) + ", " +
                             padded(batch_out) + "}));"};
}

// ---- Embedding -----------------------------------------------------------

KernelCall emit_embedding(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  return {{"embedding"}, "HG_CHECK(hg_embedding(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " +
                             ctx.out[0] + ", " + std::to_string(ctx.in_types[0].num_elements()) + ", " +
                             std::to_string(a.get_int("input_dim")) + ", " + std::to_string(a.get_int("output_dim")) +
                             "));"};
}

const KernelRegistrar concat_reg(Backend::kCuda, "Concat", in_half_storage(OpKernel{emit_concat}));
const KernelRegistrar slice_reg(Backend::kCuda, "slice", in_half_storage(OpKernel{emit_slice}));
const KernelRegistrar slice_axis_reg(Backend::kCuda, "slice_axis", in_half_storage(OpKernel{emit_slice_axis}));
const KernelRegistrar split_reg(Backend::kCuda, "SliceChannel", in_half_storage(OpKernel{emit_split}));
const KernelRegistrar stack_reg(Backend::kCuda, "stack", in_half_storage(OpKernel{emit_stack}));
const KernelRegistrar tile_reg(Backend::kCuda, "tile", in_half_storage(OpKernel{emit_gather_op}));
const KernelRegistrar repeat_reg(Backend::kCuda, "repeat", in_half_storage(OpKernel{emit_gather_op}));
const KernelRegistrar reverse_reg(Backend::kCuda, "reverse", in_half_storage(OpKernel{emit_gather_op}));
const KernelRegistrar slice_like_reg(Backend::kCuda, "slice_like", in_half_storage(OpKernel{emit_gather_op}));
const KernelRegistrar space_to_depth_reg(Backend::kCuda, "space_to_depth", in_half_storage(OpKernel{emit_gather_op}));
const KernelRegistrar depth_to_space_reg(Backend::kCuda, "depth_to_space", in_half_storage(OpKernel{emit_gather_op}));
const KernelRegistrar transpose_reg(Backend::kCuda, "transpose", in_half_storage(OpKernel{emit_transpose}));
// float32 only: its indices are float values that float16 and bfloat16
// hold exactly only up to 2048 and 256.
const KernelRegistrar embedding_reg(Backend::kCuda, "Embedding", OpKernel{emit_embedding});
const KernelRegistrar reshape_reg(Backend::kCuda, "Reshape", in_half_storage(OpKernel{emit_copy}));
const KernelRegistrar flatten_reg(Backend::kCuda, "Flatten", in_half_storage(OpKernel{emit_copy}));
const KernelRegistrar expand_dims_reg(Backend::kCuda, "expand_dims", in_half_storage(OpKernel{emit_copy}));
const KernelRegistrar squeeze_reg(Backend::kCuda, "squeeze", in_half_storage(OpKernel{emit_copy}));
const KernelRegistrar dropout_reg(Backend::kCuda, "Dropout", in_half_storage(OpKernel{emit_copy}));
const KernelRegistrar copy_reg(Backend::kCuda, "_copy", in_half_storage(OpKernel{emit_copy}));

}  // namespace
}  // namespace hybgen
