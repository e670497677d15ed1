// The operator registry: what is true of an op on every backend sits in one
// OpDef — schema (inputs, typed attributes with defaults), shape/dtype rule,
// fusion class, reference kernel, FLOP count and the examples the generic op
// test runs. Each file under gen/ops/ registers its ops with a static
// OpRegistrar; nothing else lists them. How each backend computes an op is
// its OpKernel (ops/op_kernel.h), registered beside it.
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
#include "ops/op_kernel.h"
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
  // With no default: the attribute may be absent (normalize_attrs leaves it
  // out), as the output quantization of a float node (ops/quantized.h).
  bool optional = false;
};

// Concrete buffers handed to a reference kernel. `in` and `out` point at
// each buffer whatever its dtype (in_types / out_types say which); kernels
// read them through input<T> / output<T>, T the dtype's C type (float for
// float32; ops/op_util.h's with_element_bits and with_value_type choose it
// for kernels of several dtypes, OpDef::reference_dtypes).
struct KernelIO {
  const Attrs& attrs;
  std::vector<const void*> in;
  std::vector<TensorType> in_types;
  std::vector<void*> out;
  std::vector<TensorType> out_types;

  template <class T>
  const T* input(std::size_t i) const {
    return static_cast<const T*>(in[i]);
  }
  template <class T>
  T* output(std::size_t i) const {
    return static_cast<T*>(out[i]);
  }
};

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

// What an elementwise op's scalar expression (OpDef::emit_scalar) is printed
// from: the node's attributes, the C expressions of its input elements
// (identifiers, each of the C type of its dtype) and the types of its
// inputs and output, so an expression can depend on the dtypes and on a
// quantization.
struct ScalarSite {
  const Attrs& attrs;
  std::vector<std::string> in;
  std::vector<TensorType> in_types;
  TensorType out_type;
  // C++: an identifier unique in the printed kernel (the node's temporary),
  // from which to name static data the expression reads (a lookup table).
  std::string name{};
  // C++: where the expression declares such data, as statements printed
  // once before the kernel's loop or at the top of its epilogue
  // (`static const std::int8_t v3_table[256] = {...};`); null where the
  // backend has no place for them.
  std::string* declarations = nullptr;
};

// One configuration the generic op test runs through every backend.
struct OpExample {
  OpExample(Attrs attrs_, std::vector<Shape> inputs_, std::vector<TensorType> input_types_ = {})
      : attrs(std::move(attrs_)), inputs(std::move(inputs_)), input_types(std::move(input_types_)) {}

  Attrs attrs;
  std::vector<Shape> inputs;
  // Empty: float32 inputs. Else each input's type (an int8 example: its
  // dtype and quantization), the shapes those of `inputs`.
  std::vector<TensorType> input_types;
  // int8 constants (weights) over all of [-128, 127]: other tools' files may
  // hold -128, which symmetric quantization never writes, and some kernels
  // take another path for it (gemm_q8.inc's hg_q8_weights_narrow).
  bool weights_include_int8_min = false;

  // The type of input `i`.
  TensorType input_type(std::size_t i) const { return input_types.empty() ? TensorType{inputs[i]} : input_types[i]; }
};

// An example whose inputs are of these types (quantized integers).
OpExample quantized_example(Attrs attrs, std::vector<TensorType> inputs);

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
  // outputs is of one of them. What generated code computes is each
  // backend's OpKernel::dtypes.
  std::vector<DType> reference_dtypes{DType::kFloat32};
  // Elementwise and broadcast ops: the C/C++/CUDA expression of one output
  // element, of its output's dtype, from the expressions of the matching
  // input elements (ScalarSite). Each backend's fused loop chains these, so
  // such an op needs no OpKernel::emit; it computes the dtypes of the
  // backend's kElementwiseLoop. The expression may call helpers from
  // `scalar_kernels` (templates/kernels/NAME.inc).
  std::function<std::string(const ScalarSite&)> emit_scalar;
  std::vector<std::string> scalar_kernels;
  // The dtypes emit_scalar's expression is written for: each backend's
  // kernel of the op computes those of them its fused loop computes
  // (find_kernel's OpKernel::dtypes).
  std::vector<DType> scalar_dtypes{DType::kFloat32};
  // With emit_scalar: the shape input `index` broadcasts to the output as, in
  // numpy's right-aligned sense (PReLU's per-channel gamma (C,) on NCHW data
  // reads as (C, 1, 1)). Unset: the input's own shape.
  std::function<Shape(const Attrs&, int index, const Shape& input, const Shape& output)> scalar_input_shape;
  // GEMM/convolution-like ops whose kernels honour EmitContext::epilogue on
  // every backend: the output axis the epilogue's `channel` counts along
  // (negative: from the end). Unset: the op takes no epilogue.
  std::optional<int> epilogue_axis;
  // The output is input 0's bytes under another shape (Reshape, Flatten):
  // the memory planner lets it share input 0's buffer, no copy.
  bool view = false;
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
  // The same, where it depends on input 0's type (a quantized relu at its
  // dtype's lowest value).
  std::function<bool(const Attrs&, const TensorType&)> is_identity_on;
  // True when, with these (normalized) attributes and input types, an output
  // element depends on input elements at other indices of the first axis, or
  // on its own index there (a softmax over axis 0, a Concat along it, an RNN's
  // time steps): such a node cannot take a run-time batch, whose items lie
  // along that axis (check_batch_separable). Unset: the op never does; ops
  // whose shape changes along axis 0 in other ways (a reduction) are also
  // caught by their shapes.
  // `in_batch`: per input, whether it holds batch items (weights do not).
  std::function<bool(const Attrs&, const std::vector<TensorType>& in, const std::vector<bool>& in_batch)>
      mixes_first_axis;

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
// "" when `given` inputs are what expected_inputs allows, else what every
// importer and validate say: "has 2 inputs, expected 3" ("1 or more",
// "1 to 3").
std::string input_count_mismatch(const OpDef& def, const Attrs& attrs, int given);

// Outputs a node of this op with these normalized attributes has.
int output_count(const OpDef& def, const Attrs& attrs);

double op_flops(const OpDef& def, const Attrs& attrs, const std::vector<TensorType>& in,
                const std::vector<TensorType>& out);

}  // namespace hybgen
