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
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace hybgen {

// Throws Error("PATH: ...") on a wrong magic, truncation, sparse storage,
// an unsupported dtype, or a name count that disagrees with the array count.
std::map<std::string, Constant> read_mxnet_params(const std::string& path);
std::map<std::string, Constant> parse_mxnet_params(const std::vector<uint8_t>& bytes, const std::string& source);

// The DType of an MXNet dtype flag (mshadow TypeFlag: 0 float32, 1 float64,
// 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64): the one place the reader
// maps MXNet's numbers; the values are then converted by DType. Nothing for
// the later flags (7 bool, 8 int16, 9 uint16, 10 uint32, 11 uint64, 12
// bfloat16), which the reader refuses, as MXNet 1.x writes none of them.
std::optional<DType> mshadow_dtype(int32_t flag);

// Record layout for the writer; legacy records carry no magic.
enum class MxnetRecordLayout { kV1, kV2, kV3, kLegacy };
std::vector<uint8_t> serialize_mxnet_params(const std::map<std::string, Constant>& tensors,
                                            MxnetRecordLayout layout = MxnetRecordLayout::kV2);
void write_mxnet_params(const std::string& path, const std::map<std::string, Constant>& tensors,
                        MxnetRecordLayout layout = MxnetRecordLayout::kV2);

}  // namespace hybgen
