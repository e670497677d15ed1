// A named, learnable tensor of a block (Gluon's Parameter). Its shape may be
// deferred (0 for unknown dims) until the first forward pass tells it.
//
//   Parameter w("dense0_weight", {256, 0});
//   w.set_initializer(init::Xavier(), 42);   // waits for the shape
//   w.set_shape({256, 512});                 // now initialised
//   Tensor t = w.data();  Tensor s = w.var();
#pragma once

#include <memory>
#include <string>

#include "runtime-lite/initializer.h"
#include "runtime-lite/tensor.h"

namespace hybgen {

class Parameter {
 public:
  Parameter(std::string name, Shape shape);

  const std::string& name() const { return name_; }
  const Shape& shape() const { return shape_; }
  bool shape_known() const;
  bool initialized() const { return data_.defined(); }

  // An initializer of its own (Dense biases are zeros whatever the block's is).
  void set_default_initializer(const Initializer& init) { own_init_ = init.clone(); }
  // Initialises now if the shape is known, else when set_shape completes it.
  void set_initializer(const Initializer& init, uint64_t seed);
  // Fills deferred (0) dims; Error if a known dim disagrees.
  void set_shape(const Shape& shape);

  // The values; Error naming the parameter when not initialised yet.
  Tensor& data();
  void set_data(const Tensor& value);
  // The symbol standing for this parameter in a traced graph.
  Tensor var();

 private:
  void initialize_now();

  std::string name_;
  Shape shape_;
  Tensor data_;
  std::unique_ptr<Initializer> own_init_, pending_init_;
  uint64_t seed_ = 0;
};

}  // namespace hybgen
