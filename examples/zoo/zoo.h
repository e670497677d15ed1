// Model-zoo architectures built with runtime-lite's layers, following MXNet
// Gluon's model_zoo.vision (1.9.1) layer for layer, and a transformer
// encoder layer. Each returns an uninitialised block.
//
//   auto net = zoo::resnet18_v1();
//   net->initialize(init::Xavier(), 42);
//   Tensor y = (*net)(Tensor::random_normal({1, 3, 224, 224}, 0, 1, 7));
#pragma once

#include <memory>

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

}  // namespace hybgen::zoo
