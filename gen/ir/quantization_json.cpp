#include "ir/quantization_json.h"

#include <string>

namespace hybgen {

nlohmann::ordered_json quantization_to_json(const Quantization& quantization) {
  nlohmann::ordered_json j;
  j["scale"] = nlohmann::ordered_json::array();
  for (float s : quantization.scale) j["scale"].push_back(nlohmann::ordered_json::parse(shortest_float_text(s)));
  j["zero_point"] = quantization.zero_point;
  if (quantization.axis) j["axis"] = *quantization.axis;
  return j;
}

}  // namespace hybgen
