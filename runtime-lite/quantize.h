// quantize(): post-training int8 quantization of a block, as MXNet's
// contrib.quantization.quantize_net. The block is traced with the shapes of
// the calibration batches, calibrated on them and quantized exactly as
// `hybgen quantize` does it (quantize_post_training, runtime-lite/calibration.h;
// TFLite's scheme, docs/quantization.md). The result is a block that computes
// that int8 graph, with float32 inputs and outputs:
//
//   std::vector<Tensor> calibration = ...;   // sample inputs, each shaped as the block will be called
//   PostTrainingOptions options;             // minmax; or kPercentile / kEntropy, keep_float, min_sqnr
//   std::shared_ptr<QuantizedBlock> q = quantize(*net, calibration, options);
//   std::cout << q->report();                // which nodes are int8, which stayed float and why, SQNR per layer
//   Tensor y = (*q)(x);                      // eager: the reference interpreter's int8 kernels
//   q->hybridize();
//   Tensor z = (*q)(x);                      // the generated C++, compiled in-process: int8 nodes give y's bits
//   q->export_model("net_int8");             // net_int8.json + .safetensors, for `hybgen` and hybgen_add_model
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime-lite/block.h"
#include "runtime-lite/calibration.h"
#include "runtime-lite/interpreter.h"

namespace hybgen {

// A block computing a quantized graph. It holds no Parameters: its weights
// are the graph's int8 constants, copied from the float block when it was
// quantized (later changes to that block do not reach it). It takes the
// input shapes it was calibrated with, and composes like any block: called
// on symbols (or inside another block's trace) it adds its int8 nodes, under
// their original names, to the trace.
class QuantizedBlock : public HybridBlock {
 public:
  // Made by quantize(). `input_positions[i]`: the call argument that feeds
  // graph input i; `input_shapes`: the shapes of every call argument.
  QuantizedBlock(PostTrainingQuantization quantization, std::vector<Shape> input_shapes,
                 std::vector<std::size_t> input_positions);

  // The int8 graph (float32 inputs and outputs, named as the traced block's:
  // "data", or "data0", "data1", ...).
  const Graph& graph() const { return quantization_.quantized.graph; }
  // Nodes computed in int8, and those left float with the reason, named as
  // in the traced float block (the names keep_float takes).
  const std::vector<std::string>& int8_nodes() const { return quantization_.quantized.int8_nodes; }
  const std::vector<FloatNode>& float_nodes() const { return quantization_.quantized.float_nodes; }
  // Every int8 node's SQNR against the float block on the calibration data, worst first.
  const std::vector<NodeSqnr>& sqnr() const { return quantization_.sqnr; }
  const PostTrainingQuantization& quantization() const { return quantization_; }
  const std::vector<Shape>& input_shapes() const { return input_shapes_; }
  // What `hybgen quantize` prints: int8 nodes, float nodes and why, the SQNR table.
  std::string report() const;

  std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs) override;
  using HybridBlock::hybrid_forward;

 private:
  // The graph's nodes added to the trace the symbolic `inputs` belong to.
  std::vector<Tensor> splice(const std::vector<Tensor>& inputs) const;
  void check_call(const std::vector<Tensor>& inputs) const;

  PostTrainingQuantization quantization_;
  std::vector<Shape> input_shapes_;
  std::vector<std::size_t> input_positions_;
  std::unique_ptr<Interpreter> reference_;  // the eager path
};

// Quantizes `block` on `batches`: each batch is one call's inputs, in call
// order, and every batch has the shapes the quantized block will take (its
// batch size included). The block must be initialized. Error, naming
// quantize() and the block, for no batch, batches of different shapes, a
// NaN or infinity, a keep_float name that is no node of the traced graph
// (the message lists them), or a graph hybgen cannot generate.
std::shared_ptr<QuantizedBlock> quantize(HybridBlock& block, const std::vector<std::vector<Tensor>>& batches,
                                         const PostTrainingOptions& options = {});
// A one-input block: each tensor is one call's input.
std::shared_ptr<QuantizedBlock> quantize(HybridBlock& block, const std::vector<Tensor>& batches,
                                         const PostTrainingOptions& options = {});

}  // namespace hybgen
