// Weight initializers, as Gluon's mx.init: each fills a parameter from a seed.
//
//   net->initialize(init::Xavier(), /*seed=*/42);
//   net->initialize(init::Normal(0.01f), 7);
#pragma once

#include <cstdint>
#include <memory>

#include "runtime-lite/tensor.h"

namespace hybgen {

class Initializer {
 public:
  virtual ~Initializer() = default;
  virtual Tensor make(const Shape& shape, uint64_t seed) const = 0;
  virtual std::unique_ptr<Initializer> clone() const = 0;
};

namespace init {

// Gluon's default: uniform in +-sqrt(magnitude / ((fan_in + fan_out) / 2)).
class Xavier : public Initializer {
 public:
  explicit Xavier(float magnitude = 3.0f) : magnitude_(magnitude) {}
  Tensor make(const Shape& shape, uint64_t seed) const override;
  std::unique_ptr<Initializer> clone() const override { return std::make_unique<Xavier>(*this); }

 private:
  float magnitude_;
};

class Uniform : public Initializer {
 public:
  explicit Uniform(float scale = 0.07f) : scale_(scale) {}
  Tensor make(const Shape& shape, uint64_t seed) const override {
    return Tensor::random_uniform(shape, -scale_, scale_, seed);
  }
  std::unique_ptr<Initializer> clone() const override { return std::make_unique<Uniform>(*this); }

 private:
  float scale_;
};

class Normal : public Initializer {
 public:
  explicit Normal(float sigma = 0.01f) : sigma_(sigma) {}
  Tensor make(const Shape& shape, uint64_t seed) const override {
    return Tensor::random_normal(shape, 0.0f, sigma_, seed);
  }
  std::unique_ptr<Initializer> clone() const override { return std::make_unique<Normal>(*this); }

 private:
  float sigma_;
};

class Constant : public Initializer {
 public:
  explicit Constant(float value) : value_(value) {}
  Tensor make(const Shape& shape, uint64_t) const override { return Tensor::full(shape, value_); }
  std::unique_ptr<Initializer> clone() const override { return std::make_unique<Constant>(*this); }

 private:
  float value_;
};

class Zero : public Constant {
 public:
  Zero() : Constant(0.0f) {}
};

class One : public Constant {
 public:
  One() : Constant(1.0f) {}
};

}  // namespace init
}  // namespace hybgen
