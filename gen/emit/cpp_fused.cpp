#include "emit/cpp_fused.h"

#include <algorithm>
#include <map>
#include <set>

#include "emit/templates.h"
#include "ir/error.h"
#include "ir/names.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

// Scalar temporaries of one kernel: x0, x1, ... for elements loaded from
// outside, v0, v1, ... for node results.
struct Temps {
  std::map<std::string, std::string> of_value;  // in-kernel value -> temporary
  std::map<std::string, std::string> of_load;   // load key -> temporary
  std::string lines;                            // declarations, in order
  std::string statics;                          // static data the expressions read (ScalarSite::declarations)
  bool copies_only = true;                      // whether every node printed its one input unchanged
};

std::string load_key(const std::string& value, const Shape& shape) { return value + "@" + shape_str(shape); }

// Half-precision storage (--precision fp16/bf16, CUDA): a fused loop holds
// such values as floats, loaded through hg_to_float and stored through
// hg_store (templates/cuda/kernels/common.inc), so its expressions are the
// float32 ones.
DType computed_as(DType dtype) { return is_half_dtype(dtype) ? DType::kFloat32 : dtype; }
TensorType computed_as(TensorType type) {
  type.dtype = computed_as(type.dtype);
  return type;
}

// `const T x = element;` for a loaded element of `dtype`.
std::string load_line(const std::string& temp, DType dtype, const std::string& element) {
  if (is_half_dtype(dtype)) return "const float " + temp + " = hg_to_float(" + element + ");\n";
  return "const " + dtype_c_type(dtype) + " " + temp + " = " + element + ";\n";
}

// The statement storing `value` (a temporary of computed_as(dtype)) at `pointer`[`index`].
std::string store_line(const std::string& pointer, DType dtype, const std::string& index, const std::string& value) {
  if (is_half_dtype(dtype)) return "hg_store(" + pointer + " + " + index + ", " + value + ");";
  return pointer + "[" + index + "] = " + value + ";";
}

// `const T vN = <expr>;` for every node (T the C type of its output's dtype), reading temporaries or loads.
void print_nodes(const Graph& graph, const std::vector<int>& nodes, Temps& temps,
                 const std::function<std::string(const std::string& value, const Shape& shape)>& load) {
  for (int index : nodes) {
    const Node& node = graph.nodes[index];
    const OpDef& def = find_op(node.op);
    const std::string temp = "v" + std::to_string(temps.of_value.size());
    ScalarSite site{node.attrs, {}, {}, computed_as(graph.type(node.outputs[0])), temp, &temps.statics};
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      auto it = temps.of_value.find(node.inputs[i]);
      site.in.push_back(it != temps.of_value.end() ? it->second
                                                   : load(node.inputs[i], scalar_operand_shape(graph, node, i)));
      site.in_types.push_back(computed_as(graph.type(node.inputs[i])));
    }
    const std::string expression = def.emit_scalar(site);
    temps.copies_only = temps.copies_only && site.in.size() == 1 && expression == site.in[0] &&
                        site.in_types[0].dtype == site.out_type.dtype;
    temps.lines += "const " + dtype_c_type(site.out_type.dtype) + " " + temp + " = " + expression + ";  // " +
                   comment_text(node.name) + " (" + def.name + ")\n";
    temps.of_value[node.outputs[0]] = temp;
  }
}

std::string indent(const std::string& code, int levels) {
  return indent_lines(code, std::string(static_cast<std::size_t>(levels) * 2, ' '));
}

}  // namespace

ElementwiseBody elementwise_body(const Graph& graph, const Kernel& kernel, const PointerOf& pointer_of) {
  ElementwiseBody out;
  auto read = [&](const std::string& value) {
    const std::string p = pointer_of(value);
    if (std::find(out.reads.begin(), out.reads.end(), p) == out.reads.end()) {
      out.reads.push_back(p);
      out.read_dtypes.push_back(graph.type(value).dtype);
    }
    return p;
  };
  const Shape loop = graph.type(graph.nodes[kernel.nodes.front()].outputs[0]).shape;
  const Shape dims = loop.empty() ? Shape{1} : loop;

  // The operands read from outside, with their strides over the loop.
  struct Operand {
    std::string value;
    std::vector<int64_t> strides;
  };
  std::vector<Operand> operands;
  std::map<std::string, std::size_t> operand_of;
  std::set<std::string> produced;
  for (int index : kernel.nodes) {
    const Node& node = graph.nodes[index];
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      if (produced.count(node.inputs[i])) continue;
      const Shape shape = scalar_operand_shape(graph, node, i);
      const std::string key = load_key(node.inputs[i], shape);
      if (operand_of.count(key)) continue;
      operand_of[key] = operands.size();
      operands.push_back({node.inputs[i], broadcast_strides(shape.empty() ? Shape{1} : shape, dims)});
    }
    produced.insert(node.outputs[0]);
  }

  // Collapse the loop nest: drop size-1 axes and merge an axis into the one
  // outside it wherever every operand walks both as one (contiguous, or both
  // broadcast), so a same-shape chain is one flat loop.
  std::vector<int64_t>& extents = out.extents;
  std::vector<std::vector<int64_t>> strides(operands.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    bool merge = !extents.empty();
    for (std::size_t k = 0; merge && k < operands.size(); ++k)
      merge = strides[k].back() == operands[k].strides[d] * dims[d];
    if (merge) {
      extents.back() *= dims[d];
      for (std::size_t k = 0; k < operands.size(); ++k) strides[k].back() = operands[k].strides[d];
    } else {
      extents.push_back(dims[d]);
      for (std::size_t k = 0; k < operands.size(); ++k) strides[k].push_back(operands[k].strides[d]);
    }
  }
  if (extents.empty()) {
    extents.push_back(1);
    for (auto& s : strides) s.push_back(0);
  }
  const int rank = static_cast<int>(extents.size());
  const std::string out_index = rank > 1 ? "o" : loop_counter(0);  // the output is contiguous over the loop

  Temps temps;
  std::string loads;
  auto load = [&](const std::string& value, const Shape& shape) {
    const std::string key = load_key(value, shape);
    auto it = temps.of_load.find(key);
    if (it != temps.of_load.end()) return it->second;
    const std::vector<int64_t>& s = strides[operand_of.at(key)];
    std::string index;
    for (int r = 0; r < rank; ++r) {
      if (s[r] == 0) continue;
      index += (index.empty() ? "" : " + ") + loop_counter(r) + (s[r] == 1 ? "" : " * " + std::to_string(s[r]));
    }
    if (index.empty()) index = "0";
    bool full = s[rank - 1] == 1;
    for (int r = rank - 2; full && r >= 0; --r) full = s[r] == s[r + 1] * extents[r + 1];
    if (full && rank > 1) index = "o";
    const std::string temp = "x" + std::to_string(temps.of_load.size());
    loads += load_line(temp, graph.type(value).dtype, read(value) + "[" + index + "]");
    return temps.of_load[key] = temp;
  };
  print_nodes(graph, kernel.nodes, temps, load);

  out.statements = loads + temps.lines;
  out.declarations = temps.statics;
  for (const auto& value : kernel.outputs) {
    const std::string p = pointer_of(value);
    out.writes.push_back(p);
    out.write_dtypes.push_back(graph.type(value).dtype);
    out.statements += store_line(p, graph.type(value).dtype, out_index, temps.of_value.at(value)) + "\n";
  }
  return out;
}

std::string loop_counter(int axis) { return "i" + std::to_string(axis); }

std::string print_elementwise_loop(const Graph& graph, const Kernel& kernel, const PointerOf& pointer) {
  const ElementwiseBody loop = elementwise_body(graph, kernel, pointer);
  const int rank = static_cast<int>(loop.extents.size());
  std::string body;
  if (rank > 1) {
    std::string flat = loop_counter(0);
    for (int r = 1; r < rank; ++r) flat = "(" + flat + ") * " + std::to_string(loop.extents[r]) + " + " + loop_counter(r);
    body += "const long o = " + flat + ";\n";
  }
  body += loop.statements;
  std::string code = "{\n" + indent(loop.declarations, 1);
  for (int r = 0; r < rank; ++r)
    code += indent("for (long " + loop_counter(r) + " = 0; " + loop_counter(r) + " < " + std::to_string(loop.extents[r]) +
                       "; ++" + loop_counter(r) + ") {",
                   r + 1);
  code += indent(body, rank + 1);
  for (int r = rank - 1; r >= 0; --r) code += indent("}", r + 1);
  return code + "}";
}

const std::string& epilogue_result(const Graph& graph, const Kernel& kernel) {
  return graph.nodes[kernel.nodes.back()].outputs[0];
}

// The epilogue object kernels can apply to whole vectors, for what follows
// the anchor: a residual add (OpKernel::residual_epilogue) and/or one op with an
// OpKernel::vector_epilogue, reading nothing else; empty if it is anything more.
// `nodes` gets the names it came from, for the comment.
std::string vector_epilogue(const Graph& graph, const Kernel& kernel, const PointerOf& pointer, std::string* nodes) {
  if (kernel.outputs.size() != 1) return "";
  // The vector epilogues (templates/kernels/epilogue.inc) compute float32.
  if (graph.type(graph.nodes[kernel.nodes[0]].outputs[0]).dtype != DType::kFloat32 ||
      graph.type(epilogue_result(graph, kernel)).dtype != DType::kFloat32)
    return "";
  const Shape& loop = graph.type(graph.nodes[kernel.nodes[0]].outputs[0]).shape;
  std::string value = graph.nodes[kernel.nodes[0]].outputs[0], residual, then;
  std::size_t at = 1;
  auto take = [&](const Node& node) {
    *nodes += (nodes->empty() ? "" : ", ") + comment_text(node.name) + " (" + node.op + ")";
    value = node.outputs[0];
    ++at;
  };
  if (at < kernel.nodes.size()) {
    const Node& node = graph.nodes[kernel.nodes[at]];
    const OpKernel* op_kernel = find_kernel(Backend::kCpp, find_op(node.op).name);
    if (op_kernel && op_kernel->residual_epilogue && node.inputs.size() == 2 && node.inputs[0] != node.inputs[1] &&
        (node.inputs[0] == value || node.inputs[1] == value)) {
      const std::string& other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
      if (graph.type(other).shape == loop && graph.type(node.outputs[0]).shape == loop) {
        residual = pointer(other);
        take(node);
      }
    }
  }
  if (at < kernel.nodes.size()) {
    const Node& node = graph.nodes[kernel.nodes[at]];
    const OpKernel* op_kernel = find_kernel(Backend::kCpp, find_op(node.op).name);
    if (op_kernel && op_kernel->vector_epilogue && node.inputs.size() == 1 && node.inputs[0] == value) {
      then = op_kernel->vector_epilogue(node.attrs);
      if (!then.empty()) take(node);
    }
  }
  if (at != kernel.nodes.size() || at == 1) return "";
  if (residual.empty()) return then;
  return "hg_add_epilogue(" + residual + ", " + (then.empty() ? "HgNoEpilogue()" : then) + ")";
}

// For an int8 anchor followed only by an int8 residual add (OpKernel::
// residual_epilogue on quantized operands: TFLite's ADD) of another operand of
// the anchor's whole shape: `hg_q8_add_epilogue(other, HgQuantizedAdd{...}, `,
// the add's parameters with `other` as its first operand (the sum commutes),
// for the kernels that apply it to whole vectors; empty otherwise.
std::string q8_residual_add_epilogue(const Graph& graph, const Kernel& kernel, const PointerOf& pointer) {
  if (kernel.outputs.size() != 1 || kernel.nodes.size() != 2) return "";
  const std::string& value = graph.nodes[kernel.nodes[0]].outputs[0];
  const Node& node = graph.nodes[kernel.nodes[1]];
  const OpKernel* op_kernel = find_kernel(Backend::kCpp, find_op(node.op).name);
  if (!op_kernel || !op_kernel->residual_epilogue || node.inputs.size() != 2 || node.inputs[0] == node.inputs[1] ||
      (node.inputs[0] != value && node.inputs[1] != value))
    return "";
  const std::string& other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
  const TensorType &v = graph.type(value), &o = graph.type(other), &out = graph.type(node.outputs[0]);
  for (const TensorType* t : {&v, &o, &out})
    if (t->dtype != DType::kInt8 || t->quantization.empty() || t->quantization.axis || t->shape != v.shape) return "";
  const QuantizedAdd add =
      quantized_add_params(o.quantization, v.quantization, out.quantization, int32_range(DType::kInt8));
  return "hg_q8_add_epilogue(" + pointer(other) + ", " + quantized_add_literal(add) + ", ";
}

EpilogueBody epilogue_body(const Graph& graph, const Kernel& kernel, const PointerOf& pointer_of) {
  EpilogueBody out;
  const Node& anchor = graph.nodes[kernel.nodes.front()];
  const OpDef& anchor_def = find_op(anchor.op);
  const Shape& loop = graph.type(anchor.outputs[0]).shape;
  const int axis = normalize_axis(anchor_def.epilogue_axis.value_or(-1), loop.size());

  // The kernel hands its float sums to the epilogue and rounds what it
  // returns to the output's storage type itself.
  out.value_dtype = computed_as(graph.type(anchor.outputs[0]).dtype);
  out.result_dtype = computed_as(graph.type(epilogue_result(graph, kernel)).dtype);
  Temps temps;
  temps.of_value[anchor.outputs[0]] = "v";
  std::string loads;
  auto load = [&](const std::string& value, const Shape& shape) {
    const std::string key = load_key(value, shape);
    auto it = temps.of_load.find(key);
    if (it != temps.of_load.end()) return it->second;
    std::string index;
    switch (epilogue_operand(shape, loop, axis)) {
      case EpilogueOperand::kFull: index = "index", out.uses_index = true; break;
      case EpilogueOperand::kChannel: index = "channel", out.uses_channel = true; break;
      case EpilogueOperand::kScalar: index = "0"; break;
      case EpilogueOperand::kNone:
        throw Error("kernel " + quoted_name(kernel.name) + ": " + quoted_name(value) + " cannot be read in an epilogue");
    }
    const std::string p = pointer_of(value);
    if (std::find(out.reads.begin(), out.reads.end(), p) == out.reads.end()) {
      out.reads.push_back(p);
      out.read_dtypes.push_back(graph.type(value).dtype);
    }
    const std::string temp = "x" + std::to_string(temps.of_load.size());
    loads += load_line(temp, graph.type(value).dtype, p + "[" + index + "]");
    return temps.of_load[key] = temp;
  };
  const std::vector<int> epilogue_nodes(kernel.nodes.begin() + 1, kernel.nodes.end());
  print_nodes(graph, epilogue_nodes, temps, load);

  out.statements = loads + temps.lines;
  out.declarations = temps.statics;
  out.identity =
      temps.copies_only && loads.empty() && kernel.outputs.size() == 1 && out.value_dtype == out.result_dtype;
  const std::string& result = epilogue_result(graph, kernel);
  for (const auto& value : kernel.outputs)
    if (value != result) {
      const std::string p = pointer_of(value);
      out.writes.push_back(p);
      out.write_dtypes.push_back(graph.type(value).dtype);
      out.statements += store_line(p, graph.type(value).dtype, "index", temps.of_value.at(value)) +
                        "  // also read outside the kernel\n";
      out.uses_index = true;
    }
  out.statements += "return " + temps.of_value.at(result) + ";\n";
  return out;
}

std::string print_epilogue(const Graph& graph, const Kernel& kernel, const PointerOf& pointer,
                           const std::string& name) {
  std::string nodes;
  const std::string vector = vector_epilogue(graph, kernel, pointer, &nodes);
  if (!vector.empty()) return "const auto " + name + " = " + vector + ";  // " + nodes;
  const EpilogueBody epilogue = epilogue_body(graph, kernel, pointer);
  // Integer values the nodes leave as they are (a clip whose bounds lie at or
  // past the type's, the requantization having clamped): no epilogue, which
  // lets the int8 kernels store their bytes straight into the output.
  if (epilogue.identity && !is_float_dtype(epilogue.value_dtype)) {
    std::string names;
    for (std::size_t i = 1; i < kernel.nodes.size(); ++i) {
      const Node& node = graph.nodes[kernel.nodes[i]];
      names += (names.empty() ? "" : ", ") + comment_text(node.name) + " (" + node.op + ")";
    }
    return "const HgNoEpilogue " + name + "{};  // " + names + ": no change";
  }
  // An epilogue calling math.inc's approximations (hg_erf, ...) is too large
  // for GCC to inline into the GEMM's store loop on its own, which then stays
  // scalar (the GELU after a dense layer ran 3x slower); the macro forces it.
  const std::vector<std::string> helpers = scalar_kernel_templates(graph, kernel);
  const bool uses_math = std::find(helpers.begin(), helpers.end(), "math") != helpers.end() &&
                         epilogue.statements.find("hg_") != std::string::npos;
  // Captured by value: the buffers are pointers, and a local whose address a
  // closure holds (by reference) is one an int8 store may alias for GCC, so
  // every loop of run() that stores bytes reloaded its pointers and ran
  // scalar (int8 quantize loops, epilogues).
  const std::string lambda = std::string("[=](long") + (epilogue.uses_channel ? " channel" : "") + ", long" +
                             (epilogue.uses_index ? " index" : "") + ", " + dtype_c_type(epilogue.value_dtype) + " v)" +
                             (uses_math ? " HG_MATH_LAMBDA_INLINE" : "") + " -> " +
                             dtype_c_type(epilogue.result_dtype) + " {\n" +
                             indent(epilogue.declarations + epilogue.statements, 1) + "}";
  // An int8 residual add keeps its lambda as the scalar form (its constants
  // fold into each target's scalar code as before) beside the parameters
  // the vector kernels read.
  const std::string residual_add = q8_residual_add_epilogue(graph, kernel, pointer);
  if (!residual_add.empty()) return "const auto " + name + " = " + residual_add + lambda + ");";
  return "auto " + name + " = " + lambda + ";";
}

std::vector<std::string> scalar_kernel_templates(const Graph& graph, const Kernel& kernel) {
  std::vector<std::string> names;
  auto use = [&](const std::string& k) {
    if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  };
  for (int index : kernel.nodes) {
    const Node& node = graph.nodes[index];
    for (const auto& k : find_op(node.op).scalar_kernels) use(k);
    // Expressions on quantized values call templates/kernels/quantized.inc.
    for (const auto* values : {&node.inputs, &node.outputs})
      for (const auto& v : *values)
        if (!graph.type(v).quantization.empty()) use("quantized");
  }
  return names;
}

}  // namespace hybgen
