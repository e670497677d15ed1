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

class Conv2D : public HybridBlock {
 public:
  Conv2D(int64_t channels, Shape kernel, Shape strides = {1, 1}, Shape padding = {0, 0}, Shape dilation = {1, 1},
         int64_t groups = 1, bool use_bias = true, const std::string& activation = "", int64_t in_channels = 0);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& weight() { return *weight_; }

 private:
  int64_t channels_, groups_;
  Shape kernel_, strides_, padding_, dilation_;
  bool use_bias_;
  std::string activation_;
  Parameter* weight_;
  Parameter* bias_ = nullptr;
};

// Gluon's transposed convolutions (MXNet Deconvolution): NCHW for
// Conv2DTranspose, NCW for Conv1DTranspose; weight (in_channels,
// channels / groups, kernel...), parameters named weight and bias as
// Gluon's; output_padding is MXNet's adj.
//   auto up = std::make_shared<nn::Conv2DTranspose>(32, Shape{2, 2}, Shape{2, 2});  // doubles H and W
class ConvTranspose : public HybridBlock {
 public:
  ConvTranspose(std::size_t dims, int64_t channels, Shape kernel, Shape strides, Shape padding, Shape output_padding,
                Shape dilation, int64_t groups, bool use_bias, const std::string& activation, int64_t in_channels);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& weight() { return *weight_; }

 private:
  int64_t channels_, groups_;
  Shape kernel_, strides_, padding_, output_padding_, dilation_;
  bool use_bias_;
  std::string activation_;
  Parameter* weight_;
  Parameter* bias_ = nullptr;
};

class Conv2DTranspose : public ConvTranspose {
 public:
  Conv2DTranspose(int64_t channels, Shape kernel, Shape strides = {1, 1}, Shape padding = {0, 0},
                  Shape output_padding = {0, 0}, Shape dilation = {1, 1}, int64_t groups = 1, bool use_bias = true,
                  const std::string& activation = "", int64_t in_channels = 0)
      : ConvTranspose(2, channels, std::move(kernel), std::move(strides), std::move(padding),
                      std::move(output_padding), std::move(dilation), groups, use_bias, activation, in_channels) {}
};

class Conv1DTranspose : public ConvTranspose {
 public:
  Conv1DTranspose(int64_t channels, Shape kernel, Shape strides = {1}, Shape padding = {0},
                  Shape output_padding = {0}, Shape dilation = {1}, int64_t groups = 1, bool use_bias = true,
                  const std::string& activation = "", int64_t in_channels = 0)
      : ConvTranspose(1, channels, std::move(kernel), std::move(strides), std::move(padding),
                      std::move(output_padding), std::move(dilation), groups, use_bias, activation, in_channels) {}
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

// 1-D (NCW) and 3-D (NCDHW) convolution: the weight is (channels,
// in_channels / groups, kernel...), in_channels deferred to the first input.
//
//   auto conv1 = std::make_shared<nn::Conv1D>(16, Shape{3}, Shape{1}, Shape{1});
//   auto conv3 = std::make_shared<nn::Conv3D>(8, Shape{3, 3, 3});
class ConvND : public HybridBlock {
 public:
  ConvND(std::size_t rank, int64_t channels, Shape kernel, Shape strides, Shape padding, Shape dilation,
         int64_t groups, bool use_bias, const std::string& activation, int64_t in_channels);
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;
  using HybridBlock::hybrid_forward;
  Parameter& weight() { return *weight_; }

 private:
  std::size_t rank_;
  int64_t channels_, groups_;
  Shape kernel_, strides_, padding_, dilation_;
  bool use_bias_;
  std::string activation_;
  Parameter* weight_;
  Parameter* bias_ = nullptr;
};

class Conv1D : public ConvND {
 public:
  Conv1D(int64_t channels, Shape kernel, Shape strides = {1}, Shape padding = {0}, Shape dilation = {1},
         int64_t groups = 1, bool use_bias = true, const std::string& activation = "", int64_t in_channels = 0)
      : ConvND(1, channels, kernel, strides, padding, dilation, groups, use_bias, activation, in_channels) {}
};

class Conv3D : public ConvND {
 public:
  Conv3D(int64_t channels, Shape kernel, Shape strides = {1, 1, 1}, Shape padding = {0, 0, 0},
         Shape dilation = {1, 1, 1}, int64_t groups = 1, bool use_bias = true, const std::string& activation = "",
         int64_t in_channels = 0)
      : ConvND(3, channels, kernel, strides, padding, dilation, groups, use_bias, activation, in_channels) {}
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
