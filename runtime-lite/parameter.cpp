#include "runtime-lite/parameter.h"

#include <algorithm>

#include "runtime-lite/symbol.h"

namespace hybgen {

Parameter::Parameter(std::string name, Shape shape) : name_(std::move(name)), shape_(std::move(shape)) {}

bool Parameter::shape_known() const {
  return !shape_.empty() && std::all_of(shape_.begin(), shape_.end(), [](int64_t d) { return d > 0; });
}

void Parameter::set_initializer(const Initializer& init, uint64_t seed) {
  pending_init_ = own_init_ ? own_init_->clone() : init.clone();
  seed_ = seed;
  data_ = Tensor();
  if (shape_known()) initialize_now();
}

void Parameter::set_shape(const Shape& shape) {
  if (shape.size() != shape_.size()) throw Error("parameter '" + name_ + "': shape " + shape_str(shape) + " has the wrong rank for " + shape_str(shape_));
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape_[i] > 0 && shape_[i] != shape[i])
      throw Error("parameter '" + name_ + "' has shape " + shape_str(shape_) + ", the input needs " + shape_str(shape));
  shape_ = shape;
  if (pending_init_ && !data_.defined()) initialize_now();
}

void Parameter::initialize_now() {
  data_ = pending_init_->make(shape_, seed_);
  pending_init_.reset();
}

Tensor& Parameter::data() {
  if (!data_.defined())
    throw Error("parameter '" + name_ + "' is not initialized" +
                (pending_init_ ? std::string(" yet: its shape ") + shape_str(shape_) + " is deferred until the first forward pass"
                               : std::string(": call initialize() on the block first")));
  return data_;
}

void Parameter::set_data(const Tensor& value) {
  set_shape(value.shape());
  data_ = value;
  pending_init_.reset();
}

Tensor Parameter::var() {
  auto node = std::make_shared<SymNode>();
  node->op = "null";
  node->name = name_;
  node->is_parameter = true;
  node->bound = data_;
  node->parameter_shape = shape_;
  node->out_types = {shape_known() ? std::optional<TensorType>(TensorType{shape_}) : std::nullopt};
  return Tensor::symbolic(node, 0);
}

}  // namespace hybgen
