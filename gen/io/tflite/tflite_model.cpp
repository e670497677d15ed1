// The TFLite importer: reads the FlatBuffer into plain structs (every field
// checked, flatbuffer_view.h), checks every operator up front, then converts
// operator by operator into registry ops.
//
// Layout: TFLite's activations are NHWC, hybgen's ops NCHW. Every rank-4
// value is NCHW inside the graph ("nchw" below); a rank-4 graph input is
// transposed into it and a rank-4 graph output back, so the graph takes and
// gives TFLite's own arrays. Weights are transposed at import (OHWI to
// OIHW; a depthwise [1, kh, kw, C*M] to [C*M, 1, kh, kw]); an axis names
// TFLite's dimension and is mapped. Where TFLite reads a rank-4 value in
// memory order (RESHAPE, FULLY_CONNECTED on a rank-4 input), the NHWC order
// is made where it differs from NCHW's (C > 1 and H * W > 1): a transpose,
// or for FULLY_CONNECTED its weight columns permuted at import.
//
// Quantization: an int8 (or uint8) tensor's scale and zero point (per tensor,
// or per output channel on weights and biases) become its IR type's
// Quantization; an int8 operator becomes the registry op on quantized inputs
// with out_scale/out_zero_point from its output tensor, the form fold_qdq
// gives an ONNX QDQ model. Ops that only move values (PAD, STRIDED_SLICE,
// the layout transposes) move the integers, which keep the input's
// quantization (TFLite requires the output's to be the same); MEAN other
// than a plane's computes between a dequantize and a quantize.
#include "io/tflite/tflite_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "io/file_util.h"
#include "io/tflite/flatbuffer_view.h"
#include "io/tflite/tflite_schema.h"
#include "ir/error.h"
#include "ir/half.h"
#include "ir/limits.h"
#include "ir/names.h"
#include "ops/op.h"

namespace hybgen {
// A named namespace around the anonymous one: unity builds compile this file
// with other importers, whose helpers have the same names.
namespace tflite_import {
namespace {

// ---------------------------------------------------------------- reading

struct TflQuant {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int dim = 0;
};

struct TflTensor {
  std::string name;
  Shape shape;
  int type = 0;
  uint32_t buffer = 0;
  TflQuant quant;
  bool sparse = false;
  bool variable = false;
};

struct TflOp {
  int index = 0;
  int builtin = 0;
  std::string custom;
  std::vector<int32_t> inputs, outputs;
  uint8_t options_type = 0;
  std::optional<TableView> options;
};

struct Span {
  const uint8_t* data = nullptr;
  std::size_t size = 0;
};

struct TflModel {
  std::vector<TflTensor> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<TflOp> ops;
  std::vector<Span> buffers;
  std::string subgraph_name;
};

TflModel read_model(FlatbufferView& file) {
  if (file.size() < 8 || std::memcmp(file.data() + 4, tfl::kFileIdentifier, 4) != 0)
    file.fail("header", "no TFLite identifier \"TFL3\" at byte 4: not a TFLite model");
  TableView model = file.root("model");
  TflModel m;
  const uint32_t version = model.scalar<uint32_t>(tfl::model::kVersion, 0, "version");
  if (version != tfl::kSchemaVersion)
    model.fail("schema version " + std::to_string(version) + "; hybgen reads version " +
               std::to_string(tfl::kSchemaVersion));

  struct Code {
    int builtin;
    std::string custom;
  };
  std::vector<Code> codes;
  for (const TableView& c : model.tables(tfl::model::kOperatorCodes, "operator_codes", "operator code")) {
    const int deprecated = c.scalar<int8_t>(tfl::operator_code::kDeprecatedBuiltinCode, 0, "deprecated_builtin_code");
    const int builtin = c.scalar<int32_t>(tfl::operator_code::kBuiltinCode, 0, "builtin_code");
    // As TFLite reads it: the larger of the byte code and the int code.
    codes.push_back({std::max(deprecated, builtin), c.string(tfl::operator_code::kCustomCode, "custom_code")});
  }

  const std::vector<TableView> buffers = model.tables(tfl::model::kBuffers, "buffers", "buffer");
  for (const TableView& b : buffers) {
    Span s;
    std::tie(s.data, s.size) = b.bytes(tfl::buffer::kData, "data");
    const uint64_t offset = b.scalar<uint64_t>(tfl::buffer::kOffset, 0, "offset");
    const uint64_t size = b.scalar<uint64_t>(tfl::buffer::kSize, 0, "size");
    if (offset > 1) {  // data after the FlatBuffer (models above 2 GB), from the file's start
      if (offset > file.size() || size > file.size() - offset)
        b.fail("offset " + std::to_string(offset) + " and size " + std::to_string(size) + " lie outside the file (" +
               std::to_string(file.size()) + " bytes)");
      s.data = file.data() + offset;
      s.size = static_cast<std::size_t>(size);
    }
    m.buffers.push_back(s);
  }

  const std::vector<TableView> subgraphs = model.tables(tfl::model::kSubgraphs, "subgraphs", "subgraph");
  if (subgraphs.empty()) model.fail("the model has no subgraph");
  const TableView& sg = subgraphs[0];
  m.subgraph_name = sg.string(tfl::subgraph::kName, "name");
  for (const TableView& t : sg.tables(tfl::subgraph::kTensors, "tensors", "tensor")) {
    TflTensor tensor;
    tensor.name = t.string(tfl::tensor::kName, "name");
    for (int32_t d : t.scalars<int32_t>(tfl::tensor::kShape, "shape")) {
      if (d < 0) t.fail("shape has a negative or unknown dimension " + std::to_string(d));
      tensor.shape.push_back(d);
    }
    try {  // every element count fits, so later products of dims cannot overflow
      checked_tensor_bytes(tensor.shape, 1, "shape");
    } catch (const Error& e) {
      t.fail(e.what());
    }
    tensor.type = t.scalar<int8_t>(tfl::tensor::kType, 0, "type");
    tensor.buffer = t.scalar<uint32_t>(tfl::tensor::kBuffer, 0, "buffer");
    if (tensor.buffer >= m.buffers.size() && tensor.buffer != 0)
      t.fail("buffer " + std::to_string(tensor.buffer) + " is not among the model's " +
             std::to_string(m.buffers.size()) + " buffers");
    tensor.variable = t.scalar<uint8_t>(tfl::tensor::kIsVariable, 0, "is_variable") != 0;
    tensor.sparse = t.has(tfl::tensor::kSparsity);
    if (const std::optional<TableView> q = t.table(tfl::tensor::kQuantization, "quantization")) {
      if (q->scalar<uint8_t>(tfl::quantization::kDetailsType, 0, "details_type") != 0)
        q->fail("custom quantization details are not supported");
      tensor.quant.scale = q->scalars<float>(tfl::quantization::kScale, "scale");
      tensor.quant.zero_point = q->scalars<int64_t>(tfl::quantization::kZeroPoint, "zero_point");
      tensor.quant.dim = q->scalar<int32_t>(tfl::quantization::kQuantizedDimension, 0, "quantized_dimension");
    }
    m.tensors.push_back(std::move(tensor));
  }
  const auto n = static_cast<int32_t>(m.tensors.size());
  auto check_indices = [&](const TableView& where, const std::vector<int32_t>& v, const char* what, bool optional) {
    for (int32_t i : v)
      if (i >= n || (i < 0 && !(optional && i == -1)))
        where.fail(std::string(what) + " names tensor " + std::to_string(i) + " of " + std::to_string(n));
  };
  m.inputs = sg.scalars<int32_t>(tfl::subgraph::kInputs, "inputs");
  m.outputs = sg.scalars<int32_t>(tfl::subgraph::kOutputs, "outputs");
  check_indices(sg, m.inputs, "inputs", false);
  check_indices(sg, m.outputs, "outputs", false);
  int index = 0;
  for (const TableView& o : sg.tables(tfl::subgraph::kOperators, "operators", "operator")) {
    TflOp op;
    op.index = index++;
    const uint32_t code = o.scalar<uint32_t>(tfl::op::kOpcodeIndex, 0, "opcode_index");
    if (code >= codes.size())
      o.fail("opcode_index " + std::to_string(code) + " is not among the model's " + std::to_string(codes.size()) +
             " operator codes");
    op.builtin = codes[code].builtin;
    op.custom = codes[code].custom;
    op.inputs = o.scalars<int32_t>(tfl::op::kInputs, "inputs");
    op.outputs = o.scalars<int32_t>(tfl::op::kOutputs, "outputs");
    check_indices(o, op.inputs, "inputs", true);
    check_indices(o, op.outputs, "outputs", false);
    op.options_type = o.scalar<uint8_t>(tfl::op::kBuiltinOptionsType, 0, "builtin_options_type");
    op.options = o.table(tfl::op::kBuiltinOptions, "builtin_options");
    m.ops.push_back(std::move(op));
  }
  return m;
}

// ---------------------------------------------------------------- converting

// NHWC (TFLite) <-> NCHW (inside) for rank-4 shapes and axes.
Shape to_nchw_shape(const Shape& s) { return s.size() == 4 ? Shape{s[0], s[3], s[1], s[2]} : s; }
Shape to_nhwc_shape(const Shape& s) { return s.size() == 4 ? Shape{s[0], s[2], s[3], s[1]} : s; }
// TFLite's axis of a rank-4 NHWC value -> the NCHW axis.
int64_t nchw_axis(int64_t axis) {
  static const int64_t kMap[] = {0, 2, 3, 1};
  return kMap[axis];
}
// NHWC and NCHW hold a rank-4 value's elements in the same order.
bool same_order(const Shape& nhwc) { return nhwc.size() != 4 || nhwc[3] == 1 || nhwc[1] * nhwc[2] == 1; }

std::optional<DType> ir_dtype(int type) {
  switch (static_cast<tfl::TensorType>(type)) {
    case tfl::TensorType::kFloat32:
      return DType::kFloat32;
    case tfl::TensorType::kInt8:
      return DType::kInt8;
    case tfl::TensorType::kUInt8:
      return DType::kUInt8;
    case tfl::TensorType::kInt32:
      return DType::kInt32;
    default:
      return std::nullopt;
  }
}

// A value of the graph standing for a TFLite tensor; `nchw`: a rank-4 value
// held NCHW.
struct Value {
  std::string name;
  bool nchw = false;
};

class Converter {
 public:
  Converter(const TflModel& m, std::string source) : m_(m), source_(std::move(source)) {}

  Graph convert(const std::string& name);

 private:
  using Fn = void (Converter::*)(const TflOp&);
  static const std::map<int, Fn>& converters();

  void check_ops() const;
  void add_inputs();
  void add_outputs();
  void rename_value(const std::string& from, const std::string& to);

  // --- messages
  std::string op_where(const TflOp& op) const {
    return source_ + ": operator " + std::to_string(op.index) + " (" + tfl::builtin_operator_name(op.builtin) + ")";
  }
  std::string tensor_label(int t) const {
    return "tensor " + std::to_string(t) + " (" + quoted_name(m_.tensors[static_cast<std::size_t>(t)].name) + ")";
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + ": " + what); }

  // --- tensors
  const TflTensor& tensor(int t) const { return m_.tensors[static_cast<std::size_t>(t)]; }
  int input_index(const TflOp& op, std::size_t i) const {
    if (i >= op.inputs.size() || op.inputs[i] < 0) fail("input " + std::to_string(i) + " is missing");
    return op.inputs[i];
  }
  bool has_input(const TflOp& op, std::size_t i) const { return i < op.inputs.size() && op.inputs[i] >= 0; }
  const TflTensor& in_tensor(const TflOp& op, std::size_t i) const { return tensor(input_index(op, i)); }
  const TflTensor& out_tensor(const TflOp& op, std::size_t i = 0) const {
    if (i >= op.outputs.size()) fail("output " + std::to_string(i) + " is missing");
    return tensor(op.outputs[i]);
  }
  Span data_of(int t) const;
  bool is_constant(int t) const { return data_of(t).size != 0; }
  DType dtype_of(int t) const;
  // The tensor's quantization with its axis renumbered by `axis_map`
  // (TFLite's dimension -> the IR's); empty for float tensors.
  Quantization quantization_of(int t, const std::function<int(int)>& axis_map) const;
  bool quantized(int t) const {
    return !quantization_of(t, [](int d) { return d; }).empty();
  }
  std::vector<int64_t> int_constant(const TflOp& op, std::size_t i) const;
  // A constant tensor as a graph constant, its elements permuted: element
  // i of the result is element src(i) of the file's, the shape `shape`.
  std::string add_constant(int t, const Shape& shape, const std::function<int64_t(int64_t)>& src,
                           const std::function<int(int)>& axis_map, const std::string& suffix);

  // Input i as a graph value (a constant becomes a graph constant, rank-4
  // ones NCHW).
  Value in(const TflOp& op, std::size_t i);
  // Output i of the operator is `v`; checks its shape and type against the
  // tensor's.
  void bind(const TflOp& op, std::size_t i, const Value& v);

  // --- building
  std::string add(const std::string& op, Attrs attrs, const std::vector<std::string>& inputs,
                  const std::string& suffix);
  std::string unique(const std::string& base);
  // The output quantization attributes of an op computing into tensor t (for
  // an int8 op; none for float).
  Attrs out_quantization(int t, Attrs attrs) const;
  // f on x, through float when x is quantized: dequantize, f, quantize to the
  // quantization of `like`.
  std::string through_float(const std::string& x, const std::function<std::string(const std::string&)>& f,
                            const TensorType& like, const std::string& suffix);
  std::string transpose(const std::string& x, const std::vector<int64_t>& axes, const std::string& suffix);
  Value to_nhwc(const Value& v) { return v.nchw ? Value{transpose(v.name, {0, 2, 3, 1}, "nhwc"), false} : v; }
  // `v` as the tensor t's value: reshaped (with transposes where the orders
  // differ) to t's shape.
  Value reshape_to(const Value& v, int t);
  std::string activation(const std::string& x, int fused, const std::string& suffix);

  // --- operators
  void conv2d(const TflOp& op);
  void depthwise_conv2d(const TflOp& op);
  void convolution(const TflOp& op, bool depthwise);
  void fully_connected(const TflOp& op);
  void pool2d(const TflOp& op);
  void binary(const TflOp& op);
  void reshape(const TflOp& op);
  void softmax(const TflOp& op);
  void logistic(const TflOp& op);
  void quantize(const TflOp& op);
  void dequantize(const TflOp& op);
  void pad(const TflOp& op);
  void mean(const TflOp& op);
  void concatenation(const TflOp& op);
  void strided_slice(const TflOp& op);

  // Options of the type the operator must carry; nothing when absent (TFLite's
  // defaults apply).
  std::optional<TableView> options(const TflOp& op, uint8_t type) const {
    if (op.options_type == tfl::options_type::kNone || !op.options) return std::nullopt;
    if (op.options_type != type)
      fail("builtin_options has union type " + std::to_string(op.options_type) + ", expected " + std::to_string(type));
    return op.options;
  }

  const TflModel& m_;
  std::string source_;
  std::string where_;      // the operator being converted, for messages
  std::string node_name_;  // its IR nodes' base name
  Graph g_;
  std::set<std::string> names_;
  std::map<int, Value> values_;
};

const std::map<int, Converter::Fn>& Converter::converters() {
  static const std::map<int, Fn> table = {
      {tfl::builtin::kConv2D, &Converter::conv2d},
      {tfl::builtin::kDepthwiseConv2D, &Converter::depthwise_conv2d},
      {tfl::builtin::kFullyConnected, &Converter::fully_connected},
      {tfl::builtin::kAveragePool2D, &Converter::pool2d},
      {tfl::builtin::kMaxPool2D, &Converter::pool2d},
      {tfl::builtin::kAdd, &Converter::binary},
      {tfl::builtin::kMul, &Converter::binary},
      {tfl::builtin::kReshape, &Converter::reshape},
      {tfl::builtin::kSoftmax, &Converter::softmax},
      {tfl::builtin::kLogistic, &Converter::logistic},
      {tfl::builtin::kQuantize, &Converter::quantize},
      {tfl::builtin::kDequantize, &Converter::dequantize},
      {tfl::builtin::kPad, &Converter::pad},
      {tfl::builtin::kMean, &Converter::mean},
      {tfl::builtin::kConcatenation, &Converter::concatenation},
      {tfl::builtin::kStridedSlice, &Converter::strided_slice},
  };
  return table;
}

// Every operator the converter has no converter for, and every fused
// activation it cannot compute, in one Error.
void Converter::check_ops() const {
  std::map<std::string, std::vector<std::string>> unknown;  // op -> "#index"
  std::vector<std::string> problems;
  for (const TflOp& op : m_.ops) {
    const std::string label = "#" + std::to_string(op.index);
    if (op.builtin == tfl::builtin::kCustom) {
      unknown["custom operator " + quoted_name(op.custom)].push_back(label);
      continue;
    }
    if (!converters().count(op.builtin)) {
      unknown["operator " + tfl::builtin_operator_name(op.builtin)].push_back(label);
      continue;
    }
    // The fused activation, where the options table has one.
    uint16_t field = 0;
    switch (op.options_type) {
      case tfl::options_type::kConv2D:
        field = tfl::conv2d_options::kFusedActivation;
        break;
      case tfl::options_type::kDepthwiseConv2D:
        field = tfl::depthwise_options::kFusedActivation;
        break;
      case tfl::options_type::kPool2D:
        field = tfl::pool2d_options::kFusedActivation;
        break;
      case tfl::options_type::kFullyConnected:
        field = tfl::fully_connected_options::kFusedActivation;
        break;
      case tfl::options_type::kConcatenation:
        field = tfl::concatenation_options::kFusedActivation;
        break;
      case tfl::options_type::kAdd:
        field = tfl::add_options::kFusedActivation;
        break;
      case tfl::options_type::kMul:
        field = tfl::mul_options::kFusedActivation;
        break;
      default:
        break;
    }
    if (field && op.options) {
      const int act = op.options->scalar<int8_t>(field, 0, "fused_activation_function");
      if (act != 0 && act != 1 && act != 2 && act != 3)
        problems.push_back("operator " + label + " (" + tfl::builtin_operator_name(op.builtin) +
                           "): fused activation " + std::to_string(act) +
                           (act == 4   ? " (TANH)"
                            : act == 5 ? " (SIGN_BIT)"
                                       : "") +
                           " is not supported (NONE, RELU, RELU_N1_TO_1 and RELU6 are)");
    }
  }
  if (unknown.empty() && problems.empty()) return;
  std::vector<std::string> lines;
  for (const auto& [what, labels] : unknown) {
    const std::string list = first_items(labels);
    lines.push_back("unsupported " + what + " (" + std::to_string(labels.size()) +
                    (labels.size() == 1 ? " operator: " : " operators: ") + list + ")");
  }
  lines.insert(lines.end(), problems.begin(), problems.end());
  throw Error(source_ + ": " + std::to_string(lines.size()) + (lines.size() == 1 ? " problem" : " problems") +
              " before conversion:" + join_lines(lines));
}

Span Converter::data_of(int t) const {
  const uint32_t b = tensor(t).buffer;
  if (b == 0 || b >= m_.buffers.size()) return {};
  return m_.buffers[b];
}

DType Converter::dtype_of(int t) const {
  const std::optional<DType> d = ir_dtype(tensor(t).type);
  if (!d) fail(tensor_label(t) + " has type " + tfl::tensor_type_name(tensor(t).type) + ", which is not supported");
  return *d;
}

Quantization Converter::quantization_of(int t, const std::function<int(int)>& axis_map) const {
  const TflTensor& x = tensor(t);
  const DType d = dtype_of(t);
  if (d == DType::kFloat32 || x.quant.scale.empty()) return {};
  const TflQuant& q = x.quant;
  std::vector<int64_t> zp = q.zero_point;
  if (zp.empty()) zp.assign(q.scale.size(), 0);
  if (zp.size() != q.scale.size())
    fail(tensor_label(t) + " has " + std::to_string(q.scale.size()) + " scales and " + std::to_string(zp.size()) +
         " zero points");
  Quantization out;
  if (q.scale.size() == 1) {
    out = Quantization::per_tensor(q.scale[0], zp[0]);
  } else {
    // Old converters wrote a depthwise convolution's rank-1 bias with its
    // filter's quantized_dimension (3); a rank-1 tensor has one axis, which
    // TFLite Micro reads it along.
    int dim = q.dim;
    if (x.shape.size() == 1 && static_cast<int64_t>(q.scale.size()) == x.shape[0]) dim = 0;
    if (dim < 0 || dim >= static_cast<int>(x.shape.size()))
      fail(tensor_label(t) + " has quantized_dimension " + std::to_string(q.dim) + " for rank " +
           std::to_string(x.shape.size()));
    out = Quantization::per_axis(axis_map(dim), q.scale, zp);
  }
  return out;
}

std::vector<int64_t> Converter::int_constant(const TflOp& op, std::size_t i) const {
  const int t = input_index(op, i);
  const Span s = data_of(t);
  if (!s.size) fail("input " + std::to_string(i) + ", " + tensor_label(t) + ", must be a constant");
  const int64_t n = num_elements(tensor(t).shape);
  const auto type = static_cast<tfl::TensorType>(tensor(t).type);
  const std::size_t size = type == tfl::TensorType::kInt32 ? 4 : type == tfl::TensorType::kInt64 ? 8 : 0;
  if (!size) fail(tensor_label(t) + " must be INT32 or INT64, not " + tfl::tensor_type_name(tensor(t).type));
  if (s.size != static_cast<std::size_t>(n) * size)
    fail(tensor_label(t) + " holds " + std::to_string(s.size) + " bytes for " + std::to_string(n) + " elements");
  std::vector<int64_t> out(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    if (size == 4) {
      int32_t v;
      std::memcpy(&v, s.data + k * 4, 4);
      out[static_cast<std::size_t>(k)] = v;
    } else {
      std::memcpy(&out[static_cast<std::size_t>(k)], s.data + k * 8, 8);
    }
  }
  return out;
}

std::string Converter::add_constant(int t, const Shape& shape, const std::function<int64_t(int64_t)>& src,
                                    const std::function<int(int)>& axis_map, const std::string& suffix) {
  const TflTensor& x = tensor(t);
  const Span s = data_of(t);
  Constant c;
  c.type.shape = shape;
  c.type.dtype = dtype_of(t);
  c.type.quantization = quantization_of(t, axis_map);
  const std::size_t size = dtype_size(c.type.dtype);
  const uint64_t n = checked_tensor_bytes(x.shape, size, where_ + ": " + tensor_label(t)) / size;
  if (s.size != n * size)
    fail(tensor_label(t) + " holds " + std::to_string(s.size) + " bytes for " + std::to_string(n) + " elements of " +
         tfl::tensor_type_name(x.type));
  try {
    check_quantization(c.type, tensor_label(t));
  } catch (const Error& e) {
    fail(e.what());
  }
  c.data.resize(s.size);
  for (uint64_t i = 0; i < n; ++i)
    std::memcpy(c.data.data() + i * size, s.data + static_cast<std::size_t>(src(static_cast<int64_t>(i))) * size, size);
  const std::string name = unique(x.name.empty() ? node_name_ + "/" + suffix : x.name);
  g_.add_constant(name, std::move(c));
  return name;
}

std::string Converter::unique(const std::string& base) {
  std::string name = base.empty() ? "tensor" : base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

std::string Converter::add(const std::string& op, Attrs attrs, const std::vector<std::string>& inputs,
                           const std::string& suffix) {
  const OpDef* def = lookup_op(op);
  if (!def) fail("no registry op " + quoted_name(op));
  if (g_.nodes.size() >= limits::kMaxGraphNodes)
    fail("the graph has more than " + std::to_string(limits::kMaxGraphNodes) + " nodes");
  Node node;
  node.name = unique(suffix.empty() ? node_name_ : node_name_ + "/" + suffix);
  node.op = def->name;
  std::vector<TensorType> in;
  for (const auto& v : inputs) in.push_back(g_.type(v));
  std::vector<TensorType> out;
  try {
    node.attrs = normalize_attrs(*def, attrs);
    if (const std::string wrong = input_count_mismatch(*def, node.attrs, static_cast<int>(inputs.size()));
        !wrong.empty())
      throw Error(wrong);
    out = def->infer(node.attrs, in);
    if (out.size() != 1) throw Error("shape rule gave " + std::to_string(out.size()) + " outputs");
    checked_tensor_bytes(out[0].shape, 4, "output");
  } catch (const Error& e) {
    fail(def->name + ": " + e.what());
  }
  node.inputs = inputs;
  node.outputs = {node.name};
  g_.types[node.name] = out[0];
  g_.nodes.push_back(std::move(node));
  return g_.nodes.back().name;
}

Attrs Converter::out_quantization(int t, Attrs attrs) const {
  const Quantization q = quantization_of(t, [](int d) { return d; });
  if (q.empty()) return attrs;
  if (q.axis) fail(tensor_label(t) + " is quantized per axis; an activation must be quantized per tensor");
  attrs.set("out_scale", static_cast<double>(q.scale[0]));
  attrs.set("out_zero_point", q.zero_point[0]);
  return attrs;
}

std::string Converter::through_float(const std::string& x, const std::function<std::string(const std::string&)>& f,
                                     const TensorType& like, const std::string& suffix) {
  if (g_.type(x).quantization.empty()) return f(x);
  if (like.quantization.empty() || like.quantization.axis)
    fail("the input is " + g_.type(x).str() + " but the output is " + like.str() +
         ": an int8 operator's output must be quantized per tensor");
  const std::string dq = add("dequantize", {}, {x}, suffix + "_dequantize");
  const std::string y = f(dq);
  Attrs a;
  a.set("out_scale", static_cast<double>(like.quantization.scale.at(0)));
  a.set("out_zero_point", like.quantization.zero_point.at(0));
  a.set("out_dtype", std::string(like.dtype == DType::kUInt8 ? "uint8" : "int8"));
  return add("quantize", a, {y}, suffix + "_quantize");
}

std::string Converter::transpose(const std::string& x, const std::vector<int64_t>& axes, const std::string& suffix) {
  Attrs a;
  a.set("axes", axes);
  return add("transpose", a, {x}, suffix);
}

Value Converter::reshape_to(const Value& v, int t) {
  const Shape& target = tensor(t).shape;  // NHWC
  const Shape now = g_.type(v.name).shape;
  if (v.nchw && to_nhwc_shape(now) == target) return v;
  Value x = v;
  if (x.nchw && !same_order(to_nhwc_shape(now))) x = to_nhwc(x);
  const bool out4 = target.size() == 4;
  const Shape direct = out4 && same_order(target) ? to_nchw_shape(target) : target;
  std::string y = x.name;
  if (g_.type(y).shape != direct) {
    Attrs a;
    a.set("shape", direct);
    y = add("Reshape", a, {y}, "reshape");
  }
  if (out4 && !same_order(target)) return {transpose(y, {0, 3, 1, 2}, "nchw"), true};
  return {y, out4};
}

std::string Converter::activation(const std::string& x, int fused, const std::string& suffix) {
  Attrs a;
  switch (static_cast<tfl::Activation>(fused)) {
    case tfl::Activation::kNone:
      return x;
    case tfl::Activation::kRelu:
      a.set("act_type", std::string("relu"));
      return add("Activation", a, {x}, suffix);
    case tfl::Activation::kRelu6:
      a.set("a_min", 0.0);
      a.set("a_max", 6.0);
      return add("clip", a, {x}, suffix);
    case tfl::Activation::kReluN1To1:
      a.set("a_min", -1.0);
      a.set("a_max", 1.0);
      return add("clip", a, {x}, suffix);
    default:
      fail("fused activation " + std::to_string(fused) + " is not supported");
  }
}

Value Converter::in(const TflOp& op, std::size_t i) {
  const int t = input_index(op, i);
  auto it = values_.find(t);
  if (it != values_.end()) return it->second;
  if (!is_constant(t))
    fail("input " + std::to_string(i) + ", " + tensor_label(t) + ", is computed by no operator before it");
  const Shape& s = tensor(t).shape;
  Value v;
  if (s.size() == 4) {  // NHWC -> NCHW
    const Shape n = to_nchw_shape(s);
    v.name = add_constant(
        t, n,
        [&](int64_t i) {  // i over [N, C, H, W]
          const int64_t w = i % n[3], h = i / n[3] % n[2], c = i / (n[3] * n[2]) % n[1], b = i / (n[3] * n[2] * n[1]);
          return ((b * s[1] + h) * s[2] + w) * s[3] + c;
        },
        [](int d) { return static_cast<int>(nchw_axis(d)); }, "const");
    v.nchw = true;
  } else {
    v.name = add_constant(
        t, s, [](int64_t i) { return i; }, [](int d) { return d; }, "const");
  }
  values_[t] = v;
  return v;
}

void Converter::bind(const TflOp& op, std::size_t i, const Value& v) {
  const int t = op.outputs.at(i);
  const TflTensor& x = tensor(t);
  const TensorType& got = g_.type(v.name);
  const Shape want = v.nchw ? to_nchw_shape(x.shape) : x.shape;
  if (got.shape != want)
    fail("computes shape " + shape_str(v.nchw ? to_nhwc_shape(got.shape) : got.shape) + " for output " +
         tensor_label(t) + ", whose shape is " + shape_str(x.shape));
  const DType want_dtype = dtype_of(t);
  const Quantization q = quantization_of(t, [](int d) { return d; });
  if (got.dtype != want_dtype || got.quantization != q)
    fail("computes " + got.str() + " for output " + tensor_label(t) + ", which is " +
         TensorType{want, want_dtype, q}.str());
  if (values_.count(t)) fail("output " + tensor_label(t) + " is written by two operators");
  values_[t] = v;
}

// ---------------------------------------------------------------- operators

// The padding TFLite's SAME and VALID give one spatial axis.
struct AxisPad {
  int64_t begin = 0, end = 0;
};
AxisPad same_or_valid(bool same, int64_t in, int64_t kernel, int64_t stride, int64_t dilation) {
  if (!same) return {};
  const int64_t effective = (kernel - 1) * dilation + 1;
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + effective - in, 0);
  return {total / 2, total - total / 2};
}

void Converter::conv2d(const TflOp& op) { convolution(op, false); }
void Converter::depthwise_conv2d(const TflOp& op) { convolution(op, true); }

void Converter::convolution(const TflOp& op, bool depthwise) {
  const Value x = in(op, 0);
  const Shape& xs = in_tensor(op, 0).shape;  // NHWC
  const int wt = input_index(op, 1);
  const Shape& ws = tensor(wt).shape;  // OHWI, or [1, kh, kw, C*M]
  if (xs.size() != 4 || ws.size() != 4)
    fail("input and filter must be rank 4 (NHWC, OHWI), not " + shape_str(xs) + " and " + shape_str(ws));
  if (!is_constant(wt)) fail("the filter, " + tensor_label(wt) + ", must be a constant");
  const bool q = quantized(input_index(op, 0));
  if (!q && dtype_of(wt) != DType::kFloat32)
    fail("the filter is " + tfl::tensor_type_name(tensor(wt).type) +
         " on a float input (dynamic-range quantization), which is not supported");
  namespace co = tfl::conv2d_options;
  namespace dw = tfl::depthwise_options;
  const auto o = options(op, depthwise ? tfl::options_type::kDepthwiseConv2D : tfl::options_type::kConv2D);
  auto get = [&](uint16_t field, int32_t fallback, const char* name) {
    return o ? o->scalar<int32_t>(field, fallback, name) : fallback;
  };
  const bool same = (o ? o->scalar<int8_t>(co::kPadding, 0, "padding") : 0) == 0;
  const int64_t sw = get(co::kStrideW, 1, "stride_w"), sh = get(co::kStrideH, 1, "stride_h");
  const int64_t dw_ = get(depthwise ? dw::kDilationW : co::kDilationW, 1, "dilation_w_factor");
  const int64_t dh = get(depthwise ? dw::kDilationH : co::kDilationH, 1, "dilation_h_factor");
  const int act =
      o ? o->scalar<int8_t>(depthwise ? dw::kFusedActivation : co::kFusedActivation, 0, "fused_activation_function")
        : 0;
  if (sw < 1 || sh < 1 || dw_ < 1 || dh < 1)
    fail("strides " + std::to_string(sh) + "x" + std::to_string(sw) + " and dilations " + std::to_string(dh) + "x" +
         std::to_string(dw_) + " must be positive");
  const int64_t kh = ws[1], kw = ws[2];
  int64_t filters, groups;
  Shape w_shape;
  std::function<int64_t(int64_t)> src;
  if (depthwise) {  // [1, kh, kw, C*M] -> [C*M, 1, kh, kw]; output channel c*M + m reads input channel c
    filters = ws[3];
    groups = xs[3];
    if (ws[0] != 1 || groups == 0 || filters % groups != 0)
      fail("depthwise filter " + shape_str(ws) + " does not fit input channels " + std::to_string(xs[3]));
    w_shape = {filters, 1, kh, kw};
    src = [=](int64_t i) {
      const int64_t x_ = i % kw, y = i / kw % kh, f = i / (kw * kh);
      return (y * kw + x_) * filters + f;
    };
  } else {  // OHWI -> OIHW
    filters = ws[0];
    const int64_t ci = ws[3];
    if (ci == 0 || xs[3] % ci != 0)
      fail("filter " + shape_str(ws) + " does not fit input channels " + std::to_string(xs[3]));
    groups = xs[3] / ci;
    w_shape = {filters, ci, kh, kw};
    src = [=](int64_t i) {
      const int64_t x_ = i % kw, y = i / kw % kh, c = i / (kw * kh) % ci, f = i / (kw * kh * ci);
      return ((f * kh + y) * kw + x_) * ci + c;
    };
  }
  const std::string w = add_constant(
      wt, w_shape, src, [depthwise](int d) { return depthwise ? (d == 3 ? 0 : d) : d; }, "filter");
  std::vector<std::string> inputs = {x.name, w};
  const bool bias = has_input(op, 2);
  if (bias) {
    const int bt = input_index(op, 2);
    if (!is_constant(bt)) fail("the bias, " + tensor_label(bt) + ", must be a constant");
    inputs.push_back(add_constant(
        bt, tensor(bt).shape, [](int64_t i) { return i; }, [](int d) { return d; }, "bias"));
  }
  const AxisPad ph = same_or_valid(same, xs[1], kh, sh, dh), pw = same_or_valid(same, xs[2], kw, sw, dw_);
  Attrs a;
  a.set("kernel", std::vector<int64_t>{kh, kw});
  a.set("num_filter", filters);
  a.set("stride", std::vector<int64_t>{sh, sw});
  a.set("dilate", std::vector<int64_t>{dh, dw_});
  a.set("pad", std::vector<int64_t>{ph.begin, pw.begin});
  a.set("pad_end", std::vector<int64_t>{ph.end, pw.end});
  a.set("num_group", groups);
  a.set("no_bias", !bias);
  const std::string y = add("Convolution", out_quantization(op.outputs.at(0), a), inputs, act ? "conv" : "");
  bind(op, 0, {activation(y, act, ""), true});
}

void Converter::fully_connected(const TflOp& op) {
  Value x = in(op, 0);
  const int xt = input_index(op, 0), wt = input_index(op, 1);
  const Shape& xs = tensor(xt).shape;
  const Shape& ws = tensor(wt).shape;
  if (ws.size() != 2) fail("the weights must be rank 2 [units, inputs], not " + shape_str(ws));
  if (!is_constant(wt)) fail("the weights, " + tensor_label(wt) + ", must be a constant");
  const bool q = quantized(xt);
  if (!q && dtype_of(wt) != DType::kFloat32)
    fail("the weights are " + tfl::tensor_type_name(tensor(wt).type) +
         " on a float input (dynamic-range quantization), which is not supported");
  const auto o = options(op, tfl::options_type::kFullyConnected);
  namespace fo = tfl::fully_connected_options;
  const int act = o ? o->scalar<int8_t>(fo::kFusedActivation, 0, "fused_activation_function") : 0;
  if (o && o->scalar<int8_t>(fo::kWeightsFormat, 0, "weights_format") != 0)
    fail("weights_format " + std::to_string(o->scalar<int8_t>(fo::kWeightsFormat, 0, "weights_format")) +
         " (shuffled) is not supported");
  const int64_t units = ws[0], depth = ws[1];
  const int64_t n = num_elements(xs);
  if (depth == 0 || xs.empty() || n % depth != 0)
    fail("input " + shape_str(xs) + " does not flatten into rows of " + std::to_string(depth));
  // TFLite reads the input as rows of `depth` in memory order (NHWC).
  std::function<int64_t(int64_t)> src = [](int64_t i) { return i; };
  const int64_t rest = n / xs[0];
  if (x.nchw && !same_order(xs)) {
    if (rest == depth) {  // one row per batch item: permute the weights' columns to read NCHW
      const int64_t h = xs[1], w = xs[2], c = xs[3];
      src = [=](int64_t i) {
        const int64_t u = i / depth, k = i % depth;  // k over (c, h, w)
        const int64_t ww = k % w, hh = k / w % h, cc = k / (w * h);
        return u * depth + (hh * w + ww) * c + cc;
      };
    } else {
      x = to_nhwc(x);
    }
  }
  std::string data = x.name;
  if (rest != depth) {
    Attrs r;
    r.set("shape", std::vector<int64_t>{n / depth, depth});
    data = add("Reshape", r, {data}, "rows");
  }
  std::vector<std::string> inputs = {data, add_constant(
                                               wt, ws, src, [](int d) { return d; }, "weights")};
  const bool bias = has_input(op, 2);
  if (bias) {
    const int bt = input_index(op, 2);
    if (!is_constant(bt)) fail("the bias, " + tensor_label(bt) + ", must be a constant");
    inputs.push_back(add_constant(
        bt, tensor(bt).shape, [](int64_t i) { return i; }, [](int d) { return d; }, "bias"));
  }
  Attrs a;
  a.set("num_hidden", units);
  a.set("no_bias", !bias);
  a.set("flatten", true);
  std::string y = add("FullyConnected", out_quantization(op.outputs.at(0), a), inputs, act ? "dense" : "");
  y = activation(y, act, "");
  bind(op, 0, reshape_to({y, false}, op.outputs.at(0)));
}

void Converter::pool2d(const TflOp& op) {
  const Value x = in(op, 0);
  const Shape& xs = in_tensor(op, 0).shape;
  if (xs.size() != 4) fail("input must be rank 4 (NHWC), not " + shape_str(xs));
  const auto o = options(op, tfl::options_type::kPool2D);
  if (!o) fail("has no Pool2DOptions");
  namespace po = tfl::pool2d_options;
  const bool same = o->scalar<int8_t>(po::kPadding, 0, "padding") == 0;
  const int64_t sw = o->scalar<int32_t>(po::kStrideW, 0, "stride_w"),
                sh = o->scalar<int32_t>(po::kStrideH, 0, "stride_h");
  const int64_t fw = o->scalar<int32_t>(po::kFilterWidth, 0, "filter_width");
  const int64_t fh = o->scalar<int32_t>(po::kFilterHeight, 0, "filter_height");
  const int act = o->scalar<int8_t>(po::kFusedActivation, 0, "fused_activation_function");
  if (sw < 1 || sh < 1 || fw < 1 || fh < 1)
    fail("filter " + std::to_string(fh) + "x" + std::to_string(fw) + " and strides " + std::to_string(sh) + "x" +
         std::to_string(sw) + " must be positive");
  const AxisPad ph = same_or_valid(same, xs[1], fh, sh, 1), pw = same_or_valid(same, xs[2], fw, sw, 1);
  Attrs a;
  a.set("kernel", std::vector<int64_t>{fh, fw});
  a.set("stride", std::vector<int64_t>{sh, sw});
  a.set("pad", std::vector<int64_t>{ph.begin, pw.begin});
  a.set("pad_end", std::vector<int64_t>{ph.end, pw.end});
  a.set("pool_type", std::string(op.builtin == tfl::builtin::kMaxPool2D ? "max" : "avg"));
  a.set("count_include_pad", false);  // TFLite averages over the window's part inside the input
  const std::string y = add("Pooling", a, {x.name}, act ? "pool" : "");
  bind(op, 0, {activation(y, act, ""), true});
}

void Converter::binary(const TflOp& op) {
  const bool add_op = op.builtin == tfl::builtin::kAdd;
  const auto o = options(op, add_op ? tfl::options_type::kAdd : tfl::options_type::kMul);
  const int act =
      o ? o->scalar<int8_t>(add_op ? tfl::add_options::kFusedActivation : tfl::mul_options::kFusedActivation, 0,
                            "fused_activation_function")
        : 0;
  std::vector<Value> v = {in(op, 0), in(op, 1)};
  const Shape& out = out_tensor(op).shape;
  if (out.size() == 4) {
    // A lower-rank operand broadcasts against NHWC's trailing axes: made rank
    // 4 in NHWC, then NCHW.
    for (std::size_t k = 0; k < 2; ++k) {
      const Shape& s = in_tensor(op, k).shape;
      if (v[k].nchw || s.size() == 4) continue;
      Shape s4(4 - s.size(), 1);
      s4.insert(s4.end(), s.begin(), s.end());
      Attrs r;
      r.set("shape", same_order(s4) ? to_nchw_shape(s4) : s4);
      std::string y = add("Reshape", r, {v[k].name}, "rank4_" + std::to_string(k));
      if (!same_order(s4)) y = transpose(y, {0, 3, 1, 2}, "nchw_" + std::to_string(k));
      v[k] = {y, true};
    }
  }
  const std::string y = add(add_op ? "broadcast_add" : "broadcast_mul", out_quantization(op.outputs.at(0), {}),
                            {v[0].name, v[1].name}, act ? (add_op ? "add" : "mul") : "");
  bind(op, 0, {activation(y, act, ""), out.size() == 4});
}

void Converter::reshape(const TflOp& op) { bind(op, 0, reshape_to(in(op, 0), op.outputs.at(0))); }

void Converter::softmax(const TflOp& op) {
  const Value x = in(op, 0);
  const auto o = options(op, tfl::options_type::kSoftmax);
  const float beta = o ? o->scalar<float>(tfl::softmax_options::kBeta, 0.0f, "beta") : 1.0f;
  if (!(beta > 0) || !std::isfinite(beta)) fail("beta " + std::to_string(beta) + " must be positive");
  Attrs a;
  a.set("axis", int64_t{x.nchw ? 1 : -1});  // TFLite's last axis
  a.set("temperature", 1.0 / static_cast<double>(beta));
  bind(op, 0, {add("softmax", out_quantization(op.outputs.at(0), a), {x.name}, ""), x.nchw});
}

void Converter::logistic(const TflOp& op) {
  const Value x = in(op, 0);
  Attrs a;
  a.set("act_type", std::string("sigmoid"));
  bind(op, 0, {add("Activation", out_quantization(op.outputs.at(0), a), {x.name}, ""), x.nchw});
}

void Converter::quantize(const TflOp& op) {
  const Value x = in(op, 0);
  const int t = op.outputs.at(0);
  const Quantization q = quantization_of(t, [](int d) { return d; });
  if (q.empty() || q.axis) fail("output " + tensor_label(t) + " must be quantized per tensor");
  std::string data = x.name;
  if (!g_.type(data).quantization.empty()) data = add("dequantize", {}, {data}, "dequantize");  // a requantization
  Attrs a;
  a.set("out_scale", static_cast<double>(q.scale[0]));
  a.set("out_zero_point", q.zero_point[0]);
  a.set("out_dtype", std::string(dtype_of(t) == DType::kUInt8 ? "uint8" : "int8"));
  bind(op, 0, {add("quantize", a, {data}, ""), x.nchw});
}

void Converter::dequantize(const TflOp& op) {
  const int t = input_index(op, 0);
  if (!is_constant(t)) {
    const Value x = in(op, 0);
    bind(op, 0, {add("dequantize", {}, {x.name}, ""), x.nchw});
    return;
  }
  // A constant (float16 weights, int8 ones): its float32 values at import.
  const TflTensor& x = tensor(t);
  const Span s = data_of(t);
  const int64_t n = static_cast<int64_t>(checked_tensor_bytes(x.shape, 4, where_ + ": " + tensor_label(t)) / 4);
  const auto type = static_cast<tfl::TensorType>(x.type);
  if (s.size != static_cast<std::size_t>(n) * (type == tfl::TensorType::kFloat16 ? 2 : 1))
    fail(tensor_label(t) + " holds " + std::to_string(s.size) + " bytes for " + std::to_string(n) + " elements of " +
         tfl::tensor_type_name(x.type));
  std::vector<float> values(static_cast<std::size_t>(n));
  if (type == tfl::TensorType::kFloat16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, s.data + i * 2, 2);
      values[static_cast<std::size_t>(i)] = half_to_float(h);
    }
  } else if (type == tfl::TensorType::kInt8 || type == tfl::TensorType::kUInt8) {
    const Quantization q = quantization_of(t, [](int d) { return d; });
    if (q.empty()) fail(tensor_label(t) + " has no quantization");
    int64_t inner = 1;
    if (q.axis)
      for (std::size_t d = static_cast<std::size_t>(*q.axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    for (int64_t i = 0; i < n; ++i) {
      const std::size_t k =
          q.axis ? static_cast<std::size_t>(i / inner % x.shape[static_cast<std::size_t>(*q.axis)]) : 0;
      const int64_t v = type == tfl::TensorType::kInt8 ? static_cast<int8_t>(s.data[i]) : s.data[i];
      values[static_cast<std::size_t>(i)] = static_cast<float>(v - q.zero_point[k]) * q.scale[k];
    }
  } else {
    fail("constant input " + tensor_label(t) + " of type " + tfl::tensor_type_name(x.type) + " is not supported");
  }
  const Shape& shape = x.shape;
  Constant c;
  Value v;
  if (shape.size() == 4) {
    const Shape nc = to_nchw_shape(shape);
    std::vector<float> p(values.size());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t w = i % nc[3], h = i / nc[3] % nc[2], ch = i / (nc[3] * nc[2]) % nc[1],
                    b = i / (nc[3] * nc[2] * nc[1]);
      p[static_cast<std::size_t>(i)] =
          values[static_cast<std::size_t>(((b * shape[1] + h) * shape[2] + w) * shape[3] + ch)];
    }
    c = Constant::f32(nc, p);
    v.nchw = true;
  } else {
    c = Constant::f32(shape, values);
  }
  v.name = unique(out_tensor(op).name.empty() ? node_name_ : out_tensor(op).name);
  g_.add_constant(v.name, std::move(c));
  bind(op, 0, v);
}

void Converter::pad(const TflOp& op) {
  const Value x = in(op, 0);
  const Shape& xs = in_tensor(op, 0).shape;
  const std::vector<int64_t> p = int_constant(op, 1);
  if (p.size() != 2 * xs.size())
    fail("paddings has " + std::to_string(p.size()) + " values for rank " + std::to_string(xs.size()));
  std::vector<int64_t> width(p.size());
  for (std::size_t d = 0; d < xs.size(); ++d) {
    const std::size_t to = x.nchw ? static_cast<std::size_t>(nchw_axis(static_cast<int64_t>(d))) : d;
    width[2 * to] = p[2 * d];
    width[2 * to + 1] = p[2 * d + 1];
  }
  // TFLite pads an int8 tensor with its zero point: the real 0 quantized,
  // which Pad's constant_value 0 is.
  Attrs a;
  a.set("pad_width", width);
  const std::string y = add("Pad", a, {x.name}, "");
  bind(op, 0, {y, x.nchw});
}

void Converter::mean(const TflOp& op) {
  const Value x = in(op, 0);
  const int xt = input_index(op, 0), yt = op.outputs.at(0);
  const Shape& xs = tensor(xt).shape;
  std::vector<int64_t> axes;
  for (int64_t a : int_constant(op, 1)) {
    if (a < -static_cast<int64_t>(xs.size()) || a >= static_cast<int64_t>(xs.size()))
      fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(xs.size()));
    if (a < 0) a += static_cast<int64_t>(xs.size());
    axes.push_back(x.nchw ? nchw_axis(a) : a);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const TensorType xt_ir = g_.type(x.name);
  const Quantization yq = quantization_of(yt, [](int d) { return d; });
  std::string y;
  if (x.nchw && axes == std::vector<int64_t>{2, 3} && !xt_ir.quantization.empty() && xt_ir.quantization == yq) {
    // int8, the plane's mean at the input's quantization: a global average
    // pooling in integers.
    Attrs a;
    a.set("pool_type", std::string("avg"));
    a.set("global_pool", true);
    y = add("Pooling", a, {x.name}, "pool");
  } else {
    const TensorType like{{}, dtype_of(yt), yq};
    y = through_float(
        x.name,
        [&](const std::string& v) {
          Attrs a;
          a.set("axis", axes);
          a.set("keepdims", true);
          return add("mean", a, {v}, "mean");
        },
        like, "mean");
  }
  bind(op, 0, reshape_to({y, x.nchw}, yt));
}

void Converter::concatenation(const TflOp& op) {
  const auto o = options(op, tfl::options_type::kConcatenation);
  int64_t axis = o ? o->scalar<int32_t>(tfl::concatenation_options::kAxis, 0, "axis") : 0;
  const int act =
      o ? o->scalar<int8_t>(tfl::concatenation_options::kFusedActivation, 0, "fused_activation_function") : 0;
  const Shape& out = out_tensor(op).shape;
  const auto rank = static_cast<int64_t>(out.size());
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  if (op.inputs.empty()) fail("has no inputs");
  std::vector<std::string> inputs;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const Value v = in(op, i);
    if (v.nchw != (rank == 4)) fail("input " + std::to_string(i) + " has another rank than the output");
    inputs.push_back(v.name);
  }
  Attrs a;
  a.set("dim", rank == 4 ? nchw_axis(axis) : axis);
  const std::string y = add("Concat", out_quantization(op.outputs.at(0), a), inputs, act ? "concat" : "");
  bind(op, 0, {activation(y, act, ""), rank == 4});
}

void Converter::strided_slice(const TflOp& op) {
  const Value x = in(op, 0);
  const Shape& xs = in_tensor(op, 0).shape;
  const std::vector<int64_t> begin = int_constant(op, 1), end = int_constant(op, 2), strides = int_constant(op, 3);
  const auto rank = xs.size();
  if (begin.size() != rank || end.size() != rank || strides.size() != rank)
    fail("begin, end and strides must have one value per input axis (" + std::to_string(rank) + ")");
  const auto o = options(op, tfl::options_type::kStridedSlice);
  namespace so = tfl::strided_slice_options;
  auto mask = [&](uint16_t field, const char* name) { return o ? o->scalar<int32_t>(field, 0, name) : 0; };
  const int32_t begin_mask = mask(so::kBeginMask, "begin_mask"), end_mask = mask(so::kEndMask, "end_mask");
  const int32_t shrink = mask(so::kShrinkAxisMask, "shrink_axis_mask");
  if (mask(so::kEllipsisMask, "ellipsis_mask") || mask(so::kNewAxisMask, "new_axis_mask"))
    fail("ellipsis_mask and new_axis_mask are not supported");
  const bool offset = o && o->scalar<uint8_t>(so::kOffset, 0, "offset");
  std::vector<int64_t> b(rank), e(rank), s(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const int64_t dim = xs[d];
    if (strides[d] <= 0)
      fail("stride " + std::to_string(strides[d]) + " on axis " + std::to_string(d) +
           ": only positive strides are supported");
    auto clamp = [&](int64_t v) { return std::min(std::max(v < 0 ? v + dim : v, int64_t{0}), dim); };
    int64_t lo = (begin_mask >> d & 1) ? 0 : clamp(begin[d]);
    int64_t hi = (end_mask >> d & 1) ? dim : clamp(offset ? begin[d] + end[d] : end[d]);
    int64_t step = strides[d];
    if (shrink >> d & 1) {
      lo = clamp(begin[d]);
      hi = lo + 1;
      step = 1;
      if (lo >= dim)
        fail("axis " + std::to_string(d) + " shrinks at index " + std::to_string(begin[d]) + ", outside " +
             std::to_string(dim));
    }
    if (hi <= lo)
      fail("axis " + std::to_string(d) + " selects nothing (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
    const std::size_t to = x.nchw ? static_cast<std::size_t>(nchw_axis(static_cast<int64_t>(d))) : d;
    b[to] = lo;
    e[to] = hi;
    s[to] = step;
  }
  Attrs a;
  a.set("begin", b);
  a.set("end", e);
  a.set("step", s);
  const std::string y = add("slice", a, {x.name}, "slice");
  bind(op, 0, reshape_to({y, x.nchw}, op.outputs.at(0)));
}

// ---------------------------------------------------------------- the graph

void Converter::add_inputs() {
  where_ = source_;
  for (int32_t t : m_.inputs) {
    const TflTensor& x = tensor(t);
    if (is_constant(t)) continue;
    const DType d = dtype_of(t);
    const Quantization q = quantization_of(t, [](int dim) { return dim; });
    if (d == DType::kInt32 || (d != DType::kFloat32 && (q.empty() || q.axis)))
      fail("input " + tensor_label(t) + " of type " + tfl::tensor_type_name(x.type) +
           " is not supported (float32, or int8/uint8 quantized per tensor)");
    try {
      checked_tensor_bytes(x.shape, sizeof(float), "input " + tensor_label(t));
      check_quantization(TensorType{x.shape, d, q}, "input " + tensor_label(t));
    } catch (const Error& e) {
      fail(e.what());
    }
    // Graph inputs are float32: an int8 input takes the real values its
    // integers stand for, quantized here at the tensor's own parameters
    // (which gives back the same integers).
    const std::string name = unique(x.name.empty() ? "input" : x.name);
    g_.add_input(name, TensorType{x.shape, DType::kFloat32});
    node_name_ = name;
    // Quantized before the transpose to NCHW, which then moves bytes: the
    // arena holds no float32 copy of the input.
    Value v{name, x.shape.size() == 4};
    if (!q.empty()) {
      Attrs a;
      a.set("out_scale", static_cast<double>(q.scale[0]));
      a.set("out_zero_point", q.zero_point[0]);
      a.set("out_dtype", std::string(d == DType::kUInt8 ? "uint8" : "int8"));
      v.name = add("quantize", a, {v.name}, "quantize");
    }
    if (v.nchw) v.name = transpose(v.name, {0, 3, 1, 2}, "nchw");
    values_[t] = v;
  }
}

void Converter::add_outputs() {
  where_ = source_;
  for (int32_t t : m_.outputs) {
    auto it = values_.find(t);
    if (it == values_.end()) fail("output " + tensor_label(t) + " is computed by no operator");
    Value v = it->second;
    node_name_ = tensor(t).name.empty() ? "output" : tensor(t).name;
    // Graph outputs are float32: an int8 output gives the real values.
    if (!g_.type(v.name).quantization.empty()) v.name = add("dequantize", {}, {v.name}, "dequantize");
    if (v.nchw) v = to_nhwc(v);
    if (g_.is_input(v.name) || g_.is_constant(v.name) || g_.is_output(v.name)) {
      Attrs a;
      a.set("shape", tensor(t).shape);
      v.name = add("Reshape", a, {v.name}, "output");  // an output of its own: a copy
    }
    // The output keeps the tensor's name where a transpose or copy made it
    // another value (the value that had the name takes another).
    const std::string want = tensor(t).name;
    if (!want.empty() && v.name != want && !g_.is_input(want) && !g_.is_constant(want) && !g_.is_output(want)) {
      if (g_.types.count(want)) rename_value(want, unique(want + "/nchw"));
      rename_value(v.name, want);
      v.name = want;
    }
    g_.outputs.push_back(v.name);
  }
}

void Converter::rename_value(const std::string& from, const std::string& to) {
  for (Node& n : g_.nodes) {
    for (std::string& i : n.inputs)
      if (i == from) i = to;
    for (std::string& o : n.outputs)
      if (o == from) o = to;
  }
  auto node = g_.types.extract(from);
  node.key() = to;
  g_.types.insert(std::move(node));
  names_.insert(to);
}

Graph Converter::convert(const std::string& name) {
  g_.name = name;
  check_ops();
  add_inputs();
  for (const TflOp& op : m_.ops) {
    where_ = source_ + ": operator " + std::to_string(op.index) + " (" + tfl::builtin_operator_name(op.builtin) + ")";
    if (op.outputs.empty()) fail("has no output");
    const TflTensor& out = tensor(op.outputs[0]);
    node_name_ = out.name.empty() ? tfl::builtin_operator_name(op.builtin) + "_" + std::to_string(op.index) : out.name;
    for (int32_t t : op.outputs)
      if (tensor(t).sparse || tensor(t).variable)
        fail(tensor_label(t) + " is sparse or a variable, which is not supported");
    (this->*converters().at(op.builtin))(op);
  }
  add_outputs();
  return std::move(g_);
}

}  // namespace
}  // namespace tflite_import

bool looks_like_tflite_bytes(const std::string& bytes) {
  return bytes.size() >= 8 && bytes.compare(4, 4, tfl::kFileIdentifier) == 0;
}

bool looks_like_tflite(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  char head[8];
  if (!f.read(head, 8)) return false;
  return looks_like_tflite_bytes(std::string(head, 8));
}

Graph import_tflite_bytes(const std::string& bytes, const std::string& source, const TfliteImportOptions& options) {
  FlatbufferView file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), source);
  const tflite_import::TflModel m = tflite_import::read_model(file);
  std::string name = options.name;
  if (name.empty()) {
    name = std::filesystem::path(source).stem().string();
    if (name.empty()) name = "model";
  }
  return tflite_import::Converter(m, source).convert(name);
}

Graph import_tflite(const std::string& path, const TfliteImportOptions& options) {
  const std::vector<uint8_t> data = read_file_bytes(path, kMaxTfliteFileBytes);
  return import_tflite_bytes(std::string(data.begin(), data.end()), path, options);
}

}  // namespace hybgen
