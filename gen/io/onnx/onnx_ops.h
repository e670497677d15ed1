// The ONNX converter registry: one converter per ONNX op type (default
// domain), each registered from the file that defines it by a static
// OnnxConverterRegistrar, as gen/ops/*.cpp register ops. The importer
// (io/onnx/onnx_model.h) looks a node's op type up here; nothing else lists them.
//
//   static OnnxConverterRegistrar reg(OnnxConverter("Relu").converts([](OnnxContext& c) {
//     Attrs a; a.set("act_type", std::string("relu"));
//     c.set_output(0, c.add_node("Activation", a, {c.input(0)}));
//   }));
//
// A converter sees its node through OnnxContext: the opset of the default
// domain, the node's attributes (typed getters with defaults), its inputs
// (runtime float32 graph values, or import-time constants of any dtype) and
// its outputs, which it binds to IR values it adds (registry ops by name,
// shapes inferred as each node is added) or to import-time constants.
//
// Import-time constants: a node all of whose present inputs are constants is
// evaluated at import. Its converter builds its IR as for run time, but into
// a scratch graph whose inputs are the constants with their own dtypes
// (OnnxContext::at_import); the registry's reference kernels evaluate it
// (ops/evaluate.h) and its outputs become constants. Sources that read only
// types and attributes (Constant, Shape, Size, ConstantOfShape, Range) have
// a `fold` instead. Float constants that reach a runtime op become graph
// constants (weights) when the converter asks for them with
// OnnxContext::input().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"

namespace hybgen {

// The dtype import-time evaluation holds values of `dtype` in, as the
// registry's reference kernels compute them: float64, float16 and bfloat16
// as float32, int16 and uint16 as int32, uint32 and uint64 as int64, the
// others as themselves. The OnnxConst keeps its own dtype, so a result is
// wrapped or rounded back to it (OnnxConst::cast).
DType fold_dtype(DType dtype);

// An import-time constant: a dtype, a shape (rank 0: a scalar) and its values
// in row-major order, as doubles for float dtypes and as int64s for the
// integer and bool dtypes (exactly one of the two vectors is used). The
// dtype is the ONNX element type exactly (ONNX numbers become DTypes where
// the file is read, io/onnx/onnx_model.h), float64 and int16 included: a
// Cast to INT16 wraps at 16 bits and one to DOUBLE keeps double precision,
// as ONNX says, although both are computed in wider or float32 types.
struct OnnxConst {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<double> floats;  // float dtypes
  std::vector<int64_t> ints;   // integer and bool dtypes
  // Set on DequantizeLinear's import-time result: the integers (int8, uint8
  // or int32) and the quantization it came from. Such a constant reaches the
  // graph as those integers and a `dequantize` node, so fold_qdq can compute
  // the layer reading it in int8 with the file's own scales.
  struct Dequantized;
  std::shared_ptr<const Dequantized> dequantized;

  bool is_float() const { return is_float_dtype(dtype); }
  int64_t size() const { return is_float() ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size()); }
  // Element i as a double / as an int64 (a float value must be integral).
  double at_double(int64_t i) const;
  int64_t at_int(int64_t i) const;
  // Every value; as_ints throws Error when a float value is not an integer.
  std::vector<int64_t> as_ints() const;
  std::vector<double> as_doubles() const;
  // The values as float32 (what a graph constant holds).
  std::vector<float> as_floats() const;

  static OnnxConst of_ints(const Shape& shape, std::vector<int64_t> values, DType dtype = DType::kInt64);
  static OnnxConst of_floats(const Shape& shape, std::vector<double> values, DType dtype = DType::kFloat32);
  static OnnxConst scalar_int(int64_t value, DType dtype = DType::kInt64);
  static OnnxConst scalar_float(double value, DType dtype = DType::kFloat32);
  // The same values in another dtype, with ONNX Cast's rules (float to
  // integer truncates toward zero; integers wrap to the target's width; to
  // bool: non-zero; to float32, float16, bfloat16: rounded to its precision).
  OnnxConst cast(DType to) const;
  // The values as a graph constant of dtype fold_dtype(dtype).
  Constant to_constant() const;
  // A graph constant's values, of its dtype.
  static OnnxConst of_constant(const Constant& c);
};

struct OnnxConst::Dequantized {
  OnnxConst q;
  Quantization quantization;
};

// What a converter's up-front check sees: the node's op type, opset and
// attributes, before anything is converted. It calls refuse() for each
// attribute value (or combination) it cannot handle; the importer lists all
// refusals of all nodes in one Error.
class OnnxCheck {
 public:
  virtual ~OnnxCheck() = default;
  virtual const std::string& op_type() const = 0;
  virtual int64_t opset() const = 0;
  virtual bool has_attr(const std::string& name) const = 0;
  virtual int64_t attr_int(const std::string& name, int64_t fallback) const = 0;
  virtual double attr_float(const std::string& name, double fallback) const = 0;
  virtual std::string attr_string(const std::string& name, const std::string& fallback) const = 0;
  virtual std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback) const = 0;
  virtual std::vector<double> attr_floats(const std::string& name, const std::vector<double>& fallback) const = 0;
  // An element-type attribute (Cast's `to`) as a DType; nothing, after a
  // refusal naming the ONNX element type, when no DType holds it (STRING).
  virtual std::optional<DType> attr_dtype(const std::string& name, DType fallback) = 0;
  // Number of inputs the node names (omitted optional ones count, as "").
  virtual int num_inputs() const = 0;
  virtual bool has_input(int i) const = 0;
  // Records a refusal: "attribute NAME = VALUE: WHY" (attr may be "" for a
  // refusal not about one attribute, e.g. "3 inputs").
  virtual void refuse(const std::string& attr, const std::string& why) = 0;
};

// A node being converted.
class OnnxContext {
 public:
  virtual ~OnnxContext() = default;

  // --- the node
  virtual const std::string& op_type() const = 0;
  // The node's IR name (its ONNX name, made unique; op type and index when empty).
  virtual const std::string& node_name() const = 0;
  // The opset of the default domain the model imports.
  virtual int64_t opset() const = 0;
  // "FILE: node 'NAME' (OpType)": how messages about this node start.
  virtual std::string where() const = 0;
  // Throws Error(where() + ": " + what).
  [[noreturn]] virtual void fail(const std::string& what) const = 0;
  // Passes a note to the user (OnnxImportOptions::note), prefixed by where().
  virtual void note(const std::string& what) = 0;
  // True while the node is evaluated at import (every input a constant): the
  // IR it builds is a scratch graph whose values keep their dtypes (int64
  // shapes, bool masks), run once by the reference kernels, where scalars
  // and empty tensors are fine. False: the IR is the model's, float32.
  virtual bool at_import() const = 0;

  // --- attributes (reading one marks it handled; an attribute present that
  // the converter neither reads nor lists in OnnxConverter::attrs is an error
  // after conversion). Getters fail() when the attribute has another type.
  virtual bool has_attr(const std::string& name) const = 0;
  virtual int64_t attr_int(const std::string& name, int64_t fallback) = 0;
  virtual double attr_float(const std::string& name, double fallback) = 0;
  virtual std::string attr_string(const std::string& name, const std::string& fallback) = 0;
  virtual std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback) = 0;
  virtual std::vector<double> attr_floats(const std::string& name, const std::vector<double>& fallback) = 0;
  // A TENSOR attribute (Constant's value, ConstantOfShape's value).
  virtual OnnxConst attr_tensor(const std::string& name) = 0;
  // An element-type attribute (Cast's `to`) as a DType: fail() naming the
  // attribute and its ONNX element type when no DType holds it (STRING).
  virtual DType attr_dtype(const std::string& name) = 0;
  // Required forms: fail() naming the attribute when it is missing.
  virtual int64_t attr_int(const std::string& name) = 0;
  virtual std::vector<int64_t> attr_ints(const std::string& name) = 0;

  // --- inputs. i counts the node's input list; an omitted optional input
  // (empty name, or past the end) is not present.
  virtual int num_inputs() const = 0;  // the node's input list, trailing omitted ones included
  virtual bool has_input(int i) const = 0;
  // Input i is an import-time constant (an initializer, a Constant node, or
  // a folded node).
  virtual bool is_constant(int i) const = 0;
  // Input i's value as a constant; fail()s naming the input when it is
  // computed at run time ("input 1 ('shape') must be a constant").
  virtual const OnnxConst& constant(int i) const = 0;
  // Input i's shape (runtime value or constant); fail()s when not present.
  virtual Shape shape(int i) const = 0;
  // Input i's dtype in the model: a constant's, or for a runtime value
  // (always float32 in the IR) the dtype its producer declared with
  // set_output (float32 unless it said otherwise: a 0/1 float mask from
  // Equal is bool).
  virtual DType dtype(int i) const = 0;
  // Input i as an IR value name for a node's input list: a runtime value, or
  // a constant made a float32 graph constant (weight) on first use. fail()s
  // when it is not present.
  virtual std::string input(int i) = 0;

  // --- outputs
  virtual int num_outputs() const = 0;
  // Output i is named (and so read by something or a graph output).
  virtual bool has_output(int i) const = 0;
  // Binds output i to an IR value this converter added (or to an input's
  // value: Identity). A graph output bound to a graph input or constant
  // gets a copy node.
  // `dtype`: the dtype the value stands for in the model; none: its IR
  // value's (float32 at run time, where the IR is float32). At import the
  // value is cast to it (OnnxConst::cast): a 0/1 mask declared bool.
  virtual void set_output(int i, const std::string& value, std::optional<DType> dtype = std::nullopt) = 0;
  // Binds output i to an import-time constant.
  virtual void set_constant(int i, OnnxConst value) = 0;

  // --- building the IR
  // Adds a node of registry op `op` (gen/ops/op.h, by name or alias) reading
  // `inputs` (IR value names), infers its output types at once, and returns
  // its output value names. Attributes are checked against the op's schema;
  // any Error is reported as this node's. `suffix` tells apart several IR
  // nodes made for one ONNX node (the IR node is named NODE or NODE/suffix).
  virtual std::vector<std::string> add_nodes(const std::string& op, const Attrs& attrs,
                                             const std::vector<std::string>& inputs,
                                             const std::string& suffix = "") = 0;
  // add_nodes for a single-output op: its one output value.
  std::string add_node(const std::string& op, const Attrs& attrs, const std::vector<std::string>& inputs,
                       const std::string& suffix = "") {
    return add_nodes(op, attrs, inputs, suffix).at(0);
  }
  // Adds a float32 graph constant (a weight made at import: a transposed Gemm
  // B, a scale) and returns its value name.
  virtual std::string add_constant(const Shape& shape, const std::vector<float>& values,
                                   const std::string& suffix = "const") = 0;
  // Adds an integer graph constant holding `q`'s values (int8, uint8 or
  // int32) with `quantization` on its type, and returns its value name.
  virtual std::string add_quantized_constant(const OnnxConst& q, const Quantization& quantization,
                                             const std::string& suffix = "q") = 0;
  // The type of an IR value added so far (input, constant or node output).
  virtual const TensorType& type(const std::string& value) const = 0;
};

// One op type's converter, built with the setters (C++17 has no designated
// initializers):
//
//   OnnxConverter("LeakyRelu").converts(fn).handles({"alpha"}).checks(check_fn)
struct OnnxConverter {
  std::string op_type;  // default domain ("" / "ai.onnx")
  // Converts a node: for run time, or at import into the scratch graph the
  // reference kernels evaluate when every input is a constant (and `fold`
  // is unset).
  std::function<void(OnnxContext&)> convert;
  // Evaluates a node that only reads types and attributes at import (Shape,
  // ConstantOfShape): called instead of `convert` when every present input
  // is a constant (always with fold_always). Binds every output with
  // set_constant.
  std::function<void(OnnxContext&)> fold;
  // Call `fold` even when inputs are runtime values (Shape, Size: they read
  // only the input's type).
  bool fold_always = false;
  // Attributes the converter handles. Up front, an attribute the node has
  // that is not listed here is refused (all such listed at once). Empty: no
  // up-front attribute filter (attributes read during conversion count as
  // handled; any other present one is an error after conversion).
  std::vector<std::string> attrs;
  // Attributes that do not change inference results (training_mode ...):
  // accepted and ignored.
  std::vector<std::string> ignored_attrs;
  // Up-front check of attribute values (OnnxCheck::refuse for each problem).
  std::function<void(OnnxCheck&)> check;
  // Lowest opset whose semantics the converter implements (older models are
  // refused for this op).
  int64_t min_opset = 1;

  OnnxConverter() = default;
  explicit OnnxConverter(std::string op) : op_type(std::move(op)) {}
  OnnxConverter& converts(std::function<void(OnnxContext&)> f) { convert = std::move(f); return *this; }
  OnnxConverter& folds(std::function<void(OnnxContext&)> f) { fold = std::move(f); return *this; }
  OnnxConverter& always_fold() { fold_always = true; return *this; }
  OnnxConverter& handles(std::vector<std::string> names) { attrs = std::move(names); return *this; }
  OnnxConverter& ignores(std::vector<std::string> names) { ignored_attrs = std::move(names); return *this; }
  OnnxConverter& checks(std::function<void(OnnxCheck&)> f) { check = std::move(f); return *this; }
  OnnxConverter& since(int64_t opset) { min_opset = opset; return *this; }
};

// Registering the same op type from two files merges the two: one may give
// `fold` (import-time evaluation) and the other `convert`; `attrs` and
// `ignored_attrs` are joined, both checks run, the higher min_opset holds.
// Two files giving the same function is a startup error.
// Thrown by a fold, by OnnxContext::set_constant and by a node built at
// import when a value would be too large to compute at import (more than
// 2^22 elements): the importer then converts the node at run time instead
// when the op has a runtime form (a weight-sized Mul of two initializers),
// and reports this error otherwise.
struct OnnxFoldTooLarge : Error {
  using Error::Error;
};

struct OnnxConverterRegistrar {
  explicit OnnxConverterRegistrar(OnnxConverter converter);
};

// nullptr when no converter is registered for this op type.
const OnnxConverter* find_onnx_converter(const std::string& op_type);
// Every registered converter, sorted by op type.
std::vector<const OnnxConverter*> all_onnx_converters();

// Small helpers converters share.
namespace onnx_util {
// Normalizes a possibly negative axis against `rank`; Error(what) when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// numpy broadcasting of two shapes; Error(what) when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what);
// Attrs holding one attribute.
Attrs attrs_of(const std::string& key, AttrValue value);
// "[1, 2, 3]", for messages.
std::string int_list(const std::vector<int64_t>& v);
// `value` as an IR Reshape to a fully known shape (itself when it has that shape).
std::string reshape(OnnxContext& c, const std::string& value, const Shape& shape, const std::string& suffix = "");
// Slice's starts, ends, axes and steps: attributes before opset 10, constant inputs after.
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};
SliceArgs slice_args(OnnxContext& c);
}  // namespace onnx_util

}  // namespace hybgen
