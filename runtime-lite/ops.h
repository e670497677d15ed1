// Ops: the `F` handed to hybrid_forward, named like Gluon's F (nd / sym).
// The same calls run eagerly on concrete tensors and build graph nodes on
// symbolic ones; `name` optionally names the traced node.
//
//   Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
//     return F.relu(F.FullyConnected(x, F.param(*weight), F.param(*bias), 64));
//   }
//
// Tensor operators (+ - * / with tensors or floats) map to broadcast_* and
// the scalar ops.
#pragma once

#include <string>
#include <vector>

#include "runtime-lite/tensor.h"

namespace hybgen {

class Parameter;

class Ops {
 public:
  explicit Ops(bool symbolic = false) : symbolic_(symbolic) {}
  bool symbolic() const { return symbolic_; }
  // The parameter as the mode needs it: its symbol while tracing, else its data.
  Tensor param(Parameter& p) const;

  Tensor FullyConnected(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t num_hidden,
                        bool no_bias = false, bool flatten = true, const std::string& name = "") const;
  Tensor Activation(const Tensor& x, const std::string& act_type, const std::string& name = "") const;
  Tensor relu(const Tensor& x, const std::string& name = "") const { return Activation(x, "relu", name); }
  Tensor sigmoid(const Tensor& x, const std::string& name = "") const { return Activation(x, "sigmoid", name); }
  Tensor tanh(const Tensor& x, const std::string& name = "") const { return Activation(x, "tanh", name); }
  Tensor softrelu(const Tensor& x, const std::string& name = "") const { return Activation(x, "softrelu", name); }
  Tensor softsign(const Tensor& x, const std::string& name = "") const { return Activation(x, "softsign", name); }
  Tensor broadcast_add(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor broadcast_sub(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor broadcast_mul(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor broadcast_div(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor broadcast_maximum(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor broadcast_minimum(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape, bool reverse = false,
                 const std::string& name = "") const;
  Tensor flatten(const Tensor& x, const std::string& name = "") const;
  Tensor softmax(const Tensor& x, int64_t axis = -1, const std::string& name = "") const;
  Tensor log_softmax(const Tensor& x, int64_t axis = -1, const std::string& name = "") const;
  Tensor Dropout(const Tensor& x, double p = 0.5, const std::string& name = "") const;
  Tensor identity(const Tensor& x, const std::string& name = "") const;

 private:
  bool symbolic_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, float s);
Tensor operator-(const Tensor& a, float s);
Tensor operator*(const Tensor& a, float s);
Tensor operator/(const Tensor& a, float s);
Tensor operator+(float s, const Tensor& a);
Tensor operator-(float s, const Tensor& a);
Tensor operator*(float s, const Tensor& a);
Tensor operator/(float s, const Tensor& a);

}  // namespace hybgen
