// The operator registry: everything hybgen knows about an op sits in one
// OpDef — schema (inputs, typed attributes with defaults), shape/dtype rule,
// fusion class, reference kernel, C++ printer, FLOP count and the examples
// the generic op test runs. Each file under gen/ops/ registers its ops with a
// static OpRegistrar; nothing else lists them.
//
//   static OpRegistrar reg(OpDef{.name = "relu", ...});  // in gen/ops/foo.cpp
//   const OpDef& def = find_op("FullyConnected");
//   for (const OpDef* op : all_ops()) std::cout << op->name;
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "targets/target.h"

namespace hybgen {

// How an op may be fused (the TVM patterns): fusion reads this, never names.
enum class FusionClass {
  kElementwise,         // out[i] = f(in[i]) on same-shape inputs
  kBroadcast,           // elementwise after numpy broadcasting
  kInjective,           // each output element reads one input element (reshape, transpose)
  kReduction,           // reduces over axes (softmax, sum)
  kOutElemwiseFusable,  // GEMM/conv: an elementwise epilogue may fuse into its output
  kOpaque,              // none of the above
};
std::string fusion_class_name(FusionClass fusion);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> default_value;  // nullopt: the attribute is required
  std::string doc;
  std::vector<std::string> choices;  // allowed values of a string attribute; empty: any
};

// Concrete buffers handed to a reference kernel. `in` and `out` point at
// each buffer whatever its dtype (in_types / out_types say which): float32
// kernels index them as floats, kernels of other dtypes (OpDef::
// reference_dtypes) read them through input<T> / output<T>, T the dtype's
// C type (ops/op_util.h's with_element_bits and with_value_type choose it).
struct KernelIO {
  const Attrs& attrs;
  std::vector<const float*> in;
  std::vector<TensorType> in_types;
  std::vector<float*> out;
  std::vector<TensorType> out_types;

  template <class T>
  const T* input(std::size_t i) const { return reinterpret_cast<const T*>(in[i]); }
  template <class T>
  T* output(std::size_t i) const { return reinterpret_cast<T*>(out[i]); }
};

// What an op's printer gets, on either backend: pointer expressions for its
// buffers (host pointers in C++, device pointers in CUDA), of the C type of
// their dtype (dtype_c_type: `const float*` / `float*` for float32).
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
  // Ops with scratch (OpDef::scratch_floats in C++, CudaOpKernel::
  // scratch_bytes in CUDA): a `float*` to `scratch_floats` floats of scratch
  // memory in the arena, for this kernel alone (what the memory plan gave
  // it: in C++ less than OpDef::scratch_floats where OpDef::fit_scratch let
  // the plan shrink it).
  std::string scratch;
  // Per input: the constant was re-laid out by OpDef::pack_constant (C++).
  std::vector<bool> in_packed;
  // C++: an expression of type `const hg_thread_pool*` (templates/kernels/
  // parallel.inc), possibly null: kernels that can split their work pass it on.
  std::string pool = "pool";
  // The floats `scratch` points to (see scratch).
  int64_t scratch_floats = 0;
  // CUDA: the `cudaStream_t` every launch goes to.
  std::string stream = "stream";
  // C++: the kernel OpDef::choose_kernel chose for this node (Kernel::algorithm).
  std::string algorithm{};
};

// What an op's printer returns: the statements of one kernel call and the
// kernel bodies those statements call (templates/kernels/NAME.inc in C++,
// templates/cuda/kernels/NAME.inc in CUDA).
struct KernelCall {
  std::vector<std::string> kernels;
  std::string code;
};

// How the CUDA backend runs an op that is not elementwise (elementwise and
// broadcast ops need nothing: their OpDef::emit_scalar expression serves both
// backends). Registered beside the other CUDA kernels, in gen/ops/cuda/, by
// a static CudaKernelRegistrar; the registry test checks every op has one.
struct CudaOpKernel {
  // The statements that launch the op on EmitContext::stream; each launch
  // `if (cudaError_t e = hg_launch(...)) return e;` so a failed one stops run().
  std::function<KernelCall(const EmitContext&)> emit;
  // Bytes of device scratch the kernel needs, live during it alone; unset: none.
  std::function<int64_t(const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>& out)>
      scratch_bytes;
};

struct CudaKernelRegistrar {
  CudaKernelRegistrar(const std::string& op, CudaOpKernel kernel);
};

// The CUDA kernel of an op (by its canonical name); nullptr when it has none.
const CudaOpKernel* find_cuda_kernel(const std::string& op);

// Where the random test data of one input lies.
struct InputRange {
  int input;
  float low, high;
};
inline InputRange positive_input(int input) { return {input, 0.1f, 2.0f}; }  // a variance, a power's base

// The range of input `input`'s random test data: OpDef::input_ranges', else (-2, 2).
inline InputRange test_input_range(const std::vector<InputRange>& ranges, int input) {
  for (const InputRange& r : ranges)
    if (r.input == input) return r;
  return {input, -2.0f, 2.0f};
}

// One configuration the generic op test runs through every backend.
struct OpExample {
  Attrs attrs;
  std::vector<Shape> inputs;
};

struct OpDef {
  std::string name;
  std::vector<std::string> aliases;  // other names that resolve to this op (MXNet spellings)
  std::string summary;
  std::vector<std::string> input_names;  // documented inputs, required ones first
  int min_inputs = 1;
  int max_inputs = 1;  // -1: any number
  int num_outputs = 1;  // when output_arity is unset
  // Number of outputs for these (normalized) attributes (SliceChannel).
  std::function<int(const Attrs&)> output_arity;
  std::vector<AttrSpec> attrs;
  FusionClass fusion = FusionClass::kOpaque;
  bool inplace = false;  // output 0 may share input 0's buffer

  // Number of inputs required by these attributes (FullyConnected with
  // no_bias takes 2); unset: anything in [min_inputs, max_inputs].
  std::function<int(const Attrs&)> arity;
  // Output types from input types; throws Error saying what is wrong.
  std::function<std::vector<TensorType>(const Attrs&, const std::vector<TensorType>&)> infer;
  std::function<void(const KernelIO&)> reference;
  // The dtypes `reference` computes: a node is evaluated by it (at
  // generation time, ops/evaluate.h) only when each of its inputs and
  // outputs is of one of them. Generated code computes float32 alone.
  std::vector<DType> reference_dtypes{DType::kFloat32};
  std::function<KernelCall(const EmitContext&)> emit_cpp;
  // Elementwise and broadcast ops: the C++ expression of one output element
  // from the expressions of the matching input elements (plain identifiers
  // of type float). Fusion chains these into one loop, so such an op needs no
  // emit_cpp; the expression may call helpers from `scalar_kernels`
  // (templates/kernels/NAME.inc).
  std::function<std::string(const Attrs&, const std::vector<std::string>& in)> emit_scalar;
  std::vector<std::string> scalar_kernels;
  // With emit_scalar: the shape input `index` broadcasts to the output as, in
  // numpy's right-aligned sense (PReLU's per-channel gamma (C,) on NCHW data
  // reads as (C, 1, 1)). Unset: the input's own shape.
  std::function<Shape(const Attrs&, int index, const Shape& input, const Shape& output)> scalar_input_shape;
  // Elementwise ops that SIMD kernels can apply to whole vectors in
  // registers when the op alone follows a GEMM or convolution (a clamp, as
  // XNNPACK's kernels take output min/max): the C++ expression of that
  // epilogue object (templates/kernels/epilogue.inc), e.g.
  // "HgClampEpilogue(0.0f, 6.0f)"; empty for attributes it cannot express.
  // Unset: always the scalar lambda.
  std::function<std::string(const Attrs&)> vector_epilogue;
  // a + b: first after a GEMM or convolution, with the other operand of the
  // output's whole shape (a residual), kernels apply it as
  // hg_add_epilogue(other, then), loading that operand's vector in
  // registers, `then` the vector_epilogue of one op after it if any.
  bool residual_epilogue = false;
  // GEMM/convolution-like ops whose emit_cpp honours EmitContext::epilogue:
  // the output axis the epilogue's `channel` counts along (negative: from
  // the end). Unset: the op takes no epilogue.
  std::optional<int> epilogue_axis;
  // The output is input 0's bytes under another shape (Reshape, Flatten):
  // the memory planner lets it share input 0's buffer, no copy.
  bool view = false;
  // Ops with several C++ kernels (convolution: direct, im2col GEMM,
  // Winograd, ...): the name of the one for these inputs on `target`, where
  // `constant` says per input whether its values are known at generation
  // time (weights, which can be packed). Called once per node, by the pass
  // choose_algorithms (passes/kernels.h), which records the choice as
  // Kernel::algorithm; scratch_floats, fit_scratch, pack_constant and
  // emit_cpp (EmitContext::algorithm) get that record. Unset: one kernel.
  std::function<std::string(const Attrs&, const std::vector<TensorType>& in, const std::vector<bool>& constant,
                            const Target& target)>
      choose_kernel;
  // Floats of scratch memory the C++ kernel needs (an im2col tile) on the
  // target the code is generated for, given its `algorithm` (choose_kernel):
  // the memory planner gives it arena bytes live during that kernel alone.
  // Unset or 0: none.
  std::function<int64_t(const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>& out,
                        const Target& target, const std::string& algorithm)>
      scratch_floats;
  // Ops whose kernel can also work in less scratch (smaller im2col tiles):
  // the floats it takes within `budget` floats, between its smallest tile's
  // (even over the budget) and scratch_floats. The memory planner uses it
  // where the scratch, not the activations, sets the arena; emit_cpp then
  // sizes its tiles from EmitContext::scratch_floats. Unset: fixed.
  std::function<int64_t(const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>& out,
                        const Target& target, const std::string& algorithm, int64_t budget)>
      fit_scratch;
  // Constant inputs re-laid out at generation time into the layout the C++
  // kernel reads (packed GEMM panels), so nothing is packed at run time:
  // the packed floats of input `index` given its data, or nullopt to keep it.
  std::function<std::optional<std::vector<float>>(const Attrs&, int index, const std::vector<TensorType>& in,
                                                  const float* data, const Target& target,
                                                  const std::string& algorithm)>
      pack_constant;
  // Ops that only gather their inputs into the output (Concat): the byte
  // offset at which each input lies as one contiguous block of the output,
  // so producers can write there directly and the copy disappears; empty
  // when the inputs are not contiguous blocks (Concat on axis 1 at batch 2).
  std::function<std::vector<std::size_t>(const Attrs&, const std::vector<TensorType>& in, const TensorType& out)>
      input_placement;
  // Floating-point operations; unset: one per output element.
  std::function<double(const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&)> flops;
  // True when, with these attributes, the node forwards input 0 unchanged at
  // inference (Dropout); such nodes are removed before code generation.
  std::function<bool(const Attrs&)> is_identity;

  std::vector<OpExample> examples;
  // Inputs whose values must lie in a range for a finite result (a
  // variance, arcsin's argument): random test data for them is drawn from
  // it; other inputs' from (-2, 2).
  std::vector<InputRange> input_ranges;
  // The shapes of the weight inputs (1, 2, ...) this op expects for a data
  // input (input 0) of the given shape, so weights of a graph without stored
  // values can be made (MXNet symbol files without .params). Unset: the op
  // has no weights.
  std::function<std::vector<Shape>(const Attrs&, const Shape& data)> weight_shapes;
};

struct OpRegistrar {
  explicit OpRegistrar(OpDef def);
};

// nullptr when no op or alias has this name.
const OpDef* lookup_op(const std::string& name);
// Throws Error("unknown op 'X'") when no op or alias has this name.
const OpDef& find_op(const std::string& name);
// Every registered op, sorted by name.
std::vector<const OpDef*> all_ops();

// Checks `attrs` against the schema of `def` and returns them complete:
// defaults filled in, ints accepted where floats are expected, unknown names
// and bad string choices rejected (Error names the attribute).
Attrs normalize_attrs(const OpDef& def, const Attrs& attrs);

// Number of inputs a node with these attributes must have, as [lo, hi]
// (hi = -1 for variadic ops).
std::pair<int, int> expected_inputs(const OpDef& def, const Attrs& attrs);

// Outputs a node of this op with these normalized attributes has.
int output_count(const OpDef& def, const Attrs& attrs);

double op_flops(const OpDef& def, const Attrs& attrs, const std::vector<TensorType>& in,
                const std::vector<TensorType>& out);

}  // namespace hybgen
