// Printers for fused kernels in the C++ backend: one loop over a chain or DAG
// of elementwise ops, and the epilogue lambda a GEMM/convolution kernel calls
// on each result before storing it. Both are built from the ops'
// OpDef::emit_scalar expressions, so fusion needs nothing op-specific here.
//
//   std::string code = print_elementwise_loop(graph, kernel, pointer);
//   std::string lambda = print_epilogue(graph, kernel, pointer, "epilogue");
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/kernels.h"

namespace hybgen {

// The C++ pointer expression of a value (input, weight, arena buffer, output).
using PointerOf = std::function<std::string(const std::string& value)>;

// What both backends print of an elementwise kernel: the loop nest, collapsed
// where operands allow, and the statements for one point of it, which read
// the loop counters i0, i1, ... (loop_counter) and, with more than one axis,
// `o`, the flat index of the point (the outputs are contiguous over the loop).
struct ElementwiseBody {
  std::vector<int64_t> extents;     // outermost first
  std::string statements;           // loads, node results, stores
  std::string declarations;         // C++: static data the statements read (lookup tables), before the loop
  std::vector<std::string> reads;   // pointer expressions it reads, in first-use order
  std::vector<DType> read_dtypes;   // per read: the dtype it points to
  std::vector<std::string> writes;  // pointer expressions it stores to
  std::vector<DType> write_dtypes;  // per write: the dtype it points to
};
ElementwiseBody elementwise_body(const Graph& graph, const Kernel& kernel, const PointerOf& pointer);
std::string loop_counter(int axis);

// What both backends print of an epilogue: statements over `v` (the anchor's
// value), `channel` and `index` (see EmitContext::epilogue) that end with
// `return RESULT;`, storing values also read outside the kernel on the way.
struct EpilogueBody {
  std::string statements;
  std::string declarations;  // C++: static data the statements read (lookup tables), before them
  bool uses_channel = false;
  bool uses_index = false;
  DType value_dtype = DType::kFloat32;   // of `v`, the anchor's value
  DType result_dtype = DType::kFloat32;  // of what it returns
  std::vector<std::string> reads;        // pointer expressions it reads
  std::vector<DType> read_dtypes;        // per read: the dtype it points to
  std::vector<std::string> writes;       // pointer expressions it stores to
  std::vector<DType> write_dtypes;       // per write: the dtype it points to
  bool identity = false;                 // returns `v` unchanged, reading and storing nothing else
};
EpilogueBody epilogue_body(const Graph& graph, const Kernel& kernel, const PointerOf& pointer);

// C++: a block `{ for ... }` computing every node of an elementwise kernel per
// element and storing the kernel's outputs.
std::string print_elementwise_loop(const Graph& graph, const Kernel& kernel, const PointerOf& pointer);

// C++: `auto NAME = [&](long channel, long index, T v) -> T { ... };` (T the C type of the values) for
// the nodes after the anchor (kernel.nodes[0]) of an epilogue kernel; values
// read outside the kernel other than its final one are stored from inside.
// A residual add and/or one op with an OpKernel::vector_epilogue (clip, relu,
// GELU, a scale) give an object instead, which SIMD kernels apply in
// registers: `const auto NAME = HgClampEpilogue(0.0f, 6.0f);`,
// `const auto NAME = hg_add_epilogue(x, HgReluEpilogue());`.
std::string print_epilogue(const Graph& graph, const Kernel& kernel, const PointerOf& pointer,
                           const std::string& name);

// The value an epilogue kernel's anchor writes through its output pointer:
// the last node's output.
const std::string& epilogue_result(const Graph& graph, const Kernel& kernel);

// Template files the kernel's scalar expressions need (OpDef::scalar_kernels).
std::vector<std::string> scalar_kernel_templates(const Graph& graph, const Kernel& kernel);

}  // namespace hybgen
