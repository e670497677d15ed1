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

#include <climits>
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

  // Convolution and pooling, NCW, NCHW or NCDHW as the kernel has 1, 2 or 3
  // values (global pooling: as the data has 3, 4 or 5 dims). Empty
  // stride/pad/dilate mean 1/0/1.
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
  // Data (N, C, spatial...): InstanceNorm's gamma/beta are (C,), GroupNorm's
  // (num_groups,) as in MXNet 1.9. L2Normalization mode: instance, channel
  // or spatial. LRN: NCHW, nsize odd.
  Tensor InstanceNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-3,
                      const std::string& name = "") const;
  Tensor GroupNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t num_groups = 1,
                   double eps = 1e-5, const std::string& name = "") const;
  Tensor L2Normalization(const Tensor& x, const std::string& mode = "instance", double eps = 1e-10,
                         const std::string& name = "") const;
  Tensor LRN(const Tensor& x, int64_t nsize, double alpha = 1e-4, double beta = 0.75, double knorm = 2.0,
             const std::string& name = "") const;
  Tensor LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t axis = -1, double eps = 1e-5,
                   const std::string& name = "") const;
  // MXNet's fused RNN on data (T, N, C): mode lstm, gru, rnn_tanh or rnn_relu;
  // parameters in MXNet's flat layout (gen/ops/rnn.h); state (and, for lstm,
  // state_cell; undefined otherwise) of shape (L*D, N, H). Returns the output
  // (T, N, D*H), then with state_outputs the last state (and cell).
  std::vector<Tensor> RNN(const Tensor& data, const Tensor& parameters, const Tensor& state, const Tensor& state_cell,
                          int64_t state_size, int64_t num_layers, const std::string& mode, bool bidirectional = false,
                          bool state_outputs = false, double p = 0.0, const std::string& name = "") const;
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
  Tensor max(const Tensor& x, std::vector<int64_t> axis = {}, bool keepdims = false, const std::string& name = "") const;
  Tensor min(const Tensor& x, std::vector<int64_t> axis = {}, bool keepdims = false, const std::string& name = "") const;
  Tensor prod(const Tensor& x, std::vector<int64_t> axis = {}, bool keepdims = false, const std::string& name = "") const;
  // ord 1 or 2.
  Tensor norm(const Tensor& x, int64_t ord = 2, std::vector<int64_t> axis = {}, bool keepdims = false,
              const std::string& name = "") const;
  // Indices as floats; axis kAllAxes: over all elements.
  static constexpr int64_t kAllAxes = INT64_MIN;
  Tensor argmax(const Tensor& x, int64_t axis = kAllAxes, bool keepdims = false, const std::string& name = "") const;
  Tensor argmin(const Tensor& x, int64_t axis = kAllAxes, bool keepdims = false, const std::string& name = "") const;
  // ret_typ: value, indices, mask (one output) or both (values, indices).
  std::vector<Tensor> topk(const Tensor& x, int64_t axis = -1, int64_t k = 1, const std::string& ret_typ = "indices",
                           bool is_ascend = false, const std::string& name = "") const;
  Tensor pick(const Tensor& x, const Tensor& index, int64_t axis = -1, bool keepdims = false,
              const std::string& mode = "clip", const std::string& name = "") const;
  Tensor tile(const Tensor& x, std::vector<int64_t> reps, const std::string& name = "") const;
  Tensor repeat(const Tensor& x, int64_t repeats, int64_t axis = kAllAxes, const std::string& name = "") const;
  Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0, const std::string& name = "") const;
  Tensor reverse(const Tensor& x, std::vector<int64_t> axis, const std::string& name = "") const;
  // mode: constant, edge, reflect; pad_width (before, after) per axis.
  Tensor Pad(const Tensor& x, std::vector<int64_t> pad_width, const std::string& mode = "constant",
             double constant_value = 0.0, const std::string& name = "") const;
  // dtype float32 or float16 (values rounded to float16, kept as float32).
  Tensor Cast(const Tensor& x, const std::string& dtype, const std::string& name = "") const;
  Tensor take(const Tensor& a, const Tensor& indices, int64_t axis = 0, const std::string& mode = "clip",
              const std::string& name = "") const;
  Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1.0, double off_value = 0.0,
                 const std::string& name = "") const;
  Tensor slice_like(const Tensor& x, const Tensor& shape_like, std::vector<int64_t> axes = {},
                    const std::string& name = "") const;
  Tensor space_to_depth(const Tensor& x, int64_t block_size, const std::string& name = "") const;
  Tensor depth_to_space(const Tensor& x, int64_t block_size, const std::string& name = "") const;
  Tensor SequenceMask(const Tensor& x, const Tensor& sequence_length, double value = 0.0, int64_t axis = 0,
                      const std::string& name = "") const;
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
  // Elementwise math, rounding (round: half away from zero; rint: MXNet's,
  // ties to floor), identities at inference (BlockGrad, make_loss) and
  // constants shaped like x.
  Tensor expm1(const Tensor& x, const std::string& name = "") const;
  Tensor log2(const Tensor& x, const std::string& name = "") const;
  Tensor log10(const Tensor& x, const std::string& name = "") const;
  Tensor log1p(const Tensor& x, const std::string& name = "") const;
  Tensor rsqrt(const Tensor& x, const std::string& name = "") const;
  Tensor cbrt(const Tensor& x, const std::string& name = "") const;
  Tensor rcbrt(const Tensor& x, const std::string& name = "") const;
  Tensor reciprocal(const Tensor& x, const std::string& name = "") const;
  Tensor abs(const Tensor& x, const std::string& name = "") const;
  Tensor negative(const Tensor& x, const std::string& name = "") const;
  Tensor square(const Tensor& x, const std::string& name = "") const;
  Tensor sign(const Tensor& x, const std::string& name = "") const;
  Tensor floor(const Tensor& x, const std::string& name = "") const;
  Tensor ceil(const Tensor& x, const std::string& name = "") const;
  Tensor trunc(const Tensor& x, const std::string& name = "") const;
  Tensor fix(const Tensor& x, const std::string& name = "") const;
  Tensor round(const Tensor& x, const std::string& name = "") const;
  Tensor rint(const Tensor& x, const std::string& name = "") const;
  Tensor sin(const Tensor& x, const std::string& name = "") const;
  Tensor cos(const Tensor& x, const std::string& name = "") const;
  Tensor tan(const Tensor& x, const std::string& name = "") const;
  Tensor arctan(const Tensor& x, const std::string& name = "") const;
  Tensor sinh(const Tensor& x, const std::string& name = "") const;
  Tensor cosh(const Tensor& x, const std::string& name = "") const;
  Tensor arcsinh(const Tensor& x, const std::string& name = "") const;
  Tensor degrees(const Tensor& x, const std::string& name = "") const;
  Tensor radians(const Tensor& x, const std::string& name = "") const;
  Tensor logical_not(const Tensor& x, const std::string& name = "") const;
  Tensor BlockGrad(const Tensor& x, const std::string& name = "") const;
  Tensor stop_gradient(const Tensor& x, const std::string& name = "") const;
  Tensor make_loss(const Tensor& x, const std::string& name = "") const;
  Tensor ones_like(const Tensor& x, const std::string& name = "") const;
  Tensor zeros_like(const Tensor& x, const std::string& name = "") const;
  // Powers: x^y with broadcasting, x^s, s^x.
  Tensor power(const Tensor& x, const Tensor& y, const std::string& name = "") const;
  Tensor power(const Tensor& x, float s, const std::string& name = "") const;
  Tensor power(float s, const Tensor& x, const std::string& name = "") const;
  Tensor broadcast_power(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor broadcast_hypot(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  // Comparisons and logical ops: 1.0f where true, 0.0f where not; the
  // tensor forms broadcast (broadcast_greater, ...), the float forms compare
  // with a scalar (_greater_scalar, ...), as MXNet's nd.greater dispatches.
  Tensor equal(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor equal(const Tensor& a, float s, const std::string& name = "") const;
  Tensor not_equal(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor not_equal(const Tensor& a, float s, const std::string& name = "") const;
  Tensor greater(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor greater(const Tensor& a, float s, const std::string& name = "") const;
  Tensor greater_equal(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor greater_equal(const Tensor& a, float s, const std::string& name = "") const;
  Tensor lesser(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor lesser(const Tensor& a, float s, const std::string& name = "") const;
  Tensor lesser_equal(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor lesser_equal(const Tensor& a, float s, const std::string& name = "") const;
  Tensor logical_and(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor logical_or(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  Tensor logical_xor(const Tensor& a, const Tensor& b, const std::string& name = "") const;
  // x where condition != 0, else y; condition of x's shape or 1-D over x's rows.
  Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y, const std::string& name = "") const;
  Tensor add_n(const std::vector<Tensor>& xs, const std::string& name = "") const;
  // shape: 0 keeps the input's size on that axis.
  Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape, const std::string& name = "") const;
  Tensor broadcast_axis(const Tensor& x, std::vector<int64_t> axis, std::vector<int64_t> size,
                        const std::string& name = "") const;
  // Empty axes: to like's whole shape; else lhs_axes of x to the sizes of like's rhs_axes.
  Tensor broadcast_like(const Tensor& x, const Tensor& like, std::vector<int64_t> lhs_axes = {},
                        std::vector<int64_t> rhs_axes = {}, const std::string& name = "") const;

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
