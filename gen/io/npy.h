// numpy's .npy format (version 1.0/2.0, little-endian float32/float64,
// C order), so `hybgen verify --input x=x.npy` takes arrays from Python.
//
//   NpyArray a = read_npy("x.npy");   // float64 files are converted to float32
//   NpyArray b = parse_npy(bytes, "x.npy");   // the same from bytes in memory
//   write_npy("y.npy", {{1, 2}, {0.5f, 1.5f}});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor_type.h"

namespace hybgen {

struct NpyArray {
  Shape shape;
  std::vector<float> data;
};

// Throws Error("PATH: ...") for a bad magic, header, dtype, Fortran order,
// truncated data, or a shape past the limits per tensor (ir/limits.h).
NpyArray read_npy(const std::string& path);
// The same from the file's bytes; `source` names them in messages.
NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& source);
void write_npy(const std::string& path, const NpyArray& array);
// The bytes write_npy writes, for callers that write several files all or
// none (io/file_util.h); `path` names the array in messages.
std::string npy_bytes(const NpyArray& array, const std::string& path);

}  // namespace hybgen
