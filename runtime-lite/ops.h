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

  // Convolution and pooling (NCHW). Empty stride/pad/dilate mean 1/0/1.
  Tensor Convolution(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> kernel,
                     int64_t num_filter, std::vector<int64_t> stride = {}, std::vector<int64_t> pad = {},
                     std::vector<int64_t> dilate = {}, int64_t num_group = 1, bool no_bias = false,
                     const std::string& name = "") const;
  Tensor Pooling(const Tensor& x, std::vector<int64_t> kernel, const std::string& pool_type = "max",
                 std::vector<int64_t> stride = {}, std::vector<int64_t> pad = {}, bool global_pool = false,
                 const std::string& pooling_convention = "valid", bool count_include_pad = true,
                 const std::string& name = "") const;
  // Transposed convolution, NCHW (kernel of 2 values) or NCW (1 value); weight
  // (C_in, num_filter / num_group, kernel...); adj adds output pixels at the
  // end; a target_shape sets pad and adj. MXNet's default: no bias.
  Tensor Deconvolution(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> kernel,
                       int64_t num_filter, std::vector<int64_t> stride = {}, std::vector<int64_t> pad = {},
                       std::vector<int64_t> adj = {}, std::vector<int64_t> dilate = {}, int64_t num_group = 1,
                       bool no_bias = true, std::vector<int64_t> target_shape = {},
                       const std::string& name = "") const;
  // Nearest-neighbour upsampling by `scale` (NCHW); several inputs are each
  // upsampled to the first's size times scale and concatenated on the
  // channels or summed (multi_input_mode). sample_type "bilinear" takes
  // {data, weight (C, 1, k, k)} with num_filter = C.
  Tensor UpSampling(const std::vector<Tensor>& xs, int64_t scale, const std::string& sample_type = "nearest",
                    int64_t num_filter = 0, const std::string& multi_input_mode = "concat",
                    const std::string& name = "") const;
  Tensor UpSampling(const Tensor& x, int64_t scale, const std::string& sample_type = "nearest",
                    const std::string& name = "") const;
  // Bilinear resizing (NCHW, MXNet contrib.BilinearResize2D): mode "size"
  // (height, width, or the scales when scale_height > 0), "odd_scale",
  // "like" (the size of `like`), "to_even_down", "to_even_up", "to_odd_down",
  // "to_odd_up".
  Tensor BilinearResize2D(const Tensor& x, int64_t height, int64_t width, double scale_height = 0,
                          double scale_width = 0, const std::string& mode = "size", bool align_corners = true,
                          const Tensor& like = Tensor(), const std::string& name = "") const;
  Tensor BatchNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& moving_mean,
                   const Tensor& moving_var, double eps = 1e-5, bool fix_gamma = false, int64_t axis = 1,
                   const std::string& name = "") const;
  Tensor LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t axis = -1, double eps = 1e-5,
                   const std::string& name = "") const;
  // act_type: leaky, elu, selu, gelu (slope for leaky/elu); prelu takes gamma.
  Tensor LeakyReLU(const Tensor& x, const std::string& act_type = "leaky", double slope = 0.25,
                   const std::string& name = "") const;
  Tensor PReLU(const Tensor& x, const Tensor& gamma, const std::string& name = "") const;
  Tensor clip(const Tensor& x, double a_min, double a_max, const std::string& name = "") const;
  Tensor Concat(const std::vector<Tensor>& xs, int64_t dim = 1, const std::string& name = "") const;
  Tensor Embedding(const Tensor& indices, const Tensor& weight, int64_t input_dim, int64_t output_dim,
                   const std::string& name = "") const;
  Tensor transpose(const Tensor& x, std::vector<int64_t> axes = {}, const std::string& name = "") const;
  Tensor expand_dims(const Tensor& x, int64_t axis, const std::string& name = "") const;
  Tensor squeeze(const Tensor& x, std::vector<int64_t> axis = {}, const std::string& name = "") const;
  Tensor dot(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false,
             const std::string& name = "") const;
  Tensor batch_dot(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false,
                   const std::string& name = "") const;
  Tensor sum(const Tensor& x, std::vector<int64_t> axis = {}, bool keepdims = false, const std::string& name = "") const;
  Tensor mean(const Tensor& x, std::vector<int64_t> axis = {}, bool keepdims = false, const std::string& name = "") const;
  // begin/end per axis; kSliceNone (ops/op_util.h) for MXNet's None.
  Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end, std::vector<int64_t> step = {},
               const std::string& name = "") const;
  Tensor slice_axis(const Tensor& x, int64_t axis, int64_t begin, int64_t end, const std::string& name = "") const;
  std::vector<Tensor> split(const Tensor& x, int64_t num_outputs, int64_t axis = 1, bool squeeze_axis = false,
                            const std::string& name = "") const;
  Tensor exp(const Tensor& x, const std::string& name = "") const;
  Tensor log(const Tensor& x, const std::string& name = "") const;
  Tensor sqrt(const Tensor& x, const std::string& name = "") const;
  Tensor erf(const Tensor& x, const std::string& name = "") const;

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
