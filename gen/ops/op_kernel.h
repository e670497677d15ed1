// The kernels of the ops, per backend: how one backend computes one op.
// An op (OpDef, ops/op.h) says what is true of it everywhere; each backend
// registers an OpKernel per op it runs, declaring the dtypes it computes, its
// algorithms, scratch memory and weight packing, and its printer. Passes
// read them through find_kernel(target.backend, op) and never branch on the
// backend.
//
//   static KernelRegistrar relu_cpp(Backend::kCpp, "relu", OpKernel{emit_relu});
//   const OpKernel* k = find_kernel(Backend::kCuda, "Convolution");
//   k->dtypes;  // {float32}
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/attrs.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "targets/target.h"

namespace hybgen {

// What an op's printer gets, on either backend: pointer expressions for its
// buffers (host pointers in C++, device pointers in CUDA), of the C type of
// their dtype (dtype_c_type(dtype) + "*", `const` for inputs).
struct EmitContext {
  const Node& node;
  const Target& target;
  std::vector<std::string> in;  // expressions of type `const T*`
  std::vector<TensorType> in_types;
  std::vector<std::string> out;  // expressions of type `T*`
  std::vector<TensorType> out_types;
  // Ops with OpDef::epilogue_axis: the name of a functor in scope that the
  // kernel applies to every output value before storing it (fused bias,
  // activation, residual add): in C++ `float epilogue(long channel, long
  // index, float value)`; in CUDA an object whose `__device__ float
  // operator()(long channel, long index, float value) const` does the same,
  // passed to the kernel by value. Empty: store values as they are.
  std::string epilogue;
  // Per input: it already lies where OpDef::input_placement puts it (its
  // producer wrote it there), so there is nothing to copy. Empty: none does.
  std::vector<bool> in_placed;
  // Kernels with scratch (OpKernel::scratch_bytes): a pointer (of the C type
  // of the kernel's dtype) to `scratch_bytes` bytes of arena memory for this kernel alone (what the
  // memory plan gave it: less than OpKernel::scratch_bytes where
  // OpKernel::fit_scratch let the plan shrink it).
  std::string scratch;
  // Per input: the constant was re-laid out by OpKernel::pack_constant.
  std::vector<bool> in_packed;
  // C++: an expression of type `const hg_thread_pool*` (templates/kernels/
  // parallel.inc), possibly null: kernels that can split their work pass it on.
  std::string pool = "pool";
  // The bytes `scratch` points to (see scratch).
  int64_t scratch_bytes = 0;
  // CUDA: the `cudaStream_t` every launch goes to.
  std::string stream = "stream";
  // The algorithm OpKernel::choose_algorithm chose for this node (Kernel::algorithm).
  std::string algorithm{};
  // A run-time batch, kernels with OpKernel::rows_follow_batch: the C++
  // expression of the item count, which multiplies the rows of the operands
  // holding items (their types are one item's). Empty otherwise.
  std::string batch{};
};

// `ctx` for another node: an op printed as another (SwapAxis as a transpose).
inline EmitContext emit_context_for(const Node& node, const EmitContext& ctx) {
  return EmitContext{node,          ctx.target,        ctx.in,        ctx.in_types,  ctx.out,
                     ctx.out_types, ctx.epilogue,      ctx.in_placed, ctx.scratch,   ctx.in_packed,
                     ctx.pool,      ctx.scratch_bytes, ctx.stream,    ctx.algorithm, ctx.batch};
}

// What an op's printer returns: the statements of one kernel call and the
// kernel bodies those statements call (templates/kernels/NAME.inc in C++,
// templates/cuda/kernels/NAME.inc in CUDA).
struct KernelCall {
  std::vector<std::string> kernels;
  std::string code;
};

// One node as a kernel sees it before code is printed: what its algorithm,
// scratch and packing depend on.
struct KernelSite {
  const Attrs& attrs;  // normalized
  std::vector<TensorType> in, out;
  // Per input: its values are known at generation time (weights, which can be packed).
  std::vector<bool> in_constant;
  const Target& target;
  // What OpKernel::choose_algorithm chose (Kernel::algorithm); empty for a kernel without algorithms.
  std::string algorithm;
};

// One backend's kernel of one op.
struct OpKernel {
  OpKernel() = default;
  explicit OpKernel(std::function<KernelCall(const EmitContext&)> printer) : emit(std::move(printer)) {}

  // The statements of one kernel call. Unset for elementwise ops
  // (OpDef::emit_scalar): the backend's fused loop prints those.
  std::function<KernelCall(const EmitContext&)> emit;
  // The dtypes it computes: a node gets this kernel only when each of its
  // inputs and outputs is of one of them (the pass check_kernels).
  std::vector<DType> dtypes{DType::kFloat32};
  // Kernels that compute only some of the nodes the op's shape rule accepts
  // (a fused attention kernel's largest head size): whether this one
  // computes the node at `site`. A pass that makes such nodes asks before
  // it makes one (fuse_attention); the printer throws Error on a node it
  // rejects. Unset: every node.
  std::function<bool(const KernelSite&)> supports;
  // Kernels with several algorithms (convolution: direct, im2col GEMM,
  // Winograd, ...): the name of the one for this node (KernelSite::algorithm
  // is empty). Called once per node, by the pass choose_algorithms, which
  // records it as Kernel::algorithm for the planner and the printer. Unset:
  // one algorithm.
  std::function<std::string(const KernelSite&)> choose_algorithm;
  // Bytes of scratch memory the kernel needs: the memory planner gives it
  // arena bytes live during that kernel alone. Unset or 0: none.
  std::function<int64_t(const KernelSite&)> scratch_bytes;
  // Kernels that can also work in less scratch (smaller im2col tiles): the
  // bytes they take within `budget` bytes, between their smallest tile's
  // (even over the budget) and scratch_bytes. The memory planner uses it
  // where the scratch, not the activations, sets the arena; `emit` then
  // sizes its tiles from EmitContext::scratch_bytes. Unset: fixed.
  std::function<int64_t(const KernelSite&, int64_t budget)> fit_scratch;
  // Constant inputs re-laid out at generation time into the layout the
  // kernel reads (packed GEMM panels), so nothing is packed at run time:
  // input `index` (`value`, with data) as packed, its type saying the dtype
  // and count of its elements, or nullopt to keep it as it is.
  std::function<std::optional<Constant>(const KernelSite&, int index, const Constant& value)> pack_constant;
  // C++, elementwise ops that SIMD kernels can apply to whole vectors in
  // registers when the op alone follows a GEMM or convolution (a clamp, as
  // XNNPACK's kernels take output min/max): the C++ expression of that
  // epilogue object (templates/kernels/epilogue.inc), e.g.
  // "HgClampEpilogue(0.0f, 6.0f)"; empty for attributes it cannot express.
  // Unset: always the scalar lambda.
  std::function<std::string(const Attrs&)> vector_epilogue;
  // C++, a + b: first after a GEMM or convolution, with the other operand of
  // the output's whole shape (a residual), kernels apply it as
  // hg_add_epilogue(other, then), loading that operand's vector in
  // registers, `then` the vector_epilogue of one op after it if any.
  bool residual_epilogue = false;
  // A run-time batch (Graph::batch): the printer takes all items in one call
  // (EmitContext::batch multiplies its rows: a dense layer's GEMM gets
  // M = rows * batch, one pass over its weights), where its input 0 and
  // outputs are rows of one item each and its other inputs are fixed.
  // Unset: the kernel runs once per item, on that item's pointers.
  bool rows_follow_batch = false;
};

// Registers `kernel` as `backend`'s kernel of op `op` (its canonical name);
// throws Error when that backend has one already. Called at static
// initialisation, by a KernelRegistrar or by a function that registers a
// family of ops.
void register_kernel(Backend backend, const std::string& op, OpKernel kernel);

struct KernelRegistrar {
  KernelRegistrar(Backend backend, const std::string& op, OpKernel kernel) {
    register_kernel(backend, op, std::move(kernel));
  }
};

// Where the kernels of elementwise ops are registered, per backend: the
// backend's fused loop (C++ gen/emit/cpp_fused.cpp, CUDA gen/emit/
// cuda_emitter.cpp), which prints every OpDef::emit_scalar op.
extern const char* const kElementwiseLoop;

// The kernel `backend` runs op `op` (its canonical name) with: the one
// registered for it, else for an elementwise op the backend's fused loop;
// nullptr when the backend has none.
const OpKernel* find_kernel(Backend backend, const std::string& op);

// Every registered kernel, by backend and op name (kElementwiseLoop among them).
struct RegisteredKernel {
  Backend backend;
  std::string op;
  const OpKernel* kernel;
};
std::vector<RegisteredKernel> all_kernels();

// The site of `node` of `graph` (types inferred) on `target`, with `algorithm`.
KernelSite kernel_site(const Graph& graph, const Node& node, const Target& target, const std::string& algorithm);

}  // namespace hybgen
