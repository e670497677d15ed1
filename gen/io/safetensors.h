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

// Throws Error("PATH: ...") for a truncated file, a header length past the end,
// malformed header JSON, offsets outside the data or overlapping, a size that
// disagrees with dtype x shape, or an unsupported dtype.
std::map<std::string, Constant> read_safetensors(const std::string& path);
std::map<std::string, Constant> parse_safetensors(const std::vector<uint8_t>& bytes, const std::string& source);

std::vector<uint8_t> serialize_safetensors(const std::map<std::string, Constant>& tensors,
                                           const std::map<std::string, std::string>& metadata = {});
void write_safetensors(const std::string& path, const std::map<std::string, Constant>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace hybgen
