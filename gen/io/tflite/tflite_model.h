// Imports TFLite models (.tflite FlatBuffers written by TensorFlow's
// TFLiteConverter) into a hybgen Graph, float32 and int8 alike: an int8
// file keeps its own scales and zero points (no calibration), on the IR's
// quantized types and int8 nodes (docs/quantization.md).
//
//   Graph g = import_tflite("model.tflite", {});
//   if (looks_like_tflite("model.bin")) ...         // by content, not by name
//
// What is read (docs/tflite.md): the first subgraph, its tensors and
// buffers, and every operator through its converter. TFLite's NHWC tensors
// are NCHW inside: rank-4 inputs and outputs keep TFLite's NHWC shape with a
// transpose at the graph's edge, weights are transposed at import. Every
// unsupported operator is listed in one Error before anything is converted;
// other errors name the file, the operator (its index and builtin name) and
// the tensor. The FlatBuffer is read through io/tflite/flatbuffer_view.h, so
// a malformed file gives an Error naming the field, never a bad read.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace hybgen {

struct TfliteImportOptions {
  std::string name;  // graph name; default: the file stem
};

// Largest .tflite file read: what one FlatBuffer can address.
constexpr uint64_t kMaxTfliteFileBytes = (uint64_t{1} << 31) - 1;

// True when the file starts like a TFLite FlatBuffer (a root offset, then
// the identifier "TFL3"): reads 8 bytes, never throws.
bool looks_like_tflite(const std::string& path);
// The same for bytes already read.
bool looks_like_tflite_bytes(const std::string& bytes);

Graph import_tflite(const std::string& path, const TfliteImportOptions& options);
// The same from a model's bytes; `source` names it in messages.
Graph import_tflite_bytes(const std::string& bytes, const std::string& source, const TfliteImportOptions& options);

}  // namespace hybgen
