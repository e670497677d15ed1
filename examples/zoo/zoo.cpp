#include "zoo.h"

#include <cmath>

namespace hybgen::zoo {
namespace {

using nn::BatchNorm;
using nn::Conv2D;
using nn::HybridSequential;

std::shared_ptr<Conv2D> conv(int64_t channels, int64_t kernel, int64_t stride = 1, int64_t pad = 0, int64_t groups = 1,
                             bool bias = false) {
  return std::make_shared<Conv2D>(channels, Shape{kernel, kernel}, Shape{stride, stride}, Shape{pad, pad},
                                  Shape{1, 1}, groups, bias);
}

std::shared_ptr<Block> relu() { return std::make_shared<nn::Activation>("relu"); }

// Gluon's RELU6 block: clip(x, 0, 6).
class Relu6 : public HybridBlock {
 public:
  Relu6() : HybridBlock("relu6") {}
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.clip(x, 0.0, 6.0, "fwd"); }
  using HybridBlock::hybrid_forward;
};

// conv3x3-BN-relu-conv3x3-BN, plus the (downsampled) input, then relu.
class BasicBlockV1 : public HybridBlock {
 public:
  BasicBlockV1(int64_t channels, int64_t stride, bool downsample) : HybridBlock("basicblockv1") {
    body = register_child(std::make_shared<HybridSequential>());
    body->add(conv(channels, 3, stride, 1));
    body->add(std::make_shared<BatchNorm>());
    body->add(relu());
    body->add(conv(channels, 3, 1, 1));
    body->add(std::make_shared<BatchNorm>());
    if (downsample) {
      down = register_child(std::make_shared<HybridSequential>());
      down->add(conv(channels, 1, stride));
      down->add(std::make_shared<BatchNorm>());
    }
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor residual = down ? (*down)(x) : x;
    return F.relu((*body)(x) + residual);
  }
  using HybridBlock::hybrid_forward;
  std::shared_ptr<HybridSequential> body, down;
};

// Pre-activation: BN-relu-conv3x3-BN-relu-conv3x3 plus the input.
class BasicBlockV2 : public HybridBlock {
 public:
  BasicBlockV2(int64_t channels, int64_t stride, bool downsample) : HybridBlock("basicblockv2") {
    bn1 = register_child(std::make_shared<BatchNorm>());
    conv1 = register_child(conv(channels, 3, stride, 1));
    bn2 = register_child(std::make_shared<BatchNorm>());
    conv2 = register_child(conv(channels, 3, 1, 1));
    if (downsample) down = register_child(conv(channels, 1, stride));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor act = F.relu((*bn1)(x));
    const Tensor residual = down ? (*down)(act) : x;
    Tensor y = (*conv1)(act);
    y = (*conv2)(F.relu((*bn2)(y)));
    return y + residual;
  }
  using HybridBlock::hybrid_forward;
  std::shared_ptr<BatchNorm> bn1, bn2;
  std::shared_ptr<Conv2D> conv1, conv2, down;
};

template <typename BlockType>
std::shared_ptr<HybridSequential> resnet_stages(const std::shared_ptr<HybridSequential>& net) {
  const int64_t channels[] = {64, 64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t stride = stage == 0 ? 1 : 2;
    net->add(std::make_shared<BlockType>(channels[stage + 1], stride, channels[stage + 1] != channels[stage]));
    net->add(std::make_shared<BlockType>(channels[stage + 1], 1, false));
  }
  return net;
}

// Conv (no bias) - BN - relu or relu6, or no activation.
void add_conv(HybridSequential& out, int64_t channels, int64_t kernel = 1, int64_t stride = 1, int64_t pad = 0,
              int64_t groups = 1, const char* activation = "relu") {
  out.add(conv(channels, kernel, stride, pad, groups));
  out.add(std::make_shared<BatchNorm>());
  if (std::string(activation) == "relu") out.add(relu());
  if (std::string(activation) == "relu6") out.add(std::make_shared<Relu6>());
}

// Expand 1x1, depthwise 3x3, project 1x1; the input added when shapes allow.
class LinearBottleneck : public HybridBlock {
 public:
  LinearBottleneck(int64_t in_channels, int64_t channels, int64_t t, int64_t stride)
      : HybridBlock("linearbottleneck"), shortcut(stride == 1 && in_channels == channels) {
    out = register_child(std::make_shared<HybridSequential>());
    add_conv(*out, in_channels * t, 1, 1, 0, 1, "relu6");
    add_conv(*out, in_channels * t, 3, stride, 1, in_channels * t, "relu6");
    add_conv(*out, channels, 1, 1, 0, 1, "none");
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor y = (*out)(x);
    return shortcut ? F.broadcast_add(y, x) : y;
  }
  using HybridBlock::hybrid_forward;
  std::shared_ptr<HybridSequential> out;
  bool shortcut;
};

std::shared_ptr<HybridSequential> fire(int64_t squeeze, int64_t expand1, int64_t expand3) {
  auto block = std::make_shared<HybridSequential>();
  block->add(std::make_shared<Conv2D>(squeeze, Shape{1, 1}, Shape{1, 1}, Shape{0, 0}, Shape{1, 1}, 1, true, "relu"));
  auto paths = std::make_shared<nn::HybridConcurrent>(1);
  paths->add(std::make_shared<Conv2D>(expand1, Shape{1, 1}, Shape{1, 1}, Shape{0, 0}, Shape{1, 1}, 1, true, "relu"));
  paths->add(std::make_shared<Conv2D>(expand3, Shape{3, 3}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, 1, true, "relu"));
  block->add(paths);
  return block;
}

// Passes its input through (a DenseNet layer's shortcut branch).
class Identity : public HybridBlock {
 public:
  Identity() : HybridBlock("identity") {}
  Tensor hybrid_forward(const Ops&, const Tensor& x) override { return x; }
  using HybridBlock::hybrid_forward;
};

std::shared_ptr<HybridSequential> dense_layer(int64_t growth, int64_t bn_size) {
  auto features = std::make_shared<HybridSequential>();
  features->add(std::make_shared<BatchNorm>());
  features->add(relu());
  features->add(conv(bn_size * growth, 1));
  features->add(std::make_shared<BatchNorm>());
  features->add(relu());
  features->add(conv(growth, 3, 1, 1));
  auto out = std::make_shared<HybridSequential>();
  auto both = std::make_shared<nn::HybridConcurrent>(1);
  both->add(std::make_shared<Identity>());
  both->add(features);
  out->add(both);
  return out;
}

// A conv of Inception v3: (channels, kernel, stride, pad) without bias, BN (eps 1e-3), relu.
struct ConvSpec {
  int64_t channels, kh, kw, stride = 1, ph = 0, pw = 0;
};

void add_basic_conv(HybridSequential& out, const ConvSpec& c) {
  out.add(std::make_shared<Conv2D>(c.channels, Shape{c.kh, c.kw}, Shape{c.stride, c.stride}, Shape{c.ph, c.pw},
                                   Shape{1, 1}, 1, false));
  out.add(std::make_shared<BatchNorm>(1, 0.9, 1e-3));
  out.add(relu());
}

std::shared_ptr<HybridSequential> branch(const std::string& pool, std::vector<ConvSpec> convs) {
  auto b = std::make_shared<HybridSequential>();
  if (pool == "avg") b->add(std::make_shared<nn::AvgPool2D>(Shape{3, 3}, Shape{1, 1}, Shape{1, 1}));
  if (pool == "max") b->add(std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}));
  for (const auto& c : convs) add_basic_conv(*b, c);
  return b;
}

std::shared_ptr<nn::HybridConcurrent> concurrent(std::vector<std::shared_ptr<Block>> parts) {
  auto c = std::make_shared<nn::HybridConcurrent>(1);
  for (auto& p : parts) c->add(p);
  return c;
}

std::shared_ptr<Block> inception_a(int64_t pool_features) {
  return concurrent({branch("", {{64, 1, 1}}), branch("", {{48, 1, 1}, {64, 5, 5, 1, 2, 2}}),
                     branch("", {{64, 1, 1}, {96, 3, 3, 1, 1, 1}, {96, 3, 3, 1, 1, 1}}),
                     branch("avg", {{pool_features, 1, 1}})});
}

std::shared_ptr<Block> inception_b() {
  return concurrent({branch("", {{384, 3, 3, 2}}), branch("", {{64, 1, 1}, {96, 3, 3, 1, 1, 1}, {96, 3, 3, 2}}),
                     branch("max", {})});
}

std::shared_ptr<Block> inception_c(int64_t c7) {
  return concurrent({branch("", {{192, 1, 1}}),
                     branch("", {{c7, 1, 1}, {c7, 1, 7, 1, 0, 3}, {192, 7, 1, 1, 3, 0}}),
                     branch("", {{c7, 1, 1}, {c7, 7, 1, 1, 3, 0}, {c7, 1, 7, 1, 0, 3}, {c7, 7, 1, 1, 3, 0},
                                 {192, 1, 7, 1, 0, 3}}),
                     branch("avg", {{192, 1, 1}})});
}

std::shared_ptr<Block> inception_d() {
  return concurrent({branch("", {{192, 1, 1}, {320, 3, 3, 2}}),
                     branch("", {{192, 1, 1}, {192, 1, 7, 1, 0, 3}, {192, 7, 1, 1, 3, 0}, {192, 3, 3, 2}}),
                     branch("max", {})});
}

std::shared_ptr<Block> inception_e() {
  auto split = [](int64_t channels) {
    return concurrent({branch("", {{channels, 1, 3, 1, 0, 1}}), branch("", {{channels, 3, 1, 1, 1, 0}})});
  };
  auto b3 = std::make_shared<HybridSequential>();
  b3->add(branch("", {{384, 1, 1}}));
  b3->add(split(384));
  auto b3dbl = std::make_shared<HybridSequential>();
  b3dbl->add(branch("", {{448, 1, 1}, {384, 3, 3, 1, 1, 1}}));
  b3dbl->add(split(384));
  return concurrent({branch("", {{320, 1, 1}}), b3, b3dbl, branch("avg", {{192, 1, 1}})});
}

class TransformerEncoder : public HybridBlock {
 public:
  TransformerEncoder(int64_t units, int64_t heads, int64_t hidden)
      : HybridBlock("transformerencoder"), units_(units), heads_(heads) {
    if (units % heads) throw Error("transformer: units must divide by heads");
    auto dense = [&](int64_t n, const std::string& act = "") {
      return register_child(std::make_shared<nn::Dense>(n, act, true, 0, /*flatten=*/false));
    };
    query = dense(units), key = dense(units), value = dense(units), proj = dense(units);
    ffn1 = dense(hidden), ffn2 = dense(units);
    gelu = register_child(std::make_shared<nn::GELU>());
    norm1 = register_child(std::make_shared<nn::LayerNorm>());
    norm2 = register_child(std::make_shared<nn::LayerNorm>());
  }

  // (B, T, C) -> (B * heads, T, C / heads)
  Tensor split_heads(const Ops& F, const Tensor& x) const {
    return F.reshape(F.transpose(F.reshape(x, {0, 0, heads_, -1}), {0, 2, 1, 3}), {-3, -2});
  }

  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor q = split_heads(F, (*query)(x)), k = split_heads(F, (*key)(x)), v = split_heads(F, (*value)(x));
    const float scale = 1.0f / std::sqrt(static_cast<float>(units_ / heads_));
    const Tensor attention = F.softmax(F.batch_dot(q, k, false, true) * scale, -1);
    Tensor context = F.batch_dot(attention, v);                                      // (B*H, T, D)
    context = F.reshape(F.transpose(F.reshape(context, {-4, -1, heads_, -2}), {0, 2, 1, 3}), {0, 0, -3});
    const Tensor h = (*norm1)(x + (*proj)(context));
    return (*norm2)(h + (*ffn2)((*gelu)((*ffn1)(h))));
  }
  using HybridBlock::hybrid_forward;

 private:
  int64_t units_, heads_;
  std::shared_ptr<nn::Dense> query, key, value, proj, ffn1, ffn2;
  std::shared_ptr<nn::GELU> gelu;
  std::shared_ptr<nn::LayerNorm> norm1, norm2;
};

}  // namespace

std::shared_ptr<HybridBlock> resnet18_v1(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  net->add(conv(64, 7, 2, 3));
  net->add(std::make_shared<BatchNorm>());
  net->add(relu());
  net->add(std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}, Shape{1, 1}));
  resnet_stages<BasicBlockV1>(net);
  net->add(std::make_shared<nn::GlobalAvgPool2D>());
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

std::shared_ptr<HybridBlock> resnet18_v2(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  net->add(std::make_shared<BatchNorm>(1, 0.9, 1e-5, /*center=*/false, /*scale=*/false));
  net->add(conv(64, 7, 2, 3));
  net->add(std::make_shared<BatchNorm>());
  net->add(relu());
  net->add(std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}, Shape{1, 1}));
  resnet_stages<BasicBlockV2>(net);
  net->add(std::make_shared<BatchNorm>());
  net->add(relu());
  net->add(std::make_shared<nn::GlobalAvgPool2D>());
  net->add(std::make_shared<nn::Flatten>());
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

std::shared_ptr<HybridBlock> mobilenet_v1(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  add_conv(*net, 32, 3, 2, 1);
  const int64_t dw[] = {32, 64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024};
  const int64_t ch[] = {64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024};
  const int64_t st[] = {1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1};
  for (int i = 0; i < 13; ++i) {
    add_conv(*net, dw[i], 3, st[i], 1, dw[i]);  // depthwise
    add_conv(*net, ch[i]);                      // pointwise
  }
  net->add(std::make_shared<nn::GlobalAvgPool2D>());
  net->add(std::make_shared<nn::Flatten>());
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

std::shared_ptr<HybridBlock> mobilenet_v2(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  add_conv(*net, 32, 3, 2, 1, 1, "relu6");
  const int64_t in_ch[] = {32, 16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160};
  const int64_t ch[] = {16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320};
  const int64_t st[] = {1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1};
  for (int i = 0; i < 17; ++i) net->add(std::make_shared<LinearBottleneck>(in_ch[i], ch[i], i == 0 ? 1 : 6, st[i]));
  add_conv(*net, 1280, 1, 1, 0, 1, "relu6");
  net->add(std::make_shared<nn::GlobalAvgPool2D>());
  net->add(conv(classes, 1));
  net->add(std::make_shared<nn::Flatten>());
  return net;
}

std::shared_ptr<HybridBlock> squeezenet1_1(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  net->add(std::make_shared<Conv2D>(64, Shape{3, 3}, Shape{2, 2}));
  net->add(relu());
  auto pool = [] { return std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}, Shape{0, 0}, /*ceil_mode=*/true); };
  net->add(pool());
  net->add(fire(16, 64, 64));
  net->add(fire(16, 64, 64));
  net->add(pool());
  net->add(fire(32, 128, 128));
  net->add(fire(32, 128, 128));
  net->add(pool());
  net->add(fire(48, 192, 192));
  net->add(fire(48, 192, 192));
  net->add(fire(64, 256, 256));
  net->add(fire(64, 256, 256));
  net->add(std::make_shared<nn::Dropout>(0.5));
  net->add(std::make_shared<Conv2D>(classes, Shape{1, 1}));
  net->add(relu());
  net->add(std::make_shared<nn::AvgPool2D>(Shape{13, 13}));
  net->add(std::make_shared<nn::Flatten>());
  return net;
}

std::shared_ptr<HybridBlock> vgg11_bn(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  const int layers[] = {1, 1, 2, 2, 2};
  const int64_t filters[] = {64, 128, 256, 512, 512};
  for (int stage = 0; stage < 5; ++stage) {
    for (int i = 0; i < layers[stage]; ++i) {
      net->add(std::make_shared<Conv2D>(filters[stage], Shape{3, 3}, Shape{1, 1}, Shape{1, 1}));
      net->add(std::make_shared<BatchNorm>());
      net->add(relu());
    }
    net->add(std::make_shared<nn::MaxPool2D>(Shape{2, 2}, Shape{2, 2}));
  }
  net->add(std::make_shared<nn::Dense>(4096, "relu"));
  net->add(std::make_shared<nn::Dropout>(0.5));
  net->add(std::make_shared<nn::Dense>(4096, "relu"));
  net->add(std::make_shared<nn::Dropout>(0.5));
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

std::shared_ptr<HybridBlock> densenet121(int64_t classes) {
  const int64_t growth = 32, bn_size = 4;
  const int blocks[] = {6, 12, 24, 16};
  auto net = std::make_shared<HybridSequential>();
  net->add(conv(64, 7, 2, 3));
  net->add(std::make_shared<BatchNorm>());
  net->add(relu());
  net->add(std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}, Shape{1, 1}));
  int64_t features = 64;
  for (int b = 0; b < 4; ++b) {
    auto block = std::make_shared<HybridSequential>();
    for (int l = 0; l < blocks[b]; ++l) block->add(dense_layer(growth, bn_size));
    net->add(block);
    features += blocks[b] * growth;
    if (b != 3) {
      features /= 2;
      auto transition = std::make_shared<HybridSequential>();
      transition->add(std::make_shared<BatchNorm>());
      transition->add(relu());
      transition->add(conv(features, 1));
      transition->add(std::make_shared<nn::AvgPool2D>(Shape{2, 2}, Shape{2, 2}));
      net->add(transition);
    }
  }
  net->add(std::make_shared<BatchNorm>());
  net->add(relu());
  net->add(std::make_shared<nn::AvgPool2D>(Shape{7, 7}));
  net->add(std::make_shared<nn::Flatten>());
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

std::shared_ptr<HybridBlock> inception_v3(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  add_basic_conv(*net, {32, 3, 3, 2});
  add_basic_conv(*net, {32, 3, 3});
  add_basic_conv(*net, {64, 3, 3, 1, 1, 1});
  net->add(std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}));
  add_basic_conv(*net, {80, 1, 1});
  add_basic_conv(*net, {192, 3, 3});
  net->add(std::make_shared<nn::MaxPool2D>(Shape{3, 3}, Shape{2, 2}));
  net->add(inception_a(32));
  net->add(inception_a(64));
  net->add(inception_a(64));
  net->add(inception_b());
  for (int64_t c7 : {128, 160, 160, 192}) net->add(inception_c(c7));
  net->add(inception_d());
  net->add(inception_e());
  net->add(inception_e());
  net->add(std::make_shared<nn::AvgPool2D>(Shape{8, 8}));
  net->add(std::make_shared<nn::Dropout>(0.5));
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

// (N, T, C) -> a 1-layer LSTM (layout NTC) -> its last step -> Dense.
class LstmClassifier : public HybridBlock {
 public:
  LstmClassifier(int64_t hidden, int64_t classes) : HybridBlock("lstmclassifier") {
    lstm = register_child(std::make_shared<rnn::LSTM>(hidden, 1, "NTC"));
    fc = register_child(std::make_shared<nn::Dense>(classes));
  }

  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor seq = (*lstm)(x);  // (N, T, hidden)
    const int64_t steps = seq.shape()[1];
    return (*fc)(F.slice_axis(seq, 1, steps - 1, steps));
  }
  using HybridBlock::hybrid_forward;

 private:
  std::shared_ptr<rnn::LSTM> lstm;
  std::shared_ptr<nn::Dense> fc;
};

std::shared_ptr<HybridBlock> lstm_classifier(int64_t hidden, int64_t classes) {
  return std::make_shared<LstmClassifier>(hidden, classes);
}

std::shared_ptr<HybridBlock> transformer_encoder(int64_t units, int64_t heads, int64_t hidden) {
  return std::make_shared<TransformerEncoder>(units, heads, hidden);
}

std::shared_ptr<HybridBlock> lenet(int64_t classes) {
  auto net = std::make_shared<HybridSequential>();
  net->add(std::make_shared<Conv2D>(6, Shape{5, 5}, Shape{1, 1}, Shape{0, 0}, Shape{1, 1}, 1, true, "relu"));
  net->add(std::make_shared<nn::MaxPool2D>(Shape{2, 2}));
  net->add(std::make_shared<Conv2D>(16, Shape{5, 5}, Shape{1, 1}, Shape{0, 0}, Shape{1, 1}, 1, true, "relu"));
  net->add(std::make_shared<nn::MaxPool2D>(Shape{2, 2}));
  net->add(std::make_shared<nn::Flatten>());
  net->add(std::make_shared<nn::Dense>(120, "relu"));
  net->add(std::make_shared<nn::Dense>(84, "relu"));
  net->add(std::make_shared<nn::Dense>(classes));
  return net;
}

namespace {

// Two 3x3 convolutions (padded, with bias) and relu: a U-Net stage.
std::shared_ptr<HybridSequential> unet_stage(int64_t channels) {
  auto stage = std::make_shared<HybridSequential>();
  for (int i = 0; i < 2; ++i)
    stage->add(std::make_shared<Conv2D>(channels, Shape{3, 3}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, 1, true, "relu"));
  return stage;
}

class UNet : public HybridBlock {
 public:
  UNet(int64_t classes, int64_t width) : HybridBlock("unet") {
    for (int level = 0; level < 3; ++level) {
      const int64_t channels = width << level;
      down[level] = register_child(unet_stage(channels));
      pool[level] = register_child(std::make_shared<nn::MaxPool2D>(Shape{2, 2}));
    }
    bottom = register_child(unet_stage(width << 3));
    for (int level = 2; level >= 0; --level) {
      const int64_t channels = width << level;
      up[level] = register_child(std::make_shared<nn::Conv2DTranspose>(channels, Shape{2, 2}, Shape{2, 2}));
      merge[level] = register_child(unet_stage(channels));
    }
    head = register_child(std::make_shared<Conv2D>(classes, Shape{1, 1}));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    Tensor skip[3], y = x;
    for (int level = 0; level < 3; ++level) {
      skip[level] = (*down[level])(y);
      y = (*pool[level])(skip[level]);
    }
    y = (*bottom)(y);
    for (int level = 2; level >= 0; --level) y = (*merge[level])(F.Concat({(*up[level])(y), skip[level]}, 1));
    return (*head)(y);
  }
  using HybridBlock::hybrid_forward;

 private:
  std::shared_ptr<HybridSequential> down[3], merge[3], bottom;
  std::shared_ptr<nn::MaxPool2D> pool[3];
  std::shared_ptr<nn::Conv2DTranspose> up[3];
  std::shared_ptr<Conv2D> head;
};

}  // namespace

std::shared_ptr<HybridBlock> unet(int64_t classes, int64_t width) { return std::make_shared<UNet>(classes, width); }

const std::vector<ZooModel>& models() {
  static const std::vector<ZooModel> all = {
      {"resnet18_v1", [] { return resnet18_v1(); }, {1, 3, 224, 224}},
      {"resnet18_v2", [] { return resnet18_v2(); }, {1, 3, 224, 224}},
      {"mobilenet_v1", [] { return mobilenet_v1(); }, {1, 3, 224, 224}},
      {"mobilenet_v2", [] { return mobilenet_v2(); }, {1, 3, 224, 224}},
      {"squeezenet1_1", [] { return squeezenet1_1(); }, {1, 3, 224, 224}},
      {"vgg11_bn", [] { return vgg11_bn(); }, {1, 3, 224, 224}},
      {"densenet121", [] { return densenet121(); }, {1, 3, 224, 224}},
      {"inception_v3", [] { return inception_v3(); }, {1, 3, 299, 299}},
      {"transformer_encoder", [] { return transformer_encoder(); }, {1, 128, 256}},
      {"lenet", [] { return lenet(); }, {1, 1, 28, 28}},
      {"lstm_classifier", [] { return lstm_classifier(); }, {1, 32, 64}},
      {"unet", [] { return unet(); }, {1, 3, 64, 64}},
  };
  return all;
}

}  // namespace hybgen::zoo
