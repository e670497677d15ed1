// ONNX import: reads a ModelProto (libonnx_proto), checks every node against
// the converter registry up front (all problems in one Error), then walks the
// nodes in file order (ONNX requires topological order), keeping per ONNX
// value either an IR value (runtime, float32) or an import-time constant.
// Initializers stay undecoded until a converter reads them: float32 weights
// go straight from their bytes into graph constants. Finally the IR values
// bound to ONNX names take those names where free, so graph inputs, outputs
// and intermediate values keep the model's names.
#include "io/onnx/onnx_model.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "io/file_util.h"
#include "io/onnx/onnx_ops.h"
#include "ir/error.h"
#include "ir/half.h"
#include "ir/limits.h"
#include "ir/names.h"
#include "ops/evaluate.h"
#include "ops/op.h"

namespace hybgen {

namespace {

namespace fs = std::filesystem;

// The default-domain opsets whose semantics the converters follow.
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 21;

// ONNX element types (TensorProto::DataType) and the DTypes that hold them:
// the one place the reader maps ONNX's numbers, both ways. The types missing
// here (STRING, COMPLEX64/128, the FLOAT8 and 4-bit ones) are refused naming
// them.
struct ElementType {
  onnx::TensorProto_DataType onnx;
  DType dtype;
};
constexpr ElementType kElementTypes[] = {
    {onnx::TensorProto_DataType_FLOAT, DType::kFloat32},     {onnx::TensorProto_DataType_UINT8, DType::kUInt8},
    {onnx::TensorProto_DataType_INT8, DType::kInt8},         {onnx::TensorProto_DataType_UINT16, DType::kUInt16},
    {onnx::TensorProto_DataType_INT16, DType::kInt16},       {onnx::TensorProto_DataType_INT32, DType::kInt32},
    {onnx::TensorProto_DataType_INT64, DType::kInt64},       {onnx::TensorProto_DataType_BOOL, DType::kBool},
    {onnx::TensorProto_DataType_FLOAT16, DType::kFloat16},   {onnx::TensorProto_DataType_DOUBLE, DType::kFloat64},
    {onnx::TensorProto_DataType_UINT32, DType::kUInt32},     {onnx::TensorProto_DataType_UINT64, DType::kUInt64},
    {onnx::TensorProto_DataType_BFLOAT16, DType::kBFloat16},
};
// Elements of one tensor evaluated at import (shape arithmetic; doubles).
constexpr int64_t kMaxFoldElements = int64_t{1} << 22;

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// ---- tensors -------------------------------------------------------------

struct TensorBytes {
  // Little-endian element bytes (raw_data or external), or empty when the
  // values are in the typed fields.
  std::string raw;
  bool has_raw = false;
};

// Reads the external data of `t` from `dir` (never outside it).
std::string read_external(const onnx::TensorProto& t, const std::string& dir, const std::string& where) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& kv : t.external_data()) {
    auto number = [&](const std::string& text) -> uint64_t {
      if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
        throw Error(where + ": external data " + quoted_name(kv.key()) + " = " + quoted_name(text) +
                    " is not a non-negative integer");
      return std::stoull(text);
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = number(kv.value());
    else if (kv.key() == "length") length = number(kv.value()), has_length = true;
    else if (kv.key() == "checksum") continue;
    else throw Error(where + ": unknown external data key " + quoted_name(kv.key()));
  }
  if (location.empty()) throw Error(where + ": external data without a location");
  if (dir.empty()) throw Error(where + ": external data " + quoted_name(location) + " cannot be read here (no model folder)");
  const fs::path rel(location);
  if (rel.is_absolute() || location.find('\0') != std::string::npos || location.front() == '/' ||
      location.front() == '\\')
    throw Error(where + ": external data location " + quoted_name(location) + " is an absolute path; it must name a file next to the model");
  for (const auto& part : rel)
    if (part == ".." || part.string().find('\\') != std::string::npos)
      throw Error(where + ": external data location " + quoted_name(location) + " leaves the model's folder");
  std::error_code ec;
  const fs::path base = fs::canonical(fs::path(dir), ec);
  if (ec) throw Error(where + ": model folder " + quoted_name(dir) + ": " + ec.message());
  const fs::path file = fs::canonical(base / rel, ec);
  if (ec) throw Error(where + ": external data file " + quoted_name(location) + " cannot be opened: " + ec.message());
  auto [mismatch, _] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (mismatch != base.end())
    throw Error(where + ": external data location " + quoted_name(location) + " resolves outside the model's folder");
  const std::string path = file.string();
  check_file_size(path, limits::kMaxDataFileBytes);
  const uint64_t size = fs::file_size(file, ec);
  if (ec) throw Error(where + ": " + quoted_name(location) + ": " + ec.message());
  if (offset > size) throw Error(where + ": external data offset " + std::to_string(offset) + " is past the end of " + quoted_name(location) + " (" + std::to_string(size) + " bytes)");
  if (!has_length) length = size - offset;
  if (length > size - offset)
    throw Error(where + ": external data " + quoted_name(location) + " holds " + std::to_string(size - offset) +
                " bytes from offset " + std::to_string(offset) + ", the tensor claims " + std::to_string(length));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(length), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(bytes.data(), static_cast<std::streamsize>(length)))
    throw Error(where + ": cannot read " + std::to_string(length) + " bytes of " + quoted_name(location));
  return bytes;
}

Shape tensor_shape(const onnx::TensorProto& t, const std::string& where) {
  Shape shape(t.dims().begin(), t.dims().end());
  checked_tensor_bytes(shape, 1, where);
  return shape;
}

// Decodes a TensorProto into an OnnxConst (any numeric dtype).
OnnxConst decode_tensor(const onnx::TensorProto& t, const std::string& dir, const std::string& where) {
  const std::optional<DType> element = onnx_element_dtype(t.data_type());
  if (!element) throw Error(where + ": tensor of dtype " + onnx_dtype_name(t.data_type()) + " is not supported");
  const DType dtype = *element;
  const std::size_t esize = dtype_size(dtype);
  if (t.has_segment()) throw Error(where + ": segmented tensors are not supported");
  const Shape shape = tensor_shape(t, where);
  const int64_t n = num_elements(shape);
  std::string raw;
  bool has_raw = false;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    raw = read_external(t, dir, where);
    has_raw = true;
  } else if (t.has_raw_data()) {
    raw = t.raw_data();
    has_raw = true;
  }
  OnnxConst c;
  c.dtype = dtype;
  c.shape = shape;
  const bool is_float = is_float_dtype(dtype);
  if (is_float) c.floats.resize(static_cast<std::size_t>(n));
  else c.ints.resize(static_cast<std::size_t>(n));
  auto count_error = [&](std::size_t have) {
    return Error(where + ": tensor of shape " + shape_str(shape) + " (" + onnx_dtype_name(dtype) + ") holds " +
                 std::to_string(have) + " values, expected " + std::to_string(n));
  };
  if (has_raw) {
    if (raw.size() != static_cast<uint64_t>(n) * esize)
      throw Error(where + ": tensor of shape " + shape_str(shape) + " (" + onnx_dtype_name(dtype) + ") has " +
                  std::to_string(raw.size()) + " data bytes, expected " + std::to_string(static_cast<uint64_t>(n) * esize));
    const unsigned char* p = reinterpret_cast<const unsigned char*>(raw.data());
    for (int64_t i = 0; i < n; ++i, p += esize) {
      uint64_t bits = 0;
      for (std::size_t b = 0; b < esize; ++b) bits |= uint64_t{p[b]} << (8 * b);
      const std::size_t k = static_cast<std::size_t>(i);
      switch (dtype) {
        case DType::kFloat32: { float f; uint32_t u = static_cast<uint32_t>(bits); std::memcpy(&f, &u, 4); c.floats[k] = f; break; }
        case DType::kFloat64: { double d; std::memcpy(&d, &bits, 8); c.floats[k] = d; break; }
        case DType::kFloat16: c.floats[k] = half_to_float(static_cast<uint16_t>(bits)); break;
        case DType::kBFloat16: { float f; uint32_t u = static_cast<uint32_t>(bits) << 16; std::memcpy(&f, &u, 4); c.floats[k] = f; break; }
        case DType::kInt8: c.ints[k] = static_cast<int8_t>(bits); break;
        case DType::kInt16: c.ints[k] = static_cast<int16_t>(bits); break;
        case DType::kInt32: c.ints[k] = static_cast<int32_t>(bits); break;
        case DType::kInt64: c.ints[k] = static_cast<int64_t>(bits); break;
        case DType::kUInt64:
          if (bits > static_cast<uint64_t>(INT64_MAX)) throw Error(where + ": UINT64 value beyond INT64's range");
          c.ints[k] = static_cast<int64_t>(bits);
          break;
        case DType::kBool: c.ints[k] = bits != 0; break;
        default: c.ints[k] = static_cast<int64_t>(bits); break;  // the unsigned ones
      }
    }
    return c;
  }
  switch (dtype) {
    case DType::kFloat32:
      if (t.float_data_size() != n) throw count_error(static_cast<std::size_t>(t.float_data_size()));
      for (int64_t i = 0; i < n; ++i) c.floats[static_cast<std::size_t>(i)] = t.float_data(static_cast<int>(i));
      break;
    case DType::kFloat64:
      if (t.double_data_size() != n) throw count_error(static_cast<std::size_t>(t.double_data_size()));
      for (int64_t i = 0; i < n; ++i) c.floats[static_cast<std::size_t>(i)] = t.double_data(static_cast<int>(i));
      break;
    case DType::kInt64:
      if (t.int64_data_size() != n) throw count_error(static_cast<std::size_t>(t.int64_data_size()));
      for (int64_t i = 0; i < n; ++i) c.ints[static_cast<std::size_t>(i)] = t.int64_data(static_cast<int>(i));
      break;
    case DType::kUInt32: case DType::kUInt64:
      if (t.uint64_data_size() != n) throw count_error(static_cast<std::size_t>(t.uint64_data_size()));
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = t.uint64_data(static_cast<int>(i));
        if (v > static_cast<uint64_t>(INT64_MAX)) throw Error(where + ": unsigned value beyond INT64's range");
        c.ints[static_cast<std::size_t>(i)] = static_cast<int64_t>(v);
      }
      break;
    default:  // int32_data: INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16
      if (t.int32_data_size() != n) throw count_error(static_cast<std::size_t>(t.int32_data_size()));
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = t.int32_data(static_cast<int>(i));
        const std::size_t k = static_cast<std::size_t>(i);
        if (dtype == DType::kFloat16) c.floats[k] = half_to_float(static_cast<uint16_t>(v));
        else if (dtype == DType::kBFloat16) {
          float f;
          uint32_t u = static_cast<uint32_t>(static_cast<uint16_t>(v)) << 16;
          std::memcpy(&f, &u, 4);
          c.floats[k] = f;
        } else if (dtype == DType::kBool) c.ints[k] = v != 0;
        else c.ints[k] = v;
      }
      break;
  }
  return c;
}

// A float32 tensor straight into a graph constant (weights: no doubles).
Constant decode_f32_constant(const onnx::TensorProto& t, const std::string& dir, const std::string& where) {
  const Shape shape = tensor_shape(t, where);
  checked_tensor_bytes(shape, 4, where);
  const int64_t n = num_elements(shape);
  Constant c;
  c.type = TensorType{shape};
  c.data.resize(static_cast<std::size_t>(n) * 4);
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.has_raw_data()) {
    const std::string raw = t.data_location() == onnx::TensorProto::EXTERNAL ? read_external(t, dir, where) : t.raw_data();
    if (raw.size() != c.data.size())
      throw Error(where + ": tensor of shape " + shape_str(shape) + " (FLOAT) has " + std::to_string(raw.size()) +
                  " data bytes, expected " + std::to_string(c.data.size()));
    std::memcpy(c.data.data(), raw.data(), raw.size());  // both little-endian
    return c;
  }
  if (t.float_data_size() != n)
    throw Error(where + ": tensor of shape " + shape_str(shape) + " (FLOAT) holds " + std::to_string(t.float_data_size()) +
                " values, expected " + std::to_string(n));
  if (n) std::memcpy(c.data.data(), t.float_data().data(), c.data.size());
  return c;
}

Constant constant_from(const OnnxConst& c) {
  Constant out;
  out.type = TensorType{c.shape};
  const std::vector<float> v = c.as_floats();
  out.data.resize(v.size() * 4);
  if (!v.empty()) std::memcpy(out.data.data(), v.data(), out.data.size());
  return out;
}

// ---- attributes ----------------------------------------------------------

std::string attr_type_name(int type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT: return "FLOAT";
    case onnx::AttributeProto::INT: return "INT";
    case onnx::AttributeProto::STRING: return "STRING";
    case onnx::AttributeProto::TENSOR: return "TENSOR";
    case onnx::AttributeProto::GRAPH: return "GRAPH";
    case onnx::AttributeProto::FLOATS: return "FLOATS";
    case onnx::AttributeProto::INTS: return "INTS";
    case onnx::AttributeProto::STRINGS: return "STRINGS";
    case onnx::AttributeProto::SPARSE_TENSOR: return "SPARSE_TENSOR";
    default: return "type " + std::to_string(type);
  }
}

std::string attr_value_text(const onnx::AttributeProto& a) {
  auto list = [](const auto& items) {
    std::string s = "[";
    for (int i = 0; i < items.size() && i < 16; ++i) s += (i ? ", " : "") + std::to_string(items.Get(i));
    if (items.size() > 16) s += ", ...";
    return s + "]";
  };
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(a.f()));
      return buf;
    }
    case onnx::AttributeProto::INT: return std::to_string(a.i());
    case onnx::AttributeProto::STRING: return quoted_name(a.s());
    case onnx::AttributeProto::INTS: return list(a.ints());
    case onnx::AttributeProto::FLOATS: return list(a.floats());
    default: return attr_type_name(a.type());
  }
}

// Typed access to a node's attributes; shared by the check and the context.
class AttrReader {
 public:
  AttrReader(const onnx::NodeProto& node, std::string where) : where_(std::move(where)) {
    for (const auto& a : node.attribute()) by_name_.emplace(a.name(), &a);
  }
  const onnx::AttributeProto* find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  const onnx::AttributeProto* typed(const std::string& name, onnx::AttributeProto::AttributeType type) const {
    const auto* a = find(name);
    if (!a) return nullptr;
    // Files written before the type field existed leave it 0: the value
    // fields then tell.
    if (a->type() != type && a->type() != onnx::AttributeProto::UNDEFINED)
      throw Error(where_ + ": attribute " + quoted_name(name) + " is " + attr_type_name(a->type()) + ", expected " +
                  attr_type_name(type));
    return a;
  }
  int64_t get_int(const std::string& name, int64_t fallback) const {
    const auto* a = typed(name, onnx::AttributeProto::INT);
    return a ? a->i() : fallback;
  }
  double get_float(const std::string& name, double fallback) const {
    const auto* a = find(name);
    if (a && a->type() == onnx::AttributeProto::INT) return static_cast<double>(a->i());
    a = typed(name, onnx::AttributeProto::FLOAT);
    return a ? a->f() : fallback;
  }
  std::string get_string(const std::string& name, const std::string& fallback) const {
    const auto* a = typed(name, onnx::AttributeProto::STRING);
    return a ? a->s() : fallback;
  }
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
    const auto* a = typed(name, onnx::AttributeProto::INTS);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
  }
  std::vector<double> get_floats(const std::string& name, const std::vector<double>& fallback) const {
    const auto* a = typed(name, onnx::AttributeProto::FLOATS);
    return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : fallback;
  }
  const std::map<std::string, const onnx::AttributeProto*>& all() const { return by_name_; }

 private:
  std::string where_;
  std::map<std::string, const onnx::AttributeProto*> by_name_;
};

class NodeCheck : public OnnxCheck {
 public:
  NodeCheck(const onnx::NodeProto& node, int64_t opset, const std::string& label, std::vector<std::string>& problems)
      : node_(node), opset_(opset), attrs_(node, label), label_(label), problems_(problems) {}
  const std::string& op_type() const override { return node_.op_type(); }
  int64_t opset() const override { return opset_; }
  bool has_attr(const std::string& name) const override { return attrs_.find(name) != nullptr; }
  int64_t attr_int(const std::string& n, int64_t f) const override { return attrs_.get_int(n, f); }
  double attr_float(const std::string& n, double f) const override { return attrs_.get_float(n, f); }
  std::string attr_string(const std::string& n, const std::string& f) const override { return attrs_.get_string(n, f); }
  std::vector<int64_t> attr_ints(const std::string& n, const std::vector<int64_t>& f) const override {
    return attrs_.get_ints(n, f);
  }
  std::vector<double> attr_floats(const std::string& n, const std::vector<double>& f) const override {
    return attrs_.get_floats(n, f);
  }
  std::optional<DType> attr_dtype(const std::string& name, DType fallback) override {
    if (!has_attr(name)) return fallback;
    const int64_t element_type = attrs_.get_int(name, 0);
    const std::optional<DType> dtype = onnx_element_dtype(element_type);
    if (!dtype) refuse(name, onnx_dtype_name(element_type) + " is not a supported element type");
    return dtype;
  }
  int num_inputs() const override { return node_.input_size(); }
  bool has_input(int i) const override { return i >= 0 && i < node_.input_size() && !node_.input(i).empty(); }
  void refuse(const std::string& attr, const std::string& why) override {
    std::string what = label_ + ": ";
    if (!attr.empty()) {
      const auto* a = attrs_.find(attr);
      what += "attribute " + quoted_name(attr) + (a ? " = " + attr_value_text(*a) : "") + ": ";
    }
    problems_.push_back(what + why);
  }

 private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  AttrReader attrs_;
  std::string label_;
  std::vector<std::string>& problems_;
};

// ---- the importer --------------------------------------------------------

// What an ONNX value name stands for so far.
struct Value {
  std::string ir;                        // IR value: runtime value, or materialized constant
  DType dtype = DType::kFloat32;
  const onnx::TensorProto* proto = nullptr;  // an initializer not decoded yet
  std::shared_ptr<OnnxConst> constant;   // an import-time constant (decoded)
  bool is_constant() const { return proto || constant; }
};

class Importer;

// A node's converter sees it through this. At import (`scratch` given) the
// IR goes into that scratch graph, whose inputs are the node's constants with
// their own dtypes, and the outputs are recorded for Importer::evaluate
// rather than bound; otherwise into the model's graph.
class NodeContext : public OnnxContext {
 public:
  NodeContext(Importer& im, const onnx::NodeProto& node, const std::string& ir_name, int64_t opset,
              const std::string& where, Graph* scratch = nullptr);

  const std::string& op_type() const override { return node_.op_type(); }
  const std::string& node_name() const override { return name_; }
  int64_t opset() const override { return opset_; }
  std::string where() const override { return where_; }
  [[noreturn]] void fail(const std::string& what) const override { throw Error(where_ + ": " + what); }
  void note(const std::string& what) override;
  bool at_import() const override { return scratch_; }

  bool has_attr(const std::string& name) const override { return attrs_.find(name) != nullptr; }
  int64_t attr_int(const std::string& n, int64_t f) override { return read(n), attrs_.get_int(n, f); }
  double attr_float(const std::string& n, double f) override { return read(n), attrs_.get_float(n, f); }
  std::string attr_string(const std::string& n, const std::string& f) override { return read(n), attrs_.get_string(n, f); }
  std::vector<int64_t> attr_ints(const std::string& n, const std::vector<int64_t>& f) override {
    return read(n), attrs_.get_ints(n, f);
  }
  std::vector<double> attr_floats(const std::string& n, const std::vector<double>& f) override {
    return read(n), attrs_.get_floats(n, f);
  }
  OnnxConst attr_tensor(const std::string& name) override;
  DType attr_dtype(const std::string& name) override {
    const int64_t element_type = attr_int(name);
    const std::optional<DType> dtype = onnx_element_dtype(element_type);
    if (!dtype)
      fail("attribute " + quoted_name(name) + " = " + std::to_string(element_type) + ": " +
           onnx_dtype_name(element_type) + " is not a supported element type");
    return *dtype;
  }
  int64_t attr_int(const std::string& name) override {
    if (!has_attr(name)) fail("attribute " + quoted_name(name) + " is required");
    return attr_int(name, 0);
  }
  std::vector<int64_t> attr_ints(const std::string& name) override {
    if (!has_attr(name)) fail("attribute " + quoted_name(name) + " is required");
    return attr_ints(name, {});
  }

  int num_inputs() const override { return node_.input_size(); }
  bool has_input(int i) const override { return i >= 0 && i < node_.input_size() && !node_.input(i).empty(); }
  bool is_constant(int i) const override;
  const OnnxConst& constant(int i) const override;
  Shape shape(int i) const override;
  DType dtype(int i) const override;
  std::string input(int i) override;

  int num_outputs() const override { return node_.output_size(); }
  bool has_output(int i) const override { return i >= 0 && i < node_.output_size() && !node_.output(i).empty(); }
  void set_output(int i, const std::string& value, std::optional<DType> dtype) override;
  void set_constant(int i, OnnxConst value) override;

  std::vector<std::string> add_nodes(const std::string& op, const Attrs& attrs, const std::vector<std::string>& inputs,
                                     const std::string& suffix) override;
  std::string add_constant(const Shape& shape, const std::vector<float>& values, const std::string& suffix) override;
  std::string add_quantized_constant(const OnnxConst& q, const Quantization& quantization,
                                     const std::string& suffix) override;
  const TensorType& type(const std::string& value) const override;

  const std::set<std::string>& read_attrs() const { return read_; }
  const AttrReader& attrs() const { return attrs_; }
  bool bound(int i) const { return bound_.count(i) != 0; }
  const onnx::NodeProto& node() const { return node_; }
  // At import: output i's scratch value and declared dtype, by set_output.
  const std::map<int, std::pair<std::string, std::optional<DType>>>& scratch_outputs() const {
    return scratch_outputs_;
  }

 private:
  void read(const std::string& name) { read_.insert(name); }
  const Value& value_of(int i) const;
  std::string input_label(int i) const {
    return "input " + std::to_string(i) + " (" + quoted_name(node_.input(i)) + ")";
  }

  Importer& im_;
  const onnx::NodeProto& node_;
  std::string name_;
  int64_t opset_;
  std::string where_;
  AttrReader attrs_;
  std::set<std::string> read_;
  std::set<int> bound_;
  int added_ = 0;
  bool name_taken_ = false;
  Graph& graph_;        // where the IR goes: the model's, or the scratch graph
  bool scratch_;        // at import
  std::map<int, std::pair<std::string, std::optional<DType>>> scratch_outputs_;
  int scratch_values_ = 0;
  // Names a value of the scratch graph, or of the model's (unique there).
  std::string new_value(const std::string& base);
};

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string source, std::string dir, const OnnxImportOptions& options)
      : model_(model), source_(std::move(source)), dir_(std::move(dir)), options_(options) {}

  Graph run();

  // Used by NodeContext.
  Graph graph;
  std::unordered_map<std::string, Value> values;
  std::map<std::string, std::string> ir_to_onnx;  // IR value -> the first ONNX name bound to it
  const std::string& source() const { return source_; }
  const std::string& dir() const { return dir_; }
  const OnnxConst& decoded(Value& v, const std::string& name) {
    if (!v.constant) {
      v.constant = std::make_shared<OnnxConst>(decode_tensor(*v.proto, dir_, source_ + ": initializer " + quoted_name(name)));
      v.proto = nullptr;
    }
    return *v.constant;
  }
  // An integer graph constant of `q` (int8, uint8, int32) with `quantization` on its type.
  std::string add_quantized(const OnnxConst& q, const Quantization& quantization, const std::string& base) {
    if (q.dtype != DType::kInt8 && q.dtype != DType::kUInt8 && q.dtype != DType::kInt32)
      throw Error("quantized values must be int8, uint8 or int32, not " + dtype_name(q.dtype));
    checked_tensor_bytes(q.shape, 4, base);
    Constant c = q.to_constant();
    c.type.quantization = quantization;
    check_quantization(c.type, "the constant");
    weight_bytes_ += c.data.size();
    if (weight_bytes_ > limits::kMaxModelWeightBytes)
      throw Error(source_ + ": the model's weights exceed " + std::to_string(limits::kMaxModelWeightBytes >> 30) +
                  " GiB");
    const std::string v = unique_value(base);
    graph.add_constant(v, std::move(c));
    return v;
  }
  // The IR value of a constant ONNX value, made a float32 graph constant on
  // first use; a dequantized one as its integers and a `dequantize` node.
  std::string materialize(Value& v, const std::string& name) {
    if (!v.ir.empty()) return v.ir;
    if (v.constant && v.constant->dequantized) {
      const OnnxConst::Dequantized& d = *v.constant->dequantized;
      const std::string q = add_quantized(d.q, d.quantization, name + "/quantized");
      Node n;
      n.name = unique_node(name + "/dequantize");
      n.op = "dequantize";
      n.inputs = {q};
      v.ir = unique_value(name);
      n.outputs = {v.ir};
      graph.types[v.ir] = TensorType{d.q.shape};
      graph.nodes.push_back(std::move(n));
      ir_to_onnx.emplace(v.ir, name);
      return v.ir;
    }
    const std::string where = source_ + ": initializer " + quoted_name(name);
    Constant c;
    if (v.proto && v.dtype == DType::kFloat32) {
      c = decode_f32_constant(*v.proto, dir_, where);
    } else {
      const OnnxConst& k = decoded(v, name);
      checked_tensor_bytes(k.shape, 4, where);
      c = constant_from(k);
    }
    weight_bytes_ += c.data.size();
    if (weight_bytes_ > limits::kMaxModelWeightBytes)
      throw Error(source_ + ": the model's weights exceed " + std::to_string(limits::kMaxModelWeightBytes >> 30) + " GiB");
    v.ir = unique_value(name);
    graph.add_constant(v.ir, std::move(c));
    ir_to_onnx.emplace(v.ir, name);
    return v.ir;
  }
  std::string unique_value(const std::string& base) {
    const std::string stem = base.empty() ? "value" : base;
    std::string name = stem;
    for (int k = 1; used_values_.count(name) || reserved_.count(name); ++k) name = stem + "_" + std::to_string(k);
    used_values_.insert(name);
    return name;
  }
  std::string unique_node(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_nodes_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_nodes_.insert(name);
    return name;
  }
  void note(const std::string& message) {
    if (options_.note) options_.note(message);
    else std::fprintf(stderr, "hybgen: note: %s\n", message.c_str());
  }

 private:
  int64_t read_opset();
  void check_nodes(int64_t opset);
  void add_inputs();
  void convert_node(const onnx::NodeProto& node, int index, int64_t opset);
  bool evaluate_at_import(const OnnxConverter& conv, NodeContext& c, Graph& scratch);
  void bind_outputs();
  void rename_values();

  const onnx::ModelProto& model_;
  std::string source_;
  std::string dir_;
  const OnnxImportOptions& options_;
  std::unordered_set<std::string> used_values_, used_nodes_;
  std::unordered_set<std::string> reserved_;  // every ONNX value name: IR values take them only by rename
  uint64_t weight_bytes_ = 0;
};

NodeContext::NodeContext(Importer& im, const onnx::NodeProto& node, const std::string& ir_name, int64_t opset,
                         const std::string& where, Graph* scratch)
    : im_(im), node_(node), name_(ir_name), opset_(opset), where_(where), attrs_(node, where),
      graph_(scratch ? *scratch : im.graph), scratch_(scratch != nullptr) {}

void NodeContext::note(const std::string& what) {
  if (!scratch_) im_.note(where_ + ": " + what);  // notes are about run time
}

std::string NodeContext::new_value(const std::string& base) {
  if (!scratch_) return im_.unique_value(base);
  return "v" + std::to_string(scratch_values_++);
}

OnnxConst NodeContext::attr_tensor(const std::string& name) {
  read(name);
  const auto* a = attrs_.typed(name, onnx::AttributeProto::TENSOR);
  if (!a) fail("attribute " + quoted_name(name) + " is required");
  return decode_tensor(a->t(), im_.dir(), where_ + ": attribute " + quoted_name(name));
}

const Value& NodeContext::value_of(int i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required");
  auto it = im_.values.find(node_.input(i));
  if (it == im_.values.end()) fail(input_label(i) + " is not defined by an earlier node, an input or an initializer");
  return it->second;
}

bool NodeContext::is_constant(int i) const { return has_input(i) && value_of(i).is_constant(); }

const OnnxConst& NodeContext::constant(int i) const {
  const Value& v = value_of(i);
  if (!v.is_constant())
    fail(input_label(i) + " must be a constant known at import (an initializer, a Constant, or computed from them); "
         "here it is computed at run time");
  try {
    return im_.decoded(const_cast<Value&>(v), node_.input(i));
  } catch (const Error& e) {
    throw Error(where_ + ": " + e.what());
  }
}

Shape NodeContext::shape(int i) const {
  const Value& v = value_of(i);
  if (v.constant) return v.constant->shape;
  if (v.proto) return tensor_shape(*v.proto, where_ + ": " + input_label(i));
  return im_.graph.type(v.ir).shape;
}

DType NodeContext::dtype(int i) const {
  const Value& v = value_of(i);
  if (v.constant) return v.constant->dtype;
  return v.dtype;  // an initializer's, from its element type
}

std::string NodeContext::input(int i) {
  Value& v = const_cast<Value&>(value_of(i));
  if (scratch_) {  // the constant with its own dtype, once per input
    const std::string name = "input" + std::to_string(i);
    if (!graph_.is_constant(name)) {
      try {
        graph_.add_constant(name, constant(i).to_constant());
      } catch (const Error& e) {
        fail(input_label(i) + ": " + e.what());
      }
    }
    return name;
  }
  if (!v.ir.empty()) return v.ir;
  try {
    return im_.materialize(v, node_.input(i));
  } catch (const Error& e) {
    // materialize names the file and the initializer: the node goes in between.
    std::string what = e.what();
    if (what.compare(0, im_.source().size() + 2, im_.source() + ": ") == 0) what.erase(0, im_.source().size() + 2);
    throw Error(where_ + ": " + what);
  }
}

void NodeContext::set_output(int i, const std::string& value, std::optional<DType> dtype) {
  if (i < 0 || i >= node_.output_size()) fail("has no output " + std::to_string(i));
  if (!graph_.types.count(value)) fail("output " + std::to_string(i) + " bound to unknown IR value " + quoted_name(value));
  if (node_.output(i).empty()) return;
  if (scratch_) {
    scratch_outputs_[i] = {value, dtype};
    bound_.insert(i);
    return;
  }
  Value v;
  v.ir = value;
  v.dtype = dtype ? *dtype : graph_.type(value).dtype;
  im_.values[node_.output(i)] = v;
  im_.ir_to_onnx.emplace(value, node_.output(i));
  bound_.insert(i);
}

void NodeContext::set_constant(int i, OnnxConst value) {
  if (i < 0 || i >= node_.output_size()) fail("has no output " + std::to_string(i));
  if (value.size() != num_elements(value.shape))
    fail("output " + std::to_string(i) + ": " + std::to_string(value.size()) + " values for shape " + shape_str(value.shape));
  if (value.size() > kMaxFoldElements)
    throw OnnxFoldTooLarge(where_ + ": output " + std::to_string(i) + " of shape " + shape_str(value.shape) +
                           " is too large to compute at import");
  if (node_.output(i).empty()) return;
  Value v;
  v.dtype = value.dtype;
  v.constant = std::make_shared<OnnxConst>(std::move(value));
  im_.values[node_.output(i)] = v;
  bound_.insert(i);
}

std::vector<std::string> NodeContext::add_nodes(const std::string& op, const Attrs& attrs,
                                                const std::vector<std::string>& inputs, const std::string& suffix) {
  const OpDef* def = lookup_op(op);
  if (!def) fail("converter asked for unknown registry op " + quoted_name(op));
  if (graph_.nodes.size() >= limits::kMaxGraphNodes) fail("the graph has more than " + std::to_string(limits::kMaxGraphNodes) + " nodes");
  Node node;
  // The first node without a suffix takes the node's own (reserved) name.
  if (suffix.empty() && !name_taken_) {
    node.name = name_;
    name_taken_ = true;
  } else if (scratch_) {
    node.name = name_ + "/" + (suffix.empty() ? std::to_string(added_) : suffix);
  } else {
    node.name = im_.unique_node(name_ + "/" + (suffix.empty() ? std::to_string(added_) : suffix));
  }
  ++added_;
  node.op = def->name;
  std::vector<TensorType> in;
  for (const auto& v : inputs) in.push_back(type(v));
  std::vector<TensorType> out;
  try {
    node.attrs = normalize_attrs(*def, attrs);
    if (const std::string wrong = input_count_mismatch(*def, node.attrs, static_cast<int>(inputs.size()));
        !wrong.empty())
      throw Error(wrong);
    out = def->infer(node.attrs, in);
    if (static_cast<int>(out.size()) != output_count(*def, node.attrs)) throw Error("shape rule gave the wrong number of outputs");
    for (const auto& t : out) checked_tensor_bytes(t.shape, 4, "output");
  } catch (const Error& e) {
    fail(def->name + ": " + e.what());
  }
  if (scratch_)
    for (const auto& t : out)
      if (t.num_elements() > kMaxFoldElements)
        throw OnnxFoldTooLarge(where_ + ": " + def->name + " gives shape " + shape_str(t.shape) +
                               ", too large to compute at import");
  node.inputs = inputs;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::string base = out.size() == 1 ? node.name : node.name + ":" + std::to_string(k);
    const std::string v = new_value(base);
    node.outputs.push_back(v);
    graph_.types[v] = out[k];
  }
  graph_.nodes.push_back(node);
  return node.outputs;
}

std::string NodeContext::add_constant(const Shape& shape, const std::vector<float>& values, const std::string& suffix) {
  checked_tensor_bytes(shape, 4, where_ + ": constant");
  if (static_cast<int64_t>(values.size()) != num_elements(shape))
    fail("constant of shape " + shape_str(shape) + " given " + std::to_string(values.size()) + " values");
  const std::string v = new_value(name_ + "/" + suffix);
  graph_.add_constant(v, Constant::f32(shape, values));
  return v;
}

std::string NodeContext::add_quantized_constant(const OnnxConst& q, const Quantization& quantization,
                                                const std::string& suffix) {
  if (scratch_) {  // import-time evaluation: the scratch graph holds it
    const std::string v = new_value(name_ + "/" + suffix);
    Constant c = q.to_constant();
    c.type.quantization = quantization;
    try {
      check_quantization(c.type, "the constant");
    } catch (const Error& e) {
      fail(e.what());
    }
    graph_.add_constant(v, std::move(c));
    return v;
  }
  try {
    return im_.add_quantized(q, quantization, name_ + "/" + suffix);
  } catch (const Error& e) {
    fail(e.what());
  }
}

const TensorType& NodeContext::type(const std::string& value) const {
  auto it = graph_.types.find(value);
  if (it == graph_.types.end()) fail("unknown IR value " + quoted_name(value));
  return it->second;
}

int64_t Importer::read_opset() {
  int64_t opset = -1;
  for (const auto& o : model_.opset_import())
    if (is_default_domain(o.domain())) opset = std::max(opset, o.version());
  if (opset < 0) {
    if (model_.opset_import_size() == 0 && model_.ir_version() < 3) opset = 1;
    else throw Error(source_ + ": the model imports no opset of the default ONNX domain");
  }
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error(source_ + ": opset " + std::to_string(opset) + " of the default domain is not supported (hybgen reads opsets " +
                std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  return opset;
}

std::string node_where(const std::string& source, const onnx::NodeProto& node, int index) {
  const std::string name = node.name().empty() ? "#" + std::to_string(index) : node.name();
  return source + ": " + node_label(name, node.op_type());
}

void Importer::check_nodes(int64_t opset) {
  std::vector<std::string> problems;
  std::map<std::string, std::vector<std::string>> unknown;  // op -> node labels
  const auto& nodes = model_.graph().node();
  // Values known at import so far: initializers, then the outputs of nodes
  // that will be evaluated at import (all inputs known, or an op that reads
  // only types). A node whose converter only evaluates (no runtime form)
  // must have such inputs.
  std::unordered_set<std::string> constants;
  for (const auto& t : model_.graph().initializer()) constants.insert(t.name());
  for (const auto& [name, value] : options_.constant_inputs) constants.insert(name);
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    const std::string name = node.name().empty() ? "#" + std::to_string(i) : node.name();
    if (const OnnxConverter* conv = is_default_domain(node.domain()) ? find_onnx_converter(node.op_type()) : nullptr;
        conv) {
      bool all = true;
      for (const auto& in : node.input())
        if (!in.empty() && !constants.count(in)) all = false;
      if (all || conv->fold_always) {
        for (const auto& o : node.output()) constants.insert(o);
      } else if (conv->fold && !conv->convert) {
        problems.push_back(node_label(name, node.op_type()) + ": hybgen computes " + printable_name(node.op_type()) +
                           " only at import, from constant inputs; here an input is computed at run time");
      }
    }
    if (!is_default_domain(node.domain())) {
      unknown[node.domain() + "." + node.op_type()].push_back(quoted_name(name));
      continue;
    }
    const OnnxConverter* conv = find_onnx_converter(node.op_type());
    if (!conv || (!conv->convert && !conv->fold)) {
      unknown[node.op_type()].push_back(quoted_name(name));
      continue;
    }
    const std::string label = node_label(name, node.op_type());
    if (opset < conv->min_opset) {
      problems.push_back(label + ": opset " + std::to_string(opset) + " is older than hybgen's converter supports (" +
                         std::to_string(conv->min_opset) + ")");
      continue;
    }
    for (const auto& a : node.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) {
        problems.push_back(label + ": attribute " + quoted_name(a.name()) + ": subgraphs are not supported");
        continue;
      }
      if (conv->attrs.empty()) continue;
      const bool known = std::find(conv->attrs.begin(), conv->attrs.end(), a.name()) != conv->attrs.end() ||
                         std::find(conv->ignored_attrs.begin(), conv->ignored_attrs.end(), a.name()) != conv->ignored_attrs.end();
      if (!known)
        problems.push_back(label + ": attribute " + quoted_name(a.name()) + " = " + attr_value_text(a) + " is not supported");
    }
    if (conv->check) {
      NodeCheck check(node, opset, label, problems);
      try {
        conv->check(check);
      } catch (const Error& e) {
        problems.push_back(label + ": " + e.what());
      }
    }
  }
  if (unknown.empty() && problems.empty()) return;
  std::vector<std::string> lines;
  for (const auto& [op, names] : unknown) {
    const std::string list = first_items(names);
    lines.push_back("unsupported op " + printable_name(op) + " (" + std::to_string(names.size()) +
                    (names.size() == 1 ? " node: " : " nodes: ") + list + ")");
  }
  for (const auto& p : problems) lines.push_back(p);
  throw Error(source_ + ": " + std::to_string(lines.size()) + (lines.size() == 1 ? " problem" : " problems") +
              " before conversion (opset " + std::to_string(opset) + "):" + join_lines(lines));
}

void Importer::add_inputs() {
  const auto& g = model_.graph();
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) throw Error(source_ + ": an initializer has no name");
    if (values.count(t.name())) throw Error(source_ + ": initializer " + quoted_name(t.name()) + " is defined twice");
    const std::optional<DType> dtype = onnx_element_dtype(t.data_type());
    if (!dtype)
      throw Error(source_ + ": initializer " + quoted_name(t.name()) + " has dtype " + onnx_dtype_name(t.data_type()) +
                  ", which is not supported");
    tensor_shape(t, source_ + ": initializer " + quoted_name(t.name()));
    Value v;
    v.proto = &t;
    v.dtype = *dtype;
    values.emplace(t.name(), v);
  }
  for (const auto& t : g.sparse_initializer())
    throw Error(source_ + ": sparse initializer " + quoted_name(t.values().name()) + " is not supported");
  std::set<std::string> shapes_used;
  for (const auto& in : g.input()) {
    const std::string& name = in.name();
    if (values.count(name)) {
      if (values[name].proto || values[name].constant) continue;  // an initializer: a constant
      throw Error(source_ + ": graph input " + quoted_name(name) + " is listed twice");
    }
    const std::string where = source_ + ": input " + quoted_name(name);
    if (name.empty()) throw Error(source_ + ": a graph input has no name");
    if (!in.type().has_tensor_type()) throw Error(where + " is not a tensor");
    const auto& tt = in.type().tensor_type();
    if (auto k = options_.constant_inputs.find(name); k != options_.constant_inputs.end()) {
      const OnnxConst& c = k->second;
      if (onnx_element_dtype(tt.elem_type()) != c.dtype)
        throw Error(where + " has dtype " + onnx_dtype_name(tt.elem_type()) + "; the constant given for it is " +
                    onnx_dtype_name(c.dtype));
      if (tt.has_shape()) {
        bool ok = tt.shape().dim_size() == static_cast<int>(c.shape.size());
        for (int d = 0; ok && d < tt.shape().dim_size(); ++d)
          if (tt.shape().dim(d).has_dim_value() && tt.shape().dim(d).dim_value() != c.shape[static_cast<std::size_t>(d)]) ok = false;
        if (!ok) throw Error(where + ": the constant given for it has shape " + shape_str(c.shape) + ", which the model does not allow");
      }
      if (c.size() != num_elements(c.shape)) throw Error(where + ": the constant given for it has the wrong number of values");
      shapes_used.insert(name);
      Value v;
      v.dtype = c.dtype;
      v.constant = std::make_shared<OnnxConst>(c);
      values.emplace(name, v);
      continue;
    }
    if (onnx_element_dtype(tt.elem_type()) != DType::kFloat32)
      throw Error(where + " has dtype " + onnx_dtype_name(tt.elem_type()) +
                  "; hybgen's generated code takes float32 inputs only");
    auto given = options_.input_shapes.find(name);
    Shape shape;
    if (tt.has_shape()) {
      for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const auto& dim = tt.shape().dim(d);
        shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
        if (dim.has_dim_value() && dim.dim_value() < 0)
          throw Error(where + ": dimension " + std::to_string(d) + " is " + std::to_string(dim.dim_value()));
      }
    }
    if (given != options_.input_shapes.end()) {
      shapes_used.insert(name);
      if (tt.has_shape()) {
        if (given->second.size() != shape.size())
          throw Error(where + " has rank " + std::to_string(shape.size()) + " in the model; --shape gives " +
                      shape_str(given->second));
        for (std::size_t d = 0; d < shape.size(); ++d)
          if (shape[d] > 0 && shape[d] != given->second[d])
            throw Error(where + ": dimension " + std::to_string(d) + " is " + std::to_string(shape[d]) +
                        " in the model; --shape gives " + shape_str(given->second));
      }
      shape = given->second;
    } else {
      if (!tt.has_shape())
        throw Error(where + " has no shape in the model: pass --shape " + name + "=D1,D2,...");
      for (std::size_t d = 0; d < shape.size(); ++d)
        if (shape[d] <= 0) {
          const auto& dim = tt.shape().dim(static_cast<int>(d));
          const std::string what = dim.has_dim_param() ? "symbolic (" + quoted_name(dim.dim_param()) + ")"
                                   : dim.has_dim_value() ? "0"
                                                         : "unknown";
          throw Error(where + ": dimension " + std::to_string(d) + " of " + std::to_string(shape.size()) + " is " + what +
                      ": pass --shape " + name + "=D1,D2,... with every dimension");
        }
    }
    checked_tensor_bytes(shape, 4, where);
    used_values_.insert(name);
    graph.add_input(name, TensorType{shape});
    Value v;
    v.ir = name;
    values.emplace(name, v);
    ir_to_onnx.emplace(name, name);
  }
  for (const auto& [name, value] : options_.constant_inputs)
    if (!shapes_used.count(name))
      throw Error(source_ + ": a constant is given for " + quoted_name(name) + ", which is not an input of the model");
  for (const auto& [name, shape] : options_.input_shapes)
    if (!shapes_used.count(name)) {
      std::string inputs;
      for (const auto& in : graph.inputs) inputs += (inputs.empty() ? "" : ", ") + quoted_name(in);
      throw Error(source_ + ": --shape names " + quoted_name(name) + ", which is not a runtime input of the model (inputs: " +
                  (inputs.empty() ? "none" : inputs) + ")");
    }
}

void Importer::convert_node(const onnx::NodeProto& node, int index, int64_t opset) {
  const std::string where = node_where(source_, node, index);
  const OnnxConverter& conv = *find_onnx_converter(node.op_type());
  const std::string ir_name = unique_node(node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name());
  auto c = std::make_unique<NodeContext>(*this, node, ir_name, opset, where);
  bool all_constant = true;
  int64_t largest_constant = 0;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    auto it = values.find(node.input(i));
    if (it == values.end())
      throw Error(where + ": input " + std::to_string(i) + " (" + quoted_name(node.input(i)) +
                  ") is not defined by an earlier node, a graph input or an initializer");
    if (!it->second.is_constant()) all_constant = false;
    else largest_constant = std::max(largest_constant, num_elements(c->shape(i)));
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && values.count(node.output(i)))
      throw Error(where + ": output " + quoted_name(node.output(i)) + " is already defined");
  Graph scratch;  // the node's IR when it is evaluated at import
  try {
    // Weight-sized constants (a Mul of two initializers) go to the runtime
    // form, whose graph constants the optimizer folds; so does a fold whose
    // result would be too large.
    const bool small = !conv.convert || largest_constant <= kMaxFoldElements;
    const bool fold = conv.fold && (all_constant || conv.fold_always) && small;
    std::unique_ptr<NodeContext> at_import;
    if (!conv.fold && all_constant && small && conv.convert && node.input_size() > 0) {
      at_import = std::make_unique<NodeContext>(*this, node, ir_name, opset, where, &scratch);
      if (!evaluate_at_import(conv, *at_import, scratch)) at_import.reset();
    }
    if (at_import) {
      c = std::move(at_import);  // every output is an import-time constant now
    } else if (fold) {
      try {
        conv.fold(*c);
      } catch (const OnnxFoldTooLarge&) {
        if (!conv.convert) throw;
        c = std::make_unique<NodeContext>(*this, node, ir_name, opset, where);
        conv.convert(*c);
      }
    } else if (conv.convert) {
      conv.convert(*c);
    } else {
      c->fail("its inputs must be constants known at import (hybgen evaluates " + node.op_type() +
              " only at import); here they are computed at run time");
    }
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.compare(0, where.size(), where) == 0) throw;
    throw Error(where + ": " + what);
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && !c->bound(i))
      throw Error(where + ": output " + std::to_string(i) + " (" + quoted_name(node.output(i)) +
                  ") is not supported by hybgen's converter");
  for (const auto& [name, attr] : c->attrs().all()) {
    if (c->read_attrs().count(name)) continue;
    if (std::find(conv.attrs.begin(), conv.attrs.end(), name) != conv.attrs.end()) continue;
    if (std::find(conv.ignored_attrs.begin(), conv.ignored_attrs.end(), name) != conv.ignored_attrs.end()) continue;
    throw Error(where + ": attribute " + quoted_name(name) + " = " + attr_value_text(*attr) + " is not supported");
  }
}

// Converts `node`, all of whose inputs are constants, into a scratch graph
// whose inputs are those constants with their own dtypes, evaluates it with
// the registry's reference kernels and binds the node's outputs to the
// results. False when it cannot (a value past the import-time limit, an op
// whose reference does not compute the dtypes, a converter that refuses the
// scratch form): the node is then converted for run time, as before such
// evaluation existed. An error of the evaluation itself (an integer division
// by zero) is the node's error.
bool Importer::evaluate_at_import(const OnnxConverter& conv, NodeContext& c, Graph& scratch) {
  const onnx::NodeProto& node = c.node();
  try {
    conv.convert(c);
  } catch (const Error&) {
    return false;
  }
  for (const Node& n : scratch.nodes) {
    std::vector<const Constant*> in;
    for (const auto& v : n.inputs) in.push_back(&scratch.constants.at(v));
    std::vector<TensorType> out_types;
    for (const auto& v : n.outputs) out_types.push_back(scratch.type(v));
    std::vector<Constant> out;
    try {
      out = evaluate_node(n, in, out_types);
    } catch (const NoReferenceForDType&) {
      return false;
    }
    for (std::size_t k = 0; k < out.size(); ++k) scratch.add_constant(n.outputs[k], std::move(out[k]));
  }
  std::vector<std::pair<int, OnnxConst>> results;
  for (const auto& [i, bound] : c.scratch_outputs()) {
    OnnxConst k = OnnxConst::of_constant(scratch.constants.at(bound.first));
    if (bound.second && *bound.second != k.dtype) k = k.cast(*bound.second);
    results.emplace_back(i, std::move(k));
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && !c.bound(i)) return false;  // the runtime form says which
  for (auto& [i, k] : results) c.set_constant(i, std::move(k));
  return true;
}

void Importer::bind_outputs() {
  const auto& g = model_.graph();
  if (g.output_size() == 0) throw Error(source_ + ": the graph has no outputs");
  for (const auto& out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) throw Error(source_ + ": graph output " + quoted_name(out.name()) + " is not computed by any node");
    if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() != onnx::TensorProto_DataType_UNDEFINED &&
        onnx_element_dtype(out.type().tensor_type().elem_type()) != DType::kFloat32)
      throw Error(source_ + ": graph output " + quoted_name(out.name()) + " has dtype " +
                  onnx_dtype_name(out.type().tensor_type().elem_type()) +
                  "; hybgen's generated code returns float32 outputs only");
    Value& v = it->second;
    std::string ir;
    if (v.is_constant() && v.ir.empty()) {
      ir = materialize(v, out.name());
    } else {
      ir = v.ir;
    }
    if (graph.types.count(ir) && graph.types.at(ir).num_elements() == 0)
      throw Error(source_ + ": graph output " + quoted_name(out.name()) + " is empty (shape " +
                  shape_str(graph.types.at(ir).shape) + "); hybgen generates no code for empty tensors");
    if (v.dtype != DType::kFloat32 && !v.is_constant())
      throw Error(source_ + ": graph output " + quoted_name(out.name()) + " has dtype " + onnx_dtype_name(v.dtype) +
                  "; hybgen's generated code returns float32 outputs only");
    if (v.is_constant() && !is_float_dtype(v.dtype))
      throw Error(source_ + ": graph output " + quoted_name(out.name()) + " is a constant of dtype " + onnx_dtype_name(v.dtype) +
                  "; hybgen's generated code returns float32 outputs only");
    if (graph.is_output(ir) || graph.is_input(ir)) {
      // Two outputs of one value, or an input passed through: a copy each.
      const OpDef& copy = find_op("identity");
      Node n;
      n.name = unique_node(out.name() + "/copy");
      n.op = copy.name;
      n.inputs = {ir};
      n.outputs = {unique_value(out.name() + "/copy")};
      graph.types[n.outputs[0]] = graph.type(ir);
      graph.nodes.push_back(n);
      ir = n.outputs[0];
      ir_to_onnx[ir] = out.name();
    }
    graph.outputs.push_back(ir);
  }
}

// Gives IR values the ONNX names bound to them, where those are free.
void Importer::rename_values() {
  std::map<std::string, std::string> rename;
  std::set<std::string> taken;
  for (const auto& in : graph.inputs) taken.insert(in);
  for (const auto& [ir, onnx] : ir_to_onnx) {
    if (ir == onnx || graph.is_input(ir)) continue;
    if (taken.count(onnx) || used_values_.count(onnx)) continue;
    rename[ir] = onnx;
    taken.insert(onnx);
  }
  if (rename.empty()) return;
  auto map = [&](std::string& v) {
    auto it = rename.find(v);
    if (it != rename.end()) v = it->second;
  };
  for (auto& n : graph.nodes) {
    for (auto& v : n.inputs) map(v);
    for (auto& v : n.outputs) map(v);
  }
  for (auto& v : graph.outputs) map(v);
  std::map<std::string, TensorType> types;
  for (auto& [k, t] : graph.types) types[rename.count(k) ? rename[k] : k] = t;
  graph.types = std::move(types);
  std::map<std::string, Constant> constants;
  for (auto& [k, c] : graph.constants) constants[rename.count(k) ? rename[k] : k] = std::move(c);
  graph.constants = std::move(constants);
}

Graph Importer::run() {
  if (!model_.has_graph()) throw Error(source_ + ": the model has no graph");
  const int64_t opset = read_opset();
  const auto& g = model_.graph();
  if (static_cast<std::size_t>(g.node_size()) > limits::kMaxGraphNodes)
    throw Error(source_ + ": " + std::to_string(g.node_size()) + " nodes; hybgen reads at most " +
                std::to_string(limits::kMaxGraphNodes));
  check_nodes(opset);
  // Every ONNX value name is kept free for the final rename.
  for (const auto& n : g.node())
    for (const auto& o : n.output()) reserved_.insert(o);
  for (const auto& t : g.initializer()) reserved_.insert(t.name());
  for (const auto& in : g.input()) reserved_.insert(in.name());
  add_inputs();
  for (int i = 0; i < g.node_size(); ++i) convert_node(g.node(i), i, opset);
  bind_outputs();
  if (graph.inputs.empty())
    throw Error(source_ + ": the model has no runtime inputs (every output is computed at import); hybgen generates "
                "code for models that take inputs");
  if (!options_.name.empty()) graph.name = options_.name;
  rename_values();
  return graph;
}

}  // namespace

std::optional<DType> onnx_element_dtype(int64_t element_type) {
  for (const ElementType& e : kElementTypes)
    if (e.onnx == element_type) return e.dtype;
  return std::nullopt;
}

int32_t onnx_element_type(DType dtype) {
  for (const ElementType& e : kElementTypes)
    if (e.dtype == dtype) return e.onnx;
  throw Error("dtype " + dtype_name(dtype) + " has no ONNX element type");
}

std::string onnx_dtype_name(int64_t element_type) {
  if (element_type >= INT32_MIN && element_type <= INT32_MAX &&
      onnx::TensorProto_DataType_IsValid(static_cast<int>(element_type)))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(element_type));
  return "dtype " + std::to_string(element_type);
}

std::string onnx_dtype_name(DType dtype) { return onnx_dtype_name(onnx_element_type(dtype)); }

bool looks_like_onnx_bytes(const std::string& bytes) {
  // A ModelProto starts with field 1 (ir_version, varint): tag 0x08. The
  // full parse below confirms it has a graph.
  if (bytes.size() < 4 || static_cast<unsigned char>(bytes[0]) != 0x08) return false;
  onnx::ModelProto model;
  return model.ParseFromString(bytes) && model.has_graph() && model.ir_version() > 0;
}

bool looks_like_onnx(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  if (!in.get(first) || static_cast<unsigned char>(first) != 0x08) return false;
  // JSON never starts with 0x08; a protobuf varint tag of field 1 does.
  return true;
}

namespace {

Graph import_model_bytes(const void* data, std::size_t size, const std::string& source, const std::string& dir,
                         const OnnxImportOptions& options) {
  if (size > kMaxOnnxFileBytes)
    throw Error(source + ": " + std::to_string(size) + " bytes; hybgen reads ONNX files under 2 GiB (protobuf's limit; "
                "larger models keep their weights in external data)");
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    throw Error(source + ": not an ONNX model, or a truncated one (the protobuf does not parse)");
  if (!model.has_graph()) throw Error(source + ": not an ONNX model: it has no graph");
  OnnxImportOptions opt = options;
  if (opt.name.empty()) {
    opt.name = model.graph().name();
    if (opt.name.empty() || opt.name == "main_graph" || opt.name == "torch_jit" || opt.name == "torch-jit-export")
      opt.name = fs::path(source).stem().string();
  }
  Importer im(model, source, dir, opt);
  return im.run();
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& source, const std::string& dir,
                        const OnnxImportOptions& options) {
  return import_model_bytes(bytes.data(), bytes.size(), source, dir, options);
}

Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  // Parsed straight from the file's bytes: a large model is not copied again.
  const std::vector<uint8_t> bytes = read_file_bytes(path, kMaxOnnxFileBytes);
  return import_model_bytes(bytes.data(), bytes.size(), path, dir, options);
}

OnnxTensorFile read_onnx_tensor_values(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path, limits::kMaxDataFileBytes);
  onnx::TensorProto t;
  if (!t.ParseFromArray(bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), INT32_MAX))) ||
      bytes.size() > INT32_MAX)
    throw Error(path + ": not a serialized ONNX TensorProto");
  if (t.data_location() == onnx::TensorProto::EXTERNAL) throw Error(path + ": tensor with external data");
  const OnnxConst c = decode_tensor(t, "", path);
  OnnxTensorFile out;
  out.name = t.name();
  out.dtype = c.dtype;
  out.shape = c.shape;
  out.values = c.as_doubles();
  return out;
}

Constant read_onnx_tensor_file(const std::string& path) {
  const OnnxTensorFile t = read_onnx_tensor_values(path);
  checked_tensor_bytes(t.shape, 4, path);
  std::vector<float> v(t.values.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(t.values[i]);
    if (!is_float_dtype(t.dtype) && static_cast<double>(v[i]) != t.values[i])
      throw Error(path + ": " + onnx_dtype_name(t.dtype) + " value " + std::to_string(t.values[i]) +
                  " is not exactly a float32");
  }
  return Constant::f32(t.shape, v);
}

}  // namespace hybgen
