// Gluon's convolution, transposed convolution and pooling layers (NCHW; NCW
// for Conv1DTranspose; the 1-D and 3-D convolution and pooling layers at the
// end of the file: NCW and NCDHW).
//
//   auto conv = std::make_shared<nn::Conv2D>(64, Shape{3, 3}, Shape{1, 1}, Shape{1, 1});  // in_channels deferred
//   auto pool = std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}, Shape{1, 1});
//   auto gap = std::make_shared<nn::GlobalAvgPool2D>();
//   auto up = std::make_shared<nn::Conv2DTranspose>(32, Shape{2, 2}, Shape{2, 2});
#pragma once

#include <string>
#include <vector>

#include "runtime-lite/block.h"

namespace hybgen::nn {

// Gluon's convolution layers, as its _Conv: Convolution or, transposed,
// Deconvolution over `rank` spatial axes (1: NCW, 2: NCHW, 3: NCDHW). The
// weight is (channels, in_channels / groups, kernel...), transposed
// (in_channels, channels / groups, kernel...); in_channels 0 is taken from
// the first input. Parameters are named weight and bias as Gluon's;
// output_padding is MXNet's adj. Strides, padding, dilation and
// output_padding have one value per axis, or none for the defaults.
class ConvLayer : public HybridBlock {
 public:
  struct Options {
    Shape strides, padding, dilation, output_padding;
    int64_t groups = 1;
    bool use_bias = true;
    std::string activation;
    int64_t in_channels = 0;
  };
  ConvLayer(std::size_t rank, bool transposed, int64_t channels, Shape kernel, Options options);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& weight() { return *weight_; }

 private:
  std::string layer_name() const;
  Shape weight_shape(int64_t in_channels) const;

  std::size_t rank_;
  bool transposed_;
  int64_t channels_;
  Shape kernel_;
  Options options_;
  Parameter* weight_;
  Parameter* bias_ = nullptr;
};

class Conv2D : public ConvLayer {
 public:
  Conv2D(int64_t channels, Shape kernel, Shape strides = {1, 1}, Shape padding = {0, 0}, Shape dilation = {1, 1},
         int64_t groups = 1, bool use_bias = true, const std::string& activation = "", int64_t in_channels = 0)
      : ConvLayer(2, false, channels, std::move(kernel),
                  {std::move(strides), std::move(padding), std::move(dilation), {}, groups, use_bias, activation,
                   in_channels}) {}
};

//   auto up = std::make_shared<nn::Conv2DTranspose>(32, Shape{2, 2}, Shape{2, 2});  // doubles H and W
class Conv2DTranspose : public ConvLayer {
 public:
  Conv2DTranspose(int64_t channels, Shape kernel, Shape strides = {1, 1}, Shape padding = {0, 0},
                  Shape output_padding = {0, 0}, Shape dilation = {1, 1}, int64_t groups = 1, bool use_bias = true,
                  const std::string& activation = "", int64_t in_channels = 0)
      : ConvLayer(2, true, channels, std::move(kernel),
                  {std::move(strides), std::move(padding), std::move(dilation), std::move(output_padding), groups,
                   use_bias, activation, in_channels}) {}
};

class Conv1DTranspose : public ConvLayer {
 public:
  Conv1DTranspose(int64_t channels, Shape kernel, Shape strides = {1}, Shape padding = {0},
                  Shape output_padding = {0}, Shape dilation = {1}, int64_t groups = 1, bool use_bias = true,
                  const std::string& activation = "", int64_t in_channels = 0)
      : ConvLayer(1, true, channels, std::move(kernel),
                  {std::move(strides), std::move(padding), std::move(dilation), std::move(output_padding), groups,
                   use_bias, activation, in_channels}) {}
};

// Shared by the pooling layers: window, stride (default: the window), padding.
class Pool2D : public HybridBlock {
 public:
  Pool2D(const std::string& type, Shape pool_size, Shape strides, Shape padding, bool ceil_mode, bool global,
         bool count_include_pad);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;

 private:
  std::string type_;
  Shape pool_size_, strides_, padding_;
  bool ceil_mode_, global_, count_include_pad_;
};

class MaxPool2D : public Pool2D {
 public:
  explicit MaxPool2D(Shape pool_size = {2, 2}, Shape strides = {}, Shape padding = {0, 0}, bool ceil_mode = false)
      : Pool2D("max", pool_size, strides, padding, ceil_mode, false, true) {}
};

class AvgPool2D : public Pool2D {
 public:
  explicit AvgPool2D(Shape pool_size = {2, 2}, Shape strides = {}, Shape padding = {0, 0}, bool ceil_mode = false,
                     bool count_include_pad = true)
      : Pool2D("avg", pool_size, strides, padding, ceil_mode, false, count_include_pad) {}
};

class GlobalAvgPool2D : public Pool2D {
 public:
  GlobalAvgPool2D() : Pool2D("avg", {1, 1}, {1, 1}, {0, 0}, false, true, true) {}
};

class GlobalMaxPool2D : public Pool2D {
 public:
  GlobalMaxPool2D() : Pool2D("max", {1, 1}, {1, 1}, {0, 0}, false, true, true) {}
};

//   auto conv1 = std::make_shared<nn::Conv1D>(16, Shape{3}, Shape{1}, Shape{1});
//   auto conv3 = std::make_shared<nn::Conv3D>(8, Shape{3, 3, 3});
class Conv1D : public ConvLayer {
 public:
  Conv1D(int64_t channels, Shape kernel, Shape strides = {1}, Shape padding = {0}, Shape dilation = {1},
         int64_t groups = 1, bool use_bias = true, const std::string& activation = "", int64_t in_channels = 0)
      : ConvLayer(1, false, channels, std::move(kernel),
                  {std::move(strides), std::move(padding), std::move(dilation), {}, groups, use_bias, activation,
                   in_channels}) {}
};

class Conv3D : public ConvLayer {
 public:
  Conv3D(int64_t channels, Shape kernel, Shape strides = {1, 1, 1}, Shape padding = {0, 0, 0},
         Shape dilation = {1, 1, 1}, int64_t groups = 1, bool use_bias = true, const std::string& activation = "",
         int64_t in_channels = 0)
      : ConvLayer(3, false, channels, std::move(kernel),
                  {std::move(strides), std::move(padding), std::move(dilation), {}, groups, use_bias, activation,
                   in_channels}) {}
};

// 1-D and 3-D pooling, through Pool2D (Pooling takes the rank from the
// window, or for global pooling from the data).
class MaxPool1D : public Pool2D {
 public:
  explicit MaxPool1D(Shape pool_size = {2}, Shape strides = {}, Shape padding = {0}, bool ceil_mode = false)
      : Pool2D("max", pool_size, strides, padding, ceil_mode, false, true) {}
};

class AvgPool1D : public Pool2D {
 public:
  explicit AvgPool1D(Shape pool_size = {2}, Shape strides = {}, Shape padding = {0}, bool ceil_mode = false,
                     bool count_include_pad = true)
      : Pool2D("avg", pool_size, strides, padding, ceil_mode, false, count_include_pad) {}
};

class GlobalAvgPool1D : public Pool2D {
 public:
  GlobalAvgPool1D() : Pool2D("avg", {1}, {1}, {0}, false, true, true) {}
};

class GlobalMaxPool1D : public Pool2D {
 public:
  GlobalMaxPool1D() : Pool2D("max", {1}, {1}, {0}, false, true, true) {}
};

class MaxPool3D : public Pool2D {
 public:
  explicit MaxPool3D(Shape pool_size = {2, 2, 2}, Shape strides = {}, Shape padding = {0, 0, 0},
                     bool ceil_mode = false)
      : Pool2D("max", pool_size, strides, padding, ceil_mode, false, true) {}
};

class AvgPool3D : public Pool2D {
 public:
  explicit AvgPool3D(Shape pool_size = {2, 2, 2}, Shape strides = {}, Shape padding = {0, 0, 0},
                     bool ceil_mode = false, bool count_include_pad = true)
      : Pool2D("avg", pool_size, strides, padding, ceil_mode, false, count_include_pad) {}
};

class GlobalAvgPool3D : public Pool2D {
 public:
  GlobalAvgPool3D() : Pool2D("avg", {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false, true, true) {}
};

class GlobalMaxPool3D : public Pool2D {
 public:
  GlobalMaxPool3D() : Pool2D("max", {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false, true, true) {}
};

}  // namespace hybgen::nn
