// Tensor: the value type of runtime-lite. Either concrete (float32 data in
// shared storage: copies are cheap and share data, like MXNet's NDArray) or
// symbolic (a placeholder in a graph being traced, like an MXNet Symbol).
//
//   Tensor x = Tensor::random_normal({1, 512}, 0.0f, 1.0f, /*seed=*/7);
//   Tensor y = (x * 2.0f + 1.0f).copy();
//   std::cout << y;                        // numpy-style printing
//   Tensor s = sym::var("data");           // symbolic: s.data() throws SymbolicValueError
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/tensor_type.h"

namespace hybgen {

struct SymNode;

// Thrown when code reads the values of a symbolic tensor (inside a traced
// hybrid_forward, for example).
struct SymbolicValueError : Error {
  using Error::Error;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: no data, no symbol
  explicit Tensor(const Shape& shape);  // zeros
  static Tensor from_vector(const Shape& shape, std::vector<float> values);
  static Tensor full(const Shape& shape, float value);
  // Deterministic on every platform: the same seed gives the same values.
  static Tensor random_normal(const Shape& shape, float mean, float stddev, uint64_t seed);
  static Tensor random_uniform(const Shape& shape, float low, float high, uint64_t seed);
  // Output `index` of a symbol node (used by the tracer).
  static Tensor symbolic(std::shared_ptr<SymNode> node, int index);

  bool defined() const { return storage_ != nullptr || sym_ != nullptr; }
  bool is_symbolic() const { return sym_ != nullptr; }
  // A symbolic tensor's shape may be unknown (sym::var("data") without one).
  bool has_shape() const;
  // Throws Error for a symbolic tensor whose shape is unknown.
  const Shape& shape() const;
  const TensorType& type() const;
  DType dtype() const { return DType::kFloat32; }
  int64_t size() const { return num_elements(shape()); }

  // Values; throw SymbolicValueError for symbolic tensors.
  float* data();  // counts as a write (write_count())
  const float* data() const;
  // How many times the storage this tensor shares was handed out writable by
  // data(): a change means its values may have changed.
  uint64_t write_count() const;
  float at(std::initializer_list<int64_t> index) const;
  std::vector<float> to_vector() const;
  Tensor copy() const;  // concrete: new storage; symbolic: the same symbol

  // numpy-style text for concrete tensors, "<Symbol NAME>" for symbols.
  std::string str() const;
  // Symbolic only: the name of the symbol, and hybgen's model JSON of the
  // graph that computes it.
  std::string name() const;
  std::string tojson() const;

  const std::shared_ptr<SymNode>& sym_node() const { return sym_; }
  int sym_index() const { return sym_index_; }

 private:
  void require_values() const;

  // The values, and how often they were handed out for writing (data()),
  // so that a hybridized block sees a parameter written in place.
  struct Storage {
    std::vector<float> values;
    std::atomic<uint64_t> writes{0};
    explicit Storage(std::vector<float> v) : values(std::move(v)) {}
  };

  TensorType type_;
  std::shared_ptr<Storage> storage_;
  std::shared_ptr<SymNode> sym_;
  int sym_index_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace hybgen
