// The JSON form of a Quantization, shared by model.json (io/model_json.cpp,
// which also reads it) and the generated manifest (lower/lowering.cpp):
//
//   {"scale": [0.05], "zero_point": [-3]}                       per tensor
//   {"scale": [0.1, 0.2], "zero_point": [0, 0], "axis": 0}      per axis
#pragma once

#include <nlohmann/json.hpp>

#include "ir/tensor_type.h"

namespace hybgen {

// Scales are written as their shortest_float_text (0.05f as 0.05), which
// reads back as the same float.
nlohmann::ordered_json quantization_to_json(const Quantization& quantization);

}  // namespace hybgen
