// One graph holding every example of every registered op, each an
// independent subgraph, so the whole registry costs one compiler run: the
// generic op tests (tests/codegen/registry_ops_test.cpp, tests/cuda/).
// HYBGEN_TEST_OPS=Pooling,softmax keeps only the ops named (to debug one).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "io/npy.h"
#include "ir/graph.h"
#include "lower/lowering.h"
#include "ops/op.h"

namespace hybgen::testing {

struct ExampleOutput {
  std::string op;
  std::size_t example;
  bool quantized = false;  // computed in integers: the generated code must give the reference's bits
};

struct AllOpsGraph {
  Graph graph;
  std::map<std::string, NpyArray> inputs;       // seeded values of the graph's inputs
  std::map<std::string, ExampleOutput> origin;  // output value -> the op and example it came from
};

inline bool op_selected(const std::string& op) {
  const char* only = std::getenv("HYBGEN_TEST_OPS");
  if (!only || !*only) return true;
  std::istringstream names(only);
  for (std::string name; std::getline(names, name, ',');)
    if (name == op) return true;
  return false;
}

// Seeded inputs, in the op's OpDef::input_ranges.
inline NpyArray random_input(const OpDef& op, std::size_t input, const Shape& shape, std::mt19937& rng) {
  const InputRange range = test_input_range(op.input_ranges, static_cast<int>(input));
  std::uniform_real_distribution<float> dist(range.low, range.high);
  NpyArray values{shape, std::vector<float>(static_cast<std::size_t>(num_elements(shape)))};
  for (auto& v : values.data) v = dist(rng);
  return values;
}

// Seeded values of a quantized integer input: across its dtype's range
// and a little beyond, so that saturation is covered.
inline NpyArray random_quantized_input(const TensorType& type, std::mt19937& rng) {
  const auto [lo, hi] = integer_dtype_range(type.dtype);
  const float scale = type.quantization.scale[0], zero_point = static_cast<float>(type.quantization.zero_point[0]);
  std::uniform_real_distribution<float> dist(scale * (static_cast<float>(lo) - zero_point - 4.0f),
                                             scale * (static_cast<float>(hi) - zero_point + 4.0f));
  NpyArray values{type.shape, std::vector<float>(static_cast<std::size_t>(type.num_elements()))};
  for (auto& v : values.data) v = dist(rng);
  return values;
}

// Seeded values of an integer input that is not quantized: its dtype's
// range (int32: a few thousand either side of 0), as floats a Cast makes
// integers of.
inline NpyArray random_integer_input(const TensorType& type, std::mt19937& rng) {
  auto [lo, hi] = integer_dtype_range(type.dtype);
  if (type.dtype == DType::kInt32) lo = -5000, hi = 5000;
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  NpyArray values{type.shape, std::vector<float>(static_cast<std::size_t>(type.num_elements()))};
  for (auto& v : values.data) v = static_cast<float>(dist(rng));
  return values;
}

// A quantized weight or int32 bias as a constant of seeded integers (int8
// weights in [-127, 127], as symmetric quantization makes them).
inline Constant random_integer_constant(const TensorType& type, std::mt19937& rng, bool include_int8_min = false) {
  Constant c{type, std::vector<uint8_t>(type.bytes())};
  if (type.dtype == DType::kInt32) {
    std::uniform_int_distribution<int32_t> dist(-4000, 4000);
    for (int64_t i = 0; i < type.num_elements(); ++i) {
      const int32_t v = dist(rng);
      std::memcpy(c.data.data() + i * 4, &v, 4);
    }
  } else {
    std::uniform_int_distribution<int> dist(include_int8_min ? -128 : -127, 127);
    for (auto& b : c.data) b = static_cast<uint8_t>(static_cast<int8_t>(dist(rng)));
    if (include_int8_min && !c.data.empty()) c.data[0] = static_cast<uint8_t>(static_cast<int8_t>(-128));
  }
  return c;
}

// The op a value of `dtype` (not quantized) enters and leaves the all-ops
// graph through, from and to float32: _storage_cast for the half-precision
// storage types, Cast for integers and bool.
inline std::string edge_cast(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? "_storage_cast" : "Cast";
}

// True when `backend`'s kernel of `op` computes every dtype of the
// example's inputs and outputs, and the quantize and dequantize nodes
// around a quantized one have kernels there too.
inline bool backend_computes(Backend backend, const OpDef& op, const OpExample& example) {
  auto computes = [&](const std::string& name, DType dtype) {
    const OpKernel* kernel = find_kernel(backend, name);
    return kernel && std::find(kernel->dtypes.begin(), kernel->dtypes.end(), dtype) != kernel->dtypes.end();
  };
  std::vector<TensorType> values;
  for (std::size_t i = 0; i < example.inputs.size(); ++i) values.push_back(example.input_type(i));
  for (const TensorType& t : op.infer(normalize_attrs(op, example.attrs), values)) values.push_back(t);
  for (const TensorType& t : values) {
    if (!computes(op.name, t.dtype)) return false;
    if (!t.quantization.empty() && !(computes("quantize", t.dtype) && computes("dequantize", t.dtype))) return false;
    if (t.quantization.empty() && t.dtype != DType::kFloat32 && !computes(edge_cast(t.dtype), t.dtype)) return false;
  }
  return true;
}

// The name of one example in all_ops_graph's `only`: "Convolution/2".
inline std::string example_name(const std::string& op, std::size_t example) {
  return op + "/" + std::to_string(example);
}

// `only`, when not empty: just these examples (example_name; of the ops
// HYBGEN_TEST_OPS keeps). `backend`, when given: just the examples whose
// dtypes its kernels compute. Quantized inputs come from float graph inputs
// through a quantize node (weights and biases are integer constants), and
// quantized outputs leave through a dequantize node; other integers come in
// and leave through a Cast. So the graph's inputs and outputs are float32
// as the interpreter and verify take them.
inline AllOpsGraph all_ops_graph(unsigned seed, const std::set<std::string>& only = {},
                                 std::optional<Backend> backend = std::nullopt) {
  AllOpsGraph all;
  Graph& g = all.graph;
  g.name = "all_ops";
  std::mt19937 rng(seed);
  for (const OpDef* op : all_ops()) {
    if (!op_selected(op->name)) continue;
    for (std::size_t e = 0; e < op->examples.size(); ++e) {
      if (!only.empty() && !only.count(example_name(op->name, e))) continue;
      const OpExample& ex = op->examples[e];
      if (backend && !backend_computes(*backend, *op, ex)) continue;
      const std::string base = c_identifier(op->name) + "_" + std::to_string(e);
      Node node{base, op->name, ex.attrs, {}, {}};
      std::vector<TensorType> in_types;
      bool quantized = false;
      for (std::size_t i = 0; i < ex.inputs.size(); ++i) {
        const std::string in = base + "_in_" + std::to_string(i);
        const TensorType type = ex.input_type(i);
        in_types.push_back(type);
        // Weights are constants, as in a real model, so the kernels that
        // re-lay them out at generation time (packed GEMM panels) are covered.
        const bool weight = op->weight_shapes && i > 0;
        if (type.dtype == DType::kFloat16 || type.dtype == DType::kBFloat16) {
          NpyArray values = random_input(*op, i, ex.inputs[i], rng);
          g.add_input(in + "_float", {type.shape});
          all.inputs[in + "_float"] = std::move(values);
          Attrs cast;
          cast.set("dtype", dtype_name(type.dtype));
          g.nodes.push_back(Node{in + "_cast", "_storage_cast", cast, {in + "_float"}, {in}});
          node.inputs.push_back(in);
          continue;
        }
        if (type.dtype != DType::kFloat32) {
          quantized = true;
          if (weight) {
            g.add_constant(in, random_integer_constant(type, rng, ex.weights_include_int8_min));
          } else if (type.quantization.empty()) {
            g.add_input(in + "_float", {type.shape});
            all.inputs[in + "_float"] = random_integer_input(type, rng);
            Attrs cast;
            cast.set("dtype", dtype_name(type.dtype));
            g.nodes.push_back(Node{in + "_cast", "Cast", cast, {in + "_float"}, {in}});
          } else {
            g.add_input(in + "_float", {type.shape});
            all.inputs[in + "_float"] = random_quantized_input(type, rng);
            Attrs q;
            q.set("out_scale", static_cast<double>(type.quantization.scale[0]));
            q.set("out_zero_point", type.quantization.zero_point[0]);
            q.set("out_dtype", dtype_name(type.dtype));
            g.nodes.push_back(Node{in + "_quantize", "quantize", q, {in + "_float"}, {in}});
          }
          node.inputs.push_back(in);
          continue;
        }
        NpyArray values = random_input(*op, i, ex.inputs[i], rng);
        if (weight) {
          g.add_constant(in, Constant::f32(ex.inputs[i], values.data));
        } else {
          g.add_input(in, {ex.inputs[i]});
          all.inputs[in] = std::move(values);
        }
        node.inputs.push_back(in);
      }
      const Attrs attrs = normalize_attrs(*op, ex.attrs);
      const std::vector<TensorType> out_types = op->infer(attrs, in_types);
      const int outputs = output_count(*op, attrs);
      std::vector<Node> dequantize;
      for (int o = 0; o < outputs; ++o) {
        const std::string out = base + (outputs == 1 ? "" : "_out" + std::to_string(o));
        node.outputs.push_back(out);
        const TensorType& out_type = out_types[static_cast<std::size_t>(o)];
        const bool integer =
            out_type.dtype == DType::kInt8 || out_type.dtype == DType::kUInt8 || out_type.dtype == DType::kInt32;
        const bool half = out_type.dtype == DType::kFloat16 || out_type.dtype == DType::kBFloat16;
        if (!out_type.quantization.empty() || integer || half) {
          quantized = quantized || !half;
          Attrs to_float;
          to_float.set("dtype", std::string("float32"));
          dequantize.push_back(out_type.quantization.empty()
                                   ? Node{out + "_cast", edge_cast(out_type.dtype), to_float, {out}, {out + "_float"}}
                                   : Node{out + "_dequantize", "dequantize", {}, {out}, {out + "_float"}});
          g.outputs.push_back(out + "_float");
          all.origin[out + "_float"] = {op->name, e, quantized};
        } else {
          g.outputs.push_back(out);
          all.origin[out] = {op->name, e, quantized};
        }
      }
      g.nodes.push_back(node);
      for (Node& d : dequantize) g.nodes.push_back(std::move(d));
    }
  }
  return all;
}

}  // namespace hybgen::testing
