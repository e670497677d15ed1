// numpy's .npy format (version 1.0/2.0, little-endian float32/float64,
// C order), so `hybgen verify --input x=x.npy` takes arrays from Python.
//
//   NpyArray a = read_npy("x.npy");   // float64 files are converted to float32
//   write_npy("y.npy", {{1, 2}, {0.5f, 1.5f}});
#pragma once

#include <string>
#include <vector>

#include "ir/tensor_type.h"

namespace hybgen {

struct NpyArray {
  Shape shape;
  std::vector<float> data;
};

// Throws Error("PATH: ...") for a bad magic, header, dtype, Fortran order or
// truncated data.
NpyArray read_npy(const std::string& path);
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace hybgen
