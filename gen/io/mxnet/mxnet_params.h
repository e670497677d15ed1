// MXNet's `.params` files (NDArray lists written by Gluon's export(), Module's
// save_checkpoint and mx.nd.save), read as untrusted input; and a writer, so
// tests can make them.
//
//   std::map<std::string, Constant> p = read_mxnet_params("net-0000.params");
//   p.at("arg:dense0_weight");                  // names keep their arg:/aux: prefix
//   write_mxnet_params("t.params", tensors);    // V2 records, float32
//
// Layouts read: list magic 0x112 with NDArray records V1 (0xF993FAC8), V2
// (0xF993FAC9), V3 (0xF993FACA) and the legacy record without magic;
// float32/float64/float16/uint8/int8/int32/int64 data, converted to float32.
// The format is described in shared/reference/mxnet-onnx-formats.md section 2.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace hybgen {

// Throws Error("PATH: ...") on a wrong magic, truncation, sparse storage,
// an unsupported dtype, or a name count that disagrees with the array count.
std::map<std::string, Constant> read_mxnet_params(const std::string& path);
std::map<std::string, Constant> parse_mxnet_params(const std::vector<uint8_t>& bytes, const std::string& source);

// Record layout for the writer; legacy records carry no magic.
enum class MxnetRecordLayout { kV1, kV2, kV3, kLegacy };
std::vector<uint8_t> serialize_mxnet_params(const std::map<std::string, Constant>& tensors,
                                            MxnetRecordLayout layout = MxnetRecordLayout::kV2);
void write_mxnet_params(const std::string& path, const std::map<std::string, Constant>& tensors,
                        MxnetRecordLayout layout = MxnetRecordLayout::kV2);

}  // namespace hybgen
