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

// Concrete float32 buffers handed to a reference kernel.
struct KernelIO {
  const Attrs& attrs;
  std::vector<const float*> in;
  std::vector<TensorType> in_types;
  std::vector<float*> out;
  std::vector<TensorType> out_types;
};

// What the C++ backend generates for (--target): the SIMD path the kernels
// are pinned to, and so the panel sizes of GEMM operands packed at
// generation time (templates/kernels/gemm.inc).
struct CppTarget {
  std::string name = "generic";  // "generic", "x86-64-v3", "x86-64-v4", "armv8-a"
  int gemm_nr = 8;               // packed-B panel width
  int gemm_mr = 4;               // packed-A panel height
};

// What an op's C++ printer gets: pointer expressions for its buffers.
struct CppEmitContext {
  const Node& node;
  const CppTarget& target;
  std::vector<std::string> in;  // expressions of type `const float*`
  std::vector<TensorType> in_types;
  std::vector<std::string> out;  // expressions of type `float*`
  std::vector<TensorType> out_types;
  // Ops with OpDef::epilogue_axis: the name of a functor in scope,
  // `float epilogue(long channel, long index, float value)`, that the kernel
  // applies to every output value before storing it (fused bias, activation,
  // residual add). Empty: store values as they are.
  std::string epilogue;
  // Per input: it already lies where OpDef::input_placement puts it (its
  // producer wrote it there), so there is nothing to copy. Empty: none does.
  std::vector<bool> in_placed;
  // Ops with OpDef::scratch_floats: a `float*` to `scratch_floats` floats of
  // scratch memory in the arena, for this kernel alone (what the memory plan
  // gave it: less than OpDef::scratch_floats where OpDef::fit_scratch let
  // the plan shrink it).
  std::string scratch;
  // Per input: the constant was re-laid out by OpDef::pack_constant.
  std::vector<bool> in_packed;
  // An expression of type `const hg_thread_pool*` (templates/kernels/
  // parallel.inc), possibly null: kernels that can split their work pass it on.
  std::string pool = "pool";
  // The floats `scratch` points to (see scratch).
  int64_t scratch_floats = 0;
};

// What an op's C++ printer returns: the statements of one kernel call and the
// kernel bodies (files templates/kernels/NAME.inc) those statements call.
struct CppCall {
  std::vector<std::string> kernels;
  std::string code;
};

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
  std::function<CppCall(const CppEmitContext&)> emit_cpp;
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
  // GEMM/convolution-like ops whose emit_cpp honours CppEmitContext::epilogue:
  // the output axis the epilogue's `channel` counts along (negative: from
  // the end). Unset: the op takes no epilogue.
  std::optional<int> epilogue_axis;
  // The output is input 0's bytes under another shape (Reshape, Flatten):
  // the memory planner lets it share input 0's buffer, no copy.
  bool view = false;
  // Floats of scratch memory the C++ kernel needs (an im2col tile) on the
  // target the code is generated for: the memory planner gives it arena
  // bytes live during that kernel alone. Unset or 0: none.
  std::function<int64_t(const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>& out,
                        const CppTarget& target)>
      scratch_floats;
  // Ops whose kernel can also work in less scratch (smaller im2col tiles):
  // the floats it takes within `budget` floats, between its smallest tile's
  // (even over the budget) and scratch_floats. The memory planner uses it
  // where the scratch, not the activations, sets the arena; emit_cpp then
  // sizes its tiles from CppEmitContext::scratch_floats. Unset: fixed.
  std::function<int64_t(const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>& out,
                        const CppTarget& target, int64_t budget)>
      fit_scratch;
  // Constant inputs re-laid out at generation time into the layout the C++
  // kernel reads (packed GEMM panels), so nothing is packed at run time:
  // the packed floats of input `index` given its data, or nullopt to keep it.
  std::function<std::optional<std::vector<float>>(const Attrs&, int index, const std::vector<TensorType>& in,
                                                  const float* data, const CppTarget& target)>
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
  // Inputs that must be positive (a variance); random test data for them is
  // drawn from (0.1, 2).
  std::vector<int> positive_inputs;
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
