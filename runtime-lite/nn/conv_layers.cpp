#include "runtime-lite/nn/conv_layers.h"

namespace hybgen::nn {

ConvLayer::ConvLayer(std::size_t rank, bool transposed, int64_t channels, Shape kernel, Options options)
    : HybridBlock("conv"),
      rank_(rank),
      transposed_(transposed),
      channels_(channels),
      kernel_(std::move(kernel)),
      options_(std::move(options)) {
  const std::string name = layer_name();
  if (kernel_.size() != rank)
    throw Error(name + ": kernel must have " + std::to_string(rank) + " values, got " + shape_str(kernel_));
  for (const Shape* s : {&options_.strides, &options_.padding, &options_.dilation, &options_.output_padding})
    if (!s->empty() && s->size() != rank)
      throw Error(name + ": strides, padding, dilation and output_padding must have " + std::to_string(rank) +
                  " values (or none for the defaults), got " + shape_str(*s));
  if (channels <= 0 || options_.groups <= 0 || (transposed && channels % options_.groups))
    throw Error(name + ": channels " + std::to_string(channels) + " must be a positive multiple of groups " +
                std::to_string(options_.groups));
  weight_ = &add_param("weight", weight_shape(options_.in_channels));
  if (options_.use_bias) {
    bias_ = &add_param("bias", {channels});
    bias_->set_default_initializer(init::Zero());
  }
}

std::string ConvLayer::layer_name() const {
  return "Conv" + std::to_string(rank_) + "D" + (transposed_ ? "Transpose" : "");
}

// in_channels 0: a shape with a 0, which the first input completes.
Shape ConvLayer::weight_shape(int64_t in_channels) const {
  Shape w = transposed_ ? Shape{in_channels, channels_ / options_.groups}
                        : Shape{channels_, in_channels / options_.groups};
  w.insert(w.end(), kernel_.begin(), kernel_.end());
  return w;
}

Tensor ConvLayer::hybrid_forward(const Ops& F, const Tensor& x) {
  if (!weight_->shape_known() && x.has_shape()) {
    const Shape& s = x.shape();
    if (s.size() != rank_ + 2) {
      const char* layouts[] = {"NCW", "NCHW", "NCDHW"};
      throw Error(prefix() + ": " + layer_name() + " takes " + layouts[rank_ - 1] + " input, got " + shape_str(s));
    }
    weight_->set_shape(weight_shape(s[1]));
  }
  const Tensor bias = options_.use_bias ? F.param(*bias_) : Tensor();
  Tensor y = transposed_ ? F.Deconvolution(x, F.param(*weight_), bias, kernel_, channels_, options_.strides,
                                           options_.padding, options_.output_padding, options_.dilation,
                                           options_.groups, !options_.use_bias, {}, "fwd")
                         : F.Convolution(x, F.param(*weight_), bias, kernel_, channels_, options_.strides,
                                         options_.padding, options_.dilation, options_.groups, !options_.use_bias,
                                         "fwd");
  if (!options_.activation.empty()) y = F.Activation(y, options_.activation, options_.activation + "_fwd");
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

}  // namespace hybgen::nn
