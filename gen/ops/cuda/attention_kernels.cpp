// CUDA kernel of _attention (templates/cuda/kernels/attention.inc): one
// launch of hg_attention, its tile sizes (D, DV: the head sizes rounded up
// to 32, 64 or 128; kRows: query rows a warp of the FP32 kernel,
// attention_rows_per_warp, or under half storage the tensor-core kernel's
// warps a block, attention_mma_warps) chosen here as template arguments,
// since the kernel's shared arrays are static. Head sizes over 128 would not fit 48 KiB of static
// shared memory: OpKernel::supports says no, so fuse_attention leaves such
// attention to the three kernels it would replace. Storage float32, or
// float16 / bfloat16 under --precision fp16 / bf16; arithmetic float.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

constexpr int64_t kAttentionLargestHead = 128;

int64_t attention_tile(int64_t size) { return size <= 32 ? 32 : size <= 64 ? 64 : 128; }

bool attention_fits(const Attrs& a) {
  return a.get_int("d") >= 1 && a.get_int("d") <= kAttentionLargestHead && a.get_int("dv") >= 1 &&
         a.get_int("dv") <= kAttentionLargestHead;
}

// Query rows per warp: 8 where both head tiles are at most 64 columns, 4 up
// to 128 (shared memory), halved, down to 2, while the blocks would leave
// some of an H100's 132 SMs without one (a layer at batch 1: 128 tokens
// and 4 heads are 16 blocks of 32 rows, 64 of 8). Fewer rows a block read
// the keys and values more often, from L2. A model, not yet timed.
int64_t attention_rows_per_warp(int64_t tile, int64_t m, int64_t batch) {
  const int64_t kSms = 132;
  int64_t rows = tile <= 64 ? 8 : 4;
  while (rows > 2 && (m + 4 * rows - 1) / (4 * rows) * batch < kSms) rows /= 2;
  return rows;
}

// The tensor-core kernel's warps a block (16 query rows each): 1 or 2 where
// the queries number at most 16 or 32, else 4.
int64_t attention_mma_warps(int64_t m) { return m <= 16 ? 1 : m <= 32 ? 2 : 4; }

std::string attention_strides(const Attrs& a, const std::string& name, std::size_t count) {
  const std::vector<int64_t> s = a.get_ints(name);
  if (s.size() != 3) throw Error("_attention: " + name + " needs 3 strides");
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += int_str(s[i]) + "L, ";
  return text;
}

KernelCall emit_attention(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  if (!attention_fits(a))
    throw Error("_attention: the CUDA kernel takes head sizes (d, dv) up to " + int_str(kAttentionLargestHead) +
                ", got " + int_str(a.get_int("d")) + " and " + int_str(a.get_int("dv")));
  const Shape& out = ctx.out_types[0].shape;
  if (out.empty()) throw Error("_attention: the output has no axes");
  const int64_t d = a.get_int("d"), dv = a.get_int("dv");
  const int64_t tile_d = attention_tile(d), tile_dv = attention_tile(dv);
  const bool half = ctx.in_types[0].dtype == DType::kFloat16 || ctx.in_types[0].dtype == DType::kBFloat16;
  const int64_t rows = half ? attention_mma_warps(a.get_int("m"))
                            : attention_rows_per_warp(std::max(tile_d, tile_dv), a.get_int("m"), a.get_int("batch"));
  return {{"attention"},
          "HG_CHECK((hg_attention<" + int_str(tile_d) + ", " + int_str(tile_dv) + ", " + int_str(rows) + ">(" +
              ctx.stream + ", " + ctx.in[0] + ", " + attention_strides(a, "q_strides", 3) + ctx.in[1] + ", " +
              attention_strides(a, "k_strides", 3) + ctx.in[2] + ", " + attention_strides(a, "v_strides", 3) +
              ctx.out[0] + ", " + attention_strides(a, "out_strides", 2) + int_str(out.back()) + "L, " +
              int_str(a.get_int("batch")) + "L, " + int_str(a.get_int("m")) + "L, " + int_str(a.get_int("n")) + "L, " +
              int_str(d) + ", " + int_str(dv) + ", " + cpp_float(a.get_float("scale")) + ", " + epilogue_argument(ctx) +
              ")));"};
}

const KernelRegistrar attention_cuda(Backend::kCuda, "_attention", [] {
  OpKernel k = in_half_storage(OpKernel{emit_attention});
  k.supports = [](const KernelSite& site) { return attention_fits(site.attrs); };
  return k;
}());

}  // namespace
}  // namespace hybgen
