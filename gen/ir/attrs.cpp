#include "ir/attrs.h"

#include <sstream>

#include "ir/error.h"
#include "ir/names.h"

namespace hybgen {

std::string attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "int list";
    case AttrKind::kFloats: return "float list";
  }
  return "unknown";
}

AttrKind attr_kind_of(const AttrValue& value) { return static_cast<AttrKind>(value.index()); }

namespace {
std::string float_str(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}
}  // namespace

std::string attr_value_str(const AttrValue& value) {
  switch (attr_kind_of(value)) {
    case AttrKind::kInt: return std::to_string(std::get<int64_t>(value));
    case AttrKind::kFloat: return float_str(std::get<double>(value));
    case AttrKind::kBool: return std::get<bool>(value) ? "true" : "false";
    case AttrKind::kString: return std::get<std::string>(value);
    case AttrKind::kInts: {
      std::string s = "[";
      for (const auto& v : std::get<std::vector<int64_t>>(value)) s += (s.size() > 1 ? ", " : "") + std::to_string(v);
      return s + "]";
    }
    case AttrKind::kFloats: {
      std::string s = "[";
      for (const auto& v : std::get<std::vector<double>>(value)) s += (s.size() > 1 ? ", " : "") + float_str(v);
      return s + "]";
    }
  }
  return "";
}

const AttrValue& Attrs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("attribute " + quoted_name(name) + " is missing");
  return it->second;
}

namespace {
template <typename T>
const T& typed(const Attrs& attrs, const std::string& name, AttrKind kind) {
  const AttrValue& v = attrs.get(name);
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw Error("attribute " + quoted_name(name) + " is a " + attr_kind_name(attr_kind_of(v)) + ", expected " +
              attr_kind_name(kind));
}
}  // namespace

int64_t Attrs::get_int(const std::string& name) const { return typed<int64_t>(*this, name, AttrKind::kInt); }

double Attrs::get_float(const std::string& name) const {
  const AttrValue& v = get(name);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return typed<double>(*this, name, AttrKind::kFloat);
}

bool Attrs::get_bool(const std::string& name) const { return typed<bool>(*this, name, AttrKind::kBool); }

const std::string& Attrs::get_string(const std::string& name) const {
  return typed<std::string>(*this, name, AttrKind::kString);
}

const std::vector<int64_t>& Attrs::get_ints(const std::string& name) const {
  return typed<std::vector<int64_t>>(*this, name, AttrKind::kInts);
}

std::vector<double> Attrs::get_floats(const std::string& name) const {
  const AttrValue& v = get(name);
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&v)) return std::vector<double>(ints->begin(), ints->end());
  return typed<std::vector<double>>(*this, name, AttrKind::kFloats);
}

}  // namespace hybgen
