#include "ir/graph.h"

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ir/names.h"

namespace hybgen {

namespace {

// A constant of `dtype` holding `values`, whose C++ type T matches it.
template <class T>
Constant constant_of(const Shape& shape, DType dtype, const std::vector<T>& values) {
  Constant c;
  c.type = TensorType{shape, dtype};
  if (static_cast<int64_t>(values.size()) != c.type.num_elements())
    throw Error("constant of shape " + shape_str(shape) + " given " + std::to_string(values.size()) + " values");
  // One copy, without zero-filling the bytes first (weights run to hundreds of MB).
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  c.data.assign(bytes, bytes + values.size() * sizeof(T));
  return c;
}

}  // namespace

Constant Constant::f32(const Shape& shape, const std::vector<float>& values) {
  return constant_of(shape, DType::kFloat32, values);
}

Constant Constant::i64(const Shape& shape, const std::vector<int64_t>& values) {
  return constant_of(shape, DType::kInt64, values);
}

void Graph::add_input(const std::string& value, const TensorType& type) {
  inputs.push_back(value);
  types[value] = type;
}

void Graph::add_constant(const std::string& value, Constant constant) {
  types[value] = constant.type;
  constants[value] = std::move(constant);
}

bool Graph::is_input(const std::string& value) const {
  return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

bool Graph::is_output(const std::string& value) const {
  return std::find(outputs.begin(), outputs.end(), value) != outputs.end();
}

const TensorType& Graph::type(const std::string& value) const {
  auto it = types.find(value);
  if (it == types.end()) throw Error("value " + quoted_name(value) + " has no known type (run shape inference first)");
  return it->second;
}

int Graph::producer(const std::string& value) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const auto& out : nodes[i].outputs)
      if (out == value) return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::consumers(const std::string& value) const {
  std::vector<int> result;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs)
      if (in == value) {
        result.push_back(static_cast<int>(i));
        break;
      }
  return result;
}

ValueIndex::ValueIndex(const Graph& graph) {
  producer_.reserve(graph.nodes.size());
  consumers_.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const int index = static_cast<int>(i);
    for (const auto& out : graph.nodes[i].outputs) producer_.emplace(out, index);  // keeps the first
    for (const auto& in : graph.nodes[i].inputs) {
      std::vector<int>& readers = consumers_[in];
      if (readers.empty() || readers.back() != index) readers.push_back(index);  // a node reading twice counts once
    }
  }
}

int ValueIndex::producer(const std::string& value) const {
  auto it = producer_.find(value);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& ValueIndex::consumers(const std::string& value) const {
  static const std::vector<int> none;
  auto it = consumers_.find(value);
  return it == consumers_.end() ? none : it->second;
}

std::size_t Graph::weight_bytes() const {
  std::size_t bytes = 0;
  for (const auto& [name, c] : constants) bytes += c.type.bytes();
  return bytes;
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, c] : constants) n += c.type.num_elements();
  return n;
}

}  // namespace hybgen
