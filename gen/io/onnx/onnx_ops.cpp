// The ONNX converter registry and the import-time constant type.
#include "io/onnx/onnx_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

#include "ir/error.h"
#include "ir/half.h"

namespace hybgen {

DType fold_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: case DType::kFloat16: case DType::kBFloat16: return DType::kFloat32;
    case DType::kInt16: case DType::kUInt16: return DType::kInt32;
    case DType::kUInt32: case DType::kUInt64: return DType::kInt64;
    default: return dtype;
  }
}

double OnnxConst::at_double(int64_t i) const {
  return is_float() ? floats.at(static_cast<std::size_t>(i)) : static_cast<double>(ints.at(static_cast<std::size_t>(i)));
}

int64_t OnnxConst::at_int(int64_t i) const {
  if (!is_float()) return ints.at(static_cast<std::size_t>(i));
  const double v = floats.at(static_cast<std::size_t>(i));
  if (!(std::trunc(v) == v) || std::fabs(v) > 9.2e18) throw Error("value " + std::to_string(v) + " is not an integer");
  return static_cast<int64_t>(v);
}

std::vector<int64_t> OnnxConst::as_ints() const {
  if (!is_float()) return ints;
  std::vector<int64_t> out(floats.size());
  for (std::size_t i = 0; i < floats.size(); ++i) out[i] = at_int(static_cast<int64_t>(i));
  return out;
}

std::vector<double> OnnxConst::as_doubles() const {
  if (is_float()) return floats;
  return std::vector<double>(ints.begin(), ints.end());
}

std::vector<float> OnnxConst::as_floats() const {
  std::vector<float> out(static_cast<std::size_t>(size()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(at_double(static_cast<int64_t>(i)));
  return out;
}

OnnxConst OnnxConst::of_ints(const Shape& shape, std::vector<int64_t> values, DType dtype) {
  OnnxConst c;
  c.dtype = dtype;
  c.shape = shape;
  c.ints = std::move(values);
  return c;
}

OnnxConst OnnxConst::of_floats(const Shape& shape, std::vector<double> values, DType dtype) {
  OnnxConst c;
  c.dtype = dtype;
  c.shape = shape;
  c.floats = std::move(values);
  return c;
}

namespace {

template <class T>
void store(Constant& c, const OnnxConst& k) {
  T* p = reinterpret_cast<T*>(c.data.data());
  for (int64_t i = 0; i < k.size(); ++i) {
    if constexpr (std::is_same_v<T, float>) p[i] = static_cast<float>(k.at_double(i));
    else p[i] = static_cast<T>(k.ints[static_cast<std::size_t>(i)]);
  }
}

template <class T>
void load(OnnxConst& k, const Constant& c) {
  const T* p = reinterpret_cast<const T*>(c.data.data());
  const int64_t n = c.type.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, float>) k.floats.push_back(p[i]);
    else k.ints.push_back(static_cast<int64_t>(p[i]));
  }
}

}  // namespace

Constant OnnxConst::to_constant() const {
  Constant c;
  c.type = TensorType{shape, fold_dtype(dtype)};
  c.data.assign(c.type.bytes(), 0);
  switch (c.type.dtype) {
    case DType::kFloat32: store<float>(c, *this); break;
    case DType::kInt8: store<int8_t>(c, *this); break;
    case DType::kUInt8: store<uint8_t>(c, *this); break;
    case DType::kInt32: store<int32_t>(c, *this); break;
    case DType::kInt64: store<int64_t>(c, *this); break;
    case DType::kBool: store<uint8_t>(c, *this); break;
    default: throw Error("no import-time constant of dtype " + dtype_name(c.type.dtype));
  }
  return c;
}

OnnxConst OnnxConst::of_constant(const Constant& c) {
  OnnxConst k;
  k.dtype = c.type.dtype;
  k.shape = c.type.shape;
  switch (c.type.dtype) {
    case DType::kFloat32: load<float>(k, c); break;
    case DType::kInt8: load<int8_t>(k, c); break;
    case DType::kUInt8: load<uint8_t>(k, c); break;
    case DType::kInt32: load<int32_t>(k, c); break;
    case DType::kInt64: load<int64_t>(k, c); break;
    case DType::kBool: load<uint8_t>(k, c); break;
    default: throw Error("no import-time constant of dtype " + dtype_name(c.type.dtype));
  }
  return k;
}

OnnxConst OnnxConst::scalar_int(int64_t value, DType dtype) { return of_ints({}, {value}, dtype); }
OnnxConst OnnxConst::scalar_float(double value, DType dtype) { return of_floats({}, {value}, dtype); }

namespace {

double round_to(double v, DType dtype) {
  if (dtype == DType::kFloat32) return static_cast<double>(static_cast<float>(v));
  if (dtype == DType::kFloat16) return static_cast<double>(half_to_float(float_to_half(static_cast<float>(v))));
  if (dtype == DType::kBFloat16)
    return static_cast<double>(bfloat16_to_float(float_to_bfloat16(static_cast<float>(v))));
  return v;
}

// Wraps an integer into the range of an integer dtype, as a C cast does.
int64_t wrap_to(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::kBool: return v != 0;
    case DType::kUInt8: return static_cast<uint8_t>(v);
    case DType::kInt8: return static_cast<int8_t>(v);
    case DType::kUInt16: return static_cast<uint16_t>(v);
    case DType::kInt16: return static_cast<int16_t>(v);
    case DType::kInt32: return static_cast<int32_t>(v);
    case DType::kUInt32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

}  // namespace

OnnxConst OnnxConst::cast(DType to) const {
  OnnxConst out;
  out.dtype = to;
  out.shape = shape;
  const std::size_t n = static_cast<std::size_t>(size());
  if (is_float_dtype(to)) {
    out.floats.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.floats[i] = round_to(at_double(static_cast<int64_t>(i)), to);
  } else {
    out.ints.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (is_float()) {
        const double v = floats[i];
        if (to == DType::kBool) {
          out.ints[i] = v != 0.0;
          continue;
        }
        if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
          throw Error("cannot cast " + std::to_string(v) + " to an integer dtype at import");
        out.ints[i] = wrap_to(static_cast<int64_t>(std::trunc(v)), to);
      } else {
        out.ints[i] = wrap_to(ints[i], to);
      }
    }
  }
  return out;
}

namespace {

std::map<std::string, OnnxConverter>& registry() {
  static std::map<std::string, OnnxConverter> converters;
  return converters;
}

template <typename F>
void merge_function(F& into, const F& from, const std::string& op, const char* what) {
  if (!from) return;
  if (into) {
    std::fprintf(stderr, "hybgen: two ONNX converters give %s for op type %s\n", what, op.c_str());
    std::abort();
  }
  into = from;
}

void join(std::vector<std::string>& into, const std::vector<std::string>& from) {
  for (const auto& s : from)
    if (std::find(into.begin(), into.end(), s) == into.end()) into.push_back(s);
}

}  // namespace

OnnxConverterRegistrar::OnnxConverterRegistrar(OnnxConverter converter) {
  if (converter.op_type.empty()) {
    std::fprintf(stderr, "hybgen: an ONNX converter without op_type\n");
    std::abort();
  }
  auto& reg = registry();
  auto it = reg.find(converter.op_type);
  if (it == reg.end()) {
    reg.emplace(converter.op_type, std::move(converter));
    return;
  }
  OnnxConverter& into = it->second;
  merge_function(into.convert, converter.convert, converter.op_type, "convert");
  merge_function(into.fold, converter.fold, converter.op_type, "fold");
  into.fold_always = into.fold_always || converter.fold_always;
  // An empty attrs list means "no up-front filter": a merge keeps the filter
  // only when both sides have one.
  if (into.attrs.empty() || converter.attrs.empty()) into.attrs.clear();
  else join(into.attrs, converter.attrs);
  join(into.ignored_attrs, converter.ignored_attrs);
  if (converter.check) {
    if (into.check) {
      auto a = into.check, b = converter.check;
      into.check = [a, b](OnnxCheck& c) {
        a(c);
        b(c);
      };
    } else {
      into.check = converter.check;
    }
  }
  into.min_opset = std::max(into.min_opset, converter.min_opset);
}

const OnnxConverter* find_onnx_converter(const std::string& op_type) {
  auto& reg = registry();
  auto it = reg.find(op_type);
  return it == reg.end() ? nullptr : &it->second;
}

std::vector<const OnnxConverter*> all_onnx_converters() {
  std::vector<const OnnxConverter*> out;
  for (const auto& [name, conv] : registry()) out.push_back(&conv);
  return out;
}

namespace onnx_util {

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    throw Error(what + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      throw Error(what + ": shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Attrs attrs_of(const std::string& key, AttrValue value) {
  Attrs a;
  a.set(key, std::move(value));
  return a;
}

std::string int_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string reshape(OnnxContext& c, const std::string& value, const Shape& shape, const std::string& suffix) {
  if (c.type(value).shape == shape) return value;
  return c.add_node("Reshape", attrs_of("shape", shape), {value}, suffix);
}

SliceArgs slice_args(OnnxContext& c) {
  SliceArgs a;
  if (c.opset() < 10) {
    a.starts = c.attr_ints("starts");
    a.ends = c.attr_ints("ends");
    a.axes = c.attr_ints("axes", {});
  } else {
    a.starts = c.constant(1).as_ints();
    a.ends = c.constant(2).as_ints();
    if (c.has_input(3)) a.axes = c.constant(3).as_ints();
    if (c.has_input(4)) a.steps = c.constant(4).as_ints();
  }
  return a;
}
}  // namespace onnx_util

}  // namespace hybgen
