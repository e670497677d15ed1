// runtime-lite, everything a model author uses: Tensor, symbols, blocks,
// layers, initializers, the graph interpreter, int8 quantization (quantize()).
//
//   #include "runtime-lite/hybgen.h"
//   using namespace hybgen;
//   auto net = std::make_shared<nn::HybridSequential>();
//   net->add(std::make_shared<nn::Dense>(64, "relu"));
#pragma once

#include "io/model_json.h"
#include "runtime-lite/block.h"
#include "runtime-lite/initializer.h"
#include "runtime-lite/interpreter.h"
#include "runtime-lite/invoke.h"
#include "runtime-lite/nn/basic_layers.h"
#include "runtime-lite/nn/conv_layers.h"
#include "runtime-lite/nn/norm_layers.h"
#include "runtime-lite/nn/rnn_layers.h"
#include "runtime-lite/ops.h"
#include "runtime-lite/parameter.h"
#include "runtime-lite/quantize.h"
#include "runtime-lite/symbol.h"
#include "runtime-lite/tensor.h"
