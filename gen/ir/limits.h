// The limits hybgen holds every input to, in one place (docs/limits.md lists
// them for users). Readers check sizes against these before allocating, so a
// hostile or broken file gets a clear error instead of a crash or an
// exhausted machine.
//
//   const uint64_t bytes = checked_tensor_bytes(shape, 4, "model.json: weight 'fc1_weight'");
//   check_file_size(path, limits::kMaxJsonFileBytes);   // regular files only
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/tensor_type.h"

namespace hybgen {
namespace limits {

// Nesting of arrays and objects in any JSON hybgen reads (model.json, MXNet
// symbol files, safetensors headers). Real files nest 4 or 5 deep.
constexpr int kMaxJsonDepth = 64;
// The JSON header of a .safetensors file.
constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t{100} << 20;
// A JSON file (model.json, NAME-symbol.json).
constexpr uint64_t kMaxJsonFileBytes = uint64_t{256} << 20;
// A weights file (.safetensors, .params) or an array file (.npy).
constexpr uint64_t kMaxDataFileBytes = uint64_t{16} << 30;
// Dimensions of one tensor.
constexpr std::size_t kMaxRank = 32;
// Elements of one tensor: generated code may index a tensor with a 32-bit int.
constexpr uint64_t kMaxTensorElements = (uint64_t{1} << 31) - 1;
// Weight bytes of a whole model.
constexpr uint64_t kMaxModelWeightBytes = uint64_t{16} << 30;
// Weight bytes --random-weights makes up (it exists for tests).
constexpr uint64_t kMaxRandomWeightBytes = uint64_t{1} << 30;
// Nodes of one graph.
constexpr std::size_t kMaxGraphNodes = 1000000;

}  // namespace limits

// The bytes of a tensor of `shape` with `element_size`-byte elements, computed
// without overflow. Throws Error("WHERE: ...") for a negative dimension, more
// than kMaxRank dimensions or more than kMaxTensorElements elements.
uint64_t checked_tensor_bytes(const Shape& shape, std::size_t element_size, const std::string& where);

// Throws Error("PATH: ...") unless `path` is a regular file of at most
// `max_bytes` bytes (so /dev/zero or a FIFO is refused before any read).
void check_file_size(const std::string& path, uint64_t max_bytes);

}  // namespace hybgen
