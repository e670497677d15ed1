#include "runtime-lite/tensor.h"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <random>
#include <sstream>

#include "io/model_json.h"
#include "runtime-lite/symbol.h"

namespace hybgen {
namespace {

// Uniform double in [0, 1) from the engine's raw 64 bits (std:: distributions
// differ between standard libraries; this does not).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); }

}  // namespace

Tensor::Tensor(const Shape& shape)
    : type_{shape, DType::kFloat32},
      storage_(std::make_shared<Storage>(std::vector<float>(static_cast<std::size_t>(num_elements(shape)), 0.0f))) {}

Tensor Tensor::from_vector(const Shape& shape, std::vector<float> values) {
  if (static_cast<int64_t>(values.size()) != num_elements(shape))
    throw Error("Tensor::from_vector: " + std::to_string(values.size()) + " values for shape " + shape_str(shape));
  Tensor t;
  t.type_ = TensorType{shape, DType::kFloat32};
  t.storage_ = std::make_shared<Storage>(std::move(values));
  return t;
}

Tensor Tensor::full(const Shape& shape, float value) {
  return from_vector(shape, std::vector<float>(static_cast<std::size_t>(num_elements(shape)), value));
}

Tensor Tensor::random_normal(const Shape& shape, float mean, float stddev, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t i = 0; i < v.size(); i += 2) {
    // Box-Muller: two independent normals from two uniforms.
    const double u1 = 1.0 - unit(rng), u2 = unit(rng);
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 6.283185307179586 * u2;
    v[i] = static_cast<float>(mean + stddev * r * std::cos(theta));
    if (i + 1 < v.size()) v[i + 1] = static_cast<float>(mean + stddev * r * std::sin(theta));
  }
  return from_vector(shape, std::move(v));
}

Tensor Tensor::random_uniform(const Shape& shape, float low, float high, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(static_cast<std::size_t>(num_elements(shape)));
  for (auto& x : v) x = static_cast<float>(low + (high - low) * unit(rng));
  return from_vector(shape, std::move(v));
}

Tensor Tensor::symbolic(std::shared_ptr<SymNode> node, int index) {
  Tensor t;
  const auto& type = node->out_types.at(static_cast<std::size_t>(index));
  if (type) t.type_ = *type;
  t.sym_ = std::move(node);
  t.sym_index_ = index;
  return t;
}

bool Tensor::has_shape() const {
  if (!sym_) return storage_ != nullptr;
  return sym_->out_types.at(static_cast<std::size_t>(sym_index_)).has_value();
}

const Shape& Tensor::shape() const { return type().shape; }

const TensorType& Tensor::type() const {
  if (!defined()) throw Error("the tensor is undefined (default-constructed)");
  if (sym_ && !has_shape())
    throw Error("symbol '" + name() + "' has no known shape (give sym::var a shape, or call the block on data)");
  return type_;
}

void Tensor::require_values() const {
  if (sym_)
    throw SymbolicValueError(
        "cannot read the values of symbol '" + name() +
        "': while a hybridized block is traced, tensors inside hybrid_forward are symbolic placeholders without "
        "data, and a value read now would be baked into the graph. Compute with F.* ops and Tensor operators "
        "instead; to inspect real values, call the block without hybridize()");
  if (!storage_) throw Error("the tensor is undefined (default-constructed)");
}

float* Tensor::data() {
  require_values();
  storage_->writes.fetch_add(1, std::memory_order_relaxed);
  return storage_->values.data();
}

const float* Tensor::data() const {
  require_values();
  return storage_->values.data();
}

uint64_t Tensor::write_count() const {
  require_values();
  return storage_->writes.load(std::memory_order_relaxed);
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  require_values();
  const Shape& s = shape();
  if (index.size() != s.size())
    throw Error("at(): " + std::to_string(index.size()) + " indices for a tensor of rank " + std::to_string(s.size()));
  int64_t flat = 0, d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= s[d]) throw Error("at(): index " + std::to_string(i) + " out of range for axis " + std::to_string(d) + " of " + shape_str(s));
    flat = flat * s[d++] + i;
  }
  return storage_->values[static_cast<std::size_t>(flat)];
}

std::vector<float> Tensor::to_vector() const {
  require_values();
  return storage_->values;
}

Tensor Tensor::copy() const {
  if (sym_) return *this;
  require_values();
  return from_vector(shape(), storage_->values);
}

std::string Tensor::name() const {
  if (!sym_) return "";
  if (sym_->out_types.size() <= 1) return sym_->name;
  return sym_->name + "_output" + std::to_string(sym_index_);
}

std::string Tensor::tojson() const {
  if (!sym_) throw Error("tojson() is for symbols; this tensor holds values");
  return model_json_text(sym::to_graph({*this}, name(), false));
}

namespace {

std::string number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(v));
  return buf;
}

// numpy's print options: tensors of more than 1000 values show the first and
// last 3 entries of each longer axis.
constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;

// Prints axis `d` of the block starting at `offset`.
void print_axis(std::ostringstream& os, const std::vector<float>& v, const Shape& s, std::size_t d, int64_t offset,
                int depth, bool summarize) {
  const int64_t stride = num_elements(Shape(s.begin() + static_cast<long>(d) + 1, s.end()));
  os << "[";
  const int64_t n = s[d];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << (d + 1 == s.size() ? "..., " : "...,\n" + std::string(depth + 1, ' '));
      i = n - kEdgeItems;
    }
    if (d + 1 == s.size()) os << number(v[static_cast<std::size_t>(offset + i)]);
    else print_axis(os, v, s, d + 1, offset + i * stride, depth + 1, summarize);
    if (i + 1 < n) os << (d + 1 == s.size() ? ", " : ",\n" + std::string(depth + 1, ' '));
  }
  os << "]";
}

}  // namespace

std::string Tensor::str() const {
  if (sym_) return "<Symbol " + name() + ">";
  if (!storage_) return "<Tensor undefined>";
  std::ostringstream os;
  const Shape& s = shape();
  if (s.empty()) os << number(storage_->values[0]);
  else print_axis(os, storage_->values, s, 0, 0, 0, size() > kSummarizeAbove);
  std::string dims;
  for (std::size_t i = 0; i < s.size(); ++i) dims += (i ? "x" : "") + std::to_string(s[i]);
  os << "\n<Tensor " << (dims.empty() ? "scalar" : dims) << " float32>";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace hybgen
