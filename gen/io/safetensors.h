// The safetensors weight format: 8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}},
// then the raw little-endian data. The reader treats the file as untrusted.
//
//   write_safetensors("model.safetensors", graph.constants);
//   std::map<std::string, Constant> w = read_safetensors("model.safetensors");
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace hybgen {

// Tensors keep the file's dtype (F32, F16, BF16, I8, U8, I32, I64, BOOL as
// float32, float16, bfloat16, int8, uint8, int32, int64, bool); F64 is
// narrowed to float32, as hybgen has no float64.
// Throws Error("PATH: ...") for a truncated file, a header length past the end,
// malformed header JSON, offsets outside the data or overlapping, a size that
// disagrees with dtype x shape, or an unsupported dtype.
std::map<std::string, Constant> read_safetensors(const std::string& path);
std::map<std::string, Constant> parse_safetensors(const std::vector<uint8_t>& bytes, const std::string& source);

// A float16 or bfloat16 tensor as float32 (a float32 one as it is): how
// float32 models load weights stored in half precision. Error for others.
Constant widen_to_float32(const Constant& c);

// Each tensor under its dtype's safetensors name.
std::vector<uint8_t> serialize_safetensors(const std::map<std::string, Constant>& tensors,
                                           const std::map<std::string, std::string>& metadata = {});
void write_safetensors(const std::string& path, const std::map<std::string, Constant>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace hybgen
