#include "runtime-lite/nn/conv_layers.h"

namespace hybgen::nn {

Conv2D::Conv2D(int64_t channels, Shape kernel, Shape strides, Shape padding, Shape dilation, int64_t groups,
               bool use_bias, const std::string& activation, int64_t in_channels)
    : HybridBlock("conv"),
      channels_(channels),
      groups_(groups),
      kernel_(std::move(kernel)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      dilation_(std::move(dilation)),
      use_bias_(use_bias),
      activation_(activation) {
  if (kernel_.size() != 2) throw Error("Conv2D: kernel must have 2 values, got " + shape_str(kernel_));
  weight_ = &add_param("weight", {channels, in_channels / groups, kernel_[0], kernel_[1]});
  if (use_bias) {
    bias_ = &add_param("bias", {channels});
    bias_->set_default_initializer(init::Zero());
  }
}

Tensor Conv2D::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!weight_->shape_known() && x.has_shape()) {
    const Shape& s = x.shape();
    if (s.size() != 4) throw Error(prefix() + ": Conv2D takes NCHW input, got " + shape_str(s));
    weight_->set_shape({channels_, s[1] / groups_, kernel_[0], kernel_[1]});
  }
  Tensor y = F.Convolution(x, F.param(*weight_), use_bias_ ? F.param(*bias_) : Tensor(), kernel_, channels_, strides_,
                           padding_, dilation_, groups_, !use_bias_, "fwd");
  if (!activation_.empty()) y = F.Activation(y, activation_, activation_ + "_fwd");
  return y;
}

ConvTranspose::ConvTranspose(std::size_t dims, int64_t channels, Shape kernel, Shape strides, Shape padding,
                             Shape output_padding, Shape dilation, int64_t groups, bool use_bias,
                             const std::string& activation, int64_t in_channels)
    : HybridBlock("conv"),
      channels_(channels),
      groups_(groups),
      kernel_(std::move(kernel)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      output_padding_(std::move(output_padding)),
      dilation_(std::move(dilation)),
      use_bias_(use_bias),
      activation_(activation) {
  const std::string layer = dims == 1 ? "Conv1DTranspose" : "Conv2DTranspose";
  for (const Shape* s : {&kernel_, &strides_, &padding_, &output_padding_, &dilation_})
    if (s->size() != dims)
      throw Error(layer + ": kernel, strides, padding, output_padding and dilation must have " +
                  std::to_string(dims) + " values, got " + shape_str(*s));
  if (channels <= 0 || groups <= 0 || channels % groups)
    throw Error(layer + ": channels " + std::to_string(channels) + " must be a positive multiple of groups " +
                std::to_string(groups));
  Shape w{in_channels, channels / groups};
  w.insert(w.end(), kernel_.begin(), kernel_.end());
  weight_ = &add_param("weight", w);
  if (use_bias) {
    bias_ = &add_param("bias", {channels});
    bias_->set_default_initializer(init::Zero());
  }
}

Tensor ConvTranspose::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!weight_->shape_known() && x.has_shape()) {
    const Shape& s = x.shape();
    if (s.size() != kernel_.size() + 2)
      throw Error(prefix() + ": takes " + (kernel_.size() == 1 ? "NCW" : "NCHW") + " input, got " + shape_str(s));
    Shape w{s[1], channels_ / groups_};
    w.insert(w.end(), kernel_.begin(), kernel_.end());
    weight_->set_shape(w);
  }
  Tensor y = F.Deconvolution(x, F.param(*weight_), use_bias_ ? F.param(*bias_) : Tensor(), kernel_, channels_,
                             strides_, padding_, output_padding_, dilation_, groups_, !use_bias_, {}, "fwd");
  if (!activation_.empty()) y = F.Activation(y, activation_, activation_ + "_fwd");
  return y;
}

Pool2D::Pool2D(const std::string& type, Shape pool_size, Shape strides, Shape padding, bool ceil_mode, bool global,
               bool count_include_pad)
    : HybridBlock("pool"),
      type_(type),
      pool_size_(pool_size),
      strides_(strides.empty() ? pool_size : strides),
      padding_(std::move(padding)),
      ceil_mode_(ceil_mode),
      global_(global),
      count_include_pad_(count_include_pad) {}

Tensor Pool2D::hybrid_forward(const Ops& F, const Tensor& x) {
  return F.Pooling(x, pool_size_, type_, strides_, padding_, global_, ceil_mode_ ? "full" : "valid",
                   count_include_pad_, "fwd");
}

ConvND::ConvND(std::size_t rank, int64_t channels, Shape kernel, Shape strides, Shape padding, Shape dilation,
               int64_t groups, bool use_bias, const std::string& activation, int64_t in_channels)
    : HybridBlock("conv"),
      rank_(rank),
      channels_(channels),
      groups_(groups),
      kernel_(std::move(kernel)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      dilation_(std::move(dilation)),
      use_bias_(use_bias),
      activation_(activation) {
  const std::string name = "Conv" + std::to_string(rank) + "D";
  for (const Shape* s : {&kernel_, &strides_, &padding_, &dilation_})
    if (s->size() != rank)
      throw Error(name + ": kernel, strides, padding and dilation must have " + std::to_string(rank) +
                  " values, got " + shape_str(*s));
  if (groups <= 0) throw Error(name + ": groups must be positive");
  Shape w{channels, in_channels / groups};
  w.insert(w.end(), kernel_.begin(), kernel_.end());
  weight_ = &add_param("weight", w);
  if (use_bias) {
    bias_ = &add_param("bias", {channels});
    bias_->set_default_initializer(init::Zero());
  }
}

Tensor ConvND::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!weight_->shape_known() && x.has_shape()) {
    const Shape& s = x.shape();
    if (s.size() != rank_ + 2)
      throw Error(prefix() + ": Conv" + std::to_string(rank_) + "D takes " + (rank_ == 1 ? "NCW" : "NCDHW") +
                  " input, got " + shape_str(s));
    Shape w{channels_, s[1] / groups_};
    w.insert(w.end(), kernel_.begin(), kernel_.end());
    weight_->set_shape(w);
  }
  Tensor y = F.Convolution(x, F.param(*weight_), use_bias_ ? F.param(*bias_) : Tensor(), kernel_, channels_, strides_,
                           padding_, dilation_, groups_, !use_bias_, "fwd");
  if (!activation_.empty()) y = F.Activation(y, activation_, activation_ + "_fwd");
  return y;
}

}  // namespace hybgen::nn
