// Model-zoo architectures built with runtime-lite's layers, following MXNet
// Gluon's model_zoo.vision (1.9.1) layer for layer, and a transformer
// encoder layer. Each returns an uninitialised block.
//
//   auto net = zoo::resnet18_v1();
//   net->initialize(init::Xavier(), 42);
//   Tensor y = (*net)(Tensor::random_normal({1, 3, 224, 224}, 0, 1, 7));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime-lite/hybgen.h"

namespace hybgen::zoo {

std::shared_ptr<HybridBlock> resnet18_v1(int64_t classes = 1000);
std::shared_ptr<HybridBlock> resnet18_v2(int64_t classes = 1000);
std::shared_ptr<HybridBlock> mobilenet_v1(int64_t classes = 1000);
std::shared_ptr<HybridBlock> mobilenet_v2(int64_t classes = 1000);
std::shared_ptr<HybridBlock> squeezenet1_1(int64_t classes = 1000);
std::shared_ptr<HybridBlock> vgg11_bn(int64_t classes = 1000);
std::shared_ptr<HybridBlock> densenet121(int64_t classes = 1000);
// Expects 299x299 inputs (its last pooling window is 8x8).
std::shared_ptr<HybridBlock> inception_v3(int64_t classes = 1000);
// One post-norm transformer encoder layer on (batch, sequence, units):
// multi-head self-attention (batch_dot + softmax), residual + LayerNorm, a
// GELU feed-forward, residual + LayerNorm.
std::shared_ptr<HybridBlock> transformer_encoder(int64_t units = 256, int64_t heads = 4, int64_t hidden = 1024);
// LeNet-5 as in the Gluon tutorials, on 1x1x28x28 (MNIST): Conv2D(6, 5) relu,
// MaxPool2D(2), Conv2D(16, 5) relu, MaxPool2D(2), Flatten, Dense(120, relu),
// Dense(84, relu), Dense(10).
std::shared_ptr<HybridBlock> lenet(int64_t classes = 10);
// A sequence classifier on (batch, 32 steps, 64 features): a 1-layer LSTM
// of `hidden` units (layout NTC), its last step, Dense(classes).
std::shared_ptr<HybridBlock> lstm_classifier(int64_t hidden = 128, int64_t classes = 10);
// A small U-Net on 1x3x64x64: three levels of two 3x3 convolutions (relu,
// `width`, 2x, 4x channels) each followed by 2x2 max pooling, a bottom stage
// (8x), then per level a Conv2DTranspose (kernel 2, stride 2) up, the
// level's skip concatenated, two 3x3 convolutions; a 1x1 convolution to
// `classes` channels per pixel.
std::shared_ptr<HybridBlock> unet(int64_t classes = 2, int64_t width = 16);

// Every architecture above by name, with the input shape it is meant for
// (batch 1): what programs that take a model name (export_zoo) look up.
struct ZooModel {
  std::string name;
  std::function<std::shared_ptr<HybridBlock>()> build;
  Shape input;
};
const std::vector<ZooModel>& models();

}  // namespace hybgen::zoo
