// Gluon's convolution, transposed convolution and pooling layers (NCHW; NCW
// for Conv1DTranspose).
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

}  // namespace hybgen::nn
