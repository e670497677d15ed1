// Typed node attributes.
//
//   Attrs a;
//   a.set("num_hidden", int64_t{256});
//   int64_t units = a.get_int("num_hidden");
//
// Values are int, float, bool, string, or lists of ints/floats. An op's schema
// (ops/op.h) says which kind each attribute has and fills defaults, so kernels
// read complete, typed attributes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace hybgen {

enum class AttrKind { kInt, kFloat, kBool, kString, kInts, kFloats };

std::string attr_kind_name(AttrKind kind);

using AttrValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>>;

AttrKind attr_kind_of(const AttrValue& value);
// Human-readable form used in messages, docs and generated comments.
std::string attr_value_str(const AttrValue& value);

class Attrs {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }
  const AttrValue& get(const std::string& name) const;  // throws Error when missing

  // Typed getters throw Error naming the attribute when missing or of another kind.
  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;  // an int value is accepted too
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  std::vector<double> get_floats(const std::string& name) const;

  const std::map<std::string, AttrValue>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  bool operator==(const Attrs& other) const { return values_ == other.values_; }

 private:
  std::map<std::string, AttrValue> values_;
};

}  // namespace hybgen
